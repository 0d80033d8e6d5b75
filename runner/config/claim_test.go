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

package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// claimView is what a claim changes of a Config, with the secrets revealed.
type claimView struct {
	SessionName      string
	Spec             v1alpha1.BrowserSessionSpec
	Token            string
	ModelAPIKey      string
	ModelCredentials string
	ModelHeaders     map[string]string
	// Untouched by a claim.
	Namespace      string
	ProxyPasswords map[int]string
}

func viewOf(c *Config) claimView {
	v := claimView{
		SessionName:      c.SessionName,
		Spec:             c.Spec,
		Token:            c.Token.Reveal(),
		ModelAPIKey:      c.Secrets.ModelAPIKey.Reveal(),
		ModelCredentials: c.Secrets.ModelCredentials.Reveal(),
		Namespace:        c.Namespace,
	}
	for k, s := range c.Secrets.ModelHeaders {
		if v.ModelHeaders == nil {
			v.ModelHeaders = map[string]string{}
		}
		v.ModelHeaders[k] = s.Reveal()
	}
	for i, s := range c.Secrets.ProxyPasswords {
		if v.ProxyPasswords == nil {
			v.ProxyPasswords = map[int]string{}
		}
		v.ProxyPasswords[i] = s.Reveal()
	}
	return v
}

// poolTemplate is a pool's template as the manager hands it to a pooled
// runner: a BrowserSessionSpec with browser and cloudSessionCreateParams
// only.
func poolTemplate() v1alpha1.BrowserSessionSpec {
	return v1alpha1.BrowserSessionSpec{
		Browser: &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeCloud},
		CloudSessionCreateParams: &v1alpha1.CloudSessionCreateParams{
			BrowserSettings: &v1alpha1.BrowserSettings{Viewport: &v1alpha1.Viewport{Width: 1280, Height: 800}},
			Proxies:         []v1alpha1.Proxy{{Type: v1alpha1.ProxyTypeExternal, Server: "http://proxy.test:3128", Username: "u", PasswordSecretRef: &v1alpha1.SecretKeyReference{Name: "p", Key: "password"}}},
			Region:          "eu-central-1",
		},
	}
}

// sessionSpec is a session whose launch-time settings are the pool's,
// with settings of its own that are applied at the claim.
func sessionSpec(mutate func(*v1alpha1.BrowserSessionSpec)) v1alpha1.BrowserSessionSpec {
	s := poolTemplate()
	s.Model = v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini", BaseURL: "http://127.0.0.1:9/v1", APIKeySecretRef: &v1alpha1.SecretKeyReference{Name: "m", Key: "key"}}
	s.SystemPrompt = "be brief"
	s.Verbose = ptr.To[int32](2)
	s.DOMSettleTimeoutMs = ptr.To[int32](500)
	s.CloudSessionCreateParams.TimeoutSeconds = 600
	s.CloudSessionCreateParams.KeepAlive = ptr.To(true)
	if mutate != nil {
		mutate(&s)
	}
	return s
}

func pooledConfig() *Config {
	return &Config{
		Pool:      "warm",
		Namespace: "team-a",
		Spec:      poolTemplate(),
		Token:     NewSecret("pool-token"),
		Secrets:   SessionSecrets{ProxyPasswords: map[int]Secret{0: NewSecret("proxy-pw")}},
	}
}

func TestApplyClaim(t *testing.T) {
	claim := func(mutate func(*rpc.ClaimRequest)) rpc.ClaimRequest {
		r := rpc.ClaimRequest{
			Session:   "5b0c3f0e-1d1e-4c1a-9a57-2f4f7e1f0a11",
			Namespace: "team-a",
			Spec:      sessionSpec(nil),
			Token:     "session-token",
			Secrets: rpc.ClaimSecrets{
				ModelAPIKey:      "sk-session",
				ModelCredentials: `{"type":"service_account"}`,
				ModelHeaders:     map[string]string{"X-Tenant": "a"},
			},
		}
		if mutate != nil {
			mutate(&r)
		}
		return r
	}
	claimed := claimView{
		SessionName:      "5b0c3f0e-1d1e-4c1a-9a57-2f4f7e1f0a11",
		Spec:             sessionSpec(nil),
		Token:            "session-token",
		ModelAPIKey:      "sk-session",
		ModelCredentials: `{"type":"service_account"}`,
		ModelHeaders:     map[string]string{"X-Tenant": "a"},
		Namespace:        "team-a",
		ProxyPasswords:   map[int]string{0: "proxy-pw"},
	}
	for _, tc := range []struct {
		name     string
		cfg      func(*Config)
		req      rpc.ClaimRequest
		want     claimView // when the claim is applied
		wantCode rpc.ErrorCode
		wantMsg  []string
	}{
		{
			name: "the session's own settings are applied",
			req:  claim(nil),
			want: claimed,
		},
		{
			name: "a missing browser is the default cloud one",
			cfg: func(c *Config) {
				c.Spec = v1alpha1.BrowserSessionSpec{}
			},
			req: claim(func(r *rpc.ClaimRequest) {
				r.Spec = v1alpha1.BrowserSessionSpec{Browser: &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeCloud}, Model: v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini"}}
				r.Secrets = rpc.ClaimSecrets{}
			}),
			want: claimView{
				SessionName:    "5b0c3f0e-1d1e-4c1a-9a57-2f4f7e1f0a11",
				Spec:           v1alpha1.BrowserSessionSpec{Browser: &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeCloud}, Model: v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini"}},
				Token:          "session-token",
				Namespace:      "team-a",
				ProxyPasswords: map[int]string{0: "proxy-pw"},
			},
		},
		{
			name:     "a runner started for a session",
			cfg:      func(c *Config) { c.Pool = "" },
			req:      claim(nil),
			wantCode: rpc.CodeBadRequest,
			wantMsg:  []string{"not by a pool"},
		},
		{
			name:     "a claimed runner",
			cfg:      func(c *Config) { c.SessionName = "earlier" },
			req:      claim(nil),
			wantCode: rpc.CodeAlreadyClaimed,
		},
		{
			name:     "no session",
			req:      claim(func(r *rpc.ClaimRequest) { r.Session = "" }),
			wantCode: rpc.CodeBadRequest,
			wantMsg:  []string{"session is required"},
		},
		{
			name:     "no namespace",
			req:      claim(func(r *rpc.ClaimRequest) { r.Namespace = "" }),
			wantCode: rpc.CodeBadRequest,
			wantMsg:  []string{"namespace is required"},
		},
		{
			name:     "no token",
			req:      claim(func(r *rpc.ClaimRequest) { r.Token = "" }),
			wantCode: rpc.CodeBadRequest,
			wantMsg:  []string{"token is required"},
		},
		{
			name:     "another namespace",
			req:      claim(func(r *rpc.ClaimRequest) { r.Namespace = "team-b" }),
			wantCode: rpc.CodeLaunchMismatch,
			wantMsg:  []string{"namespace team-b", "team-a"},
		},
		{
			name: "another viewport",
			req: claim(func(r *rpc.ClaimRequest) {
				r.Spec.CloudSessionCreateParams.BrowserSettings.Viewport.Width = 1024
			}),
			wantCode: rpc.CodeLaunchMismatch,
			wantMsg:  []string{"in cloudSessionCreateParams.browserSettings.viewport.width"},
		},
		{
			name: "another region and proxy list",
			req: claim(func(r *rpc.ClaimRequest) {
				r.Spec.CloudSessionCreateParams.Region = "us-east-1"
				r.Spec.CloudSessionCreateParams.Proxies = nil
			}),
			wantCode: rpc.CodeLaunchMismatch,
			wantMsg:  []string{"in cloudSessionCreateParams.proxies, cloudSessionCreateParams.region"},
		},
		{
			name: "a local browser",
			req: claim(func(r *rpc.ClaimRequest) {
				r.Spec.Browser = &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, LaunchOptions: &v1alpha1.LaunchOptions{Args: []v1alpha1.LaunchArg{"--lang=de"}}}
			}),
			wantCode: rpc.CodeLaunchMismatch,
			wantMsg:  []string{"browser.launchOptions", "browser.type"},
		},
		{
			name: "a session that attaches to a browser",
			req: claim(func(r *rpc.ClaimRequest) {
				r.Spec.Browser.CDPURLSecretRef = &v1alpha1.SecretKeyReference{Name: "c", Key: "url"}
			}),
			wantCode: rpc.CodeLaunchMismatch,
			wantMsg:  []string{"cdpUrlSecretRef"},
		},
		{
			name: "a persistent context",
			req: claim(func(r *rpc.ClaimRequest) {
				r.Spec.CloudSessionCreateParams.BrowserSettings.Context = &v1alpha1.BrowserContext{ID: "ctx-1"}
			}),
			wantCode: rpc.CodeLaunchMismatch,
			wantMsg:  []string{"persistent context"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := pooledConfig()
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			before := viewOf(cfg)
			err := cfg.ApplyClaim(tc.req)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("ApplyClaim: %v", err)
				}
				if diff := cmp.Diff(tc.want, viewOf(cfg)); diff != "" {
					t.Errorf("the claimed config (-want +got):\n%s", diff)
				}
				return
			}
			if got := rpc.CodeOf(err); got != tc.wantCode {
				t.Fatalf("ApplyClaim = %v, want code %s", err, tc.wantCode)
			}
			for _, s := range tc.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("ApplyClaim = %q, want it to name %q", err, s)
				}
			}
			if diff := cmp.Diff(before, viewOf(cfg)); diff != "" {
				t.Errorf("a refused claim changed the config (-before +after):\n%s", diff)
			}
		})
	}
}

func TestLaunchDifferencesAreBounded(t *testing.T) {
	a := v1alpha1.BrowserPoolTemplate{Browser: &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, LaunchOptions: &v1alpha1.LaunchOptions{}}}
	b := v1alpha1.BrowserPoolTemplate{Browser: &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, LaunchOptions: &v1alpha1.LaunchOptions{
		Args: []v1alpha1.LaunchArg{"--lang=de"}, ExecutablePath: "/x", UserDataDir: "p", Headless: ptr.To(false), Devtools: ptr.To(true),
		ChromiumSandbox: ptr.To(true), IgnoreDefaultArgs: []string{"--a"}, IgnoreAllDefaultArgs: ptr.To(true), Locale: "de", HasTouch: ptr.To(true),
	}}}
	got := launchDifferences(a, b)
	if len(got) != maxNamedDifferences+1 || got[maxNamedDifferences] != "2 more fields" {
		t.Errorf("launchDifferences = %q, want %d names and 2 more fields", got, maxNamedDifferences)
	}
}

func TestConnectServices(t *testing.T) {
	type connected struct{ Gateway, Search, Cache bool }
	for _, tc := range []struct {
		name    string
		cfg     func(*Config)
		want    connected
		wantErr string
	}{
		{name: "no services", want: connected{}},
		{
			name: "the API's runner listener",
			cfg:  func(c *Config) { c.ServicesURL = "http://api.test:8081" },
			want: connected{Cache: true},
		},
		{
			name: "the API's runner listener with a model gateway",
			cfg:  func(c *Config) { c.ServicesURL, c.ModelGateway = "http://api.test:8081", true },
			want: connected{Gateway: true, Cache: true},
		},
		{
			name: "a gateway without the runner listener",
			cfg:  func(c *Config) { c.ModelGateway = true },
			want: connected{},
		},
		{
			name: "the search relay",
			cfg:  func(c *Config) { c.SearchURL = "http://api.test:8082/search" },
			want: connected{Search: true},
		},
		{
			name:    "a search relay URL that is not one",
			cfg:     func(c *Config) { c.SearchURL = "relay" },
			wantErr: "search relay URL",
		},
		{
			name: "a pooled runner before its claim",
			cfg: func(c *Config) {
				c.Pool, c.SessionName, c.ServicesURL = "warm", "", "http://api.test:8081"
			},
			wantErr: "no session yet",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{SessionName: "s1", Namespace: "team-a", Token: NewSecret("session-token")}
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			err := cfg.ConnectServices()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ConnectServices = %v, want an error about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ConnectServices: %v", err)
			}
			got := connected{Gateway: cfg.Gateway != nil, Search: cfg.Search != nil, Cache: cfg.Cache != nil}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("services (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckServices(t *testing.T) {
	for _, tc := range []struct {
		name, servicesURL, searchURL string
		wantErr                      bool
	}{
		{name: "none"},
		{name: "valid", servicesURL: "http://api.test:8081", searchURL: "http://api.test:8082/search"},
		{name: "a services URL that is not one", servicesURL: "api", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{Pool: "warm", Namespace: "team-a", Token: NewSecret("pool-token"), ServicesURL: tc.servicesURL, SearchURL: tc.searchURL, ModelGateway: true}
			err := cfg.CheckServices()
			if (err != nil) != tc.wantErr {
				t.Fatalf("CheckServices = %v, want an error: %v", err, tc.wantErr)
			}
			// The pooled runner's own config is left unconnected.
			if cfg.Gateway != nil || cfg.Search != nil || cfg.Cache != nil {
				t.Error("CheckServices connected the pooled runner's config")
			}
		})
	}
}

func TestFromEnvOfAPooledRunner(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rpc.FileToken), []byte("pool-token\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(poolTemplate())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := FromEnv([]string{
		rpc.EnvPool + "=warm",
		rpc.EnvSession + "=" + string(spec),
		rpc.EnvSessionName + "=",
		rpc.EnvNamespace + "=team-a",
		rpc.EnvSecretsDir + "=" + dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := claimView{Spec: poolTemplate(), Token: "pool-token", Namespace: "team-a"}
	if diff := cmp.Diff(want, viewOf(cfg)); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if cfg.Pool != "warm" {
		t.Errorf("Pool = %q, want warm", cfg.Pool)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	cfg.SessionName = "s1"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "gets its session when it is claimed") {
		t.Errorf("Validate of a pooled runner with a session = %v", err)
	}
}
