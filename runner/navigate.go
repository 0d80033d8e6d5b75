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
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// DefaultNavigateTimeout bounds a navigation without options.timeout, as
// Playwright's page.goto.
const DefaultNavigateTimeout = 30 * time.Second

// lifecycle events a navigation waits for, by waitUntil.
var waitEvents = map[rpc.WaitUntil][]string{
	"":                            {"load"},
	rpc.WaitUntilLoad:             {"load"},
	rpc.WaitUntilDOMContentLoaded: {"DOMContentLoaded"},
	// Chromium's networkIdle: no connections for 500ms. Waiting for load
	// as well keeps networkidle never earlier than load.
	rpc.WaitUntilNetworkIdle: {"load", "networkIdle"},
}

// Navigate loads req.URL in the page (or in req.FrameID), sends
// options.referer as the Referer, and returns once the document reached
// options.waitUntil. A navigation Chromium cannot complete (DNS, TLS,
// connection and proxy errors) fails with NAVIGATION_FAILED, or
// PROXY_AUTH_FAILED when the proxy refused the session's credentials; an
// HTTP error status is a result (ok false), as in a browser.
func Navigate(ctx context.Context, p *Page, req rpc.NavigateRequest, progress ProgressFunc) (*rpc.NavigateResult, error) {
	if e := validateNavigateURL(req.URL); e != nil {
		return nil, e
	}
	events, ok := waitEvents[req.Options.WaitUntil]
	if !ok {
		return nil, rpc.Errorf(rpc.CodeBadRequest, "waitUntil %q is not load, domcontentloaded or networkidle", req.Options.WaitUntil)
	}
	if progress == nil {
		progress = func(rpc.LogLine) {}
	}
	frame := cdp.FrameID(p.targetID)
	if req.FrameID != "" {
		frame = cdp.FrameID(req.FrameID)
	}

	w := newNavWatch()
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	chromedp.ListenTarget(lctx, w.observe)

	nav := page.Navigate(req.URL)
	if req.FrameID != "" {
		nav = nav.WithFrameID(frame)
	}
	if req.Options.Referer != "" {
		// unsafeUrl sends the referer as given; the default policy would
		// cut it to its origin, or drop it for an http target.
		nav = nav.WithReferrer(req.Options.Referer).WithReferrerPolicy(page.ReferrerPolicyUnsafeURL)
	}
	progress(rpc.LogLine{Category: "navigate", Message: "navigating to " + redactUserinfo(req.URL), Level: rpc.LogLevelInfo, Timestamp: time.Now()})
	refusedBefore := p.auth.refusals()
	var loader cdp.LoaderID
	var errText string
	var isDownload bool
	err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		_, loader, errText, isDownload, err = nav.Do(ctx)
		return err
	}))
	if err != nil {
		stopLoading(ctx, p)
		return nil, fmt.Errorf("navigating: %w", err)
	}
	if isDownload {
		// The response became a download (Chromium reports it as an
		// aborted navigation); the page stays where it was.
		progress(rpc.LogLine{Category: "navigate", Message: "the response is a download", Level: rpc.LogLevelInfo, Timestamp: time.Now()})
		return &rpc.NavigateResult{URL: req.URL, OK: true}, nil
	}
	if errText != "" {
		if p.auth.refusals() > refusedBefore {
			return nil, rpc.Errorf(rpc.CodeProxyAuthFailed, "the proxy refused the session's credentials (%s)", errText)
		}
		return nil, rpc.Errorf(rpc.CodeNavigationFailed, "navigating to %s failed: %s", redactUserinfo(req.URL), errText)
	}
	if loader == "" {
		// A same-document navigation (a fragment) has no loader and no
		// load to wait for.
		return &rpc.NavigateResult{URL: req.URL, OK: true}, nil
	}
	if err := w.wait(ctx, loader, events); err != nil {
		stopLoading(ctx, p)
		return nil, fmt.Errorf("waiting for %s: %w", strings.Join(events, " and "), err)
	}
	res := w.result(loader)
	if res.Status == 407 {
		// For a plain-http page the proxy's refusal arrives as the
		// document; it is the proxy speaking, not the site.
		return nil, rpc.Errorf(rpc.CodeProxyAuthFailed, "the proxy refused the session's credentials (HTTP 407)")
	}
	if res.URL == "" {
		res.URL = req.URL
	}
	progress(rpc.LogLine{Category: "navigate", Message: fmt.Sprintf("loaded %s (%d)", redactUserinfo(res.URL), res.Status), Level: rpc.LogLevelInfo, Timestamp: time.Now()})
	return res, nil
}

func validateNavigateURL(raw string) *rpc.Error {
	if raw == "" {
		return rpc.Errorf(rpc.CodeBadRequest, "url is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return rpc.Errorf(rpc.CodeBadRequest, "url is not a URL")
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return rpc.Errorf(rpc.CodeBadRequest, "url has no host")
		}
	case "about", "data":
	default:
		// file: would let a caller read the pod's files; chrome: and
		// the like are the browser's own pages.
		return rpc.Errorf(rpc.CodeBadRequest, "url must be an http, https, about or data URL")
	}
	return nil
}

// stopLoading stops a navigation the caller gave up on, so the next
// operation does not find the page half-loaded. Best effort: when the
// browser is gone there is nothing to stop.
func stopLoading(ctx context.Context, p *Page) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = chromedp.Run(sctx, page.StopLoading())
}

// redactUserinfo drops user:password@ from a URL for progress lines.
func redactUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// navWatch collects the lifecycle events and document responses of the
// tab by loader, from before Page.navigate is sent: the load event may
// arrive before its reply.
type navWatch struct {
	mu       sync.Mutex
	fired    map[cdp.LoaderID]map[string]bool
	response map[cdp.LoaderID]*network.Response
	notify   chan struct{}
}

func newNavWatch() *navWatch {
	return &navWatch{
		fired:    map[cdp.LoaderID]map[string]bool{},
		response: map[cdp.LoaderID]*network.Response{},
		notify:   make(chan struct{}, 1),
	}
}

func (w *navWatch) observe(ev any) {
	w.mu.Lock()
	switch ev := ev.(type) {
	case *page.EventLifecycleEvent:
		if w.fired[ev.LoaderID] == nil {
			w.fired[ev.LoaderID] = map[string]bool{}
		}
		w.fired[ev.LoaderID][ev.Name] = true
	case *network.EventResponseReceived:
		if ev.Type == network.ResourceTypeDocument && ev.LoaderID != "" {
			w.response[ev.LoaderID] = ev.Response
		}
	default:
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *navWatch) wait(ctx context.Context, loader cdp.LoaderID, events []string) error {
	for {
		w.mu.Lock()
		done := true
		for _, e := range events {
			done = done && w.fired[loader][e]
		}
		w.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-w.notify:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

func (w *navWatch) result(loader cdp.LoaderID) *rpc.NavigateResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.response[loader]
	if r == nil {
		return &rpc.NavigateResult{OK: true}
	}
	return &rpc.NavigateResult{URL: r.URL, Status: r.Status, OK: r.Status == 0 || (r.Status >= 200 && r.Status < 300)}
}
