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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
)

// tellsProbe is the script of the tells page: it reads what sites read to
// tell a headless, automated Chromium from a person's Chrome, and posts it
// to /report with the frame's name.
const tellsProbe = `(async () => {
  const r = {notNative: [], shape: []};
  const nat = (f, want) => {
    if (typeof f !== 'function') return;
    const s = Function.prototype.toString.call(f);
    if (s !== want) r.notNative.push(want + ' is ' + s);
  };
  const get = (o, p) => { const d = o && Object.getOwnPropertyDescriptor(o, p); return d && d.get; };
  const check = (what, ok) => { if (!ok) r.shape.push(what); };
  r.webdriver = navigator.webdriver;
  r.navigatorOwn = Object.getOwnPropertyNames(navigator);
  r.userAgent = navigator.userAgent;
  r.platform = navigator.platform;
  r.brands = navigator.userAgentData ? navigator.userAgentData.brands.map((b) => b.brand) : [];
  r.uaPlatform = navigator.userAgentData ? navigator.userAgentData.platform : '';
  r.languages = navigator.languages;
  r.plugins = Array.from(navigator.plugins, (p) => p.name);
  r.mimeTypes = Array.from(navigator.mimeTypes, (m) => m.type);
  r.pdfViewerEnabled = navigator.pdfViewerEnabled;
  if (navigator.plugins.length > 0) {
    const p = navigator.plugins;
    check('plugins is a PluginArray', p instanceof PluginArray && Object.prototype.toString.call(p) === '[object PluginArray]');
    check('plugins[0] is item(0)', p[0] === p.item(0) && p[0] === p.namedItem(p[0].name) && p[p[0].name] === p[0]);
    check('plugin indexes are its own enumerable keys', JSON.stringify(Object.keys(p)) === JSON.stringify(Object.keys([...p])));
    check('a plugin is a Plugin', p[0] instanceof Plugin && p[0].filename === 'internal-pdf-viewer' && p[0].length === 2);
    check('plugins[0][0] is a MimeType', p[0][0] instanceof MimeType && p[0][0].type === 'application/pdf');
    check('mimeTypes[0].enabledPlugin', navigator.mimeTypes[0].enabledPlugin instanceof Plugin);
    check('navigator.plugins is one object', navigator.plugins === navigator.plugins);
  }
  const gl = document.createElement('canvas').getContext('webgl');
  if (gl) {
    const ext = gl.getExtension('WEBGL_debug_renderer_info');
    r.webglVendor = gl.getParameter(ext.UNMASKED_VENDOR_WEBGL);
    r.webglRenderer = gl.getParameter(ext.UNMASKED_RENDERER_WEBGL);
    check('getParameter keeps its name and length', gl.getParameter.name === 'getParameter' && gl.getParameter.length === 1);
  }
  r.notification = typeof Notification === 'undefined' ? '' : Notification.permission;
  r.notificationQuery = (await navigator.permissions.query({name: 'notifications'})).state;
  r.chrome = window.chrome ? Object.getOwnPropertyNames(window.chrome) : [];
  if (window.chrome) {
    const d = Object.getOwnPropertyDescriptor(window, 'chrome');
    check('window.chrome is an own, writable, enumerable property', d && d.writable && d.enumerable && d.configurable);
    nat(window.chrome.loadTimes, 'function () { [native code] }');
    nat(window.chrome.csi, 'function () { [native code] }');
    if (window.chrome.app) nat(window.chrome.app.getDetails, 'function getDetails() { [native code] }');
    check('chrome.loadTimes() answers', typeof window.chrome.loadTimes().requestTime === 'number');
  }
  nat(Function.prototype.toString, 'function toString() { [native code] }');
  nat(Function.prototype.toString.toString, 'function toString() { [native code] }');
  for (const C of [self.WebGLRenderingContext, self.WebGL2RenderingContext]) nat(C && C.prototype.getParameter, 'function getParameter() { [native code] }');
  for (const p of ['webdriver', 'plugins', 'mimeTypes', 'pdfViewerEnabled', 'userAgent']) nat(get(Navigator.prototype, p), 'function get ' + p + '() { [native code] }');
  if (self.Notification) nat(get(Notification, 'permission'), 'function get permission() { [native code] }');
  for (const C of [PluginArray, MimeTypeArray, Plugin]) {
    nat(C.prototype.item, 'function item() { [native code] }');
    nat(C.prototype.namedItem, 'function namedItem() { [native code] }');
    nat(get(C.prototype, 'length'), 'function get length() { [native code] }');
  }
  nat(get(Plugin.prototype, 'name'), 'function get name() { [native code] }');
  nat(get(MimeType.prototype, 'type'), 'function get type() { [native code] }');
  if (self.PermissionStatus) nat(get(PermissionStatus.prototype, 'state'), 'function get state() { [native code] }');
  r.errorStacks = [];
  for (const f of [() => Function.prototype.toString.call({}), () => get(Navigator.prototype, 'plugins').call({}), () => get(Notification, 'permission').call({})]) {
    try { f(); } catch (e) { r.errorStacks.push(e.stack); }
  }
  r.workerUserAgent = await new Promise((resolve) => {
    const w = new Worker('/worker.js');
    w.onmessage = (e) => resolve(e.data);
    w.onerror = () => resolve('worker failed');
  });
  await fetch('/report?where=' + encodeURIComponent(new URL(location.href).searchParams.get('where') || 'top'), {method: 'POST', body: JSON.stringify(r)});
})();`

// tellsReport is what the tells page reports of one frame.
type tellsReport struct {
	Webdriver         *bool    `json:"webdriver"`
	NavigatorOwn      []string `json:"navigatorOwn"`
	UserAgent         string   `json:"userAgent"`
	Platform          string   `json:"platform"`
	Brands            []string `json:"brands"`
	UAPlatform        string   `json:"uaPlatform"`
	Languages         []string `json:"languages"`
	Plugins           []string `json:"plugins"`
	MimeTypes         []string `json:"mimeTypes"`
	PDFViewerEnabled  bool     `json:"pdfViewerEnabled"`
	WebGLVendor       string   `json:"webglVendor"`
	WebGLRenderer     string   `json:"webglRenderer"`
	Notification      string   `json:"notification"`
	NotificationQuery string   `json:"notificationQuery"`
	Chrome            []string `json:"chrome"`
	NotNative         []string `json:"notNative"`
	Shape             []string `json:"shape"`
	ErrorStacks       []string `json:"errorStacks"`
	WorkerUserAgent   string   `json:"workerUserAgent"`
}

// realChrome is what a Chrome on one OS shows.
type realChrome struct {
	os         v1alpha1.OS
	uaToken    string // in the User-Agent
	platform   string // navigator.platform
	uaPlatform string // navigator.userAgentData.platform
	gpu        string // in the WebGL renderer
	// phone: no PDF viewer plugins.
	phone bool
}

var (
	windowsChrome = realChrome{"windows", "(Windows NT 10.0; Win64; x64)", "Win32", "Windows", "Direct3D11", false}
	macChrome     = realChrome{"mac", "(Macintosh; Intel Mac OS X 10_15_7)", "MacIntel", "macOS", "Metal", false}
	linuxChrome   = realChrome{"linux", "(X11; Linux x86_64)", "Linux x86_64", "Linux", "OpenGL", false}
	androidChrome = realChrome{"mobile", "(Linux; Android 10; K)", "Linux armv81", "Android", "Adreno", true}
)

// pdfPlugins are a desktop Chrome's navigator.plugins.
var pdfPlugins = []string{"PDF Viewer", "Chrome PDF Viewer", "Chromium PDF Viewer", "Microsoft Edge PDF Viewer", "WebKit built-in PDF"}

// tells lists what in a frame's report, and in the request that loaded the
// frame's document, differs from the Chrome want: each entry
// names the tell.
func tells(r tellsReport, doc http.Header, want realChrome, cross bool) []string {
	var out []string
	add := func(tell string, ok bool) {
		if !ok {
			out = append(out, tell)
		}
	}
	add("navigator.webdriver", r.Webdriver != nil && !*r.Webdriver)
	add("navigator own properties", len(r.NavigatorOwn) == 0)
	add("navigator.userAgent", strings.Contains(r.UserAgent, want.uaToken) && !strings.Contains(r.UserAgent, "Headless"))
	add("navigator.platform", r.Platform == want.platform)
	add("userAgentData.brands", slices.Contains(r.Brands, "Google Chrome") && !slices.ContainsFunc(r.Brands, func(b string) bool { return strings.Contains(b, "Headless") }))
	add("userAgentData.platform", r.UAPlatform == want.uaPlatform)
	add("navigator.languages", slices.Equal(r.Languages, []string{"en-US", "en"}))
	wantPlugins, wantMimeTypes := pdfPlugins, []string{"application/pdf", "text/pdf"}
	if want.phone {
		wantPlugins, wantMimeTypes = nil, nil
	}
	add("navigator.plugins", slices.Equal(r.Plugins, wantPlugins))
	add("navigator.mimeTypes", slices.Equal(r.MimeTypes, wantMimeTypes))
	add("navigator.pdfViewerEnabled", r.PDFViewerEnabled == !want.phone)
	add("plugins' shape: "+strings.Join(r.Shape, "; "), len(r.Shape) == 0)
	add("WebGL vendor and renderer", r.WebGLVendor != "" && strings.Contains(r.WebGLRenderer, want.gpu) &&
		!strings.Contains(r.WebGLRenderer, "SwiftShader") && !strings.Contains(r.WebGLVendor, "(Google)"))
	// Chrome denies notifications to cross-origin iframes; elsewhere a
	// Chrome that never asked says default and prompt.
	add("Notification.permission and permissions.query", r.Notification == "default" && r.NotificationQuery == "prompt" ||
		r.Notification == "denied" && r.NotificationQuery == "denied" && cross)
	// Chromium's own tabs opened by a page have no chrome.app.
	add("window.chrome", slices.Contains(r.Chrome, "loadTimes") && slices.Contains(r.Chrome, "csi"))
	add("functions that do not look native: "+strings.Join(r.NotNative, "; "), len(r.NotNative) == 0)
	for _, st := range r.ErrorStacks {
		// The stack of an error thrown by a native function: native
		// frames, then the page's.
		lines := strings.Split(st, "\n")[1:]
		add("an error's stack shows the patches: "+st, !slices.ContainsFunc(lines, func(l string) bool {
			return !strings.Contains(l, "http://") && !strings.HasSuffix(l, " (<anonymous>)")
		}))
	}
	add("a worker's navigator: "+r.WorkerUserAgent, r.WorkerUserAgent == r.UserAgent+" "+r.Platform+" en-US,en")
	add("User-Agent header", doc.Get("User-Agent") == r.UserAgent && !strings.Contains(r.UserAgent, "Headless"))
	add("Sec-CH-UA header", strings.Contains(doc.Get("Sec-CH-UA"), `"Google Chrome"`) && !strings.Contains(doc.Get("Sec-CH-UA"), "Headless"))
	add("Sec-CH-UA-Platform header", doc.Get("Sec-CH-UA-Platform") == `"`+want.uaPlatform+`"`)
	add("Accept-Language header", strings.HasPrefix(doc.Get("Accept-Language"), "en-US,en"))
	return out
}

// tellsSite serves the tells page: / holds a same-site iframe, a
// cross-site one (from the server at cross, another site on loopback, in
// a renderer of its own) and opens a new tab; every frame runs tellsProbe
// and posts its report, which reports collects by frame.
type tellsSite struct {
	mu      sync.Mutex
	reports map[string]tellsReport
	docs    map[string]http.Header
}

func (s *tellsSite) handler(t *testing.T, cross func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		where := r.URL.Query().Get("where")
		switch r.URL.Path {
		case "/":
			s.doc("top", r)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>tells</title>
<iframe src="/frame?where=same-site"></iframe>
<iframe src="%s/frame?where=cross-site"></iframe>
<script>window.open('/frame?where=new-tab'); %s</script>`, cross(), tellsProbe)
		case "/frame":
			s.doc(where, r)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>%s</title><p>the %s frame</p><script>%s</script>`, where, where, tellsProbe)
		case "/worker.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `postMessage(navigator.userAgent + " " + navigator.platform + " " + navigator.languages.join(","))`)
		case "/report":
			body, _ := io.ReadAll(r.Body)
			var rep tellsReport
			if err := json.Unmarshal(body, &rep); err != nil {
				t.Errorf("the %s frame's report: %v", where, err)
			}
			s.mu.Lock()
			s.reports[where] = rep
			s.mu.Unlock()
		default:
			http.NotFound(w, r)
		}
	})
}

func (s *tellsSite) doc(where string, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docs[where] = r.Header.Clone()
}

func (s *tellsSite) report(where string) (tellsReport, http.Header, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reports[where]
	return r, s.docs[where], ok
}

var tellsFrames = []string{"top", "same-site", "cross-site", "new-tab"}

// TestAdvancedStealth loads the tells page in real runner browsers, the
// headless shell (the default of a headless session) and Chromium: with
// advancedStealth, every frame (iframes of the same site and of another,
// out-of-process one, a tab the page opens, and a worker of each) looks
// like a Chrome of the session's os; without it, the headless tells show.
func TestAdvancedStealth(t *testing.T) {
	tests := []struct {
		name    string
		shell   bool
		stealth bool
		want    realChrome
		// wantTells, without stealth: tells that must show, by frame.
		wantTells map[string][]string
	}{
		{name: "headless shell, windows", shell: true, stealth: true, want: windowsChrome},
		{name: "headless shell, mac", shell: true, stealth: true, want: macChrome},
		{name: "chromium, linux", shell: false, stealth: true, want: linuxChrome},
		{name: "chromium, android phone", shell: false, stealth: true, want: androidChrome},
		{name: "headless shell without stealth", shell: true, want: linuxChrome, wantTells: map[string][]string{
			"top":     {"navigator.webdriver", "navigator.plugins", "WebGL vendor and renderer", "Notification.permission and permissions.query", "window.chrome"},
			"new-tab": {"navigator.webdriver", "navigator.userAgent", "userAgentData.brands", "User-Agent header"},
		}},
		{name: "chromium without stealth", shell: false, want: linuxChrome, wantTells: map[string][]string{
			"top":     {"navigator.webdriver", "WebGL vendor and renderer"},
			"new-tab": {"navigator.webdriver", "navigator.userAgent", "User-Agent header"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := &tellsSite{reports: map[string]tellsReport{}, docs: map[string]http.Header{}}
			var crossURL string
			cross := runnertest.NewPageServerOn(t, "127.0.0.2", site.handler(t, func() string { return crossURL }))
			crossURL = cross.URL
			srv := runnertest.NewPageServer(t, site.handler(t, func() string { return crossURL }))

			bs := &v1alpha1.BrowserSettings{OS: tt.want.os}
			if tt.stealth {
				bs.AdvancedStealth = ptr.To(true)
			}
			cfg := runnertest.Config(runnertest.CloudSettings(bs))
			if !tt.shell {
				cfg.HeadlessShellPath = ""
			}
			b := browsertest.Start(t, cfg)
			browsertest.MustNavigate(t, b, srv.URL+"/")
			runnertest.WaitFor(t, "every frame's report", func() bool {
				for _, f := range tellsFrames {
					if _, _, ok := site.report(f); !ok {
						return false
					}
				}
				return true
			})
			if tt.stealth {
				// The engine still sees every frame, the held and
				// prepared out-of-process one too.
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				p, err := browsertest.Tab(ctx, b).Automation()
				if err != nil {
					t.Fatal(err)
				}
				snap, err := p.Capture(ctx, page.SnapshotOptions{})
				if err != nil {
					t.Fatalf("snapshot: %v", err)
				}
				runnertest.WantContains(t, "snapshot", snap.Tree, "the same-site frame", "the cross-site frame")
			}
			for _, f := range tellsFrames {
				r, doc, _ := site.report(f)
				got := tells(r, doc, tt.want, f == "cross-site")
				if tt.stealth {
					if len(got) > 0 {
						t.Errorf("%s frame: tells %q\nreport: %+v", f, got, r)
					}
					continue
				}
				var missing []string
				for _, w := range tt.wantTells[f] {
					if !slices.Contains(got, w) {
						missing = append(missing, w)
					}
				}
				if diff := cmp.Diff([]string(nil), missing); diff != "" {
					t.Errorf("%s frame without advancedStealth: tells that should show but do not (-want +got):\n%s\nreport: %+v", f, diff, r)
				}
			}
		})
	}
}
