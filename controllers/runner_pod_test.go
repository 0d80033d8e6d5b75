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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestSessionPhase(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status}
	}
	cases := map[string]struct {
		status v1alpha1.BrowserSessionStatus
		want   v1alpha1.BrowserSessionPhase
	}{
		"nothing yet": {want: v1alpha1.BrowserSessionPending},
		"pod created": {
			status: v1alpha1.BrowserSessionStatus{PodName: "p"},
			want:   v1alpha1.BrowserSessionStarting,
		},
		"runner not ready": {
			status: v1alpha1.BrowserSessionStatus{PodName: "p", Conditions: []metav1.Condition{cond(v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse)}},
			want:   v1alpha1.BrowserSessionStarting,
		},
		"ready": {
			status: v1alpha1.BrowserSessionStatus{PodName: "p", Conditions: []metav1.Condition{cond(v1alpha1.BrowserSessionConditionReady, metav1.ConditionTrue)}},
			want:   v1alpha1.BrowserSessionReady,
		},
		"ending wins over ready": {
			status: v1alpha1.BrowserSessionStatus{Conditions: []metav1.Condition{
				cond(v1alpha1.BrowserSessionConditionReady, metav1.ConditionTrue),
				cond(v1alpha1.BrowserSessionConditionEnding, metav1.ConditionTrue),
			}},
			want: v1alpha1.BrowserSessionEnding,
		},
		"ended wins over ending": {
			status: v1alpha1.BrowserSessionStatus{Conditions: []metav1.Condition{
				cond(v1alpha1.BrowserSessionConditionEnding, metav1.ConditionTrue),
				cond(v1alpha1.BrowserSessionConditionEnded, metav1.ConditionTrue),
			}},
			want: v1alpha1.BrowserSessionEnded,
		},
		"failed wins over everything": {
			status: v1alpha1.BrowserSessionStatus{Conditions: []metav1.Condition{
				cond(v1alpha1.BrowserSessionConditionEnded, metav1.ConditionTrue),
				cond(v1alpha1.BrowserSessionConditionFailed, metav1.ConditionTrue),
			}},
			want: v1alpha1.BrowserSessionFailed,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, sessionPhase(&tc.status)); diff != "" {
				t.Errorf("phase (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodFailure(t *testing.T) {
	cases := map[string]struct {
		status corev1.PodStatus
		want   string
	}{
		"evicted": {
			status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "low on memory"},
			want:   "Evicted: low on memory",
		},
		"oom killed": {
			status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "runner", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}},
			}}},
			want: "container runner exited with code 137 (OOMKilled)",
		},
		"termination message": {
			status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "runner", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "chromium crashed"}},
			}}},
			want: "container runner exited with code 1 (Error): chromium crashed",
		},
		"nothing reported": {
			status: corev1.PodStatus{Phase: corev1.PodFailed},
			want:   "pod phase Failed",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, podFailure(&corev1.Pod{Status: tc.status})); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetExpiry(t *testing.T) {
	created := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	r := &BrowserSessionReconciler{Sessions: SessionConfig{DefaultTimeout: time.Hour, MaxTimeout: 2 * time.Hour}}
	cases := map[string]struct {
		timeout      int32
		want         time.Time
		wantWarnings int
	}{
		"default":        {want: created.Add(time.Hour)},
		"from the spec":  {timeout: 90, want: created.Add(90 * time.Second)},
		"capped at max":  {timeout: 3 * 3600, want: created.Add(2 * time.Hour), wantWarnings: 1},
		"exactly at max": {timeout: 2 * 3600, want: created.Add(2 * time.Hour)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := wrappers.MakeBrowserSession("s", "ns")
			if tc.timeout != 0 {
				w.Timeout(tc.timeout)
			}
			s := w.Obj()
			s.CreationTimestamp = metav1.NewTime(created)
			warnings := r.setExpiry(s)
			if diff := cmp.Diff(tc.want, s.Status.ExpiresAt.Time); diff != "" {
				t.Errorf("expiresAt (-want +got):\n%s", diff)
			}
			if len(warnings) != tc.wantWarnings {
				t.Errorf("got warnings %q, want %d", warnings, tc.wantWarnings)
			}
			before := *s.Status.ExpiresAt
			r.setExpiry(s)
			if !s.Status.ExpiresAt.Equal(&before) {
				t.Errorf("expiresAt moved on a second pass")
			}
		})
	}
}

func TestSecretVolumes(t *testing.T) {
	ref := func(name, key string) *v1alpha1.SecretKeyReference {
		return &v1alpha1.SecretKeyReference{Name: name, Key: key}
	}
	token := v1alpha1.RunnerTokenSecretName("s") + "/" + rpc.TokenSecretKey
	type want struct {
		// Files maps each file of the secrets volume to secret/key.
		Files map[string]string
		// Dirs maps each other volume's mount path to its Secret.
		Dirs map[string]string
		Env  map[string]string
	}
	cases := map[string]struct {
		spec v1alpha1.BrowserSessionSpec
		want want
	}{
		"the token only": {
			want: want{
				Files: map[string]string{rpc.FileToken: token},
				Dirs:  map[string]string{},
				Env:   map[string]string{rpc.EnvSecretsDir: rpc.SecretsDir},
			},
		},
		"every reference": {
			spec: v1alpha1.BrowserSessionSpec{
				Model: v1alpha1.ModelSpec{
					Name:             "google/gemini-2.5-flash",
					APIKeySecretRef:  ref("keys", "google"),
					HeadersSecretRef: &v1alpha1.SecretReference{Name: "model-headers"},
					Auth:             &v1alpha1.ModelAuth{CredentialsSecretRef: ref("sa", "credentials.json")},
				},
				Browser: &v1alpha1.BrowserConfig{
					Type:            v1alpha1.BrowserTypeLocal,
					CDPURLSecretRef: ref("attach", "url"),
					LaunchOptions: &v1alpha1.LaunchOptions{
						CDPHeadersSecretRef: ref("attach", "headers"),
						Proxy:               &v1alpha1.LaunchProxy{Server: "http://p:1", PasswordSecretRef: ref("proxy", "launch")},
					},
				},
				CloudSessionCreateParams: &v1alpha1.CloudSessionCreateParams{Proxies: []v1alpha1.Proxy{
					{Type: v1alpha1.ProxyTypeCloud},
					{Type: v1alpha1.ProxyTypeExternal, Server: "http://p:1", PasswordSecretRef: ref("proxy", "pw")},
				}},
			},
			want: want{
				Files: map[string]string{
					rpc.FileToken:               token,
					rpc.FileModelAPIKey:         "keys/google",
					rpc.FileModelCredentials:    "sa/credentials.json",
					rpc.FileCDPURL:              "attach/url",
					rpc.FileCDPHeaders:          "attach/headers",
					rpc.FileLaunchProxyPassword: "proxy/launch",
					"proxy-1-password":          "proxy/pw",
				},
				Dirs: map[string]string{
					rpc.ModelHeadersDir: "model-headers",
				},
				Env: map[string]string{
					rpc.EnvSecretsDir:      rpc.SecretsDir,
					rpc.EnvModelHeadersDir: rpc.ModelHeadersDir,
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := wrappers.MakeBrowserSession("s", "ns").Obj()
			s.Spec = tc.spec
			volumes, mounts, env := secretVolumes(&s.Spec, v1alpha1.RunnerTokenSecretName(s.Name))
			got := want{Files: map[string]string{}, Dirs: map[string]string{}, Env: map[string]string{}}
			byName := map[string]corev1.Volume{}
			for _, v := range volumes {
				byName[v.Name] = v
				switch {
				case v.Projected != nil:
					if m := *v.Projected.DefaultMode; m != 0o400 {
						t.Errorf("volume %s has mode %o, want 0400", v.Name, m)
					}
					for _, src := range v.Projected.Sources {
						for _, item := range src.Secret.Items {
							got.Files[item.Path] = src.Secret.Name + "/" + item.Key
						}
					}
				case v.Secret != nil:
					if m := *v.Secret.DefaultMode; m != 0o400 {
						t.Errorf("volume %s has mode %o, want 0400", v.Name, m)
					}
				default:
					t.Errorf("volume %s is neither a Secret nor a projected volume", v.Name)
				}
			}
			for _, m := range mounts {
				if !m.ReadOnly {
					t.Errorf("mount %s is writable", m.MountPath)
				}
				if v := byName[m.Name]; v.Secret != nil {
					got.Dirs[m.MountPath] = v.Secret.SecretName
				}
			}
			for _, e := range env {
				got.Env[e.Name] = e.Value
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("secret volumes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConstructRunnerPodIsDeterministic(t *testing.T) {
	s := wrappers.MakeBrowserSession("s", "ns").Obj()
	a, err := constructRunnerPod(s, DefaultOptions().Runner)
	if err != nil {
		t.Fatal(err)
	}
	b, err := constructRunnerPod(s, DefaultOptions().Runner)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two builds differ (-first +second):\n%s", diff)
	}
	if a.Name != "s-runner" || a.Labels[v1alpha1.LabelSession] != "s" || a.Labels[v1alpha1.LabelManagedBy] != v1alpha1.ManagedBy {
		t.Errorf("pod name %q labels %v", a.Name, a.Labels)
	}
}

// TestUserMetadataStaysOutOfThePod: a session's userMetadata (the caller's
// free-form data, as large as a resource) is in no environment variable of
// its runner; the runner gets the rest of the spec.
func TestUserMetadataStaysOutOfThePod(t *testing.T) {
	s := wrappers.MakeBrowserSession("s", "ns").Cloud(&v1alpha1.CloudSessionCreateParams{
		Region:       "eu-central-1",
		UserMetadata: map[string]apiextensionsv1.JSON{"customer": {Raw: []byte(`"` + strings.Repeat("m", 200<<10) + `"`)}},
	}).Obj()
	pod, err := constructRunnerPod(s, DefaultOptions().Runner)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range pod.Spec.Containers[0].Env {
		if strings.Contains(e.Value, "mmmm") {
			t.Errorf("env %s holds the userMetadata", e.Name)
		}
		if e.Name == rpc.EnvSession && !strings.Contains(e.Value, `"region":"eu-central-1"`) {
			t.Errorf("the runner's spec lost the rest of cloudSessionCreateParams: %s", e.Value)
		}
	}
	if s.Spec.CloudSessionCreateParams.UserMetadata == nil {
		t.Error("the session itself lost its userMetadata")
	}
}
