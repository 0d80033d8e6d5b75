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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The defaults of the Configuration: the one place they are written. The
// manager's in-process defaults (controllers.DefaultOptions) are these, and
// the chart's values.yaml and config/manager repeat them (test/chart keeps
// them equal).
const (
	DefaultRunnerImage                   = "ghcr.io/browserfleet/runner:v0.1.0"
	DefaultRunnerImagePullPolicy         = corev1.PullIfNotPresent
	DefaultRunnerCPURequest              = "250m"
	DefaultRunnerMemoryRequest           = "512Mi"
	DefaultRunnerCPULimit                = "2"
	DefaultRunnerMemoryLimit             = "2Gi"
	DefaultRunnerShmSize                 = "1Gi"
	DefaultRunnerTmpSize                 = "2Gi"
	DefaultRunnerRunAsUser               = 65532
	DefaultTerminationGracePeriodSeconds = 15
	DefaultForceDeleteAfter              = 2 * time.Minute
	// DefaultRegionNodeLabel is the well-known label of a node's region.
	DefaultRegionNodeLabel = corev1.LabelTopologyRegion

	DefaultSessionTimeout        = time.Hour
	DefaultSessionMaxTimeout     = 24 * time.Hour
	DefaultSessionTTLAfterEnded  = time.Hour
	DefaultSessionStartupTimeout = 5 * time.Minute
	DefaultSessionSecretWait     = 30 * time.Second

	DefaultConcurrentSessions = 10
	DefaultLiveSessions       = 50

	DefaultTaskSessionWait          = 30 * time.Second
	DefaultTaskActiveDeadline       = 15 * time.Minute
	DefaultTaskMaxRunning     int32 = 1000
)

// MaxTaskActiveDeadline is the longest tasks.defaultActiveDeadline, as an
// AgentTask's spec.activeDeadlineSeconds allows at most a day.
const MaxTaskActiveDeadline = 24 * time.Hour

// Default is the Configuration of no file: every field its default.
func Default() *Configuration {
	cfg := &Configuration{TypeMeta: typeMeta()}
	SetDefaults(cfg)
	return cfg
}

// SetDefaults fills in every field cfg leaves out. The scheme's decoders
// call it (AddToScheme registers it).
func SetDefaults(cfg *Configuration) {
	r := &cfg.Runner
	if r.Image == "" {
		r.Image = DefaultRunnerImage
	}
	if r.ImagePullPolicy == "" {
		r.ImagePullPolicy = DefaultRunnerImagePullPolicy
	}
	// Per entry, so that a file that sets one limit keeps the other
	// defaults, as a single flag did.
	r.Resources.Requests = defaultResources(r.Resources.Requests, DefaultRunnerCPURequest, DefaultRunnerMemoryRequest)
	r.Resources.Limits = defaultResources(r.Resources.Limits, DefaultRunnerCPULimit, DefaultRunnerMemoryLimit)
	if r.ShmSize == nil {
		r.ShmSize = ptr.To(resource.MustParse(DefaultRunnerShmSize))
	}
	if r.TmpSize == nil {
		r.TmpSize = ptr.To(resource.MustParse(DefaultRunnerTmpSize))
	}
	if r.RunAsUser == nil {
		r.RunAsUser = ptr.To[int64](DefaultRunnerRunAsUser)
	}
	if r.TerminationGracePeriodSeconds == nil {
		r.TerminationGracePeriodSeconds = ptr.To[int64](DefaultTerminationGracePeriodSeconds)
	}
	defaultDuration(&r.ForceDeleteAfter, DefaultForceDeleteAfter)
	if r.Regions.NodeLabel == "" {
		r.Regions.NodeLabel = DefaultRegionNodeLabel
	}

	s := &cfg.Sessions
	defaultDuration(&s.DefaultTimeout, DefaultSessionTimeout)
	defaultDuration(&s.MaxTimeout, DefaultSessionMaxTimeout)
	defaultDuration(&s.TTLAfterEnded, DefaultSessionTTLAfterEnded)
	defaultDuration(&s.StartupTimeout, DefaultSessionStartupTimeout)
	defaultDuration(&s.SecretWait, DefaultSessionSecretWait)

	q := &cfg.Quota
	if q.ConcurrentSessions == nil {
		q.ConcurrentSessions = ptr.To[int32](DefaultConcurrentSessions)
	}
	if q.LiveSessions == nil {
		q.LiveSessions = ptr.To[int32](DefaultLiveSessions)
	}

	defaultDuration(&cfg.Tasks.SessionWait, DefaultTaskSessionWait)
	defaultDuration(&cfg.Tasks.DefaultActiveDeadline, DefaultTaskActiveDeadline)
	if cfg.Tasks.MaxRunning == nil {
		cfg.Tasks.MaxRunning = ptr.To(DefaultTaskMaxRunning)
	}
}

func defaultResources(list corev1.ResourceList, cpu, memory string) corev1.ResourceList {
	if list == nil {
		list = corev1.ResourceList{}
	}
	if _, ok := list[corev1.ResourceCPU]; !ok {
		list[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if _, ok := list[corev1.ResourceMemory]; !ok {
		list[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return list
}

func defaultDuration(d **metav1.Duration, def time.Duration) {
	if *d == nil {
		*d = &metav1.Duration{Duration: def}
	}
}

func typeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "Configuration"}
}
