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

package v1

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

const sessionName = "0b8e6f2c-5d1a-4c1e-9a43-3b2f8d7e6a10"

func secretRef(key string) *v1alpha1.SecretKeyReference {
	return &v1alpha1.SecretKeyReference{Name: sessionName + "-request-secrets", Key: key}
}

func TestToSession(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		modelKey   string
		wantSpec   v1alpha1.BrowserSessionSpec
		wantSecret map[string]string // nil: no Secret
	}{
		{
			name: "minimal; deprecated fields dropped",
			body: `{"modelName":"openai/gpt-4o","waitForCaptchaSolves":true,"actTimeoutMs":5000,"verbose":1,"domSettleTimeoutMs":2500,
				"systemPrompt":"be brief","selfHeal":true,"experimental":false,"cloudSessionCreateParams":{"projectId":"old"}}`,
			wantSpec: v1alpha1.BrowserSessionSpec{
				Model: v1alpha1.ModelSpec{Name: "openai/gpt-4o"}, Verbose: ptr(int32(1)), DOMSettleTimeoutMs: ptr(int32(2500)),
				SystemPrompt: "be brief", SelfHeal: ptr(true), Experimental: ptr(false),
				CloudSessionCreateParams: &v1alpha1.CloudSessionCreateParams{},
			},
		},
		{
			name: "proxies true, timeout in seconds, userMetadata any JSON",
			body: `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":true,"timeout":900,"region":"us-east-1","keepAlive":true,
				"userMetadata":{"n":1.5,"s":"x","l":[1, "two"],"o":{"deep":{"k":null}},"b":false}}}`,
			wantSpec: v1alpha1.BrowserSessionSpec{
				Model: v1alpha1.ModelSpec{Name: "openai/gpt-4o"},
				CloudSessionCreateParams: &v1alpha1.CloudSessionCreateParams{
					Proxies:        []v1alpha1.Proxy{{Type: v1alpha1.ProxyTypeCloud}},
					TimeoutSeconds: 900, Region: "us-east-1", KeepAlive: ptr(true),
					UserMetadata: map[string]apiextensionsv1.JSON{
						"n": {Raw: []byte(`1.5`)}, "s": {Raw: []byte(`"x"`)}, "l": {Raw: []byte(`[1,"two"]`)},
						"o": {Raw: []byte(`{"deep":{"k":null}}`)}, "b": {Raw: []byte(`false`)},
					},
				},
			},
		},
		{
			name: "proxies false means none",
			body: `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":false}}`,
			wantSpec: v1alpha1.BrowserSessionSpec{
				Model: v1alpha1.ModelSpec{Name: "openai/gpt-4o"}, CloudSessionCreateParams: &v1alpha1.CloudSessionCreateParams{},
			},
		},
		{
			name: "proxy array; external passwords and the model key go to the Secret",
			body: `{"modelName":"openai/gpt-4o","browser":{"type":"cloud"},"cloudSessionCreateParams":{"proxies":[
				{"type":"cloud","domainPattern":"(.*\\.)?example\\.com","geolocation":{"country":"FR","city":"Paris"}},
				{"type":"external","server":"http://p1:3128","username":"u1","password":"hunter2-first"},
				{"type":"external","server":"http://p2:3128"},
				{"type":"external","server":"http://p3:3128","username":"u3","password":"hunter2-third"}],
				"browserSettings":{"os":"linux","viewport":{"width":1024,"height":768},"context":{"id":"ctx-1","persist":true},
				"fingerprint":{"browsers":["chrome","edge"],"devices":["desktop"],"operatingSystems":["linux"],"httpVersion":"2","locales":["en-US"],
				"screen":{"minWidth":800,"maxWidth":1920}}}}}`,
			modelKey: "sk-model-secret-value",
			wantSpec: v1alpha1.BrowserSessionSpec{
				Model:   v1alpha1.ModelSpec{Name: "openai/gpt-4o", APIKeySecretRef: secretRef("model-api-key")},
				Browser: &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeCloud},
				CloudSessionCreateParams: &v1alpha1.CloudSessionCreateParams{
					BrowserSettings: &v1alpha1.BrowserSettings{
						OS: "linux", Viewport: &v1alpha1.Viewport{Width: 1024, Height: 768},
						Context: &v1alpha1.BrowserContext{ID: "ctx-1", Persist: ptr(true)},
						Fingerprint: &v1alpha1.Fingerprint{
							Browsers: []v1alpha1.FingerprintBrowser{"chrome", "edge"}, Devices: []v1alpha1.FingerprintDevice{"desktop"},
							OperatingSystems: []v1alpha1.FingerprintOS{"linux"}, HTTPVersion: "2", Locales: []string{"en-US"},
							Screen: &v1alpha1.Screen{MinWidth: ptr(int32(800)), MaxWidth: ptr(int32(1920))},
						},
					},
					Proxies: []v1alpha1.Proxy{
						{Type: v1alpha1.ProxyTypeCloud, DomainPattern: `(.*\.)?example\.com`, Geolocation: &v1alpha1.ProxyGeolocation{Country: "FR", City: "Paris"}},
						{Type: v1alpha1.ProxyTypeExternal, Server: "http://p1:3128", Username: "u1", PasswordSecretRef: secretRef("proxy-1-password")},
						{Type: v1alpha1.ProxyTypeExternal, Server: "http://p2:3128"},
						{Type: v1alpha1.ProxyTypeExternal, Server: "http://p3:3128", Username: "u3", PasswordSecretRef: secretRef("proxy-3-password")},
					},
				},
			},
			wantSecret: map[string]string{
				"model-api-key":    "sk-model-secret-value",
				"proxy-1-password": "hunter2-first",
				"proxy-3-password": "hunter2-third",
			},
		},
		{
			name: "local launch options; ignoreDefaultArgs true; launch proxy password",
			body: `{"modelName":"google/gemini-2.5-flash","browser":{"type":"local","cdpUrl":"ws://h:9222","launchOptions":{
				"args":["--lang=fr"],"headless":true,"ignoreDefaultArgs":true,"port":9222,"userDataDir":"p","preserveUserDataDir":true,
				"proxy":{"server":"http://proxy:3128","bypass":"localhost","username":"me","password":"launch-pw-secret"},
				"locale":"fr-FR","viewport":{"width":1280,"height":720},"deviceScaleFactor":1.5,"connectTimeoutMs":10000,
				"cdpHeaders":{"X-Trace":"1"},"acceptDownloads":true,"downloadsPath":"dl"}}}`,
			wantSpec: v1alpha1.BrowserSessionSpec{
				Model: v1alpha1.ModelSpec{Name: "google/gemini-2.5-flash"},
				Browser: &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, CDPURLSecretRef: secretRef("cdp-url"), LaunchOptions: &v1alpha1.LaunchOptions{
					Args: []v1alpha1.LaunchArg{"--lang=fr"}, Headless: ptr(true), IgnoreAllDefaultArgs: ptr(true), Port: ptr(int32(9222)),
					UserDataDir: "p", PreserveUserDataDir: ptr(true),
					Proxy:  &v1alpha1.LaunchProxy{Server: "http://proxy:3128", Bypass: "localhost", Username: "me", PasswordSecretRef: secretRef("launch-proxy-password")},
					Locale: "fr-FR", Viewport: &v1alpha1.Viewport{Width: 1280, Height: 720}, DeviceScaleFactor: ptr(1.5),
					ConnectTimeoutMs: ptr(int32(10000)), CDPHeadersSecretRef: secretRef("cdp-headers"), AcceptDownloads: ptr(true), DownloadsPath: "dl",
				}},
			},
			// The cdpUrl and its headers are secrets: hosted browsers carry
			// tokens in them.
			wantSecret: map[string]string{"launch-proxy-password": "launch-pw-secret", "cdp-url": "ws://h:9222", "cdp-headers": `{"X-Trace":"1"}`},
		},
		{
			name: "ignoreDefaultArgs list stays a list",
			body: `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"ignoreDefaultArgs":["--mute-audio","--hide-scrollbars"]}}}`,
			wantSpec: v1alpha1.BrowserSessionSpec{
				Model: v1alpha1.ModelSpec{Name: "openai/gpt-4o"},
				Browser: &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, LaunchOptions: &v1alpha1.LaunchOptions{
					IgnoreDefaultArgs: []string{"--mute-audio", "--hide-scrollbars"},
				}},
			},
		},
		{
			name: "ignoreDefaultArgs false means the defaults",
			body: `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"ignoreDefaultArgs":false}}}`,
			wantSpec: v1alpha1.BrowserSessionSpec{
				Model:   v1alpha1.ModelSpec{Name: "openai/gpt-4o"},
				Browser: &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, LaunchOptions: &v1alpha1.LaunchOptions{}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, verr := DecodeStart([]byte(tt.body))
			if verr != nil {
				t.Fatalf("DecodeStart: %v", verr)
			}
			req.ModelAPIKey = tt.modelKey
			session, secret, err := req.ToSession(sessionName, "project-a")
			if err != nil {
				t.Fatalf("ToSession: %v", err)
			}
			if session.Name != sessionName || session.Namespace != "project-a" || session.Kind != "BrowserSession" ||
				session.APIVersion != v1alpha1.GroupVersion.String() {
				t.Errorf("session meta = %+v %+v", session.TypeMeta, session.ObjectMeta)
			}
			if diff := cmp.Diff(tt.wantSpec, session.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}

			if tt.wantSecret == nil {
				if secret != nil {
					t.Fatalf("want no Secret, got %+v", secret)
				}
				return
			}
			if secret == nil {
				t.Fatal("want a Secret, got none")
			}
			if secret.Name != sessionName+"-request-secrets" || secret.Namespace != "project-a" || secret.Type != corev1.SecretTypeOpaque {
				t.Errorf("secret meta = %+v, type %q", secret.ObjectMeta, secret.Type)
			}
			if len(secret.OwnerReferences) != 0 {
				t.Errorf("owner references are the caller's to set, got %v", secret.OwnerReferences)
			}
			got := map[string]string{}
			for k, v := range secret.Data {
				got[k] = string(v)
			}
			if diff := cmp.Diff(tt.wantSecret, got); diff != "" {
				t.Errorf("secret data (-want +got):\n%s", diff)
			}
			// No secret value anywhere in the session as stored.
			raw, err := json.Marshal(session)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.wantSecret {
				if strings.Contains(string(raw), v) {
					t.Errorf("secret %s leaked into the BrowserSession: %s", k, raw)
				}
			}
			// Every ref points into this Secret at a key it holds.
			for _, ref := range refsOf(session) {
				if ref.Name != secret.Name {
					t.Errorf("ref %+v names another Secret", ref)
				}
				if _, ok := secret.Data[ref.Key]; !ok {
					t.Errorf("ref %+v names a missing key", ref)
				}
			}
			if len(refsOf(session)) != len(secret.Data) {
				t.Errorf("%d refs for %d keys", len(refsOf(session)), len(secret.Data))
			}
		})
	}
}

// refsOf lists every secretKeyRef of a session.
func refsOf(s *v1alpha1.BrowserSession) []v1alpha1.SecretKeyReference {
	var refs []v1alpha1.SecretKeyReference
	if r := s.Spec.Model.APIKeySecretRef; r != nil {
		refs = append(refs, *r)
	}
	if b := s.Spec.Browser; b != nil {
		if b.CDPURLSecretRef != nil {
			refs = append(refs, *b.CDPURLSecretRef)
		}
		if lo := b.LaunchOptions; lo != nil {
			if lo.CDPHeadersSecretRef != nil {
				refs = append(refs, *lo.CDPHeadersSecretRef)
			}
			if lo.Proxy != nil && lo.Proxy.PasswordSecretRef != nil {
				refs = append(refs, *lo.Proxy.PasswordSecretRef)
			}
		}
	}
	if c := s.Spec.CloudSessionCreateParams; c != nil {
		for _, p := range c.Proxies {
			if p.PasswordSecretRef != nil {
				refs = append(refs, *p.PasswordSecretRef)
			}
		}
	}
	return refs
}

func TestToSessionRefusals(t *testing.T) {
	req, verr := DecodeStart([]byte(`{"modelName":"openai/gpt-4o","cloudSessionID":"abc"}`))
	if verr != nil {
		t.Fatal(verr)
	}
	if _, _, err := req.ToSession(sessionName, "p"); !errors.Is(err, ErrResume) {
		t.Errorf("cloudSessionID: err = %v, want ErrResume", err)
	}
	req.CloudSessionID = ""
	if _, _, err := req.ToSession("Not_A_Label", "p"); err == nil {
		t.Error("an invalid session name was accepted")
	}
}

func TestUnionsRoundTrip(t *testing.T) {
	for _, body := range []string{
		`{"proxies":true}`,
		`{"proxies":[{"type":"external","server":"http://p"}]}`,
	} {
		var c CloudSessionCreateParams
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != body {
			t.Errorf("round trip of %s gave %s", body, out)
		}
	}
	for _, body := range []string{`{"ignoreDefaultArgs":false}`, `{"ignoreDefaultArgs":["--a"]}`} {
		var lo LaunchOptions
		if err := json.Unmarshal([]byte(body), &lo); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(lo)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != body {
			t.Errorf("round trip of %s gave %s", body, out)
		}
	}
}
