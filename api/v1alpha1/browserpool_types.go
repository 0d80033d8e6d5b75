/*
Copyright 2026 The browserfleet Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxPoolReplicas bounds one pool's replicas; the project's concurrent
// sessions quota bounds the warm runners of all its pools together.
const MaxPoolReplicas = 100

// BrowserPoolSpec is a warm pool: runners started ahead of sessions with
// the pool's launch-time settings, each waiting for one session to claim
// it.
// +kubebuilder:validation:MinProperties=1
type BrowserPoolSpec struct {
	// replicas is how many unclaimed runners the pool keeps, ready or
	// starting. A claimed runner leaves the pool and the pool starts
	// another. 0 keeps none. The scale subresource drives it, so that an
	// HorizontalPodAutoscaler or KEDA can.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Replicas *int32 `json:"replicas,omitempty"`

	// template is the session settings fixed when a browser launches. A
	// session whose own launch-time settings (LaunchSettingsOf) equal the
	// template's claims a ready runner of the pool; any other session
	// starts cold. Settings a session may change (its model, prompts,
	// cache, timeout, keepAlive, userMetadata) are not in it: they are
	// applied when a session claims a runner. Empty, it is the launch of a
	// session that sets no browser settings.
	// +optional
	Template *BrowserPoolTemplate `json:"template,omitempty"`
}

// BrowserPoolTemplate holds the launch-time part of a BrowserSessionSpec.
// +kubebuilder:validation:XValidation:rule="!has(self.browser) || !has(self.browser.cdpUrlSecretRef)",message="a pool launches its browsers: a session that attaches to one at cdpUrlSecretRef never claims a pooled runner",fieldPath=".browser.cdpUrlSecretRef"
// +kubebuilder:validation:XValidation:rule="!has(self.cloudSessionCreateParams) || !has(self.cloudSessionCreateParams.timeoutSeconds)",message="timeoutSeconds is the session's own, applied when it claims a runner",fieldPath=".cloudSessionCreateParams.timeoutSeconds"
// +kubebuilder:validation:XValidation:rule="!has(self.cloudSessionCreateParams) || !has(self.cloudSessionCreateParams.keepAlive)",message="keepAlive is the session's own, applied when it claims a runner",fieldPath=".cloudSessionCreateParams.keepAlive"
// +kubebuilder:validation:XValidation:rule="!has(self.cloudSessionCreateParams) || !has(self.cloudSessionCreateParams.browserSettings) || !has(self.cloudSessionCreateParams.browserSettings.context)",message="a persistent context belongs to one session at a time: sessions with a context start cold",fieldPath=".cloudSessionCreateParams.browserSettings.context"
type BrowserPoolTemplate struct {
	// browser selects and configures the browser, as a session's browser
	// does.
	// +optional
	Browser *BrowserConfig `json:"browser,omitempty"`

	// cloudSessionCreateParams are a cloud browser's launch-time settings:
	// browserSettings (but context), extensionId, proxies and region.
	// userMetadata is ignored here: it is each session's own.
	// +optional
	CloudSessionCreateParams *CloudSessionCreateParams `json:"cloudSessionCreateParams,omitempty"`
}

// Conditions of a BrowserPool.
const (
	// BrowserPoolConditionReady is True when every replica is ready to be
	// claimed.
	BrowserPoolConditionReady = "Ready"

	// BrowserPoolReasonReplicasReady: every replica is ready.
	BrowserPoolReasonReplicasReady = "ReplicasReady"
	// BrowserPoolReasonReplicasStarting: some replicas are starting.
	BrowserPoolReasonReplicasStarting = "ReplicasStarting"
	// BrowserPoolReasonQuotaLimited: the project's concurrent sessions
	// quota leaves room for fewer warm runners than the pool asks for.
	BrowserPoolReasonQuotaLimited = "QuotaLimited"
	// BrowserPoolReasonTemplateRefused: the template names an executable
	// the operator does not allow, a Secret that has not opted in
	// (LabelSessionSecret), or a region the operator does not accept or
	// no node serves; the pool starts no runner.
	BrowserPoolReasonTemplateRefused = "TemplateRefused"
)

// BrowserPoolStatus is the observed state of a BrowserPool.
type BrowserPoolStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// replicas is how many unclaimed runners the pool has, ready or
	// starting (the scale subresource's status replicas).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// readyReplicas is how many unclaimed runners are ready to be claimed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// claimedReplicas is how many runners sessions claimed from the pool
	// that still run.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ClaimedReplicas *int32 `json:"claimedReplicas,omitempty"`

	// selector selects the pool's unclaimed runner pods, in label selector
	// syntax (the scale subresource's selector).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Selector string `json:"selector,omitempty"`

	// launchHash identifies the template: the pool's runner pods carry it
	// as LabelLaunchHash, and a session whose launch-time settings hash
	// the same claims one.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	LaunchHash string `json:"launchHash,omitempty"`

	// conditions are the pool's state: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// BrowserPool keeps warm runners that sessions with matching launch-time
// settings claim, so that they skip the runner's start.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=bp,categories=browserfleet
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Claimed",type=integer,JSONPath=`.status.claimedReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 57",message="metadata.name must be at most 57 characters: it labels the pool's runner pods, whose names add 6"
type BrowserPool struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the pool's desired state.
	// +required
	Spec BrowserPoolSpec `json:"spec,omitzero"`

	// status is the pool's observed state.
	// +optional
	Status BrowserPoolStatus `json:"status,omitempty"` //nolint:kubeapilinter // a value, as in every kubebuilder API; the apiserver starts it empty
}

// BrowserPoolList is a list of BrowserPools.
// +kubebuilder:object:root=true
type BrowserPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BrowserPool `json:"items"`
}
