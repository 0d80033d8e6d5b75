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

package localkubelet

import (
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "a", "EMPTY": ""}
	lookup := func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
	for in, want := range map[string]string{
		"plain":            "plain",
		"$(A)":             "a",
		"x$(A)y$(A)":       "xaya",
		"$(EMPTY)!":        "!",
		"$(MISSING)":       "$(MISSING)",
		"$$(A)":            "$(A)",
		"$$$(A)":           "$a",
		"$A":               "$A",
		"$(A":              "$(A",
		"trailing $":       "trailing $",
		"$()":              "$()",
		"cost: $$5, $(A)!": "cost: $5, a!",
		"nested $(A$(A))":  "nested $(A$(A))",
		"$(A)$(MISSING)$$": "a$(MISSING)$",
		"unicode é $(A) ü": "unicode é a ü",
	} {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIPPool(t *testing.T) {
	p := newIPPool()
	if p.a < 2 || p.a > 254 || p.b < 0 || p.b > 255 {
		t.Fatalf("block %s out of range", p.cidr())
	}
	first, err := p.get()
	if err != nil {
		t.Fatal(err)
	}
	if want := p.addr(1); first != want {
		t.Fatalf("first address %s, want %s", first, want)
	}
	p.put(first)
	// A freed address comes back only after all others went out.
	seen := map[string]bool{}
	for i := 0; i < poolSize; i++ {
		ip, err := p.get()
		if err != nil {
			t.Fatalf("get %d: %v", i, err)
		}
		if seen[ip] {
			t.Fatalf("address %s handed out twice", ip)
		}
		seen[ip] = true
		if i < poolSize-1 && ip == first {
			t.Fatalf("freed address %s reused after %d of %d", ip, i, poolSize)
		}
		if !strings.HasPrefix(ip, strings.TrimSuffix(p.cidr(), "0/24")) {
			t.Fatalf("address %s outside %s", ip, p.cidr())
		}
	}
	if _, err := p.get(); err == nil {
		t.Fatal("a full pool handed out an address")
	}
	p.put(p.addr(7))
	if ip, err := p.get(); err != nil || ip != p.addr(7) {
		t.Fatalf("get after put = %s, %v; want %s", ip, err, p.addr(7))
	}
}

func TestArgv(t *testing.T) {
	k := &Kubelet{opts: Options{Paths: map[string]string{"/usr/bin/app": "/local/app"}}}
	img := Image{Entrypoint: []string{"/local/entry", "--e"}, Args: []string{"--default"}}
	env := map[string]string{"NAME": "x"}
	for _, tc := range []struct {
		name          string
		command, args []string
		want          []string
	}{
		{"image", nil, nil, []string{"/local/entry", "--e", "--default"}},
		{"args replace the image's", nil, []string{"--own=$(NAME)"}, []string{"/local/entry", "--e", "--own=x"}},
		{"command replaces entrypoint and args", []string{"/usr/bin/app"}, nil, []string{"/local/app"}},
		{"command and args", []string{"/usr/bin/app", "$(NAME)"}, []string{"a"}, []string{"/local/app", "x", "a"}},
		{"unmapped command", []string{"sh", "-c"}, []string{"true"}, []string{"sh", "-c", "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := k.argv(&corev1.Container{Command: tc.command, Args: tc.args}, img, env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := k.argv(&corev1.Container{Image: "empty"}, Image{}, env); err == nil {
		t.Error("no command and no entrypoint gave an argv")
	}
}

func TestContainerUser(t *testing.T) {
	id := func(v int64) *int64 { return &v }
	yes := func() *bool { b := true; return &b }
	pod := func(sc *corev1.PodSecurityContext) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: sc}}
	}
	tests := []struct {
		name    string
		root    bool
		pod     *corev1.Pod
		c       corev1.Container
		want    *syscall.Credential
		wantErr string
	}{
		{name: "not root: the Kubelet's own user", root: false, pod: pod(&corev1.PodSecurityContext{RunAsUser: id(65532)})},
		{name: "no user named", root: true, pod: pod(nil)},
		{name: "the runner pod", root: true,
			pod:  pod(&corev1.PodSecurityContext{RunAsNonRoot: yes(), RunAsUser: id(65532), RunAsGroup: id(65532), FSGroup: id(65532)}),
			want: &syscall.Credential{Uid: 65532, Gid: 65532, Groups: []uint32{}}},
		{name: "the container's user wins, the group defaults to the user's id", root: true,
			pod:  pod(&corev1.PodSecurityContext{RunAsUser: id(1000), FSGroup: id(2000), SupplementalGroups: []int64{3000, 2000}}),
			c:    corev1.Container{SecurityContext: &corev1.SecurityContext{RunAsUser: id(1001)}},
			want: &syscall.Credential{Uid: 1001, Gid: 1001, Groups: []uint32{2000, 3000}}},
		{name: "non-root without a user", root: true, pod: pod(&corev1.PodSecurityContext{RunAsNonRoot: yes()}),
			wantErr: "container has runAsNonRoot and image will run as root"},
		{name: "non-root as root", root: true, pod: pod(&corev1.PodSecurityContext{RunAsUser: id(0)}),
			c:       corev1.Container{SecurityContext: &corev1.SecurityContext{RunAsNonRoot: yes()}},
			wantErr: "container's runAsUser breaks non-root policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := containerUser(tt.root, tt.pod, &tt.c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("credential (-want +got):\n%s", diff)
			}
		})
	}
}
