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

package chromium_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/blocklist"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestIgnoreHTTPSErrors(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(runnertest.HTMLHandler(`<!doctype html><title>self-signed</title>`))
	t.Cleanup(tlsSrv.Close)

	tests := []struct {
		name   string
		ignore *bool
		wantOK bool
	}{
		{name: "refused by default", ignore: nil},
		{name: "accepted with ignoreHTTPSErrors", ignore: ptr.To(true), wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := browsertest.Start(t, runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.IgnoreHTTPSErrors = tt.ignore
			})))
			res, err := browsertest.Navigate(t, b, tlsSrv.URL)
			if !tt.wantOK {
				if err == nil {
					t.Fatalf("navigate to a self-signed server = %+v, want an error", res)
				}
				runnertest.Want(t, "error code", rpc.CodeOf(err), rpc.CodeNavigationFailed)
				runnertest.WantContains(t, "error", err.Error(), "ERR_CERT")
				return
			}
			if err != nil {
				t.Fatalf("navigate: %v", err)
			}
			var title string
			browsertest.Evaluate(t, b, "document.title", &title)
			runnertest.Want(t, "title", title, "self-signed")
		})
	}
}

func TestDownloadLandsInDownloadsPath(t *testing.T) {
	const content = "quarterly numbers\n"
	srv := runnertest.NewPageServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="report.txt"`)
		w.Write([]byte(content))
	}))
	cfg := runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
		lo.AcceptDownloads = ptr.To(true)
		lo.DownloadsPath = "reports"
	}))
	cfg.DataDir = t.TempDir()
	dir := filepath.Join(cfg.DataDir, "downloads", "reports")
	b := browsertest.Start(t, cfg)
	runnertest.Want(t, "DownloadsDir", b.DownloadsDir(), dir)
	browsertest.MustNavigate(t, b, srv.URL+"/report")
	file := filepath.Join(dir, "report.txt")
	runnertest.WaitFor(t, "the download to land in downloadsPath", func() bool {
		got, err := os.ReadFile(file)
		return err == nil && string(got) == content
	})
}

func TestBlockAds(t *testing.T) {
	srv := runnertest.NewPageServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			port := r.Context().Value(http.LocalAddrContextKey).(interface{ String() string }).String()
			_, port, _ = strings.Cut(port, ":")
			w.Write([]byte(`<!doctype html><title>news</title>
<img id="ad" src="http://securepubads.g.doubleclick.net:` + port + `/ad.png">
<img id="tracker" src="http://www.google-analytics.com:` + port + `/collect.png">
<img id="ok" src="http://cdn.example.test:` + port + `/photo.png">`))
		default:
			w.Header().Set("Content-Type", "image/gif")
			// A 1x1 transparent GIF.
			w.Write([]byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"))
		}
	}))
	for _, h := range []string{"securepubads.g.doubleclick.net", "www.google-analytics.com"} {
		if !blocklist.Blocked(h) {
			t.Fatalf("%s is not on the shipped list; the test needs listed hosts", h)
		}
	}
	// blockAds is a cloud setting, so the session is a cloud one; its
	// external proxy sends every host to the test server, so that the ad
	// hosts would load if they were not blocked. (It also shows that the
	// first external proxy of a cloud session is used.)
	_, proxySrv := runnertest.NewAuthProxy(t, "", "", srv.URL)
	cfg := runnertest.Config(runnertest.CloudParams(&v1alpha1.CloudSessionCreateParams{
		BrowserSettings: &v1alpha1.BrowserSettings{BlockAds: ptr.To(true)},
		Proxies:         []v1alpha1.Proxy{{Type: v1alpha1.ProxyTypeExternal, Server: proxySrv.URL}},
	}))
	b := browsertest.Start(t, cfg)
	_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
	browsertest.MustNavigate(t, b, "http://news.example.test:"+port+"/")

	hosts := map[string]int{}
	for _, r := range srv.Seen(func(*http.Request) bool { return true }) {
		host, _, _ := strings.Cut(r.Host, ":")
		hosts[host]++
	}
	if hosts["cdn.example.test"] == 0 {
		t.Errorf("the unlisted image was not loaded; the server saw %v", hosts)
	}
	for _, h := range []string{"securepubads.g.doubleclick.net", "www.google-analytics.com"} {
		if hosts[h] != 0 {
			t.Errorf("%s was requested %d times, want it blocked", h, hosts[h])
		}
	}
	var loaded map[string]bool
	browsertest.Evaluate(t, b, `Object.fromEntries([...document.images].map(i => [i.id, i.complete && i.naturalWidth > 0]))`, &loaded)
	runnertest.Want(t, "ok image loaded", loaded["ok"], true)
	runnertest.Want(t, "ad image loaded", loaded["ad"], false)
	runnertest.Want(t, "tracker image loaded", loaded["tracker"], false)
}

// TestUserDataDirRemovesOnlyWhatTheRunnerMade: the runner removes a
// profile at close only when it made it; what existed before, and any path a
// session names, stays. Each case works in a scratch directory holding a
// canary file.
func TestUserDataDirRemovesOnlyWhatTheRunnerMade(t *testing.T) {
	const canary = "canary.txt"
	tests := []struct {
		name      string
		dir       string // userDataDir; "" for a temporary profile
		existed   bool   // the profile exists, with a canary, before the start
		preserve  bool
		wantAfter bool // the profile exists after Close
	}{
		{name: "made and not preserved", dir: "profile", wantAfter: false},
		{name: "made and preserved", dir: "profile", preserve: true, wantAfter: true},
		{name: "existed and not preserved", dir: "profile", existed: true, wantAfter: true},
		{name: "temporary", wantAfter: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scratch := t.TempDir()
			writeCanary(t, filepath.Join(scratch, canary))
			cfg := runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.UserDataDir = tt.dir
				if tt.dir != "" {
					lo.PreserveUserDataDir = ptr.To(tt.preserve)
				}
			}))
			cfg.DataDir = scratch
			profile := filepath.Join(scratch, "profiles", tt.dir)
			if tt.existed {
				writeCanary(t, filepath.Join(profile, canary))
			}
			b := browsertest.Start(t, cfg)
			if tt.dir != "" {
				runnertest.Want(t, "UserDataDir", b.UserDataDir(), profile)
			}
			profile = b.UserDataDir()
			if _, err := os.Stat(filepath.Join(profile, "Default")); err != nil {
				// Chromium and its headless shell make Default at start;
				// if they have not yet, the port file proves the
				// directory is the profile.
				if _, err := os.Stat(filepath.Join(profile, "DevToolsActivePort")); err != nil {
					t.Fatalf("%s does not look like the browser's profile: %v", profile, err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := b.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			_, err := os.Stat(profile)
			switch {
			case tt.wantAfter && err != nil:
				t.Errorf("the profile is gone: %v", err)
			case tt.wantAfter:
				// Default, which Chromium and its headless shell both
				// write (the headless shell writes no Local State).
				if fi, err := os.Stat(filepath.Join(profile, "Default")); err != nil || !fi.IsDir() {
					t.Errorf("the kept profile lacks its Default directory: %v", err)
				}
			case !tt.wantAfter && err == nil:
				t.Errorf("the profile %s outlived the browser", profile)
			}
			checkCanary(t, filepath.Join(scratch, canary))
			if tt.existed {
				checkCanary(t, filepath.Join(profile, canary))
			}
		})
	}
}

// TestNamedPathsAreRefused: a userDataDir or downloadsPath that is a path,
// not a name, never reaches the file system; the report is a
// userDataDir of /etc that the runner removed when the session ended. The
// paths here are a scratch directory holding a canary, never a system
// path.
func TestNamedPathsAreRefused(t *testing.T) {
	scratch := t.TempDir()
	writeCanary(t, filepath.Join(scratch, "canary.txt"))
	for _, tt := range []struct {
		name  string
		set   func(lo *v1alpha1.LaunchOptions)
		field string
	}{
		{"an absolute userDataDir", func(lo *v1alpha1.LaunchOptions) { lo.UserDataDir = scratch }, "launchOptions.userDataDir"},
		{"a userDataDir that climbs out", func(lo *v1alpha1.LaunchOptions) { lo.UserDataDir = ".." }, "launchOptions.userDataDir"},
		{"a userDataDir of two segments", func(lo *v1alpha1.LaunchOptions) { lo.UserDataDir = "../" + filepath.Base(scratch) }, "launchOptions.userDataDir"},
		{"an absolute downloadsPath", func(lo *v1alpha1.LaunchOptions) { lo.DownloadsPath = scratch }, "launchOptions.downloadsPath"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := runnertest.Config(runnertest.LaunchOptions(tt.set))
			cfg.DataDir = filepath.Join(scratch, "data")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			log, _ := runnertest.Logger(t)
			b, err := chromium.StartBrowser(ctx, cfg, log)
			if err == nil {
				_ = b.Close(ctx)
				t.Fatal("StartBrowser accepted a path")
			}
			runnertest.WantContains(t, "error", err.Error(), tt.field, "is not a directory name")
			checkCanary(t, filepath.Join(scratch, "canary.txt"))
			if _, err := os.Stat(cfg.DataDir); err == nil {
				t.Errorf("the refused session made %s", cfg.DataDir)
			}
		})
	}
}

func writeCanary(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("still here"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func checkCanary(t *testing.T, path string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "still here" {
		t.Errorf("the canary %s did not survive: %q, %v", path, got, err)
	}
}

// TestProxiesRoutedByDomainPattern: a cloud session's external proxies each
// carry the hosts their domainPattern matches, the first match winning, and
// the one without a pattern the rest; each proxy here forwards every
// request to a page server of its own, whose page names the proxy, and
// counts what it forwarded.
func TestProxiesRoutedByDomainPattern(t *testing.T) {
	page := func(name string) http.Handler {
		return runnertest.HTMLHandler(`<!doctype html><title>via ` + name + `</title>`)
	}
	shopProxy, shopSrv := runnertest.NewAuthProxy(t, "", "", runnertest.NewPageServer(t, page("shop")).URL)
	restProxy, restSrv := runnertest.NewAuthProxy(t, "shopper", "s3cret", runnertest.NewPageServer(t, page("rest")).URL)
	cfg := runnertest.Config(runnertest.CloudParams(&v1alpha1.CloudSessionCreateParams{
		Proxies: []v1alpha1.Proxy{
			{Type: v1alpha1.ProxyTypeExternal, Server: shopSrv.URL, DomainPattern: `(.*\.)?shop\.example\.test`},
			{Type: v1alpha1.ProxyTypeExternal, Server: restSrv.URL, Username: "shopper", PasswordSecretRef: &v1alpha1.SecretKeyReference{Name: "p", Key: "k"}},
		},
	}))
	cfg.Secrets.ProxyPasswords = map[int]config.Secret{1: config.NewSecret("s3cret")}
	b := browsertest.Start(t, cfg)
	for _, tc := range []struct{ url, want string }{
		{"http://shop.example.test/", "via shop"},
		{"http://www.shop.example.test/cart", "via shop"},
		{"http://news.example.test/", "via rest"},
		{"http://shop.example.test.other.test/", "via rest"},
	} {
		browsertest.MustNavigate(t, b, tc.url)
		var title string
		browsertest.Evaluate(t, b, `document.title`, &title)
		runnertest.Want(t, tc.url+" title", title, tc.want)
	}
	_, _, shopServed := shopProxy.Stats()
	attempts, refused, restServed := restProxy.Stats()
	runnertest.Want(t, "requests through the shop proxy", shopServed >= 2, true)
	runnertest.Want(t, "requests through the other proxy", restServed >= 2, true)
	runnertest.Want(t, "refused by the other proxy", refused, 0)
	runnertest.Want(t, "the other proxy got the session's credentials", slices.Contains(attempts, "shopper:s3cret"), true)
}
