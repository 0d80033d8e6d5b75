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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true

// Configuration is the manager's configuration file: how it builds runner
// pods, the sessions' lifetimes, the projects' quotas and how long tasks
// wait. A field left out takes its default (defaults.go); docs/configuration.md
// lists every field.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// runner is how the manager builds runner pods, one per session.
	// +optional
	Runner RunnerConfiguration `json:"runner,omitzero"`

	// sessions bounds the sessions' lifetimes.
	// +optional
	Sessions SessionsConfiguration `json:"sessions,omitzero"`

	// quota bounds each project's sessions. The API pod takes the same
	// limits as flags (cmd/api --quota-*); give both the same values.
	// +optional
	Quota QuotaConfiguration `json:"quota,omitzero"`

	// tasks configures the AgentTask controller.
	// +optional
	Tasks TasksConfiguration `json:"tasks,omitzero"`
}

// RunnerConfiguration is the template of runner pods. Runner pods run
// untrusted web content: whatever this says, they run non-root, with no
// capabilities, a read-only root filesystem and no API credentials.
type RunnerConfiguration struct {
	// image is the runner image. Default ghcr.io/browserfleet/runner:v0.1.0.
	// +optional
	Image string `json:"image,omitempty"`

	// imagePullPolicy is the runner image's pull policy: Always,
	// IfNotPresent or Never. Default IfNotPresent.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// command replaces the image's entrypoint. Default: the image's.
	// +optional
	Command []string `json:"command,omitempty"`

	// args are the runner's arguments, after the ones the manager passes
	// (egress ranges, allowed executables, searchURL).
	// +optional
	Args []string `json:"args,omitempty"`

	// resources are the runner container's requests and limits, Chromium
	// included. The cpu and memory entries left out take their defaults:
	// requests cpu 250m, memory 512Mi; limits cpu 2, memory 2Gi.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitzero"`

	// shmSize bounds the memory-backed /dev/shm Chromium uses. Default 1Gi.
	// +optional
	ShmSize *resource.Quantity `json:"shmSize,omitempty"`

	// tmpSize bounds the writable /tmp: HOME, Chromium's profile, downloads
	// and caches. Default 2Gi.
	// +optional
	TmpSize *resource.Quantity `json:"tmpSize,omitempty"`

	// runAsUser is the non-root user (and group) runners run as. Default
	// 65532.
	// +optional
	RunAsUser *int64 `json:"runAsUser,omitempty"`

	// terminationGracePeriodSeconds is how long a runner has to close its
	// browser when its pod is deleted. Default 15.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// forceDeleteAfter is how long past its grace period a runner pod may
	// stay Terminating (its node is gone, so no kubelet confirms the end)
	// before the manager deletes it with no grace; 0s: never. Default 2m.
	// +optional
	ForceDeleteAfter *metav1.Duration `json:"forceDeleteAfter,omitempty"`

	// nodeSelector places runner pods on matching nodes.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of runner pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// runtimeClassName of runner pods, e.g. gvisor for a kernel boundary
	// around the browser.
	// +optional
	RuntimeClassName string `json:"runtimeClassName,omitempty"`

	// regions is the table that places the runner of a session that names
	// a cloudSessionCreateParams.region on nodes of that region.
	// +optional
	Regions RegionsConfiguration `json:"regions,omitzero"`

	// modelBaseURLs are, by provider (openai, anthropic, google), the
	// endpoints runners use for a session whose model names none: a model
	// gateway, or a self-hosted OpenAI-compatible server (vLLM, Ollama,
	// LiteLLM) in place of the provider's own API. Absolute http or https
	// URLs.
	// +optional
	ModelBaseURLs map[string]string `json:"modelBaseURLs,omitempty"`

	// allowedExecutables are the browser binaries of the runner image, as
	// clean absolute paths, that a session's launchOptions.executablePath
	// may name. Empty: none; the manager fails a session that names one
	// before it creates a pod. The API pod takes the same list (cmd/api
	// --allowed-executable).
	// +optional
	// +listType=set
	AllowedExecutables []string `json:"allowedExecutables,omitempty"`

	// egress configures each runner's egress gate (docs/runner.md).
	// +optional
	Egress EgressConfiguration `json:"egress,omitzero"`

	// searchURL is the URL of the API's search relay (its runner listener,
	// path /runner/v1/search), which runners call for the agent's search
	// tool with their session's token. Empty: agents have no search tool.
	// Set it when the API has a search provider (cmd/api
	// --search-provider); the chart does.
	// +optional
	SearchURL string `json:"searchURL,omitempty"`

	// servicesURL is the base URL of the API's runner listener, such as
	// http://browserfleet-api-runners.browserfleet:8081, where runners
	// reach the server-side cache (/runner/v1/cache/...) and the model
	// gateway (/runner/v1/models/generate) with their session's token.
	// Empty: runners use neither (every call reports cache DISABLED, and a
	// session without a model key of its own cannot ask a model).
	// +optional
	ServicesURL string `json:"servicesURL,omitempty"`

	// modelGateway says the API at servicesURL serves the model gateway
	// (cmd/api --gateway-* flags; the chart sets it with gateway
	// providers): runners then call models with no key, headers or auth
	// of their own (and the model auto) through it, and modelBaseURLs
	// apply only to sessions with credentials of their own. Off, such
	// models are called directly, as before the gateway.
	// +optional
	ModelGateway bool `json:"modelGateway,omitempty"`

	// otlpEndpoint is the OTLP/HTTP base URL of the collector runners
	// export the spans of their operations to (they post to its
	// /v1/traces), such as http://otel-collector.observability:4318: each
	// runner gets it as OTEL_EXPORTER_OTLP_ENDPOINT and records the calls
	// of the traces the API records. Empty: runners export nothing. Give
	// the API the same collector (its OTEL_* environment); the chart does
	// both from tracing.*.
	// +optional
	OTLPEndpoint string `json:"otlpEndpoint,omitempty"`
}

// EgressConfiguration is what runners may connect to beyond the public
// internet. The browser and the runner itself connect to public addresses
// only; private, loopback, link-local and cloud metadata addresses are
// refused.
type EgressConfiguration struct {
	// allowCIDRs are ranges (CIDRs, or single addresses) runners may connect
	// to although they are not public, e.g. an in-cluster model server of
	// modelBaseURLs.
	// +optional
	AllowCIDRs []string `json:"allowCIDRs,omitempty"`

	// clusterCIDRs are the cluster's pod and service ranges, which runners
	// refuse even where they are public addresses.
	// +optional
	ClusterCIDRs []string `json:"clusterCIDRs,omitempty"`
}

// RegionsConfiguration maps a session's region to the nodes its runner
// may run on: by default nodes whose label nodeLabel has the region's name
// as its value; mappings change the key or the value for single regions.
type RegionsConfiguration struct {
	// nodeLabel is the node label whose value is a region's name. Default
	// topology.kubernetes.io/region.
	// +optional
	NodeLabel string `json:"nodeLabel,omitempty"`

	// accepted are the regions sessions may name; a session naming another
	// fails before a pod is made, and the API refuses its start (cmd/api
	// --accepted-region, the same list). Empty: every region.
	// +optional
	// +listType=set
	Accepted []string `json:"accepted,omitempty"`

	// mappings place single regions on nodes of another label or value,
	// e.g. us-west-2: {nodeLabel: example.com/zone-group, value: west}.
	// +optional
	Mappings map[string]RegionMapping `json:"mappings,omitempty"`
}

// RegionMapping is the node label of one region. A field left out is the
// default's: regions.nodeLabel, and the region's name.
type RegionMapping struct {
	// nodeLabel is the label key nodes of the region carry.
	// +optional
	NodeLabel string `json:"nodeLabel,omitempty"`

	// value is the label's value on nodes of the region.
	// +optional
	Value string `json:"value,omitempty"`
}

// SessionsConfiguration bounds the sessions' lifetimes.
type SessionsConfiguration struct {
	// defaultTimeout is a session's lifetime when its spec sets no timeout.
	// Default 1h.
	// +optional
	DefaultTimeout *metav1.Duration `json:"defaultTimeout,omitempty"`

	// maxTimeout caps every session's lifetime; 0s: no cap. Default 24h.
	// +optional
	MaxTimeout *metav1.Duration `json:"maxTimeout,omitempty"`

	// ttlAfterEnded is how long an ended or failed session is kept when its
	// spec does not say. Default 1h.
	// +optional
	TTLAfterEnded *metav1.Duration `json:"ttlAfterEnded,omitempty"`

	// startupTimeout is how long after its creation a session may take to
	// become ready (image pulls and scheduling included); then it fails
	// with its pod's reason and the pod is deleted. 0s: no limit. Default
	// 5m.
	// +optional
	StartupTimeout *metav1.Duration `json:"startupTimeout,omitempty"`

	// secretWait is how long a session, or an AgentTask, waits for the
	// Secrets it references to exist and carry the label
	// browserfleet.io/session-secret before it fails. Default 30s.
	// +optional
	SecretWait *metav1.Duration `json:"secretWait,omitempty"`
}

// QuotaConfiguration is the limits of every project (namespace): the
// defaults, unless projects names the namespace.
type QuotaConfiguration struct {
	// concurrentSessions is how many sessions of one project may have a
	// browser (a runner pod) at once; the others wait. Default 10.
	// +optional
	ConcurrentSessions *int32 `json:"concurrentSessions,omitempty"`

	// liveSessions is how many sessions of one project may exist that have
	// not ended, waiting ones included; beyond it a session fails
	// QuotaExceeded. At least concurrentSessions. Default 50.
	// +optional
	LiveSessions *int32 `json:"liveSessions,omitempty"`

	// projects override the limits of single projects.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	Projects []ProjectQuota `json:"projects,omitempty"`
}

// ProjectQuota is the limits of one project. A limit left out is the
// default's.
type ProjectQuota struct {
	// namespace is the project's namespace.
	Namespace string `json:"namespace"`

	// concurrentSessions overrides quota.concurrentSessions.
	// +optional
	ConcurrentSessions *int32 `json:"concurrentSessions,omitempty"`

	// liveSessions overrides quota.liveSessions.
	// +optional
	LiveSessions *int32 `json:"liveSessions,omitempty"`
}

// TasksConfiguration configures the AgentTask controller.
type TasksConfiguration struct {
	// sessionWait is how long an AgentTask waits for its session to exist
	// before it fails. Default 30s.
	// +optional
	SessionWait *metav1.Duration `json:"sessionWait,omitempty"`

	// defaultActiveDeadline bounds the run of an AgentTask that sets no
	// spec.activeDeadlineSeconds, counted from when its agent started.
	// Default 15m; above 0 and at most 24h (the bound of the spec field).
	// +optional
	DefaultActiveDeadline *metav1.Duration `json:"defaultActiveDeadline,omitempty"`

	// maxRunning is how many AgentTasks the manager dispatches to runners
	// and follows at once, across every session; more wait Pending for a
	// slot. Default 1000; at least 1.
	// +optional
	MaxRunning *int32 `json:"maxRunning,omitempty"`
}
