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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestConfigFromEnv(t *testing.T) {
	spec := v1alpha1.BrowserSessionSpec{
		Model: v1alpha1.ModelSpec{
			Name:             "openai/gpt-4.1-mini",
			BaseURL:          "http://vllm:8000/v1",
			Headers:          map[string]string{"X-Team": "search", "X-Api-Key": "plain"},
			APIKeySecretRef:  &v1alpha1.SecretKeyReference{Name: "keys", Key: "openai"},
			HeadersSecretRef: &v1alpha1.SecretReference{Name: "headers"},
		},
		DOMSettleTimeoutMs: ptr.To(int32(1500)),
		Browser:            &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeCloud},
		CloudSessionCreateParams: &v1alpha1.CloudSessionCreateParams{
			Proxies: []v1alpha1.Proxy{
				{Type: v1alpha1.ProxyTypeCloud},
				{Type: v1alpha1.ProxyTypeExternal, Server: "http://proxy:3128", Username: "u",
					PasswordSecretRef: &v1alpha1.SecretKeyReference{Name: "p", Key: "k"}},
			},
		},
	}
	raw, _ := json.Marshal(spec)
	// The secrets come as files, one trailing newline (an editor's, kept
	// by kubectl create secret --from-file) dropped.
	secrets := runnertest.SecretVolume(t, map[string]string{
		rpc.FileToken:       "tok\n",
		rpc.FileModelAPIKey: "sk-1",
		fmt.Sprintf(rpc.FileCloudProxyPasswordFormat, 1): "proxy-pw",
	})
	headers := runnertest.SecretVolume(t, map[string]string{"X-Api-Key": "secret-header"})
	env := []string{
		rpc.EnvSessionName + "=abc",
		rpc.EnvNamespace + "=team-a",
		rpc.EnvSession + "=" + string(raw),
		rpc.EnvPodIP + "=10.1.2.3",
		rpc.EnvSecretsDir + "=" + secrets,
		rpc.EnvModelHeadersDir + "=" + headers,
		"UNRELATED=1",
	}
	cfg, err := config.FromEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	runnertest.Want(t, "session", cfg.SessionName, "abc")
	runnertest.Want(t, "namespace", cfg.Namespace, "team-a")
	runnertest.Want(t, "token", cfg.Token.Reveal(), "tok")
	runnertest.Want(t, "address", cfg.Address(), "10.1.2.3:8080")
	runnertest.Want(t, "proxy 1 password", cfg.Secrets.ProxyPasswords[1].Reveal(), "proxy-pw")
	runnertest.Want(t, "chromium", cfg.ChromiumPath, config.DefaultChromiumPath)
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	wantModel := rpc.ModelConfig{
		ModelName: "openai/gpt-4.1-mini",
		APIKey:    "sk-1",
		BaseURL:   "http://vllm:8000/v1",
		// The secret header wins over the plain one of the same name.
		Headers: map[string]string{"X-Team": "search", "X-Api-Key": "secret-header"},
	}
	if diff := cmp.Diff(wantModel, cfg.DefaultModel()); diff != "" {
		t.Errorf("DefaultModel (-want +got):\n%s", diff)
	}
	s, err := newSettings(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.proxies) != 1 || s.proxies[0].server != "http://proxy:3128" || s.proxies[0].password.Reveal() != "proxy-pw" {
		t.Errorf("proxies = %+v, want the external proxy with its password", s.proxies)
	}

	// IPv6 pod IPs are bracketed; a flag wins.
	cfg.PodIP = "fd00::1"
	runnertest.Want(t, "IPv6 address", cfg.Address(), "[fd00::1]:8080")
	cfg.ListenAddress = "127.0.0.1:9999"
	runnertest.Want(t, "flag address", cfg.Address(), "127.0.0.1:9999")

	for name, env := range map[string][]string{
		"no session":     {rpc.EnvSecretsDir + "=" + secrets},
		"malformed spec": {rpc.EnvSecretsDir + "=" + secrets, rpc.EnvSession + "={"},
	} {
		if _, err := config.FromEnv(env); err == nil {
			t.Errorf("%s: ConfigFromEnv succeeded", name)
		}
	}
	noToken, err := config.FromEnv([]string{rpc.EnvSession + "=" + string(raw), rpc.EnvSecretsDir + "=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := noToken.Validate(); err == nil || !strings.Contains(err.Error(), "runner token (file "+rpc.FileToken+")") {
		t.Errorf("Validate without a token = %v, want an error naming the file %s", err, rpc.FileToken)
	}
}

// The browser to attach to and its headers come as files too; a headers
// file that is no JSON object is refused without quoting it.
func TestConfigFromEnvAttach(t *testing.T) {
	spec := v1alpha1.BrowserSessionSpec{
		Model: v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini"},
		Browser: &v1alpha1.BrowserConfig{
			Type:            v1alpha1.BrowserTypeLocal,
			CDPURLSecretRef: &v1alpha1.SecretKeyReference{Name: "cdp", Key: "url"},
			LaunchOptions:   &v1alpha1.LaunchOptions{CDPHeadersSecretRef: &v1alpha1.SecretKeyReference{Name: "cdp", Key: "headers"}},
		},
	}
	raw, _ := json.Marshal(spec)
	const cdpURL = "wss://browser.example/devtools/browser/x?apiKey=cdp-secret-token"
	tests := []struct {
		name        string
		headers     string
		wantHeaders map[string]string
		wantErr     string
	}{
		{name: "headers", headers: `{"Authorization":"Bearer hdr-secret","X-Trace":"1"}`,
			wantHeaders: map[string]string{"Authorization": "Bearer hdr-secret", "X-Trace": "1"}},
		{name: "not JSON", headers: `Authorization: Bearer hdr-secret`,
			wantErr: "browser.launchOptions.cdpHeadersSecretRef: the value is not a JSON object of header names to strings"},
		{name: "not an object of strings", headers: `{"Authorization":["Bearer hdr-secret"]}`,
			wantErr: "browser.launchOptions.cdpHeadersSecretRef: the value is not a JSON object of header names to strings"},
		{name: "a bad header name", headers: `{"Bad Name":"hdr-secret"}`,
			wantErr: `browser.launchOptions.cdpHeadersSecretRef: "Bad Name" is not a header name`},
		{name: "a bad header value", headers: `{"Authorization":"hdr-secret\r\nX-Injected: 1"}`,
			wantErr: "browser.launchOptions.cdpHeadersSecretRef: the value of header Authorization is not a valid header value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secrets := runnertest.SecretVolume(t, map[string]string{rpc.FileToken: "tok", rpc.FileCDPURL: cdpURL, rpc.FileCDPHeaders: tt.headers})
			cfg, err := config.FromEnv([]string{rpc.EnvSession + "=" + string(raw), rpc.EnvSecretsDir + "=" + secrets})
			if err == nil {
				err = errors.Join(cfg.Validate(), ValidateSettings(cfg))
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hdr-secret") || strings.Contains(err.Error(), "cdp-secret-token") {
					t.Errorf("the error quotes a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := newSettings(cfg)
			if err != nil {
				t.Fatal(err)
			}
			runnertest.Want(t, "attach url", s.attach.url, cdpURL)
			if diff := cmp.Diff(tt.wantHeaders, s.attach.headers); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
	// A session that attaches but has no URL file fails, naming the file.
	cfg, err := config.FromEnv([]string{rpc.EnvSession + "=" + string(raw), rpc.EnvSecretsDir + "=" + runnertest.SecretVolume(t, map[string]string{rpc.FileToken: "tok"})})
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateSettings(cfg); err == nil || !strings.Contains(err.Error(), "browser.cdpUrlSecretRef: the runner has no cdpUrl (file cdp-url is missing or empty)") {
		t.Errorf("ValidateSettings without the cdpUrl file = %v", err)
	}
}

// testEgressProxy stands for the egress proxy's address.
const testEgressProxy = "http://127.0.0.1:3128"

func TestSettings(t *testing.T) {
	tests := []struct {
		name string
		spec func(*v1alpha1.BrowserSessionSpec)
		// cdpURL, when set, is the value of the session's cdpUrlSecretRef.
		cdpURL  string
		wantErr string
		check   func(t *testing.T, s *settings, flags map[string]any)
	}{
		{
			name: "defaults",
			check: func(t *testing.T, s *settings, flags map[string]any) {
				for _, f := range []string{"headless", "no-sandbox", "disable-background-networking", "disable-component-update", "disable-sync", "no-first-run", "disable-quic"} {
					runnertest.Want(t, "--"+f, flags[f], any(true))
				}
				runnertest.Want(t, "--window-size", flags["window-size"], any("1280,720"))
				runnertest.Want(t, "accept downloads", s.acceptDownloads, true)
				runnertest.Want(t, "profile", s.profile.OS, osLinux)
			},
		},
		{
			name: "sandbox, proxy bypass, locale and user args",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.ChromiumSandbox = ptr.To(true)
				lo.Proxy = &v1alpha1.LaunchProxy{Server: "socks5://proxy:1080", Bypass: "localhost,.internal"}
				lo.Locale = "pt_BR"
				lo.Args = []v1alpha1.LaunchArg{"--force-dark-mode", "--window-size=800,600", "--password-store=basic", "--user-agent=Bot/1.0 (x)", "--disable-features=Translate"}
				lo.IgnoreDefaultArgs = []string{"--mute-audio", "disable-popup-blocking", "--disable-quic", "disable-extensions", "--proxy-server"}
			}),
			check: func(t *testing.T, s *settings, flags map[string]any) {
				runnertest.Want(t, "--no-sandbox", flags["no-sandbox"], any(false))
				// The session's proxy is the egress proxy's upstream; the
				// browser knows only the egress proxy.
				runnertest.Want(t, "--proxy-server", flags["proxy-server"], any(testEgressProxy))
				runnertest.Want(t, "--proxy-bypass-list", flags["proxy-bypass-list"], any("<-loopback>"))
				runnertest.Want(t, "--disable-quic", flags["disable-quic"], any(true))
				runnertest.Want(t, "upstreams", len(s.proxies), 1)
				runnertest.Want(t, "upstream", s.proxies[0].server, "socks5://proxy:1080")
				runnertest.Want(t, "upstream bypass", s.proxies[0].bypass, "localhost,.internal")
				runnertest.WantContains(t, "notes", strings.Join(s.notes, "\n"),
					"--proxy-server is one of the runner's safety switches and stays",
					"--disable-quic is one of the runner's safety switches and stays")
				runnertest.Want(t, "--lang", flags["lang"], any("pt-BR"))
				runnertest.Want(t, "--accept-lang", flags["accept-lang"], any("pt-BR,pt"))
				runnertest.Want(t, "--force-dark-mode", flags["force-dark-mode"], any(true))
				// The session's args win over what the runner would set.
				runnertest.Want(t, "--window-size", flags["window-size"], any("800,600"))
				// Features that call home stay off whatever the session's list.
				runnertest.Want(t, "--disable-features", flags["disable-features"], any("Translate,NetworkTimeServiceQuerying"))
				runnertest.Want(t, "--user-agent", flags["user-agent"], any("Bot/1.0 (x)"))
				runnertest.Want(t, "user agent", s.userAgent, "Bot/1.0 (x)")
				for _, f := range []string{"mute-audio", "disable-popup-blocking"} {
					if _, ok := flags[f]; ok {
						t.Errorf("--%s is passed although ignored", f)
					}
				}
				// Safety switches cannot be ignored.
				runnertest.Want(t, "--disable-quic", flags["disable-quic"], any(true))
				runnertest.Want(t, "--disable-extensions", flags["disable-extensions"], any(true))
			},
		},
		{
			name: "ignore all default args",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.IgnoreAllDefaultArgs = ptr.To(true)
			}),
			check: func(t *testing.T, s *settings, flags map[string]any) {
				for _, f := range []string{"headless", "no-sandbox", "no-first-run"} {
					if _, ok := flags[f]; ok {
						t.Errorf("--%s is passed although all defaults are ignored", f)
					}
				}
				// What the session asked for explicitly stays, and so do
				// the safety switches and the features that call home.
				runnertest.Want(t, "--disable-features", flags["disable-features"], any("NetworkTimeServiceQuerying"))
				runnertest.Want(t, "--window-size", flags["window-size"], any("1280,720"))
				for _, f := range safetyFlags(testEgressProxy) {
					runnertest.Want(t, "--"+f.name, flags[f.name], f.value)
				}
			},
		},
		{
			name: "headful with devtools",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Headless = ptr.To(false)
				lo.Devtools = ptr.To(true)
				lo.Port = ptr.To(int32(9333))
			}),
			check: func(t *testing.T, s *settings, flags map[string]any) {
				if _, ok := flags["headless"]; ok {
					t.Error("--headless is passed to a headful browser")
				}
				runnertest.Want(t, "--auto-open-devtools-for-tabs", flags["auto-open-devtools-for-tabs"], any(true))
				runnertest.Want(t, "--remote-debugging-port", flags["remote-debugging-port"], any("9333"))
			},
		},
		{
			name:    "positional argument refused",
			spec:    runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) { lo.Args = []v1alpha1.LaunchArg{"https://example.com"} }),
			wantErr: "launchOptions.args[0]: \"https://example.com\" is not a --switch",
		},
		{
			name: "a session's args cannot override a safety switch",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Args = []v1alpha1.LaunchArg{"--password-store=basic", "--disable-quic", "--disable-extensions"}
			}),
			check: func(t *testing.T, s *settings, _ map[string]any) {
				flags := s.launchFlags(testEgressProxy)
				tail := flags[len(flags)-len(safetyFlags(testEgressProxy)):]
				if diff := cmp.Diff(safetyFlags(testEgressProxy), tail, cmp.AllowUnexported(flag{})); diff != "" {
					t.Errorf("the safety switches are not last (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "names under the data directory",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.UserDataDir = "profile-1"
				lo.DownloadsPath = "dl.2026"
			}),
			check: func(t *testing.T, s *settings, _ map[string]any) {
				runnertest.Want(t, "userDataDir", s.userDataDir, filepath.Join(testDataDir, "profiles", "profile-1"))
				runnertest.Want(t, "downloadsPath", s.downloadsPath, filepath.Join(testDataDir, "downloads", "dl.2026"))
			},
		},
		{
			name:    "an absolute userDataDir refused",
			spec:    runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) { lo.UserDataDir = "/etc" }),
			wantErr: `launchOptions.userDataDir: "/etc" is not a directory name`,
		},
		{
			name:    "a downloadsPath that climbs refused",
			spec:    runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) { lo.DownloadsPath = ".." }),
			wantErr: `launchOptions.downloadsPath: ".." is not a directory name`,
		},
		{
			name:    "an executable the runner does not allow refused",
			spec:    runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) { lo.ExecutablePath = "/bin/sh" }),
			wantErr: `launchOptions.executablePath "/bin/sh" is not a browser this runner allows`,
		},
		{
			name: "the runner's own chromium",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) { lo.ExecutablePath = config.DefaultChromiumPath }),
			check: func(t *testing.T, s *settings, _ map[string]any) {
				runnertest.Want(t, "executable", s.execPath, config.DefaultChromiumPath)
			},
		},
		{
			name: "an allowed executable",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) { lo.ExecutablePath = testAllowedExecutable }),
			check: func(t *testing.T, s *settings, _ map[string]any) {
				runnertest.Want(t, "executable", s.execPath, testAllowedExecutable)
			},
		},
		{
			name: "a SOCKS4 proxy refused",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Proxy = &v1alpha1.LaunchProxy{Server: "socks4://proxy:1080"}
			}),
			wantErr: `proxy server scheme "socks4" is not supported: use socks5, http or https`,
		},
		{
			name: "proxy with credentials in the URL refused",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Proxy = &v1alpha1.LaunchProxy{Server: "http://user:pw@proxy:3128"}
			}),
			wantErr: "must not carry credentials",
		},
		{
			name:   "attach",
			cdpURL: "wss://browser.example/devtools/browser/x?token=abc",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.ConnectTimeoutMs = ptr.To(int32(2500))
				lo.Args = []v1alpha1.LaunchArg{"--mute-audio"}
			}),
			check: func(t *testing.T, s *settings, _ map[string]any) {
				if s.attach == nil {
					t.Fatal("not attaching")
				}
				runnertest.Want(t, "connect timeout", s.attach.connectTimeout.String(), "2.5s")
				runnertest.WantContains(t, "notes", strings.Join(s.notes, "\n"), "launchOptions.args does not apply when attaching")
			},
		},
		{
			name: "cloud settings the runner cannot honour are noted",
			spec: runnertest.CloudParams(&v1alpha1.CloudSessionCreateParams{
				BrowserSettings: &v1alpha1.BrowserSettings{SolveCaptchas: ptr.To(true), Context: &v1alpha1.BrowserContext{ID: "ctx"}},
				Proxies:         []v1alpha1.Proxy{{Type: v1alpha1.ProxyTypeCloud}},
			}),
			check: func(t *testing.T, s *settings, _ map[string]any) {
				notes := strings.Join(s.notes, "\n")
				runnertest.WantContains(t, "notes", notes, "browserSettings.solveCaptchas", "browserSettings.context", "proxies[0]")
				if len(s.proxies) != 0 {
					t.Errorf("a cloud proxy became %+v", s.proxies)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := runnertest.Config(tt.spec)
			if tt.cdpURL != "" {
				cfg = runnertest.AttachConfig(tt.cdpURL, nil, nil)
				if tt.spec != nil {
					tt.spec(&cfg.Spec)
				}
			}
			cfg.DataDir = testDataDir
			cfg.AllowedExecutables = []string{testAllowedExecutable}
			s, err := newSettings(cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("newSettings error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			flags := map[string]any{}
			for _, f := range s.launchFlags(testEgressProxy) {
				flags[f.name] = f.value
			}
			tt.check(t, s, flags)
		})
	}
}

// Settings do not touch the file system: these paths are only compared.
const (
	testDataDir           = "/nonexistent/browserfleet-data"
	testAllowedExecutable = "/opt/other/chrome"
)

// TestLaunchArgsAllowlist: each switch the issue names is refused by the
// runner's settings, naming its index; allowed ones pass with their values.
func TestLaunchArgsAllowlist(t *testing.T) {
	tests := []struct {
		arg     string
		wantErr string
		want    flag
	}{
		{arg: `--renderer-cmd-prefix=/bin/sh -c id>/tmp/out;exec${IFS}"$0"${IFS}"$@"`, wantErr: "--renderer-cmd-prefix is not an allowed Chromium switch"},
		{arg: "--utility-cmd-prefix=/bin/sh", wantErr: "--utility-cmd-prefix is not an allowed"},
		{arg: "--gpu-launcher=/bin/sh", wantErr: "--gpu-launcher is not an allowed"},
		{arg: "--browser-subprocess-path=/bin/sh", wantErr: "--browser-subprocess-path is not an allowed"},
		{arg: "--disable-web-security", wantErr: "--disable-web-security is not an allowed"},
		{arg: "--remote-allow-origins=*", wantErr: "--remote-allow-origins is not an allowed"},
		{arg: "--load-extension=/tmp/ext", wantErr: "--load-extension is not an allowed"},
		{arg: "--remote-debugging-address=0.0.0.0", wantErr: "--remote-debugging-address is not an allowed"},
		{arg: "--remote-debugging-port=9222", wantErr: "--remote-debugging-port is not an allowed"},
		{arg: "--proxy-server=http://10.0.0.1:3128", wantErr: "--proxy-server is not an allowed"},
		{arg: "--proxy-bypass-list=<local>", wantErr: "--proxy-bypass-list is not an allowed"},
		{arg: "--no-proxy-server", wantErr: "--no-proxy-server is not an allowed"},
		{arg: "--proxy-pac-url=data:,", wantErr: "--proxy-pac-url is not an allowed"},
		{arg: "--enable-quic", wantErr: "--enable-quic is not an allowed"},
		{arg: "--origin-to-force-quic-on=example.com:443", wantErr: "--origin-to-force-quic-on is not an allowed"},
		{arg: "--webrtc-ip-handling-policy=default", wantErr: "--webrtc-ip-handling-policy is not an allowed"},
		{arg: "--force-webrtc-ip-handling-policy=default", wantErr: "--force-webrtc-ip-handling-policy is not an allowed"},
		{arg: "--remote-debugging-pipe", wantErr: "--remote-debugging-pipe is not an allowed"},
		{arg: "--user-data-dir=/etc", wantErr: "--user-data-dir is not an allowed"},
		{arg: "--proxy-server=http://127.0.0.1:1", wantErr: "--proxy-server is not an allowed"},
		{arg: "--proxy-bypass-list=<-loopback>", wantErr: "--proxy-bypass-list is not an allowed"},
		{arg: "--host-resolver-rules=MAP * 127.0.0.1", wantErr: "--host-resolver-rules is not an allowed"},
		{arg: "--host-rules=MAP * 127.0.0.1", wantErr: "--host-rules is not an allowed"},
		{arg: "--log-file=/tmp/log", wantErr: "--log-file is not an allowed"},
		{arg: "--js-flags=--allow-natives-syntax", wantErr: "--js-flags is not an allowed"},
		{arg: "--use-file-for-fake-video-capture=/etc/shadow", wantErr: "--use-file-for-fake-video-capture is not an allowed"},
		{arg: "--disable-quic=false", wantErr: "--disable-quic takes no value"},
		{arg: "--lang=../x", wantErr: "--lang: the value"},
		{arg: "--mute-audio", want: flag{"mute-audio", true}},
		{arg: "--lang=de-DE", want: flag{"lang", "de-DE"}},
		{arg: "--disable-blink-features=AutomationControlled", want: flag{"disable-blink-features", "AutomationControlled"}},
		{arg: "--autoplay-policy=no-user-gesture-required", want: flag{"autoplay-policy", "no-user-gesture-required"}},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			cfg := runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Args = []v1alpha1.LaunchArg{"--hide-scrollbars", v1alpha1.LaunchArg(tt.arg)}
			}))
			s, err := newSettings(cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), "launchOptions.args[1]: "+tt.wantErr) {
					t.Fatalf("newSettings error = %v, want launchOptions.args[1]: %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]flag{{"hide-scrollbars", true}, tt.want}, s.userArgs, cmp.AllowUnexported(flag{})); diff != "" {
				t.Errorf("user args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChooseProfile(t *testing.T) {
	fp := func(f v1alpha1.Fingerprint) *v1alpha1.Fingerprint { return &f }
	tests := []struct {
		name      string
		os        v1alpha1.OS
		fp        *v1alpha1.Fingerprint
		wantOS    osFamily
		wantDev   deviceClass
		wantBrand browserBrand
		wantNote  string
	}{
		{name: "nothing asked", wantOS: osLinux, wantDev: deviceDesktop, wantBrand: brandChrome},
		{name: "mac", os: "mac", wantOS: osMacOS, wantDev: deviceDesktop, wantBrand: brandChrome},
		{name: "mobile", os: "mobile", wantOS: osAndroid, wantDev: deviceMobile, wantBrand: brandChrome},
		{name: "tablet", os: "tablet", wantOS: osAndroid, wantDev: deviceTablet, wantBrand: brandChrome},
		{name: "mobile on ios", os: "mobile", fp: fp(v1alpha1.Fingerprint{OperatingSystems: []v1alpha1.FingerprintOS{"windows", "ios"}}), wantOS: osIOS, wantDev: deviceMobile, wantBrand: brandChrome},
		{name: "os wins over fingerprint", os: "windows", fp: fp(v1alpha1.Fingerprint{OperatingSystems: []v1alpha1.FingerprintOS{"macos"}, Devices: []v1alpha1.FingerprintDevice{"mobile"}}), wantOS: osWindows, wantDev: deviceDesktop, wantBrand: brandChrome},
		{name: "fingerprint android", fp: fp(v1alpha1.Fingerprint{OperatingSystems: []v1alpha1.FingerprintOS{"android"}}), wantOS: osAndroid, wantDev: deviceMobile, wantBrand: brandChrome},
		{name: "fingerprint mobile device skips desktop systems", fp: fp(v1alpha1.Fingerprint{Devices: []v1alpha1.FingerprintDevice{"mobile"}, OperatingSystems: []v1alpha1.FingerprintOS{"linux", "ios"}}), wantOS: osIOS, wantDev: deviceMobile, wantBrand: brandChrome},
		{name: "edge", fp: fp(v1alpha1.Fingerprint{Browsers: []v1alpha1.FingerprintBrowser{"edge", "firefox"}, OperatingSystems: []v1alpha1.FingerprintOS{"windows"}}), wantOS: osWindows, wantDev: deviceDesktop, wantBrand: brandEdge},
		{name: "firefox cannot be presented", fp: fp(v1alpha1.Fingerprint{Browsers: []v1alpha1.FingerprintBrowser{"firefox"}}), wantOS: osLinux, wantDev: deviceDesktop, wantBrand: brandChrome, wantNote: "cannot be presented by Chromium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, notes := chooseProfile(tt.os, tt.fp)
			runnertest.Want(t, "os", p.OS, tt.wantOS)
			runnertest.Want(t, "device", p.Device, tt.wantDev)
			runnertest.Want(t, "brand", p.Brand, tt.wantBrand)
			if tt.wantNote != "" {
				runnertest.WantContains(t, "notes", strings.Join(notes, "\n"), tt.wantNote)
			}
			// Coherence: the user agent, platform and client hints agree.
			ua := p.userAgent("156.0.8078.79")
			switch p.OS {
			case osMacOS:
				runnertest.WantContains(t, "ua", ua, "Macintosh")
				runnertest.Want(t, "platform", p.platform(), "MacIntel")
			case osWindows:
				runnertest.WantContains(t, "ua", ua, "Windows NT")
				runnertest.Want(t, "platform", p.platform(), "Win32")
			case osAndroid:
				runnertest.WantContains(t, "ua", ua, "Android")
				runnertest.Want(t, "mobile ua", strings.Contains(ua, " Mobile "), p.Device == deviceMobile)
			case osIOS:
				runnertest.WantContains(t, "ua", ua, "CriOS/156.0.8078.79")
				if p.metadata("156.0.8078.79") != nil {
					t.Error("Chrome on iOS has client hints")
				}
			}
			if p.Brand == brandEdge {
				runnertest.WantContains(t, "ua", ua, "Edg/156.0.0.0")
			}
			if m := p.metadata("156.0.8078.79"); m != nil {
				runnertest.Want(t, "client hints mobile", m.Mobile, p.Device == deviceMobile)
			}
			runnertest.Want(t, "touch on a handheld", p.Touch, p.Device != deviceDesktop)
		})
	}
	// A fingerprint screen bounds the screen and the viewport with it.
	p, _ := chooseProfile("", fp(v1alpha1.Fingerprint{Screen: &v1alpha1.Screen{MaxWidth: ptr.To(int32(1024)), MaxHeight: ptr.To(int32(640))}}))
	runnertest.Want(t, "screen", p.Screen, size{1024, 640})
	runnertest.Want(t, "viewport", p.Viewport, size{1024, 640})
}

func TestRedaction(t *testing.T) {
	runnertest.Want(t, "redactURL", RedactURL("wss://user:pw@browser.example:443/devtools/browser/x?token=abc"), "wss://browser.example:443")
	got := blankRunnerEnv([]string{"HOME=/tmp", rpc.EnvSession + "={}", rpc.EnvSecretsDir + "=/s"})
	if diff := cmp.Diff([]string{rpc.EnvSession + "=", rpc.EnvSecretsDir + "="}, got); diff != "" {
		t.Errorf("blankRunnerEnv (-want +got):\n%s", diff)
	}
}

// TestBrowserChoice: headless sessions get the headless-only build when the
// runner has it; a session that wants a window, devtools, another
// executable or no --headless switch gets Chromium; the memory switches are
// defaults a session may drop; site isolation is the operator's.
func TestBrowserChoice(t *testing.T) {
	shell := filepath.Join(t.TempDir(), "chromium-headless-shell")
	if err := os.WriteFile(shell, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// shellPath is the runner's HeadlessShellPath; "-" means shell.
		shellPath            string
		disableSiteIsolation bool
		disableWebGL         bool
		lo                   func(*v1alpha1.LaunchOptions)
		wantExec             string
		// wantFlags are switches that must be there (true) or not (false).
		wantFlags map[string]bool
	}{
		{
			name:      "headless by default: the headless shell",
			shellPath: "-",
			wantExec:  "-",
			wantFlags: map[string]bool{"headless": true, "enable-features": true, "disk-cache-size": true, "site-per-process": true, "disable-gpu": false, "disable-software-rasterizer": false},
		},
		{
			name:         "WebGL off by the operator",
			shellPath:    "-",
			disableWebGL: true,
			wantExec:     "-",
			wantFlags:    map[string]bool{"disable-gpu": true, "disable-software-rasterizer": true},
		},
		{
			name:      "no headless shell installed",
			shellPath: filepath.Join(t.TempDir(), "missing"),
			wantExec:  config.DefaultChromiumPath,
		},
		{
			name:     "the operator turned it off",
			wantExec: config.DefaultChromiumPath,
		},
		{
			name:      "a window",
			shellPath: "-",
			lo:        func(lo *v1alpha1.LaunchOptions) { lo.Headless = ptr.To(false) },
			wantExec:  config.DefaultChromiumPath,
			wantFlags: map[string]bool{"headless": false},
		},
		{
			name:      "devtools",
			shellPath: "-",
			lo:        func(lo *v1alpha1.LaunchOptions) { lo.Devtools = ptr.To(true) },
			wantExec:  config.DefaultChromiumPath,
		},
		{
			name:      "the --headless default dropped",
			shellPath: "-",
			lo:        func(lo *v1alpha1.LaunchOptions) { lo.IgnoreDefaultArgs = []string{"--headless"} },
			wantExec:  config.DefaultChromiumPath,
		},
		{
			name:      "all defaults dropped",
			shellPath: "-",
			lo:        func(lo *v1alpha1.LaunchOptions) { lo.IgnoreAllDefaultArgs = ptr.To(true) },
			wantExec:  config.DefaultChromiumPath,
			wantFlags: map[string]bool{"enable-features": false, "disk-cache-size": false, "site-per-process": true},
		},
		{
			name:      "an executable the session names",
			shellPath: "-",
			lo:        func(lo *v1alpha1.LaunchOptions) { lo.ExecutablePath = config.DefaultChromiumPath },
			wantExec:  config.DefaultChromiumPath,
		},
		{
			name:                 "site isolation off by the operator",
			shellPath:            "-",
			disableSiteIsolation: true,
			wantExec:             "-",
			wantFlags:            map[string]bool{"site-per-process": false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				if tt.lo != nil {
					tt.lo(lo)
				}
			}))
			resolve := func(p string) string {
				if p == "-" {
					return shell
				}
				return p
			}
			cfg.HeadlessShellPath = resolve(tt.shellPath)
			cfg.DisableSiteIsolation = tt.disableSiteIsolation
			cfg.DisableWebGL = tt.disableWebGL
			s, err := newSettings(cfg)
			if err != nil {
				t.Fatal(err)
			}
			runnertest.Want(t, "executable", s.execPath, resolve(tt.wantExec))
			runnertest.Want(t, "headless shell", s.headlessShell, s.execPath == shell)
			got := map[string]bool{}
			for _, f := range s.launchFlags(testEgressProxy) {
				got[f.name] = f.value != false
			}
			for name, want := range tt.wantFlags {
				runnertest.Want(t, "--"+name, got[name], want)
			}
		})
	}
}

// TestEgressRoute checks which upstream proxy each host goes through: a
// cloud session's external proxies by their domainPattern, in order, the
// first match winning, one without a pattern taking any host, and a host
// none matches going directly; loopback always directly.
func TestEgressRoute(t *testing.T) {
	proxies := []v1alpha1.Proxy{
		{Type: v1alpha1.ProxyTypeExternal, Server: "http://shop:3128", DomainPattern: `(.*\.)?shop\.example`},
		{Type: v1alpha1.ProxyTypeCloud, DomainPattern: `.*`},
		{Type: v1alpha1.ProxyTypeExternal, Server: "http://news:3128", DomainPattern: `news\.example|(.*\.)?press\.example`},
	}
	tests := []struct {
		name    string
		proxies []v1alpha1.Proxy
		want    map[string]string // host:port -> proxy host, "" directly
	}{
		{
			name:    "patterns only",
			proxies: proxies,
			want: map[string]string{
				"shop.example:443":     "shop:3128",
				"WWW.Shop.Example:443": "shop:3128",
				"news.example:80":      "news:3128",
				"a.press.example:443":  "news:3128",
				"shop.example.net:443": "",
				"xnews.example:443":    "",
				"other.example:443":    "",
				"127.0.0.1:8080":       "",
			},
		},
		{
			name:    "a proxy without a pattern takes the rest",
			proxies: append(slices.Clone(proxies), v1alpha1.Proxy{Type: v1alpha1.ProxyTypeExternal, Server: "http://default:3128"}),
			want: map[string]string{
				"shop.example:443":  "shop:3128",
				"news.example:80":   "news:3128",
				"other.example:443": "default:3128",
				"localhost:8080":    "",
			},
		},
		{
			name:    "the first match wins",
			proxies: []v1alpha1.Proxy{{Type: v1alpha1.ProxyTypeExternal, Server: "http://all:3128"}, proxies[0]},
			want:    map[string]string{"shop.example:443": "all:3128", "other.example:443": "all:3128"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newSettings(runnertest.Config(runnertest.CloudParams(&v1alpha1.CloudSessionCreateParams{Proxies: tt.proxies})))
			if err != nil {
				t.Fatal(err)
			}
			route := s.egressRoute()
			got := map[string]string{}
			for host := range tt.want {
				got[host] = ""
				if up := route(host); up != nil {
					got[host] = up.URL.Host
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("routes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDomainPatternRefused: a domainPattern that is no regular expression
// fails the start, naming the field.
func TestDomainPatternRefused(t *testing.T) {
	_, err := newSettings(runnertest.Config(runnertest.CloudParams(&v1alpha1.CloudSessionCreateParams{
		Proxies: []v1alpha1.Proxy{{Type: v1alpha1.ProxyTypeExternal, Server: "http://p:3128", DomainPattern: `(unclosed`}},
	})))
	if err == nil || !strings.Contains(err.Error(), "cloudSessionCreateParams.proxies[0].domainPattern: is not a regular expression") {
		t.Errorf("err = %v, want the field named", err)
	}
}
