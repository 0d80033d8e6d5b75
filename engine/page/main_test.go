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

package page

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/internal/testing/chromium"
)

// The tests drive a real Chromium. One browser serves every test, each test
// on a fresh tab; a second one, started on first use, runs with
// --site-per-process for the out-of-process frame tests.

var (
	browserCtx context.Context
	// browserEndpoint is the shared browser's DevTools endpoint, for the
	// input lane of the tabs newTab opens on it.
	browserEndpoint string
	// originA and originB are the test servers' base URLs: two origins
	// (and two sites) on loopback.
	originA, originB string

	isolated struct {
		once sync.Once
		ctx  context.Context
		err  error
	}
	stopIsolated context.CancelFunc
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	stopServers, err := startServers()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start test servers:", err)
		return 1
	}
	defer stopServers()

	b, err := chromium.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start Chromium:", err)
		return 1
	}
	defer b.Stop()
	browserCtx, browserEndpoint = b.Ctx, b.Endpoint
	code := m.Run()
	if stopIsolated != nil {
		stopIsolated()
	}
	return code
}

// isolatedBrowser returns the --site-per-process browser.
func isolatedBrowser(t *testing.T) context.Context {
	t.Helper()
	isolated.once.Do(func() {
		isolated.ctx, stopIsolated, isolated.err = chromium.Start(chromedp.Flag("site-per-process", true))
	})
	if isolated.err != nil {
		t.Fatalf("start --site-per-process Chromium: %v", isolated.err)
	}
	return isolated.ctx
}

// tab is one test's browser tab.
type tab struct {
	t   testing.TB
	ctx context.Context
	p   *Page
}

// newTab opens a tab on the shared browser (or on browser, if given) and
// attaches a Page to it; both go away when the test ends. On the shared
// browser the Page has an input lane, as the runner's Pages have.
func newTab(t testing.TB, browser ...context.Context) *tab {
	t.Helper()
	if len(browser) > 0 {
		return newTabWith(t, browser[0])
	}
	return newTabWith(t, browserCtx, WithInputLane(browserEndpoint))
}

// newTabWith opens a tab on browser and attaches a Page with opts to it.
func newTabWith(t testing.TB, browser context.Context, opts ...Option) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	p, err := Attach(ctx, opts...)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(p.Close)
	// Chrome throttles timers in background tabs to once a second, which
	// would stretch the fixtures' setTimeout delays; a user's tab is in
	// front.
	if err := p.main.call(ctx, "Page.bringToFront", nil, nil); err != nil {
		t.Fatalf("bring tab to front: %v", err)
	}
	return &tab{t: t, ctx: ctx, p: p}
}

// testCtx bounds one call.
func (tb *tab) testCtx() context.Context {
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	tb.t.Cleanup(cancel)
	return ctx
}

// open navigates to path on origin A (or a full URL) and waits for load.
func (tb *tab) open(path string) {
	tb.t.Helper()
	u := path
	if strings.HasPrefix(path, "/") {
		u = originA + path
	}
	if err := tb.p.Navigate(tb.testCtx(), u, NavigateOptions{}); err != nil {
		tb.t.Fatalf("open %s: %v", u, err)
	}
}

// eval evaluates a JavaScript expression in the main frame into out.
func (tb *tab) eval(expr string, out any) {
	tb.t.Helper()
	if err := chromedp.Run(tb.testCtx(), chromedp.Evaluate(expr, out)); err != nil {
		tb.t.Fatalf("eval %s: %v", expr, err)
	}
}

// events returns the page's window.events, where the fixtures record what
// they saw.
func (tb *tab) events() []string {
	tb.t.Helper()
	var ev []string
	tb.eval(`window.events || []`, &ev)
	return ev
}

func (tb *tab) capture(opts SnapshotOptions) *Snapshot {
	tb.t.Helper()
	s, err := tb.p.Capture(tb.testCtx(), opts)
	if err != nil {
		tb.t.Fatalf("capture: %v", err)
	}
	return s
}

// perform resolves id in snap and performs method on it.
func (tb *tab) perform(snap *Snapshot, id, method string, args ...string) {
	tb.t.Helper()
	var el *Element
	if id != "" {
		var err error
		el, err = snap.Resolve(tb.testCtx(), id)
		if err != nil {
			tb.t.Fatalf("resolve %s: %v", id, err)
		}
	}
	if err := tb.p.Perform(tb.testCtx(), el, method, args); err != nil {
		tb.t.Fatalf("%s %s %q: %v", method, id, args, err)
	}
}

var lineRe = regexp.MustCompile(`^\s*\[(\d+-\d+)\] (.*)$`)

// findID returns the id of the first line of the tree whose text after the
// id ("role: name (states)") matches pattern.
func findID(t *testing.T, s *Snapshot, pattern string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	for _, line := range strings.Split(s.Tree, "\n") {
		m := lineRe.FindStringSubmatch(line)
		if m != nil && re.MatchString(m[2]) {
			return m[1]
		}
	}
	t.Fatalf("no line matches %q in:\n%s", pattern, s.Tree)
	return ""
}

func hasLine(s *Snapshot, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, line := range strings.Split(s.Tree, "\n") {
		if m := lineRe.FindStringSubmatch(line); m != nil && re.MatchString(m[2]) {
			return true
		}
	}
	return false
}

func contains(list []string, want string) bool {
	for _, s := range list {
		if s == want {
			return true
		}
	}
	return false
}

// startServers serves the fixtures on two loopback addresses, which Chrome
// treats as two sites.
func startServers() (func(), error) {
	la, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lb, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		la.Close()
		return nil, err
	}
	originA = "http://" + la.Addr().String()
	originB = "http://" + lb.Addr().String()
	h := fixtureHandler()
	sa, sb := &http.Server{Handler: h}, &http.Server{Handler: h}
	go sa.Serve(la)
	go sb.Serve(lb)
	return func() {
		sa.Close()
		sb.Close()
	}, nil
}
