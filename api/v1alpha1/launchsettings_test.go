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
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

func TestLaunchSettingsOf(t *testing.T) {
	viewport := &BrowserSettings{Viewport: &Viewport{Width: 1280, Height: 720}}
	cloud := &BrowserConfig{Type: BrowserTypeCloud}
	for _, tc := range []struct {
		name   string
		spec   BrowserSessionSpec
		want   BrowserPoolTemplate
		wantOK bool
	}{
		{
			name:   "no browser settings: the default cloud browser",
			spec:   BrowserSessionSpec{Model: ModelSpec{Name: "openai/gpt-4.1-mini"}},
			want:   BrowserPoolTemplate{Browser: cloud},
			wantOK: true,
		},
		{
			name: "the session's own settings are left out",
			spec: BrowserSessionSpec{
				Model: ModelSpec{Name: "anthropic/claude-sonnet-4-5"}, SystemPrompt: "be brief", SelfHeal: ptr.To(true),
				Cache: &CacheSpec{Enabled: ptr.To(true)}, TTLSecondsAfterEnded: ptr.To[int32](5),
				CloudSessionCreateParams: &CloudSessionCreateParams{
					TimeoutSeconds: 60, KeepAlive: ptr.To(true),
					UserMetadata: map[string]apiextensionsv1.JSON{"team": {Raw: []byte(`"a"`)}},
				},
			},
			want:   BrowserPoolTemplate{Browser: cloud},
			wantOK: true,
		},
		{
			name:   "browser settings are kept",
			spec:   BrowserSessionSpec{CloudSessionCreateParams: &CloudSessionCreateParams{BrowserSettings: viewport, Region: "eu-west-1", TimeoutSeconds: 60}},
			want:   BrowserPoolTemplate{Browser: cloud, CloudSessionCreateParams: &CloudSessionCreateParams{BrowserSettings: viewport, Region: "eu-west-1"}},
			wantOK: true,
		},
		{
			name:   "empty browser settings are none",
			spec:   BrowserSessionSpec{Browser: &BrowserConfig{}, CloudSessionCreateParams: &CloudSessionCreateParams{BrowserSettings: &BrowserSettings{}, Proxies: []Proxy{}}},
			want:   BrowserPoolTemplate{Browser: cloud},
			wantOK: true,
		},
		{
			name:   "launch options are kept",
			spec:   BrowserSessionSpec{Browser: &BrowserConfig{Type: BrowserTypeLocal, LaunchOptions: &LaunchOptions{Locale: "de-DE"}}},
			want:   BrowserPoolTemplate{Browser: &BrowserConfig{Type: BrowserTypeLocal, LaunchOptions: &LaunchOptions{Locale: "de-DE"}}},
			wantOK: true,
		},
		{
			name: "attaching to a browser never claims",
			spec: BrowserSessionSpec{Browser: &BrowserConfig{Type: BrowserTypeLocal, CDPURLSecretRef: &SecretKeyReference{Name: "cdp", Key: "url"}}},
			want: BrowserPoolTemplate{Browser: &BrowserConfig{Type: BrowserTypeLocal, CDPURLSecretRef: &SecretKeyReference{Name: "cdp", Key: "url"}}},
		},
		{
			name: "a persistent context never claims",
			spec: BrowserSessionSpec{CloudSessionCreateParams: &CloudSessionCreateParams{BrowserSettings: &BrowserSettings{Context: &BrowserContext{ID: "c1"}}}},
			want: BrowserPoolTemplate{CloudSessionCreateParams: &CloudSessionCreateParams{BrowserSettings: &BrowserSettings{Context: &BrowserContext{ID: "c1"}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := LaunchSettingsOf(&tc.spec)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LaunchSettingsOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLaunchHash(t *testing.T) {
	base := BrowserPoolTemplate{CloudSessionCreateParams: &CloudSessionCreateParams{BrowserSettings: &BrowserSettings{Viewport: &Viewport{Width: 1280, Height: 720}}}}
	for _, tc := range []struct {
		name string
		a, b BrowserPoolTemplate
		same bool
	}{
		{"empty and the default browser", BrowserPoolTemplate{}, BrowserPoolTemplate{Browser: &BrowserConfig{Type: BrowserTypeCloud}}, true},
		{"claim-time settings do not count", base, BrowserPoolTemplate{CloudSessionCreateParams: &CloudSessionCreateParams{BrowserSettings: base.CloudSessionCreateParams.BrowserSettings, TimeoutSeconds: 30}}, true},
		{"another viewport", base, BrowserPoolTemplate{CloudSessionCreateParams: &CloudSessionCreateParams{BrowserSettings: &BrowserSettings{Viewport: &Viewport{Width: 1920, Height: 1080}}}}, false},
		{"local and cloud", BrowserPoolTemplate{Browser: &BrowserConfig{Type: BrowserTypeLocal}}, BrowserPoolTemplate{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ha, hb := LaunchHash(tc.a), LaunchHash(tc.b)
			if len(ha) != 40 {
				t.Fatalf("LaunchHash = %q, want 40 hex digits", ha)
			}
			if (ha == hb) != tc.same {
				t.Errorf("LaunchHash equal = %v, want %v", ha == hb, tc.same)
			}
		})
	}
}
