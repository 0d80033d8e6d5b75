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

package client

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// LaunchLocalBrowser honours its options, and its Close stops the browser
// and removes what it made.

// upstreamProxy is a proxy that wants credentials: it answers plain
// requests for http://proxied.test/ itself and tunnels CONNECTs to tunnel.
type upstreamProxy struct {
	*httptest.Server
	tunnel string
	mu     sync.Mutex
	auths  []string
}

func newUpstreamProxy(t *testing.T, tunnel string) *upstreamProxy {
	u := &upstreamProxy{tunnel: tunnel}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("proxy-user:proxy-secret"))
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auths = append(u.auths, r.Method+" "+r.Host+" "+fmt.Sprint(r.Header.Get("Proxy-Authorization") == want))
		u.mu.Unlock()
		if r.Header.Get("Proxy-Authorization") != want {
			w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
			http.Error(w, "credentials, please", http.StatusProxyAuthRequired)
			return
		}
		if r.Method != http.MethodConnect {
			fmt.Fprint(w, "<!doctype html><title>Proxied</title>")
			return
		}
		up, err := (&net.Dialer{}).DialContext(r.Context(), "tcp", u.tunnel)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		down, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			up.Close()
			return
		}
		fmt.Fprint(down, "HTTP/1.1 200 OK\r\n\r\n")
		go func() { _, _ = io.Copy(up, io.MultiReader(buf, down)); up.Close() }()
		go func() { _, _ = io.Copy(down, up); down.Close() }()
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstreamProxy) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.auths...)
}

func TestLaunchLocalBrowserHonoursItsOptions(t *testing.T) {
	ctx := testCtx(t)
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>Secure</title>")
	}))
	defer secure.Close()
	proxy := newUpstreamProxy(t, secure.Listener.Addr().String())
	profile := filepath.Join(t.TempDir(), "profile")
	downloads := filepath.Join(t.TempDir(), "downloads")

	b, err := LaunchLocalBrowser(ctx, LocalBrowserLaunchOptions{
		Viewport:          &Viewport{Width: 800, Height: 600},
		DeviceScaleFactor: 2,
		Locale:            "de-DE",
		HasTouch:          true,
		IgnoreHTTPSErrors: true,
		UserDataDir:       profile,
		AcceptDownloads:   true,
		DownloadsPath:     downloads,
		Args:              []string{"--user-agent=browserfleet-test"},
		// Loopback goes direct, as Chromium always has it; other hosts
		// go through the proxy, with its credentials.
		Proxy: &LocalProxy{Server: proxy.URL, Username: "proxy-user", Password: "proxy-secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	pid := b.drv.(*localDriver).proc.cmd.Process.Pid
	defer b.Close(ctx)

	p := openPage(t, b, "/headers")
	var env struct {
		Width, Height int
		DPR           float64
		Lang, Intl    string
		Touch         int
		UA            string
		AcceptLang    string
	}
	if err := p.Evaluate(ctx, `({Width: innerWidth, Height: innerHeight, DPR: devicePixelRatio, Lang: navigator.language,
		Intl: new Intl.NumberFormat().resolvedOptions().locale, Touch: navigator.maxTouchPoints, UA: navigator.userAgent,
		AcceptLang: document.title})`, &env); err != nil {
		t.Fatal(err)
	}
	want := env
	want.Width, want.Height, want.DPR, want.Lang, want.Intl, want.UA, want.AcceptLang = 800, 600, 2, "de-DE", "de-DE", "browserfleet-test", "de-DE,de;q=0.9"
	if env.Touch < 1 {
		t.Errorf("navigator.maxTouchPoints = %d with HasTouch", env.Touch)
	}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("the page's environment (-want +got):\n%s", diff)
	}

	t.Run("the proxy, with credentials", func(t *testing.T) {
		if err := p.Goto(ctx, "http://proxied.test/"); err != nil {
			t.Fatal(err)
		}
		if title, _ := p.Title(ctx); title != "Proxied" {
			t.Errorf("through the proxy the page is %q", title)
		}
		// A tunnel, to a server whose certificate is not trusted.
		if err := p.Goto(ctx, "https://secure.test/"); err != nil {
			t.Fatal(err)
		}
		if title, _ := p.Title(ctx); title != "Secure" {
			t.Errorf("through the tunnel the page is %q", title)
		}
		for _, s := range proxy.seen() {
			if !strings.HasSuffix(s, " true") {
				t.Errorf("the proxy got %q without the credentials", s)
			}
		}
	})
	t.Run("downloads", func(t *testing.T) {
		if err := p.Goto(ctx, site.URL+"/download"); err != nil {
			t.Fatal(err)
		}
		if err := p.Evaluate(ctx, `document.querySelector('a').click()`, nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool {
			b, err := os.ReadFile(filepath.Join(downloads, "file.txt"))
			return err == nil && string(b) == "downloaded"
		})
	})

	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Close reaps the browser and kills the rest of its group, which
	// dies a moment later.
	waitFor(t, func() bool { return !groupAlive(t, pid) })
	if _, err := os.Stat(filepath.Join(profile, "Local State")); err != nil {
		t.Errorf("the given profile was not kept, or not written: %v", err)
	}
}

func TestLaunchedBrowsersProfile(t *testing.T) {
	for _, preserve := range []bool{false, true} {
		t.Run(fmt.Sprintf("preserve %v", preserve), func(t *testing.T) {
			ctx := testCtx(t)
			b, err := LaunchLocalBrowser(ctx, LocalBrowserLaunchOptions{PreserveUserDataDir: preserve, Port: freePort(t)})
			if err != nil {
				t.Fatal(err)
			}
			proc := b.drv.(*localDriver).proc
			if err := b.Close(ctx); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return !groupAlive(t, proc.cmd.Process.Pid) })
			_, err = os.Stat(proc.profile)
			if preserve {
				if err != nil {
					t.Errorf("the preserved profile: %v", err)
				}
				os.RemoveAll(proc.profile)
			} else if !os.IsNotExist(err) {
				t.Errorf("the temporary profile is still there: %v", err)
			}
		})
	}
}

func TestLaunchFailures(t *testing.T) {
	ctx := testCtx(t)
	if _, err := LaunchLocalBrowser(ctx, LocalBrowserLaunchOptions{ExecutablePath: "/nonexistent/chromium"}); err == nil {
		t.Error("a browser that is not there launched")
	}
	// A browser that exits at once reports its last words.
	script := filepath.Join(t.TempDir(), "fake-chromium")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := LaunchLocalBrowser(ctx, LocalBrowserLaunchOptions{ExecutablePath: script}); err == nil || !strings.Contains(err.Error(), "cannot open display") {
		t.Errorf("err = %v, want the browser's output", err)
	}
	// One that never listens is given up on after ConnectTimeout.
	silent := filepath.Join(t.TempDir(), "silent-chromium")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\nexec sleep 60\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := LaunchLocalBrowser(ctx, LocalBrowserLaunchOptions{ExecutablePath: silent, ConnectTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("err = %v, want the deadline", err)
	}
	if time.Since(start) > 15*time.Second {
		t.Error("the launch outlived its ConnectTimeout by far")
	}
}

// freePort is a loopback port nothing listens on, most likely.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
