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

package controllers

import (
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/browserfleet/browserfleet/api/config/v1alpha1"
	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// The Helm chart and config/ configure runner pods through the manager's
// Configuration file; NewOptions turns it into these options.
func TestNewOptions(t *testing.T) {
	cfg, err := configv1alpha1.Decode([]byte(`
apiVersion: config.browserfleet.io/v1alpha1
kind: Configuration
runner:
  image: registry.test/runner:v2
  imagePullPolicy: Always
  command: [/usr/bin/tini, --, /runner]
  args: [--log-format=text]
  resources:
    requests: {cpu: 500m, memory: 1Gi}
    limits: {cpu: 3, memory: 3Gi}
  shmSize: 512Mi
  tmpSize: 4Gi
  runAsUser: 1001
  terminationGracePeriodSeconds: 20
  forceDeleteAfter: 5m
  nodeSelector: {pool: browsers, kubernetes.io/arch: amd64}
  tolerations:
    - {key: pool, operator: Exists, effect: NoSchedule}
    - {key: d, operator: Equal, value: c, effect: NoExecute, tolerationSeconds: 300}
  runtimeClassName: gvisor
  modelBaseURLs:
    openai: http://vllm.models:8000/v1
    anthropic: https://gateway.example/anthropic
  allowedExecutables: [/opt/chrome/chrome, /usr/bin/chromium]
  egress:
    allowCIDRs: [10.20.0.0/16, "fd00:1::7"]
    clusterCIDRs: [34.118.0.0/16]
  otlpEndpoint: http://otel-collector.observability:4318
sessions:
  defaultTimeout: 15m
  maxTimeout: 2h
  ttlAfterEnded: 10m
  secretWait: 20s
  startupTimeout: 3m
quota:
  concurrentSessions: 3
  liveSessions: 5
  projects:
    - {namespace: team-a, concurrentSessions: 20, liveSessions: 100}
    - {namespace: team-b, liveSessions: 7}
tasks:
  sessionWait: 45s
  defaultActiveDeadline: 1h
  maxRunning: 7
`))
	if err != nil {
		t.Fatal(err)
	}
	opts, err := NewOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultOptions()
	want.Runner = RunnerConfig{
		Image:           "registry.test/runner:v2",
		ImagePullPolicy: corev1.PullAlways,
		Command:         []string{"/usr/bin/tini", "--", "/runner"},
		Args:            []string{"--log-format=text"},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("3Gi")},
		},
		ShmSize:                       resource.MustParse("512Mi"),
		TmpSize:                       resource.MustParse("4Gi"),
		RunAsUser:                     1001,
		TerminationGracePeriodSeconds: 20,
		NodeSelector:                  map[string]string{"pool": "browsers", "kubernetes.io/arch": "amd64"},
		Tolerations: []corev1.Toleration{
			{Key: "pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			{Key: "d", Operator: corev1.TolerationOpEqual, Value: "c", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		},
		RuntimeClassName:   "gvisor",
		Regions:            RegionConfig{NodeLabel: corev1.LabelTopologyRegion},
		ModelBaseURLs:      map[string]string{"openai": "http://vllm.models:8000/v1", "anthropic": "https://gateway.example/anthropic"},
		EgressAllowCIDRs:   []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16"), netip.MustParsePrefix("fd00:1::7/128")},
		EgressClusterCIDRs: []netip.Prefix{netip.MustParsePrefix("34.118.0.0/16")},
		AllowedExecutables: []string{"/opt/chrome/chrome", "/usr/bin/chromium"},
		OTLPEndpoint:       "http://otel-collector.observability:4318",
	}
	want.Sessions = SessionConfig{DefaultTimeout: 15 * time.Minute, MaxTimeout: 2 * time.Hour, DefaultTTLAfterEnded: 10 * time.Minute, SecretWait: 20 * time.Second, StartupTimeout: 3 * time.Minute, ForceDeleteAfter: 5 * time.Minute}
	want.TaskSessionWait = 45 * time.Second
	want.Tasks.DefaultActiveDeadline = time.Hour
	want.Tasks.MaxRunning = 7
	want.Quota = quota.Config{Default: quota.Limits{ConcurrentSessions: 3, LiveSessions: 5}, Projects: map[string]quota.Limits{
		"team-a": {ConcurrentSessions: 20, LiveSessions: 100},
		"team-b": {LiveSessions: 7},
	}}
	quantities := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	prefixes := cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })
	if diff := cmp.Diff(want, opts, quantities, prefixes); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	// The pod the options build carries them.
	pod, err := constructRunnerPod(wrappers.MakeBrowserSession("s", "ns").Obj(), opts.Runner)
	if err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(pod.Spec.RuntimeClassName, ""); got != "gvisor" {
		t.Errorf("runtime class %q", got)
	}
	if diff := cmp.Diff(want.Runner.Tolerations, pod.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Runner.NodeSelector, pod.Spec.NodeSelector); diff != "" {
		t.Errorf("node selector (-want +got):\n%s", diff)
	}
	// The runner gets the egress ranges and the allowed executables as its
	// own flags, before the operator's arguments.
	wantArgs := []string{
		"--egress-allow-cidr=10.20.0.0/16", "--egress-allow-cidr=fd00:1::7/128", "--egress-cluster-cidr=34.118.0.0/16",
		"--allowed-executable=/opt/chrome/chrome", "--allowed-executable=/usr/bin/chromium",
		"--log-format=text",
	}
	if diff := cmp.Diff(wantArgs, pod.Spec.Containers[0].Args); diff != "" {
		t.Errorf("runner args (-want +got):\n%s", diff)
	}
}

// The options own their maps and lists: changing them changes no
// Configuration, nor the next options made from it.
func TestNewOptionsCopies(t *testing.T) {
	cfg := configv1alpha1.Default()
	cfg.Runner.NodeSelector = map[string]string{"pool": "browsers"}
	opts, err := NewOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts.Runner.NodeSelector["pool"] = "other"
	opts.Runner.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("9")
	if cfg.Runner.NodeSelector["pool"] != "browsers" || cfg.Runner.Resources.Requests.Cpu().String() != configv1alpha1.DefaultRunnerCPURequest {
		t.Errorf("the options share the configuration's maps: %v %v", cfg.Runner.NodeSelector, cfg.Runner.Resources.Requests)
	}
}

// The defaults are the Configuration's (api/config/v1alpha1), the one
// place they are written.
func TestDefaultOptions(t *testing.T) {
	want := Options{
		Runner: RunnerConfig{
			Image:           "ghcr.io/browserfleet/runner:v0.1.0",
			ImagePullPolicy: corev1.PullIfNotPresent,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")},
			},
			ShmSize:                       resource.MustParse("1Gi"),
			TmpSize:                       resource.MustParse("2Gi"),
			RunAsUser:                     65532,
			TerminationGracePeriodSeconds: 15,
			Regions:                       RegionConfig{NodeLabel: corev1.LabelTopologyRegion},
		},
		Sessions:        SessionConfig{DefaultTimeout: time.Hour, MaxTimeout: 24 * time.Hour, DefaultTTLAfterEnded: time.Hour, SecretWait: 30 * time.Second, StartupTimeout: 5 * time.Minute, ForceDeleteAfter: 2 * time.Minute},
		Quota:           quota.DefaultConfig(),
		TaskSessionWait: 30 * time.Second,
		Tasks: TaskConfig{
			DefaultActiveDeadline: 15 * time.Minute, MaxRunning: 1000, RunnerAttempts: 5, RetryBackoff: time.Second, MaxRetryBackoff: 15 * time.Second,
			CallTimeout: 45 * time.Second, DeadlineGrace: 30 * time.Second, StatusInterval: time.Second,
		},
	}
	quantities := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	if diff := cmp.Diff(want, DefaultOptions(), quantities); diff != "" {
		t.Errorf("default options (-want +got):\n%s", diff)
	}
}

// The defaults leave runner pods unplaced: no node selector, tolerations
// or runtime class unless the flags set them.
func TestDefaultOptionsPlaceNothing(t *testing.T) {
	r := DefaultOptions().Runner
	if r.NodeSelector != nil || r.Tolerations != nil || r.RuntimeClassName != "" {
		t.Errorf("default placement %v %v %q", r.NodeSelector, r.Tolerations, r.RuntimeClassName)
	}
	// Two option sets do not share their resource lists: callers write
	// into them.
	a, b := DefaultOptions(), DefaultOptions()
	a.Runner.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("9")
	if q := b.Runner.Resources.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("250m")) != 0 {
		t.Errorf("defaults share their resource lists: %s", q.String())
	}
}

// A session's runner gets the operator's endpoint for its model's provider
// unless the session names one; the BrowserSession keeps what it says.
func TestEffectiveSpecModelBaseURL(t *testing.T) {
	cfg := RunnerConfig{ModelBaseURLs: map[string]string{"openai": "http://vllm:8000/v1"}}
	for _, tc := range []struct {
		name  string
		model v1alpha1.ModelSpec
		want  string
	}{
		{"provider from the name", v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini"}, "http://vllm:8000/v1"},
		{"explicit provider", v1alpha1.ModelSpec{Name: "custom/llama", Provider: "openai"}, "http://vllm:8000/v1"},
		{"the session's own endpoint wins", v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini", BaseURL: "https://mine.example/v1"}, "https://mine.example/v1"},
		{"another provider", v1alpha1.ModelSpec{Name: "anthropic/claude-sonnet-4-5"}, ""},
	} {
		checkRunnerModelEndpoint(t, tc.name, cfg, tc.model, tc.want)
	}
	// The API's runner listener without a gateway (the cache only)
	// changes nothing: a session without a key still calls the endpoint.
	cacheOnly := RunnerConfig{ModelBaseURLs: cfg.ModelBaseURLs, ServicesURL: "http://api-runners:8001"}
	checkRunnerModelEndpoint(t, "the cache's listener, no gateway: no key", cacheOnly, v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini"}, "http://vllm:8000/v1")
	// With the API's model gateway, a session without credentials of its
	// own goes through it: no endpoint for it.
	gw := RunnerConfig{ModelBaseURLs: cfg.ModelBaseURLs, ServicesURL: "http://api-runners:8001", ModelGateway: true}
	key := &v1alpha1.SecretKeyReference{Name: "k", Key: "key"}
	for _, tc := range []struct {
		name  string
		model v1alpha1.ModelSpec
		want  string
	}{
		{"gateway: no key", v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini"}, ""},
		{"gateway: auto", v1alpha1.ModelSpec{Name: "auto"}, ""},
		{"gateway: a key of its own", v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini", APIKeySecretRef: key}, "http://vllm:8000/v1"},
		{"gateway: headers of its own", v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini", Headers: map[string]string{"X-Team": "a"}}, "http://vllm:8000/v1"},
	} {
		checkRunnerModelEndpoint(t, tc.name, gw, tc.model, tc.want)
	}
}

// checkRunnerModelEndpoint checks the model endpoint the runner of a
// session with model gets, and that the session itself is left as it was.
func checkRunnerModelEndpoint(t *testing.T, name string, cfg RunnerConfig, model v1alpha1.ModelSpec, want string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		session := wrappers.MakeBrowserSession("s", "ns").Obj()
		session.Spec.Model = model
		orig := session.DeepCopy()
		pod, err := constructRunnerPod(session, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var spec v1alpha1.BrowserSessionSpec
		for _, e := range pod.Spec.Containers[0].Env {
			if e.Name == rpc.EnvSession {
				if err := json.Unmarshal([]byte(e.Value), &spec); err != nil {
					t.Fatal(err)
				}
			}
		}
		if diff := cmp.Diff(want, spec.Model.BaseURL); diff != "" {
			t.Errorf("runner's model endpoint (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(orig, session); diff != "" {
			t.Errorf("the session changed (-before +after):\n%s", diff)
		}
	})
}

// A runner learns where the API's runner listener is, and whether the model
// gateway is there, from its own flags.
func TestRunnerArgsOfTheManagedServices(t *testing.T) {
	const listener = "http://api-runners:8001"
	for _, tc := range []struct {
		name string
		cfg  RunnerConfig
		want []string
	}{
		{"none", RunnerConfig{}, nil},
		{"the cache's listener", RunnerConfig{ServicesURL: listener}, []string{"--services-url=" + listener}},
		{"and the gateway", RunnerConfig{ServicesURL: listener, ModelGateway: true}, []string{"--services-url=" + listener, "--model-gateway"}},
		{"a gateway no runner can reach is none", RunnerConfig{ModelGateway: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runnerArgs(tc.cfg), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}
