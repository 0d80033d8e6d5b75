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
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
)

const probePage = `<!doctype html><html><head>
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>probe</title></head><body>probe</body></html>`

// pageFacts is what a page sees of the browser's identity and metrics.
type pageFacts struct {
	InnerWidth       int64   `json:"innerWidth"`
	InnerHeight      int64   `json:"innerHeight"`
	ScreenWidth      int64   `json:"screenWidth"`
	DevicePixelRatio float64 `json:"devicePixelRatio"`
	Language         string  `json:"language"`
	IntlLocale       string  `json:"intlLocale"`
	UserAgent        string  `json:"userAgent"`
	Platform         string  `json:"platform"`
	MaxTouchPoints   int64   `json:"maxTouchPoints"`
	TouchEvents      bool    `json:"touchEvents"`
	UADataPlatform   string  `json:"uaDataPlatform"`
	UADataMobile     bool    `json:"uaDataMobile"`
}

const factsJS = `({
	innerWidth: window.innerWidth,
	innerHeight: window.innerHeight,
	screenWidth: screen.width,
	devicePixelRatio: window.devicePixelRatio,
	language: navigator.language,
	intlLocale: Intl.DateTimeFormat().resolvedOptions().locale,
	userAgent: navigator.userAgent,
	platform: navigator.platform,
	maxTouchPoints: navigator.maxTouchPoints,
	touchEvents: 'ontouchstart' in window,
	uaDataPlatform: navigator.userAgentData ? navigator.userAgentData.platform : '',
	uaDataMobile: navigator.userAgentData ? navigator.userAgentData.mobile : false,
})`

func TestLaunchSettingsVisibleToPage(t *testing.T) {
	srv := runnertest.NewPageServer(t, runnertest.HTMLHandler(probePage))
	tests := []struct {
		name  string
		spec  func(*v1alpha1.BrowserSessionSpec)
		check func(t *testing.T, f pageFacts)
	}{
		{
			name: "local launch options: viewport, scale, locale, touch, headless",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Viewport = &v1alpha1.Viewport{Width: 1111, Height: 777}
				lo.DeviceScaleFactor = ptr.To(2.0)
				lo.Locale = "de-DE"
				lo.HasTouch = ptr.To(true)
				lo.Headless = ptr.To(true)
			}),
			check: func(t *testing.T, f pageFacts) {
				runnertest.Want(t, "innerWidth", f.InnerWidth, 1111)
				runnertest.Want(t, "innerHeight", f.InnerHeight, 777)
				runnertest.Want(t, "devicePixelRatio", f.DevicePixelRatio, 2.0)
				runnertest.Want(t, "navigator.language", f.Language, "de-DE")
				runnertest.Want(t, "Intl locale", f.IntlLocale, "de-DE")
				runnertest.Want(t, "maxTouchPoints", f.MaxTouchPoints, 5)
				runnertest.Want(t, "touch events", f.TouchEvents, true)
				// No os asked for: Chrome on Linux, what the runner is,
				// without the headless marker.
				runnertest.Want(t, "navigator.platform", f.Platform, "Linux x86_64")
				runnertest.Want(t, "userAgentData.platform", f.UADataPlatform, "Linux")
				runnertest.WantContains(t, "userAgent", f.UserAgent, "X11; Linux x86_64", "Chrome/")
				runnertest.WantNotContains(t, "userAgent", f.UserAgent, "Headless")
			},
		},
		{
			name: "a --user-agent switch",
			spec: runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Args = []v1alpha1.LaunchArg{"--user-agent=Mozilla/5.0 (X11; Linux x86_64) FleetBot/1.0"}
			}),
			check: func(t *testing.T, f pageFacts) {
				runnertest.Want(t, "userAgent", f.UserAgent, "Mozilla/5.0 (X11; Linux x86_64) FleetBot/1.0")
				runnertest.Want(t, "navigator.platform", f.Platform, "Linux x86_64")
			},
		},
		{
			name: "os mac",
			spec: runnertest.CloudSettings(&v1alpha1.BrowserSettings{OS: "mac"}),
			check: func(t *testing.T, f pageFacts) {
				runnertest.Want(t, "innerWidth", f.InnerWidth, 1280)
				runnertest.Want(t, "innerHeight", f.InnerHeight, 720)
				runnertest.Want(t, "navigator.platform", f.Platform, "MacIntel")
				runnertest.Want(t, "userAgentData.platform", f.UADataPlatform, "macOS")
				runnertest.Want(t, "userAgentData.mobile", f.UADataMobile, false)
				runnertest.Want(t, "maxTouchPoints", f.MaxTouchPoints, 0)
				runnertest.Want(t, "touch events", f.TouchEvents, false)
				runnertest.WantContains(t, "userAgent", f.UserAgent, "Macintosh; Intel Mac OS X", "Chrome/")
				runnertest.WantNotContains(t, "userAgent", f.UserAgent, "Headless", "Linux", "Mobile")
			},
		},
		{
			name: "mobile",
			spec: runnertest.CloudSettings(&v1alpha1.BrowserSettings{OS: "mobile"}),
			check: func(t *testing.T, f pageFacts) {
				runnertest.Want(t, "innerWidth", f.InnerWidth, 412)
				runnertest.Want(t, "devicePixelRatio", f.DevicePixelRatio, 2.625)
				runnertest.Want(t, "navigator.platform", f.Platform, "Linux armv81")
				runnertest.Want(t, "userAgentData.platform", f.UADataPlatform, "Android")
				runnertest.Want(t, "userAgentData.mobile", f.UADataMobile, true)
				runnertest.Want(t, "maxTouchPoints", f.MaxTouchPoints, 5)
				runnertest.Want(t, "touch events", f.TouchEvents, true)
				runnertest.WantContains(t, "userAgent", f.UserAgent, "Android", "Mobile Safari", "Chrome/")
				runnertest.WantNotContains(t, "userAgent", f.UserAgent, "Headless", "X11")
			},
		},
		{
			name: "windows and french from the fingerprint",
			spec: runnertest.CloudSettings(&v1alpha1.BrowserSettings{
				Viewport: &v1alpha1.Viewport{Width: 1024, Height: 600},
				Fingerprint: &v1alpha1.Fingerprint{
					OperatingSystems: []v1alpha1.FingerprintOS{"windows"},
					Locales:          []string{"fr-FR"},
				},
			}),
			check: func(t *testing.T, f pageFacts) {
				runnertest.Want(t, "innerWidth", f.InnerWidth, 1024)
				runnertest.Want(t, "innerHeight", f.InnerHeight, 600)
				runnertest.Want(t, "devicePixelRatio", f.DevicePixelRatio, 1.0)
				runnertest.Want(t, "navigator.language", f.Language, "fr-FR")
				runnertest.Want(t, "navigator.platform", f.Platform, "Win32")
				runnertest.Want(t, "userAgentData.platform", f.UADataPlatform, "Windows")
				runnertest.Want(t, "maxTouchPoints", f.MaxTouchPoints, 0)
				runnertest.Want(t, "touch events", f.TouchEvents, false)
				runnertest.WantContains(t, "userAgent", f.UserAgent, "Windows NT 10.0; Win64; x64")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := browsertest.Start(t, runnertest.Config(tt.spec))
			browsertest.MustNavigate(t, b, srv.URL)
			var f pageFacts
			browsertest.Evaluate(t, b, factsJS, &f)
			tt.check(t, f)

			// Headless (the default, and what the first case asks for):
			// Chromium 156's headless mode is the full browser without
			// a window and tells neither CDP nor the page, so look at
			// how it was started.
			if args := cmdline(t, b.PID()); !slices.Contains(args, "--headless") {
				t.Errorf("chromium command line %q lacks --headless", args)
			}
		})
	}
}

func cmdline(t *testing.T, pid int) []string {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatalf("reading the command line of %d: %v", pid, err)
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
}

// recordingResolver is runnertest.HostsResolver that remembers every name it is asked.
type recordingResolver struct {
	runnertest.HostsResolver
	mu    sync.Mutex
	names []string
}

func (r *recordingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.names = append(r.names, host)
	r.mu.Unlock()
	return r.HostsResolver.LookupNetIP(ctx, network, host)
}

func (r *recordingResolver) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.names)
}

// TestBrowserCallsNoOneAtStart: a session's browser connects only where its
// pages lead. Debian's Chromium asks its egress proxy for Google's time,
// sign-in and component update servers within a second of its start
// whatever --disable-background-networking says; the safety switches keep
// them quiet, so the egress gate never resolves a name nobody asked for.
func TestBrowserCallsNoOneAtStart(t *testing.T) {
	srv := runnertest.NewPageServer(t, runnertest.HTMLHandler(probePage))
	cfg := runnertest.Config(nil)
	rec := &recordingResolver{}
	cfg.Resolver = rec
	b := browsertest.Start(t, cfg)
	browsertest.MustNavigate(t, b, srv.URL)
	// Absence takes a while to show: watch for the seconds in which
	// Chromium makes those calls.
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if names := rec.asked(); len(names) > 0 {
			t.Fatalf("the browser's egress resolved %q; the session's pages asked for none", names)
		}
	}
}

// TestSiteIsolation: a cross-site iframe (127.0.0.2 in a page of
// 127.0.0.1) runs in a renderer of its own, an out-of-process iframe
// target, in Chromium and in its headless-only build alike. The operator's
// opt-out takes effect in the headless-only build; Chromium 156 on Linux
// keeps isolating sites whatever its switches say
// (--disable-site-isolation-trials, --disable-features=SitePerProcess), so
// its headful and devtools sessions stay isolated.
func TestSiteIsolation(t *testing.T) {
	inner := runnertest.NewPageServerOn(t, "127.0.0.2", runnertest.HTMLHandler(`<!doctype html><title>inner</title>inner`))
	outer := runnertest.NewPageServer(t, runnertest.HTMLHandler(`<!doctype html><title>outer</title>
<iframe src="`+inner.URL+`/inner" onload="window.innerLoaded = true"></iframe>`))
	for _, tt := range []struct {
		name          string
		headlessShell string
		disable       bool
		wantOOPIF     bool
	}{
		{name: "chromium, by default", wantOOPIF: true},
		{name: "chromium, off by the operator", disable: true, wantOOPIF: true},
		{name: "headless shell, by default", headlessShell: config.DefaultHeadlessShellPath, wantOOPIF: true},
		{name: "headless shell, off by the operator", headlessShell: config.DefaultHeadlessShellPath, disable: true, wantOOPIF: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.headlessShell != "" {
				if _, err := os.Stat(tt.headlessShell); err != nil {
					t.Skipf("no headless shell: %v (Debian: apt-get install chromium-headless-shell)", err)
				}
			}
			cfg := runnertest.Config(nil)
			cfg.HeadlessShellPath = tt.headlessShell
			cfg.DisableSiteIsolation = tt.disable
			b := browsertest.Start(t, cfg)
			browsertest.MustNavigate(t, b, outer.URL)
			runnertest.WaitFor(t, "the iframe to load", func() bool {
				var loaded bool
				browsertest.Evaluate(t, b, `window.innerLoaded === true`, &loaded)
				return loaded
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			targets, err := chromedp.Targets(b.ContextFor(ctx))
			if err != nil {
				t.Fatal(err)
			}
			oopif := slices.ContainsFunc(targets, func(ti *target.Info) bool {
				return ti.Type == "iframe" && strings.HasSuffix(ti.URL, "/inner")
			})
			runnertest.Want(t, "the cross-site iframe is out of process", oopif, tt.wantOOPIF)
		})
	}
}

// TestWebGL checks the operator's --webgl switch: pages have WebGL by
// default, on the software GPU, and none when the operator turned it off.
func TestWebGL(t *testing.T) {
	for _, tt := range []struct {
		name    string
		disable bool
		want    bool
	}{
		{name: "by default", want: true},
		{name: "off by the operator", disable: true, want: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := runnertest.Config(nil)
			cfg.DisableWebGL = tt.disable
			b := browsertest.Start(t, cfg)
			var got bool
			browsertest.Evaluate(t, b, `!!document.createElement('canvas').getContext('webgl')`, &got)
			runnertest.Want(t, "a canvas has a WebGL context", got, tt.want)
		})
	}
}
