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
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Browser handles: their pages, the active page, connecting, closing.

// connected is a handle of its own on the shared browser, closed when the
// test ends.
func connected(t *testing.T) *Browser {
	t.Helper()
	b, err := ConnectLocalBrowser(testCtx(t), LocalBrowserConnectOptions{CDPURL: httpOrigin(shared)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return b
}

// ids are the ids of pages.
func ids(pages []*Page) []string {
	out := make([]string, len(pages))
	for i, p := range pages {
		out[i] = p.ID()
	}
	return out
}

func TestPagesAndTheActivePage(t *testing.T) {
	ctx := testCtx(t)
	h := connected(t)
	bc := h.Context()
	before, err := bc.Pages(ctx)
	if err != nil || len(before) == 0 {
		t.Fatalf("pages %v, %v; want the browser's first tab", before, err)
	}
	if active, _ := bc.ActivePage(ctx); active != before[0] {
		t.Errorf("with none set, the active page is %s, want the first page %s", active.ID(), before[0].ID())
	}

	form := openPage(t, h, "/form")
	list := openPage(t, h, "/list")
	got, _ := bc.Pages(ctx)
	if diff := cmp.Diff(append(ids(before), form.ID(), list.ID()), ids(got)); diff != "" {
		t.Errorf("pages, oldest first (-want +got):\n%s", diff)
	}
	if active, _ := bc.ActivePage(ctx); active != list {
		t.Errorf("the active page is %s, want the last NewPage's", active.ID())
	}
	if err := bc.SetActivePage(ctx, form); err != nil {
		t.Fatal(err)
	}
	if active, _ := bc.ActivePage(ctx); active != form {
		t.Errorf("the active page is %s, want the one set", active.ID())
	}

	// A tab the page opens joins the list, last.
	if err := list.Evaluate(ctx, `window.open('/download'), true`, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { ps, _ := bc.Pages(ctx); return len(ps) == len(before)+3 })
	got, _ = bc.Pages(ctx)
	popup := got[len(got)-1]
	t.Cleanup(func() { _ = popup.Close(context.Background()) })
	waitFor(t, func() bool { u, _ := popup.URL(ctx); return strings.HasSuffix(u, "/download") })

	// A closed tab disappears, and stops being active.
	if err := form.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ = bc.Pages(ctx)
	if slices.Contains(got, form) {
		t.Error("Pages lists the closed page")
	}
	if active, _ := bc.ActivePage(ctx); active != before[0] {
		t.Errorf("after the active page closed the active page is %s, want the first page", active.ID())
	}
	if err := bc.SetActivePage(ctx, form); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("SetActivePage of a closed page: %v", err)
	}
	if _, err := form.Title(ctx); err == nil {
		t.Error("a closed page's Title succeeded")
	}
	others, _ := shared.Context().Pages(ctx)
	if err := bc.SetActivePage(ctx, others[0]); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("SetActivePage of another handle's page: %v, want ErrInvalidArgument", err)
	}
}

func TestPageMethods(t *testing.T) {
	ctx := testCtx(t)
	p := openPage(t, nil, "/list")
	if u, err := p.URL(ctx); err != nil || u != site.URL+"/list" {
		t.Errorf("URL = %q, %v", u, err)
	}
	if title, err := p.Title(ctx); err != nil || title != "Catalogue" {
		t.Errorf("Title = %q, %v", title, err)
	}
	if err := p.Goto(ctx, site.URL+"/form"); err != nil {
		t.Fatal(err)
	}
	if title, _ := p.Title(ctx); title != "Sign in" {
		t.Errorf("after Goto the title is %q", title)
	}
	var sum struct {
		N int `json:"n"`
	}
	if err := p.Evaluate(ctx, `new Promise(r => setTimeout(() => r({n: 1 + 2}), 10))`, &sum); err != nil || sum.N != 3 {
		t.Errorf("Evaluate of a promise: %+v, %v", sum, err)
	}
	if err := p.Evaluate(ctx, `(() => { throw new Error("boom") })()`, nil); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Evaluate of a throw: %v", err)
	}
	var undef any = "unchanged"
	if err := p.Evaluate(ctx, `undefined`, &undef); err != nil || undef != nil {
		t.Errorf("Evaluate of undefined: %v, %v", undef, err)
	}
	if err := p.Goto(ctx, "http://127.0.0.1:1/"); err == nil {
		t.Error("Goto an address where nothing listens succeeded")
	}
}

func TestClosingAConnectedHandleLeavesTheBrowser(t *testing.T) {
	ctx := testCtx(t)
	h, err := ConnectLocalBrowser(ctx, LocalBrowserConnectOptions{CDPURL: httpOrigin(shared)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.Context().NewPage(ctx, site.URL+"/form")
	if err != nil {
		t.Fatal(err)
	}
	// An instance uses the page, so that it is attached when the handle
	// closes.
	c, err := Create(ctx, CreateOptions{Browser: h, Logging: &LoggingConfig{Level: LogLevelOff}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.Act(ctx, ObservedAction(Action{Selector: "#email", Method: "fill", Arguments: []string{"ada@example.com"}}), nil); err != nil || !res.Data.Success {
		t.Fatalf("act: %v %+v", err, res)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Errorf("a second Close: %v", err)
	}

	// The tab is open still, as the user left it.
	var still *Page
	waitFor(t, func() bool {
		ps, _ := shared.Context().Pages(ctx)
		i := slices.IndexFunc(ps, func(q *Page) bool { return q.ID() == p.ID() })
		if i >= 0 {
			still = ps[i]
		}
		return still != nil
	})
	t.Cleanup(func() { _ = still.Close(context.Background()) })
	if v := eval[string](t, still, "document.getElementById('email').value"); v != "ada@example.com" {
		t.Errorf("the page's field holds %q", v)
	}

	// The closed handle and what came of it refuse to work.
	if _, err := h.Context().Pages(ctx); !errors.Is(err, ErrBrowserClosed) {
		t.Errorf("Pages: %v, want ErrBrowserClosed", err)
	}
	if _, err := h.Context().NewPage(ctx, ""); !errors.Is(err, ErrBrowserClosed) {
		t.Errorf("NewPage: %v, want ErrBrowserClosed", err)
	}
	if _, err := p.Title(ctx); !errors.Is(err, ErrBrowserClosed) {
		t.Errorf("Title: %v, want ErrBrowserClosed", err)
	}
	if _, err := c.Observe(ctx, nil, nil); !errors.Is(err, ErrBrowserClosed) {
		t.Errorf("Observe: %v, want ErrBrowserClosed", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Errorf("closing the instance of a closed handle: %v", err)
	}
}

func TestConnectLocalBrowserEndpoints(t *testing.T) {
	ctx := testCtx(t)
	origin := httpOrigin(shared)

	t.Run("a ws:// endpoint", func(t *testing.T) {
		b, err := ConnectLocalBrowser(ctx, LocalBrowserConnectOptions{CDPURL: strings.Replace(origin, "http", "ws", 1) + wsPath(t, origin)})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close(ctx)
		if ps, err := b.Context().Pages(ctx); err != nil || len(ps) == 0 {
			t.Errorf("pages %v, %v", ps, err)
		}
	})

	t.Run("headers reach /json/version and the handshake", func(t *testing.T) {
		up, _ := url.Parse(origin)
		proxy := httputil.NewSingleHostReverseProxy(up)
		var (
			mu   sync.Mutex
			seen []string
		)
		guard := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer cdp-token" {
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			mu.Lock()
			seen = append(seen, r.URL.Path)
			mu.Unlock()
			// The browser checks the Host of its DevTools requests.
			r.Host = up.Host
			proxy.ServeHTTP(w, r)
		}))
		defer guard.Close()
		b, err := ConnectLocalBrowser(ctx, LocalBrowserConnectOptions{CDPURL: guard.URL, Headers: map[string]string{"Authorization": "Bearer cdp-token"}})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close(ctx)
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 2 || seen[0] != "/json/version" || !strings.HasPrefix(seen[1], "/devtools/browser/") {
			t.Errorf("the guarded endpoint saw %q", seen)
		}
		if _, err := ConnectLocalBrowser(ctx, LocalBrowserConnectOptions{CDPURL: guard.URL}); err == nil {
			t.Error("connecting without the header succeeded")
		}
	})

	t.Run("errors never show the endpoint's path or query", func(t *testing.T) {
		_, err := ConnectLocalBrowser(ctx, LocalBrowserConnectOptions{CDPURL: "ws://127.0.0.1:1/devtools/browser/x?token=s3cret"})
		if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "/devtools") {
			t.Errorf("err = %v", err)
		}
		for _, bad := range []string{"", "127.0.0.1:9222", "ftp://127.0.0.1:9222"} {
			if _, err := ConnectLocalBrowser(ctx, LocalBrowserConnectOptions{CDPURL: bad}); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("CDPURL %q: %v, want ErrInvalidArgument", bad, err)
			}
		}
	})
}

// wsPath is the browser's DevTools WebSocket path, from its /json/version.
func wsPath(t *testing.T, origin string) string {
	t.Helper()
	ws, err := browserEndpoint(testCtx(t), origin, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(ws)
	return u.Path
}

func TestLaunchArgs(t *testing.T) {
	base := []string{"--remote-debugging-port=0", "--user-data-dir=/p", "--window-size=1288,711"}
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(append(defaultArgs, append(headlessArgs, "--no-sandbox")...)), func(a string) bool {
			return slices.Contains(drop, argName(a))
		})
	}
	headful := false
	for _, tc := range []struct {
		name string
		opts LocalBrowserLaunchOptions
		want []string
	}{
		{"defaults", LocalBrowserLaunchOptions{}, slices.Concat(without(), base, []string{"about:blank"})},
		{"ignore some defaults by name", LocalBrowserLaunchOptions{IgnoreDefaultArgs: []string{"--no-sandbox", "disable-sync", "--mute-audio=1"}},
			slices.Concat(without("no-sandbox", "disable-sync", "mute-audio"), base, []string{"about:blank"})},
		{"ignore all defaults", LocalBrowserLaunchOptions{IgnoreAllDefaultArgs: true, ChromiumSandbox: true}, slices.Concat(base, []string{"about:blank"})},
		{"headful with devtools", LocalBrowserLaunchOptions{Headless: &headful, Devtools: true, ChromiumSandbox: true},
			slices.Concat(defaultArgs, []string{"--auto-open-devtools-for-tabs"}, base, []string{"about:blank"})},
		{"options and args, args last, a URL of the caller's", LocalBrowserLaunchOptions{
			IgnoreAllDefaultArgs: true, Port: 9333, Viewport: &Viewport{Width: 800, Height: 600}, DeviceScaleFactor: 1.5,
			Locale: "de-DE", HasTouch: true, IgnoreHTTPSErrors: true, Proxy: &LocalProxy{Server: "http://proxy:3128", Bypass: "*.internal"},
			Args: []string{"--lang=fr", "https://example.org/"},
		}, []string{"--remote-debugging-port=9333", "--user-data-dir=/p", "--window-size=800,600",
			"--force-device-scale-factor=1.5", "--lang=de-DE", "--accept-lang=de-DE,de", "--touch-events=enabled",
			"--proxy-server=http://proxy:3128", "--proxy-bypass-list=*.internal", "--ignore-certificate-errors",
			"--lang=fr", "https://example.org/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, err := checkLaunchOptions(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			proxy := ""
			if tc.opts.Proxy != nil {
				proxy = tc.opts.Proxy.Server
			}
			if diff := cmp.Diff(tc.want, lo.args("/p", proxy)); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct {
		opts  LocalBrowserLaunchOptions
		field string
	}{
		{LocalBrowserLaunchOptions{Viewport: &Viewport{Width: 0, Height: 10}}, "Viewport"},
		{LocalBrowserLaunchOptions{DeviceScaleFactor: -1}, "DeviceScaleFactor"},
		{LocalBrowserLaunchOptions{Port: 70000}, "Port"},
		{LocalBrowserLaunchOptions{Proxy: &LocalProxy{}}, "Proxy.Server"},
		{LocalBrowserLaunchOptions{Locale: "de DE"}, "Locale"},
		{LocalBrowserLaunchOptions{ConnectTimeout: -1}, "ConnectTimeout"},
	} {
		if _, err := LaunchLocalBrowser(testCtx(t), tc.opts); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v: %v, want ErrInvalidArgument naming %s", tc.opts, err, tc.field)
		}
	}
}

// groupAlive reports whether a process of the process group led by pid is
// running; zombies (dead, not reaped yet) do not count.
func groupAlive(t *testing.T, pid int) bool {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 2 && fields[2] == strconv.Itoa(pid) && fields[0] != "Z" {
			return true
		}
	}
	return false
}
