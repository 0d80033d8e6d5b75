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

package runner

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

	"github.com/browserfleet/browserfleet/api/v1alpha1"
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
	srv := newPageServer(t, htmlHandler(probePage))
	tests := []struct {
		name  string
		spec  func(*v1alpha1.BrowserSessionSpec)
		check func(t *testing.T, f pageFacts)
	}{
		{
			name: "local launch options: viewport, scale, locale, touch, headless",
			spec: launchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Viewport = &v1alpha1.Viewport{Width: 1111, Height: 777}
				lo.DeviceScaleFactor = ptrTo(2.0)
				lo.Locale = "de-DE"
				lo.HasTouch = ptrTo(true)
				lo.Headless = ptrTo(true)
			}),
			check: func(t *testing.T, f pageFacts) {
				want(t, "innerWidth", f.InnerWidth, 1111)
				want(t, "innerHeight", f.InnerHeight, 777)
				want(t, "devicePixelRatio", f.DevicePixelRatio, 2.0)
				want(t, "navigator.language", f.Language, "de-DE")
				want(t, "Intl locale", f.IntlLocale, "de-DE")
				want(t, "maxTouchPoints", f.MaxTouchPoints, 5)
				want(t, "touch events", f.TouchEvents, true)
				// No os asked for: Chrome on Linux, what the runner is,
				// without the headless marker.
				want(t, "navigator.platform", f.Platform, "Linux x86_64")
				want(t, "userAgentData.platform", f.UADataPlatform, "Linux")
				wantContains(t, "userAgent", f.UserAgent, "X11; Linux x86_64", "Chrome/")
				wantNotContains(t, "userAgent", f.UserAgent, "Headless")
			},
		},
		{
			name: "a --user-agent switch",
			spec: launchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Args = []v1alpha1.LaunchArg{"--user-agent=Mozilla/5.0 (X11; Linux x86_64) FleetBot/1.0"}
			}),
			check: func(t *testing.T, f pageFacts) {
				want(t, "userAgent", f.UserAgent, "Mozilla/5.0 (X11; Linux x86_64) FleetBot/1.0")
				want(t, "navigator.platform", f.Platform, "Linux x86_64")
			},
		},
		{
			name: "os mac",
			spec: cloudSettings(&v1alpha1.BrowserSettings{OS: "mac"}),
			check: func(t *testing.T, f pageFacts) {
				want(t, "innerWidth", f.InnerWidth, 1280)
				want(t, "innerHeight", f.InnerHeight, 720)
				want(t, "navigator.platform", f.Platform, "MacIntel")
				want(t, "userAgentData.platform", f.UADataPlatform, "macOS")
				want(t, "userAgentData.mobile", f.UADataMobile, false)
				want(t, "maxTouchPoints", f.MaxTouchPoints, 0)
				want(t, "touch events", f.TouchEvents, false)
				wantContains(t, "userAgent", f.UserAgent, "Macintosh; Intel Mac OS X", "Chrome/")
				wantNotContains(t, "userAgent", f.UserAgent, "Headless", "Linux", "Mobile")
			},
		},
		{
			name: "mobile",
			spec: cloudSettings(&v1alpha1.BrowserSettings{OS: "mobile"}),
			check: func(t *testing.T, f pageFacts) {
				want(t, "innerWidth", f.InnerWidth, 412)
				want(t, "devicePixelRatio", f.DevicePixelRatio, 2.625)
				want(t, "navigator.platform", f.Platform, "Linux armv81")
				want(t, "userAgentData.platform", f.UADataPlatform, "Android")
				want(t, "userAgentData.mobile", f.UADataMobile, true)
				want(t, "maxTouchPoints", f.MaxTouchPoints, 5)
				want(t, "touch events", f.TouchEvents, true)
				wantContains(t, "userAgent", f.UserAgent, "Android", "Mobile Safari", "Chrome/")
				wantNotContains(t, "userAgent", f.UserAgent, "Headless", "X11")
			},
		},
		{
			name: "windows and french from the fingerprint",
			spec: cloudSettings(&v1alpha1.BrowserSettings{
				Viewport: &v1alpha1.Viewport{Width: 1024, Height: 600},
				Fingerprint: &v1alpha1.Fingerprint{
					OperatingSystems: []v1alpha1.FingerprintOS{"windows"},
					Locales:          []string{"fr-FR"},
				},
			}),
			check: func(t *testing.T, f pageFacts) {
				want(t, "innerWidth", f.InnerWidth, 1024)
				want(t, "innerHeight", f.InnerHeight, 600)
				want(t, "devicePixelRatio", f.DevicePixelRatio, 1.0)
				want(t, "navigator.language", f.Language, "fr-FR")
				want(t, "navigator.platform", f.Platform, "Win32")
				want(t, "userAgentData.platform", f.UADataPlatform, "Windows")
				want(t, "maxTouchPoints", f.MaxTouchPoints, 0)
				want(t, "touch events", f.TouchEvents, false)
				wantContains(t, "userAgent", f.UserAgent, "Windows NT 10.0; Win64; x64")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := startTestBrowser(t, testConfig(tt.spec))
			mustNavigate(t, b, srv.URL)
			var f pageFacts
			evaluate(t, b, factsJS, &f)
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

func want[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantContains(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("%s = %q, want it to contain %q", what, got, s)
		}
	}
}

func wantNotContains(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(got, s) {
			t.Errorf("%s = %q, want it not to contain %q", what, got, s)
		}
	}
}

// cmdline is the command line of process pid.
func cmdline(t *testing.T, pid int) []string {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatalf("reading the command line of %d: %v", pid, err)
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
}

// recordingResolver is hostsResolver that remembers every name it is asked.
type recordingResolver struct {
	hostsResolver
	mu    sync.Mutex
	names []string
}

func (r *recordingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.names = append(r.names, host)
	r.mu.Unlock()
	return r.hostsResolver.LookupNetIP(ctx, network, host)
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
	srv := newPageServer(t, htmlHandler(probePage))
	cfg := testConfig(nil)
	rec := &recordingResolver{}
	cfg.Resolver = rec
	b := startTestBrowser(t, cfg)
	mustNavigate(t, b, srv.URL)
	// Absence takes a while to show: watch for the seconds in which
	// Chromium makes those calls.
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if names := rec.asked(); len(names) > 0 {
			t.Fatalf("the browser's egress resolved %q; the session's pages asked for none", names)
		}
	}
}
