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

package v1alpha1_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/browserfleet/browserfleet/api/config/v1alpha1"
)

// quantities compares resource quantities by value (2 equals 2000m).
var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

const header = "apiVersion: config.browserfleet.io/v1alpha1\nkind: Configuration\n"

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func quantity(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

// defaults is what a file that sets nothing means, written out.
func defaults() *configv1alpha1.Configuration {
	return &configv1alpha1.Configuration{
		TypeMeta: metav1.TypeMeta{APIVersion: "config.browserfleet.io/v1alpha1", Kind: "Configuration"},
		Runner: configv1alpha1.RunnerConfiguration{
			Image:           "ghcr.io/browserfleet/runner:v0.1.0",
			ImagePullPolicy: corev1.PullIfNotPresent,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")},
			},
			ShmSize:                       quantity("1Gi"),
			TmpSize:                       quantity("2Gi"),
			RunAsUser:                     ptr.To[int64](65532),
			TerminationGracePeriodSeconds: ptr.To[int64](15),
			ForceDeleteAfter:              duration(2 * time.Minute),
			Regions:                       configv1alpha1.RegionsConfiguration{NodeLabel: "topology.kubernetes.io/region"},
		},
		Sessions: configv1alpha1.SessionsConfiguration{
			DefaultTimeout: duration(time.Hour),
			MaxTimeout:     duration(24 * time.Hour),
			TTLAfterEnded:  duration(time.Hour),
			StartupTimeout: duration(5 * time.Minute),
			SecretWait:     duration(30 * time.Second),
		},
		Quota: configv1alpha1.QuotaConfiguration{ConcurrentSessions: ptr.To[int32](10), LiveSessions: ptr.To[int32](50)},
		Tasks: configv1alpha1.TasksConfiguration{SessionWait: duration(30 * time.Second), DefaultActiveDeadline: duration(15 * time.Minute), MaxRunning: ptr.To[int32](1000)},
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		want func() *configv1alpha1.Configuration
	}{{
		name: "nothing set: the defaults",
		file: header,
		want: defaults,
	}, {
		name: "empty sections: the defaults",
		file: header + "runner: {egress: {}}\nsessions: {}\nquota: {}\ntasks: {}\n",
		want: defaults,
	}, {
		name: "JSON",
		file: `{"apiVersion": "config.browserfleet.io/v1alpha1", "kind": "Configuration", "runner": {"image": "r:1"}}`,
		want: func() *configv1alpha1.Configuration {
			c := defaults()
			c.Runner.Image = "r:1"
			return c
		},
	}, {
		name: "every field",
		file: header + `
runner:
  image: registry.example.com/browserfleet/runner:v9
  imagePullPolicy: Always
  command: [/usr/bin/tini, --, /runner]
  args: ["--log-format=text", "--a,b"]
  resources:
    requests: {cpu: 500m, memory: 1Gi, ephemeral-storage: 1Gi}
    limits: {cpu: 3, memory: 3Gi}
  shmSize: 512Mi
  tmpSize: 4Gi
  runAsUser: 1001
  terminationGracePeriodSeconds: 0
  forceDeleteAfter: 0s
  nodeSelector: {pool: browsers}
  tolerations:
    - {key: pool, operator: Exists, effect: NoSchedule}
    - {key: d, operator: Equal, value: c, effect: NoExecute, tolerationSeconds: 300}
  runtimeClassName: gvisor
  regions:
    nodeLabel: example.com/region
    accepted: [us-west-2, eu-central-1]
    mappings:
      us-west-2: {nodeLabel: example.com/zone-group, value: west}
      eu-central-1: {value: frankfurt}
  modelBaseURLs: {openai: "http://vllm.models:8000/v1", google: "https://gw.example/google"}
  allowedExecutables: [/usr/bin/chromium]
  egress:
    allowCIDRs: [10.20.0.0/16, "fd00:1::7"]
    clusterCIDRs: [34.118.0.0/16]
  searchURL: http://bf-api-runners.browserfleet.svc:8001/runner/v1/search
  otlpEndpoint: http://otel-collector.observability:4318
sessions:
  defaultTimeout: 15m
  maxTimeout: 0s
  ttlAfterEnded: 0s
  startupTimeout: 3m
  secretWait: 20s
quota:
  concurrentSessions: 3
  liveSessions: 5
  projects:
    - {namespace: team-a, concurrentSessions: 20, liveSessions: 100}
    - {namespace: team-b, liveSessions: 7}
tasks:
  sessionWait: 45s
  defaultActiveDeadline: 2h
  maxRunning: 20
`,
		want: func() *configv1alpha1.Configuration {
			c := defaults()
			c.Runner = configv1alpha1.RunnerConfiguration{
				Image:           "registry.example.com/browserfleet/runner:v9",
				ImagePullPolicy: corev1.PullAlways,
				Command:         []string{"/usr/bin/tini", "--", "/runner"},
				Args:            []string{"--log-format=text", "--a,b"},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("3Gi")},
				},
				ShmSize:                       quantity("512Mi"),
				TmpSize:                       quantity("4Gi"),
				RunAsUser:                     ptr.To[int64](1001),
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				ForceDeleteAfter:              duration(0),
				NodeSelector:                  map[string]string{"pool": "browsers"},
				Tolerations: []corev1.Toleration{
					{Key: "pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
					{Key: "d", Operator: corev1.TolerationOpEqual, Value: "c", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				},
				RuntimeClassName: "gvisor",
				Regions: configv1alpha1.RegionsConfiguration{
					NodeLabel: "example.com/region",
					Accepted:  []string{"us-west-2", "eu-central-1"},
					Mappings: map[string]configv1alpha1.RegionMapping{
						"us-west-2":    {NodeLabel: "example.com/zone-group", Value: "west"},
						"eu-central-1": {Value: "frankfurt"},
					},
				},
				ModelBaseURLs:      map[string]string{"openai": "http://vllm.models:8000/v1", "google": "https://gw.example/google"},
				AllowedExecutables: []string{"/usr/bin/chromium"},
				Egress:             configv1alpha1.EgressConfiguration{AllowCIDRs: []string{"10.20.0.0/16", "fd00:1::7"}, ClusterCIDRs: []string{"34.118.0.0/16"}},
				SearchURL:          "http://bf-api-runners.browserfleet.svc:8001/runner/v1/search",
				OTLPEndpoint:       "http://otel-collector.observability:4318",
			}
			c.Sessions = configv1alpha1.SessionsConfiguration{
				DefaultTimeout: duration(15 * time.Minute),
				MaxTimeout:     duration(0),
				TTLAfterEnded:  duration(0),
				StartupTimeout: duration(3 * time.Minute),
				SecretWait:     duration(20 * time.Second),
			}
			c.Quota = configv1alpha1.QuotaConfiguration{
				ConcurrentSessions: ptr.To[int32](3),
				LiveSessions:       ptr.To[int32](5),
				Projects: []configv1alpha1.ProjectQuota{
					{Namespace: "team-a", ConcurrentSessions: ptr.To[int32](20), LiveSessions: ptr.To[int32](100)},
					{Namespace: "team-b", LiveSessions: ptr.To[int32](7)},
				},
			}
			c.Tasks = configv1alpha1.TasksConfiguration{SessionWait: duration(45 * time.Second), DefaultActiveDeadline: duration(2 * time.Hour), MaxRunning: ptr.To[int32](20)}
			return c
		},
	}, {
		name: "one resource set: the others keep their defaults",
		file: header + "runner:\n  resources:\n    limits: {memory: 4Gi}\n",
		want: func() *configv1alpha1.Configuration {
			c := defaults()
			c.Runner.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("4Gi")
			return c
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := configv1alpha1.Decode([]byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(), got, quantities); diff != "" {
				t.Errorf("configuration (-want +got):\n%s", diff)
			}
		})
	}
}

// Each bad file is refused with the path of the field at fault.
func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		want []string
	}{
		// The file itself.
		{"no apiVersion or kind", "runner: {image: r}\n", []string{"apiVersion: Required value", "kind: Required value"}},
		{"an empty file", "", []string{"apiVersion: Required value", "kind: Required value"}},
		{"another version", "apiVersion: config.browserfleet.io/v1\nkind: Configuration\n", []string{"apiVersion: Unsupported value"}},
		{"another kind", "apiVersion: config.browserfleet.io/v1alpha1\nkind: ConfigMap\n", []string{"kind: Unsupported value"}},
		{"not YAML", header + "runner: [\n", []string{"error converting YAML to JSON: yaml: line 3: did not find expected node content"}},
		{"unknown field", header + "runner:\n  imag: r\n", []string{`strict decoding error: unknown field "runner.imag"`}},
		{"unknown section", header + "runners: {}\n", []string{`strict decoding error: unknown field "runners"`}},
		{"unknown field of a project", header + "quota:\n  projects: [{namespace: a, pods: 3}]\n", []string{`strict decoding error: unknown field "quota.projects[0].pods"`}},
		{"metadata", header + "metadata: {name: x}\n", []string{`strict decoding error: unknown field "metadata"`}},
		{"a field twice", header + "runner:\n  image: a\n  image: b\n", []string{"strict decoding error: yaml: unmarshal errors:\n  line 5: key \"image\" already set in map"}},
		// Values that do not decode.
		{"duration without unit", header + "sessions: {maxTimeout: 86400}\n", []string{"sessions.maxTimeout: Invalid value"}},
		{"duration in days", header + "sessions: {maxTimeout: 1d}\n", []string{"sessions.maxTimeout: Invalid value"}},
		{"bad quantity", header + "runner: {shmSize: lots}\n", []string{"runner.shmSize: Invalid value"}},
		{"bad resource quantity", header + "runner: {resources: {requests: {cpu: two}}}\n", []string{"runner.resources.requests[cpu]: Invalid value"}},
		{"number as a string", header + "quota: {concurrentSessions: ten}\n", []string{"quota.concurrentSessions: Invalid value"}},
		{"list as a string", header + "runner: {args: --x}\n", []string{"runner.args: Invalid value"}},
		{"node selector as CSV", header + "runner: {nodeSelector: pool=browsers}\n", []string{"runner.nodeSelector: Invalid value"}},
		// Values that decode but are wrong.
		{"pull policy", header + "runner: {imagePullPolicy: Sometimes}\n", []string{"runner.imagePullPolicy: Unsupported value"}},
		{"negative quantity", header + "runner: {resources: {limits: {memory: -1Gi}}}\n", []string{"runner.resources.limits[memory]: Invalid value", "runner.resources.requests[memory]: Invalid value"}},
		{"request over limit", header + "runner: {resources: {requests: {cpu: 3}}}\n", []string{"runner.resources.requests[cpu]: Invalid value"}},
		{"bad resource name", header + "runner: {resources: {limits: {'a b': 1}}}\n", []string{"runner.resources.limits[a b]: Invalid value"}},
		{"resource claims", header + "runner: {resources: {claims: [{name: gpu}]}}\n", []string{"runner.resources.claims: Forbidden"}},
		{"zero shm", header + "runner: {shmSize: 0}\n", []string{"runner.shmSize: Invalid value"}},
		{"root runner", header + "runner: {runAsUser: 0}\n", []string{"runner.runAsUser: Invalid value"}},
		{"negative grace period", header + "runner: {terminationGracePeriodSeconds: -1}\n", []string{"runner.terminationGracePeriodSeconds: Invalid value"}},
		{"negative force delete", header + "runner: {forceDeleteAfter: -1m}\n", []string{"runner.forceDeleteAfter: Invalid value"}},
		{"node selector key", header + "runner: {nodeSelector: {'-pool': a}}\n", []string{"runner.nodeSelector[-pool]: Invalid value"}},
		{"toleration operator", header + "runner: {tolerations: [{key: a, operator: Sometimes}]}\n", []string{"runner.tolerations[0].operator: Unsupported value"}},
		{"toleration effect", header + "runner: {tolerations: [{key: a, operator: Exists, effect: Never}]}\n", []string{"runner.tolerations[0].effect: Unsupported value"}},
		{"toleration seconds without NoExecute", header + "runner: {tolerations: [{key: a, operator: Exists, tolerationSeconds: 3}]}\n", []string{"runner.tolerations[0].effect: Invalid value"}},
		{"toleration of every key with Equal", header + "runner: {tolerations: [{operator: Equal, value: a}]}\n", []string{"runner.tolerations[0].operator: Invalid value"}},
		{"runtime class", header + "runner: {runtimeClassName: gVisor}\n", []string{"runner.runtimeClassName: Invalid value"}},
		{"region label", header + "runner: {regions: {nodeLabel: 'a b'}}\n", []string{"runner.regions.nodeLabel: Invalid value"}},
		{"unknown accepted region", header + "runner: {regions: {accepted: [us-west-2, mars-1]}}\n", []string{"runner.regions.accepted[1]: Unsupported value"}},
		{"accepted region twice", header + "runner: {regions: {accepted: [us-west-2, us-west-2]}}\n", []string{"runner.regions.accepted[1]: Duplicate value"}},
		{"mapping of an unknown region", header + "runner: {regions: {mappings: {mars-1: {value: red}}}}\n", []string{"runner.regions.mappings[mars-1]: Unsupported value"}},
		{"mapping of a region not accepted", header + "runner: {regions: {accepted: [us-east-1], mappings: {us-west-2: {value: west}}}}\n", []string{"runner.regions.mappings[us-west-2]: Invalid value"}},
		{"empty mapping", header + "runner: {regions: {mappings: {us-west-2: {}}}}\n", []string{"runner.regions.mappings[us-west-2]: Required value"}},
		{"mapping label and value", header + "runner: {regions: {mappings: {us-west-2: {nodeLabel: '-x', value: 'a b'}}}}\n", []string{"runner.regions.mappings[us-west-2].nodeLabel: Invalid value", "runner.regions.mappings[us-west-2].value: Invalid value"}},
		{"unknown provider", header + "runner: {modelBaseURLs: {mistral: 'http://m:8000'}}\n", []string{"runner.modelBaseURLs[mistral]: Unsupported value"}},
		{"URL without scheme", header + "runner: {modelBaseURLs: {openai: 'vllm:8000'}}\n", []string{"runner.modelBaseURLs[openai]: Invalid value"}},
		{"URL of another scheme", header + "runner: {modelBaseURLs: {openai: 'ftp://vllm/v1'}}\n", []string{"runner.modelBaseURLs[openai]: Invalid value"}},
		{"collector without scheme", header + "runner: {otlpEndpoint: 'otel-collector:4318'}\n", []string{"runner.otlpEndpoint: Invalid value"}},
		{"collector with credentials", header + "runner: {otlpEndpoint: 'http://u:p@otel-collector:4318'}\n", []string{"runner.otlpEndpoint: Invalid value"}},
		{"relative executable", header + "runner: {allowedExecutables: [chrome]}\n", []string{"runner.allowedExecutables[0]: Invalid value"}},
		{"climbing executable", header + "runner: {allowedExecutables: [/usr/bin/chromium, /opt/chrome/../bin/sh]}\n", []string{"runner.allowedExecutables[1]: Invalid value"}},
		{"executable twice", header + "runner: {allowedExecutables: [/usr/bin/chromium, /usr/bin/chromium]}\n", []string{"runner.allowedExecutables[1]: Duplicate value"}},
		{"bits beyond the prefix", header + "runner: {egress: {allowCIDRs: [10.1.2.3/8]}}\n", []string{"runner.egress.allowCIDRs[0]: Invalid value"}},
		{"host name", header + "runner: {egress: {allowCIDRs: [10.0.0.0/8, vllm.models]}}\n", []string{"runner.egress.allowCIDRs[1]: Invalid value"}},
		{"IPv4-mapped range", header + "runner: {egress: {clusterCIDRs: ['::ffff:10.0.0.0/104']}}\n", []string{"runner.egress.clusterCIDRs[0]: Invalid value"}},
		{"zero default timeout", header + "sessions: {defaultTimeout: 0s}\n", []string{"sessions.defaultTimeout: Invalid value"}},
		{"default over max", header + "sessions: {defaultTimeout: 2h, maxTimeout: 1h}\n", []string{"sessions.defaultTimeout: Invalid value"}},
		{"negative durations", header + "sessions: {maxTimeout: -1s, ttlAfterEnded: -1s, startupTimeout: -1s, secretWait: -1s}\ntasks: {sessionWait: -1s}\n", []string{
			"sessions.maxTimeout: Invalid value", "sessions.ttlAfterEnded: Invalid value", "sessions.startupTimeout: Invalid value", "sessions.secretWait: Invalid value", "tasks.sessionWait: Invalid value",
		}},
		{"zero task deadline", header + "tasks: {defaultActiveDeadline: 0s}\n", []string{"tasks.defaultActiveDeadline: Invalid value"}},
		{"task deadline over a day", header + "tasks: {defaultActiveDeadline: 25h}\n", []string{"tasks.defaultActiveDeadline: Invalid value"}},
		{"zero running tasks", header + "tasks: {maxRunning: 0}\n", []string{"tasks.maxRunning: Invalid value"}},
		{"zero quota", header + "quota: {concurrentSessions: 0}\n", []string{"quota.concurrentSessions: Invalid value"}},
		{"negative quota", header + "quota: {concurrentSessions: -1}\n", []string{"quota.concurrentSessions: Invalid value"}},
		{"live below concurrent", header + "quota: {concurrentSessions: 20, liveSessions: 10}\n", []string{"quota.liveSessions: Invalid value"}},
		{"project without namespace", header + "quota: {projects: [{concurrentSessions: 3}]}\n", []string{"quota.projects[0].namespace: Required value"}},
		{"project namespace", header + "quota: {projects: [{namespace: Team_A, concurrentSessions: 3}]}\n", []string{"quota.projects[0].namespace: Invalid value"}},
		{"project twice", header + "quota: {projects: [{namespace: a, concurrentSessions: 3}, {namespace: a, liveSessions: 60}]}\n", []string{"quota.projects[1].namespace: Duplicate value"}},
		{"project without limits", header + "quota: {projects: [{namespace: a}]}\n", []string{"quota.projects[0]: Required value"}},
		{"negative project quota", header + "quota: {projects: [{namespace: a, concurrentSessions: -3}]}\n", []string{"quota.projects[0].concurrentSessions: Invalid value"}},
		{"project over the default live limit", header + "quota: {projects: [{namespace: a, concurrentSessions: 60}]}\n", []string{"quota.projects[0].concurrentSessions: Invalid value"}},
		{"project live below the default concurrent", header + "quota: {projects: [{namespace: a, liveSessions: 5}]}\n", []string{"quota.projects[0].liveSessions: Invalid value"}},
		{"negative project limits", header + "quota: {projects: [{namespace: a, concurrentSessions: -1, liveSessions: 0}]}\n", []string{"quota.projects[0].concurrentSessions: Invalid value", "quota.projects[0].liveSessions: Invalid value"}},
		{"bad defaults, no echo in the projects", header + "quota: {concurrentSessions: 0, projects: [{namespace: a, liveSessions: 5}]}\n", []string{"quota.concurrentSessions: Invalid value"}},
		{"project live below its concurrent", header + "quota: {projects: [{namespace: a, concurrentSessions: 5, liveSessions: 4}]}\n", []string{"quota.projects[0].liveSessions: Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := configv1alpha1.Decode([]byte(tc.file))
			if err == nil {
				t.Fatal("accepted")
			}
			if diff := cmp.Diff(tc.want, fieldErrors(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

// fieldErrors lists a decoding error's field errors as "path: type", and
// any other error whole.
func fieldErrors(err error) []string {
	errs := []error{err}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		errs = agg.Errors()
	}
	var out []string
	for _, e := range errs {
		var fe *field.Error
		if errors.As(e, &fe) {
			out = append(out, fe.Field+": "+fe.Type.String())
		} else {
			out = append(out, e.Error())
		}
	}
	return out
}

// The messages say what is wrong, and how to write it right.
func TestDecodeMessages(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{header + "sessions: {maxTimeout: 1d}\n", `sessions.maxTimeout: Invalid value: "1d": must be a duration, e.g. 90s or 1h30m`},
		{header + "sessions: {maxTimeout: 86400}\n", `sessions.maxTimeout: Invalid value: 86400: must be a duration, e.g. 90s or 1h30m`},
		{header + "runner: {shmSize: lots}\n", `runner.shmSize: Invalid value: "lots": must be a quantity, e.g. 250m, 2 or 512Mi`},
		{header + "quota: {concurrentSessions: ten}\n", `quota.concurrentSessions: Invalid value: "ten": must be of type integer`},
		{header + "runner: {modelBaseURLs: {mistral: 'http://m:8000'}}\n", `runner.modelBaseURLs[mistral]: Unsupported value: "mistral": supported values: "anthropic", "google", "openai"`},
		{header + "runner: {egress: {allowCIDRs: [10.1.2.3/8]}}\n", `runner.egress.allowCIDRs[0]: Invalid value: "10.1.2.3/8": "10.1.2.3/8" has bits set beyond its prefix length; did you mean 10.0.0.0/8?`},
		{header + "runner: {allowedExecutables: [chrome]}\n", `runner.allowedExecutables[0]: Invalid value: "chrome": must be a clean absolute path`},
		{header + "quota: {projects: [{namespace: a, concurrentSessions: 60}]}\n", `quota.projects[0].concurrentSessions: Invalid value: 60: must not exceed quota.liveSessions (50) unless liveSessions is set too`},
		{header + "runner: {regions: {accepted: [us-east-1], mappings: {us-west-2: {value: west}}}}\n", `runner.regions.mappings[us-west-2]: Invalid value: "us-west-2": maps a region that regions.accepted does not accept`},
		{"kind: Configuration\n", `apiVersion: Required value: must be config.browserfleet.io/v1alpha1`},
		{header + "runner: {otlpEndpoint: 'http://u:hunter2@otel-collector:4318'}\n", `runner.otlpEndpoint: Invalid value: must not carry credentials: runners get it in their environment`},
	} {
		_, err := configv1alpha1.Decode([]byte(tc.file))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.file, err, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(header+"runner: {image: r:1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configv1alpha1.Load(good)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Runner.Image != "r:1" || cfg.Tasks.SessionWait == nil {
		t.Errorf("loaded %+v", cfg)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(header+"runner: {imagePullPolicy: Sometimes}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = configv1alpha1.Load(bad)
	if want := "configuration " + bad + `: runner.imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}

	missing := filepath.Join(dir, "missing.yaml")
	if _, err := configv1alpha1.Load(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: %v", err)
	}
}

// Default is the decoded empty file, and valid; defaulting twice changes
// nothing.
func TestDefault(t *testing.T) {
	if diff := cmp.Diff(defaults(), configv1alpha1.Default(), quantities); diff != "" {
		t.Errorf("Default() (-want +got):\n%s", diff)
	}
	if errs := configv1alpha1.Validate(configv1alpha1.Default()); len(errs) != 0 {
		t.Errorf("the defaults are invalid: %v", errs)
	}
	twice := configv1alpha1.Default()
	configv1alpha1.SetDefaults(twice)
	if diff := cmp.Diff(configv1alpha1.Default(), twice, quantities); diff != "" {
		t.Errorf("defaulting again (-once +twice):\n%s", diff)
	}
}

// docs/configuration.md names every field of the file, and its example
// loads.
func TestDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range fieldPaths(reflect.TypeFor[configv1alpha1.Configuration](), "") {
		if !strings.Contains(string(doc), "`"+path+"`") {
			t.Errorf("docs/configuration.md does not name `%s`", path)
		}
	}
	example := regexp.MustCompile("(?s)```yaml\n(apiVersion: config.browserfleet.io/v1alpha1\n.*?)```").FindSubmatch(doc)
	if example == nil {
		t.Fatal("docs/configuration.md has no example Configuration")
	}
	if _, err := configv1alpha1.Decode(example[1]); err != nil {
		t.Errorf("the example of docs/configuration.md: %v", err)
	}
}

// fieldPaths lists the JSON paths of t's fields, down to those of other
// APIs' types (corev1.Toleration ...), which are documented there.
func fieldPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			continue // TypeMeta
		}
		path := prefix + name
		out = append(out, path)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			if ft.Kind() == reflect.Slice {
				path += "[]"
			}
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == reflect.TypeFor[configv1alpha1.Configuration]().PkgPath() {
			out = append(out, fieldPaths(ft, path+".")...)
		}
	}
	return out
}
