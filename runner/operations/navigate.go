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

package operations

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// DefaultNavigateTimeout bounds a navigation without options.timeout, as
// Playwright's page.goto.
const DefaultNavigateTimeout = page.DefaultNavigateTimeout

// navigate loads req.URL in the page and returns once the document reached
// options.waitUntil, sending options.referer as the Referer. The loading
// and waiting are engine/page's Navigate, the one implementation the engine
// and the runner share; what is the runner's is around it: the checks of
// the URL (rpc.NavigateURLProblem), the result (the document's final URL
// and HTTP status), downloads, and the error codes. A document the egress
// proxy refused (the URL's host, or a redirect's) fails with EGRESS_DENIED
// naming the host, the same whether anything listens there or not; one
// whose proxy refused the session's credentials with PROXY_AUTH_FAILED; any
// other navigation Chromium cannot complete (DNS, TLS, connection errors)
// with NAVIGATION_FAILED. An HTTP error status is a result (ok false), as
// in a browser. waitUntil networkidle is load, then the network quiet for
// 500 ms (engine/page's Settle: WebSockets, EventSources and requests
// pending for more than 2 s do not count). frameId may only name the main
// frame.
func navigate(ctx context.Context, p *chromium.Tab, req rpc.NavigateRequest, progress ProgressFunc) (*rpc.NavigateResult, error) {
	if e := ValidateNavigateURL(req.URL); e != nil {
		return nil, e
	}
	if !req.Options.WaitUntil.Valid() {
		return nil, rpc.Errorf(rpc.CodeBadRequest, "waitUntil %q is not load, domcontentloaded or networkidle", req.Options.WaitUntil)
	}
	if req.FrameID != "" && req.FrameID != string(p.TargetID()) {
		return nil, rpc.Errorf(rpc.CodeBadRequest, "frameId: navigate loads the page's main frame only; leave frameId out or give the main frame's id")
	}
	tab, err := p.Automation()
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(rpc.LogLine) {}
	}

	w := newDocWatch(cdp.FrameID(p.TargetID()), req.URL)
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	chromedp.ListenTarget(lctx, w.observe)
	chromedp.ListenBrowser(lctx, w.observe)

	opts := page.NavigateOptions{
		WaitUntil: page.WaitUntil(req.Options.WaitUntil),
		Referer:   req.Options.Referer,
		// The call's context carries the timeout and its TIMEOUT cause;
		// page's own bound only has to come later.
		Timeout: 24 * time.Hour,
	}
	if deadline, ok := ctx.Deadline(); ok {
		opts.Timeout = time.Until(deadline) + 5*time.Second
	}
	shown := redactUserinfo(req.URL)
	progress(rpc.LogLine{Category: "navigate", Message: "navigating to " + shown, Level: rpc.LogLevelInfo, Timestamp: time.Now()})
	var since uint64
	if p.Egress() != nil {
		since = p.Egress().Seq()
	}
	err = tab.Navigate(ctx, req.URL, opts)
	if err != nil {
		if ctx.Err() != nil {
			// Timed out, cancelled or crashed: the server says which.
			stopLoading(ctx)
			return nil, fmt.Errorf("navigating: %w", err)
		}
		if e := w.egressFailure(p.Egress(), since, 0); e != nil {
			return nil, e
		}
		if w.becameDownload(ctx, err) {
			// The response became a download (Chromium reports it as an
			// aborted navigation); the page stays where it was.
			progress(rpc.LogLine{Category: "navigate", Message: "the response is a download", Level: rpc.LogLevelInfo, Timestamp: time.Now()})
			return &rpc.NavigateResult{URL: req.URL, OK: true}, nil
		}
		// page's message quotes the URL as given, credentials included.
		msg := strings.ReplaceAll(err.Error(), req.URL, shown)
		return nil, rpc.Errorf(rpc.CodeNavigationFailed, "%s", msg)
	}
	res := w.result()
	// A plain-http document the egress proxy could not fetch arrives as
	// the proxy's answer (403 or 502): the proxy speaks, not the site.
	if e := w.egressFailure(p.Egress(), since, res.Status); e != nil {
		return nil, e
	}
	if res.URL == "" {
		res.URL = req.URL
	}
	progress(rpc.LogLine{Category: "navigate", Message: fmt.Sprintf("loaded %s (%d)", redactUserinfo(res.URL), res.Status), Level: rpc.LogLevelInfo, Timestamp: time.Now()})
	return res, nil
}

// ValidateNavigateURL refuses a URL the runner does not load, by the
// contract's rule (rpc.NavigateURLProblem), as a BAD_REQUEST.
func ValidateNavigateURL(raw string) *rpc.Error {
	if msg := rpc.NavigateURLProblem(raw); msg != "" {
		return rpc.Errorf(rpc.CodeBadRequest, "url %s", msg)
	}
	return nil
}

// stopLoading stops a navigation the caller gave up on, so the next
// operation does not find the page half-loaded. Best effort: when the
// browser is gone there is nothing to stop.
func stopLoading(ctx context.Context) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = chromedp.Run(sctx, cdppage.StopLoading())
}

// redactUserinfo drops user:password@ from a URL for progress lines and
// errors.
func redactUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// docWatch notes, while a navigation runs, the main frame's document
// requests (the URL, then each redirect: the hosts whose refusal by the
// egress proxy fails the navigation), its document response (for the
// result's URL and status) and whether a download began in it. Listening starts before the navigation, and the response always
// arrives before the lifecycle event engine/page waits for, so it is seen
// by the time Navigate returns.
type docWatch struct {
	frame cdp.FrameID
	// download is closed when a download begins in the frame.
	download chan struct{}

	mu       sync.Mutex
	docs     []string
	response *network.Response
	began    bool
}

// maxDocs bounds the document URLs a navigation notes: a redirect chain
// longer than Chromium's limit (20) fails anyway.
const maxDocs = 32

// downloadEventWait bounds the wait for the browser's download event after
// an aborted navigation: it travels on the browser's connection, not the
// tab's, and may arrive after Page.navigate's reply.
const downloadEventWait = 2 * time.Second

func newDocWatch(frame cdp.FrameID, url string) *docWatch {
	return &docWatch{frame: frame, download: make(chan struct{}), docs: []string{url}}
}

func (w *docWatch) observe(ev any) {
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == w.frame && ev.Request != nil {
			w.mu.Lock()
			if len(w.docs) < maxDocs {
				w.docs = append(w.docs, ev.Request.URL)
			}
			w.mu.Unlock()
		}
	case *network.EventResponseReceived:
		if ev.Type == network.ResourceTypeDocument && ev.FrameID == w.frame {
			w.mu.Lock()
			w.response = ev.Response
			w.mu.Unlock()
		}
	case *cdpbrowser.EventDownloadWillBegin:
		if ev.FrameID == w.frame {
			w.mu.Lock()
			if !w.began {
				w.began = true
				close(w.download)
			}
			w.mu.Unlock()
		}
	}
}

// becameDownload reports whether a navigation that failed with err did so
// because its response became a download, which Chromium reports as an
// aborted navigation. Downloads are announced only where the runner set the
// download behaviour (see setupDownloads).
func (w *docWatch) becameDownload(ctx context.Context, err error) bool {
	if !strings.Contains(err.Error(), "net::ERR_ABORTED") {
		return false
	}
	t := time.NewTimer(downloadEventWait)
	defer t.Stop()
	select {
	case <-w.download:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// egressFailure is the error of a navigation whose document the egress
// proxy could not fetch since the event numbered since: the latest
// document host it refused or failed, checked from the last redirect back.
// status is the document's HTTP status when the navigation completed (a
// plain-http document the proxy could not fetch is its 403 or 502 answer),
// 0 when it failed. nil when the proxy is not in the way (attached
// browser) or fetched the documents.
func (w *docWatch) egressFailure(proxy *egress.Proxy, since uint64, status int64) *rpc.Error {
	if proxy == nil {
		return nil
	}
	w.mu.Lock()
	docs := slices.Clone(w.docs)
	w.mu.Unlock()
	for _, raw := range slices.Backward(docs) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		ev, ok := proxy.Failure(egress.URLHostPort(u), since)
		if !ok {
			continue
		}
		switch {
		case ev.Kind == egress.EventDenied && (status == 0 || status == 403):
			return rpc.Errorf(rpc.CodeEgressDenied, "%s", ev.Message)
		case ev.Kind == egress.EventProxyAuthFailed && (status == 0 || status == 502):
			return rpc.Errorf(rpc.CodeProxyAuthFailed, "%s", ev.Message)
		case ev.Kind == egress.EventUnreachable && (status == 0 || status == 502):
			return rpc.Errorf(rpc.CodeNavigationFailed, "loading %s: %s", chromium.RedactURL(raw), ev.Message)
		}
	}
	return nil
}

// result is the navigation's result from the last document response of the
// main frame: a redirect's target, and no status for a document that did
// not come over HTTP (about:, a fragment).
func (w *docWatch) result() *rpc.NavigateResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.response
	if r == nil {
		return &rpc.NavigateResult{OK: true}
	}
	return &rpc.NavigateResult{URL: r.URL, Status: r.Status, OK: r.Status == 0 || (r.Status >= 200 && r.Status < 300)}
}
