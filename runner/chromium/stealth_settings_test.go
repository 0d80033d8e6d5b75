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

package chromium

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
)

// TestStealthSettings: what advancedStealth changes in the launch and the
// tabs' identity, and that without it nothing changes.
func TestStealthSettings(t *testing.T) {
	type result struct {
		Stealth         bool
		BlinkFeatures   any
		AcceptLanguage  string
		NoteAboutIt     bool
		ScriptConfig    *stealthConfig
		ScriptHasConfig bool
	}
	cloud := func(bs *v1alpha1.BrowserSettings, args ...v1alpha1.LaunchArg) func(*v1alpha1.BrowserSessionSpec) {
		return func(s *v1alpha1.BrowserSessionSpec) {
			runnertest.CloudSettings(bs)(s)
			s.Browser.LaunchOptions = &v1alpha1.LaunchOptions{Args: args}
		}
	}
	tests := []struct {
		name   string
		spec   func(*v1alpha1.BrowserSessionSpec)
		attach bool
		want   result
	}{
		{
			name: "off: no switch, no language, no patches",
			spec: cloud(&v1alpha1.BrowserSettings{OS: "windows"}),
			want: result{},
		},
		{
			name: "windows desktop",
			spec: cloud(&v1alpha1.BrowserSettings{OS: "windows", AdvancedStealth: ptr.To(true)}),
			want: result{Stealth: true, BlinkFeatures: "AutomationControlled", AcceptLanguage: "en-US,en", ScriptHasConfig: true, ScriptConfig: &stealthConfig{
				WebGLVendor: "Google Inc. (Intel)", WebGLRenderer: "ANGLE (Intel, Intel(R) UHD Graphics 630 (0x00003E92) Direct3D11 vs_5_0 ps_5_0, D3D11)",
				Plugins: true, Notifications: true, Chrome: true, Platform: "Win32", Languages: []string{"en-US", "en"},
			}},
		},
		{
			name: "the session's own blink switch and locale are kept",
			spec: cloud(&v1alpha1.BrowserSettings{OS: "mac", AdvancedStealth: ptr.To(true), Fingerprint: &v1alpha1.Fingerprint{Locales: []string{"de-DE"}}},
				"--disable-blink-features=AutomationControlled"),
			want: result{Stealth: true, BlinkFeatures: "AutomationControlled", AcceptLanguage: "de-DE,de", ScriptHasConfig: true, ScriptConfig: &stealthConfig{
				WebGLVendor: "Google Inc. (Apple)", WebGLRenderer: "ANGLE (Apple, ANGLE Metal Renderer: Apple M1, Unspecified Version)",
				Plugins: true, Notifications: true, Chrome: true, Platform: "MacIntel", Languages: []string{"de-DE", "de"},
			}},
		},
		{
			name: "an iPhone: no plugins, no window.chrome",
			spec: cloud(&v1alpha1.BrowserSettings{AdvancedStealth: ptr.To(true), Fingerprint: &v1alpha1.Fingerprint{
				Devices: []v1alpha1.FingerprintDevice{"mobile"}, OperatingSystems: []v1alpha1.FingerprintOS{"ios"},
			}}),
			want: result{Stealth: true, BlinkFeatures: "AutomationControlled", AcceptLanguage: "en-US,en", ScriptHasConfig: true, ScriptConfig: &stealthConfig{
				WebGLVendor: "Apple Inc.", WebGLRenderer: "Apple GPU", Notifications: true, Platform: "iPhone", Languages: []string{"en-US", "en"},
			}},
		},
		{
			name: "attached: noted, not applied",
			spec: func(s *v1alpha1.BrowserSessionSpec) {
				runnertest.CloudSettings(&v1alpha1.BrowserSettings{AdvancedStealth: ptr.To(true)})(s)
			},
			attach: true,
			want:   result{NoteAboutIt: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := runnertest.Config(tt.spec)
			if tt.attach {
				cfg = runnertest.AttachConfig("ws://127.0.0.1:9222/devtools/browser/x", nil, nil)
				tt.spec(&cfg.Spec)
				cfg.Spec.Browser = &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, CDPURLSecretRef: &v1alpha1.SecretKeyReference{Name: "request", Key: "cdp-url"}}
			}
			cfg.HeadlessShellPath = "/bin/true" // any executable: the headless shell
			s, err := newSettings(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := result{Stealth: s.stealth, AcceptLanguage: s.acceptLanguage()}
			for _, f := range s.launchFlags(testEgressProxy) {
				if f.name == "disable-blink-features" {
					got.BlinkFeatures = f.value
				}
			}
			for _, n := range s.notes {
				if strings.Contains(n, "advancedStealth") {
					got.NoteAboutIt = !strings.Contains(n, "not supported")
				}
			}
			if s.stealth {
				src, err := s.stealthSource()
				if err != nil {
					t.Fatal(err)
				}
				// The config is the argument of the script's last call.
				i := strings.LastIndex(src, "})(")
				j := strings.LastIndex(src, ");")
				got.ScriptHasConfig = i >= 0 && j > i && !strings.Contains(src, "STEALTH_CONFIG);")
				if got.ScriptHasConfig {
					got.ScriptConfig = &stealthConfig{}
					if err := json.Unmarshal([]byte(src[i+3:j]), got.ScriptConfig); err != nil {
						t.Fatalf("the script's config: %v", err)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithListSwitch(t *testing.T) {
	tests := []struct {
		name  string
		flags []flag
		want  flag
	}{
		{name: "none", want: flag{"disable-blink-features", "AutomationControlled"}},
		{name: "added to the last", flags: []flag{{"disable-blink-features", "A"}, {"disable-blink-features", "B,C"}}, want: flag{"disable-blink-features", "B,C,AutomationControlled"}},
		{name: "there already", flags: []flag{{"disable-blink-features", "AutomationControlled,B"}}, want: flag{"disable-blink-features", "AutomationControlled,B"}},
		{name: "other switches ignored", flags: []flag{{"disable-features", "X"}}, want: flag{"disable-blink-features", "AutomationControlled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withListSwitch(tt.flags, "disable-blink-features", "AutomationControlled")
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(flag{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
