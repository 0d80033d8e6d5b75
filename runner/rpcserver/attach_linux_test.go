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

package rpcserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/procs"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// externalChromium starts a Chromium that is not the runner's, as a user's
// own browser would be, and returns its DevTools browser endpoint.
func externalChromium(t *testing.T) (wsURL *url.URL, pid int) {
	t.Helper()
	cmd := exec.Command(config.DefaultChromiumPath,
		"--headless", "--no-sandbox", "--remote-debugging-port=0", "--user-data-dir="+t.TempDir(),
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--disable-quic", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "DevTools listening on "); ok {
				found <- strings.TrimSpace(rest)
			}
		}
	}()
	select {
	case raw := <-found:
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return u, cmd.Process.Pid
	case <-time.After(60 * time.Second):
		t.Fatal("chromium did not say where DevTools listens")
	}
	return nil, 0
}

// headerGate is a reverse proxy to a DevTools server that refuses requests
// without the header it wants and records the values it saw.
type headerGate struct {
	name, value string
	mu          sync.Mutex
	seen        []string
}

func (g *headerGate) seenValues() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.seen...)
}

func newHeaderGate(t *testing.T, upstream *url.URL, name, value string) (*headerGate, *httptest.Server) {
	t.Helper()
	g := &headerGate{name: name, value: value}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Scheme, pr.Out.URL.Host = "http", upstream.Host
		pr.Out.Host = upstream.Host
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.seen = append(g.seen, r.Header.Get(g.name))
		g.mu.Unlock()
		if r.Header.Get(g.name) != g.value {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return g, srv
}

// pageTargets lists the page targets of the browser behind a DevTools
// HTTP endpoint.
func pageTargets(t *testing.T, base string) []string {
	t.Helper()
	resp, err := http.Get(base + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var targets []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tg := range targets {
		if tg.Type == "page" {
			ids = append(ids, tg.ID)
		}
	}
	return ids
}

func TestAttachToCDPURL(t *testing.T) {
	wsURL, pid := externalChromium(t)
	const headerName, headerValue = "X-Fleet-Key", "k3y-for-the-remote-browser"
	gate, gateSrv := newHeaderGate(t, wsURL, headerName, headerValue)
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(`<!doctype html><title>remote page</title>`))
	gateHost := strings.TrimPrefix(gateSrv.URL, "http://")
	direct := "http://" + wsURL.Host
	before := pageTargets(t, direct)

	tests := []struct {
		name    string
		cdpURL  string
		headers map[string]string
		wantErr bool
	}{
		{name: "ws URL with cdpHeaders", cdpURL: "ws://" + gateHost + wsURL.Path, headers: map[string]string{headerName: headerValue}},
		{name: "http URL resolved through /json/version", cdpURL: "http://" + gateHost, headers: map[string]string{headerName: headerValue}},
		{name: "without the header the remote wants", cdpURL: "ws://" + gateHost + wsURL.Path, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := runnertest.AttachConfig(tt.cdpURL, tt.headers, func(lo *v1alpha1.LaunchOptions) {
				lo.ConnectTimeoutMs = ptr.To(int32(10000))
			})
			if tt.wantErr {
				log, _ := runnertest.Logger(t)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				b, err := chromium.StartBrowser(ctx, cfg, log)
				if err == nil {
					b.Close(ctx)
					t.Fatal("attaching without the header worked")
				}
				runnertest.WantContains(t, "error", err.Error(), "attaching to ws://"+gateHost)
				// The path and query of a cdpUrl may carry a token.
				runnertest.WantNotContains(t, "error", err.Error(), wsURL.Path)
				return
			}
			b := browsertest.Start(t, cfg)
			runnertest.Want(t, "PID of an attached browser", b.PID(), 0)
			_, c, _ := newTestServer(t, b, nil)
			status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: page.URL})
			if status != 200 {
				t.Fatalf("navigate through the attached browser: %d %s", status, body)
			}
			var title string
			browsertest.Evaluate(t, b, "document.title", &title)
			runnertest.Want(t, "title", title, "remote page")
			for _, v := range gate.seenValues() {
				if v != headerValue && !strings.Contains(tt.name, "without") {
					t.Errorf("the remote saw %s: %q", headerName, v)
				}
			}
			if len(gate.seenValues()) == 0 {
				t.Error("nothing went through the remote's gate")
			}
			// The runner drives a tab of its own; closing the session
			// closes that tab and leaves the browser running.
			runnertest.Want(t, "page targets while attached", len(pageTargets(t, direct)), len(before)+1)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := b.Close(ctx); err != nil {
				t.Fatal(err)
			}
			runnertest.WaitFor(t, "the runner's tab to close", func() bool { return len(pageTargets(t, direct)) == len(before) })
			if !procs.Running(pid) {
				t.Fatal("closing the session stopped the user's browser")
			}
		})
	}
}

// A session attached at cdpUrl serves the same filtered /cdp route: the
// user's browser gets no file: navigation, no Browser.close, and no
// download path the session did not set.
func TestCDPProxyFilterOnAttachedBrowser(t *testing.T) {
	wsURL, pid := externalChromium(t)
	b := browsertest.Start(t, runnertest.AttachConfig(wsURL.String(), nil, func(lo *v1alpha1.LaunchOptions) {
		lo.ConnectTimeoutMs = ptr.To(int32(10000))
	}))
	runnertest.Want(t, "the attached session's downloads directory", b.DownloadsDir(), "")
	_, c, logs := newTestServer(t, b, nil)
	cc := dialCDP(t, c)
	_, sid := cc.openTab()

	tests := []struct {
		name, method, params, sid string
		wantErr                   string // "" succeeds
	}{
		{name: "a file: navigation", method: "Page.navigate", params: `{"url":"file:///etc/passwd"}`, sid: sid,
			wantErr: "browserfleet: Page.navigate: url must not be a file: URL: it would read the runner's files"},
		{name: "closing the user's browser", method: "Browser.close",
			wantErr: "browserfleet: Browser.close: refused: the browser is the session's: end the session through the API"},
		// The session has no downloads directory: the client's
		// behaviour becomes deny, and the call succeeds.
		{name: "a download path", method: "Browser.setDownloadBehavior", params: `{"behavior":"allow","downloadPath":"` + t.TempDir() + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cc.call(tt.method, tt.params, tt.sid)
			got := ""
			if r.Error != nil {
				got = r.Error.Message
			}
			runnertest.Want(t, "error of "+tt.method, got, tt.wantErr)
		})
	}
	runnertest.Want[any](t, "the client's tab", cc.eval("location.href", sid), "about:blank")
	runnertest.WantContains(t, "log", logs.String(), `msg="cdp proxy: rewritten" method=Browser.setDownloadBehavior reason="the session refuses downloads: behavior set to deny"`)
	if !procs.Running(pid) {
		t.Fatal("the user's browser stopped")
	}
}

// A session attached at cdpUrl leaves the tabs its clients opened, and
// that operations attached to, open when it ends: they are the user's
// browser's; only the runner's own tab closes.
func TestAttachedBrowserKeepsTheClientsTabs(t *testing.T) {
	wsURL, _ := externalChromium(t)
	direct := "http://" + wsURL.Host
	before := pageTargets(t, direct)
	b := browsertest.Start(t, runnertest.AttachConfig(wsURL.String(), nil, nil))
	_, c, _ := newTestServer(t, b, nil)
	site := tabsSite(t)
	cdp := dialCDP(t, c)
	tab, _ := clientTab(t, cdp, site.URL+"/second")
	runnertest.WantContains(t, "pageText", pageTextOf(t, c, tab), "The client's tab")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	runnertest.WaitFor(t, "the runner's tab to close", func() bool { return len(pageTargets(t, direct)) == len(before)+1 })
	if !slices.Contains(pageTargets(t, direct), tab) {
		t.Errorf("the client's tab %s closed with the session", tab)
	}
}
