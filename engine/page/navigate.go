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
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// WaitUntil names the point of a page load Navigate waits for.
type WaitUntil string

const (
	// WaitLoad waits for the load event: the document and its
	// sub-resources (images, scripts, styles, frames) have loaded.
	WaitLoad WaitUntil = "load"
	// WaitDOMContentLoaded waits for the document to be parsed.
	WaitDOMContentLoaded WaitUntil = "domcontentloaded"
	// WaitNetworkIdle waits for the load event and then for the network to
	// settle, as Settle does.
	WaitNetworkIdle WaitUntil = "networkidle"
)

// DefaultNavigateTimeout bounds Navigate when the options give no timeout.
const DefaultNavigateTimeout = 30 * time.Second

// NavigateOptions tune Navigate.
type NavigateOptions struct {
	// WaitUntil is the load state to wait for; the default is WaitLoad.
	WaitUntil WaitUntil
	// Referer is sent as the navigation request's Referer header.
	Referer string
	// Timeout bounds the whole navigation, waiting included; the default
	// is DefaultNavigateTimeout.
	Timeout time.Duration
}

// Navigate loads url in the tab's main frame and waits for opts.WaitUntil.
// Navigation errors (DNS, refused connections, TLS) are errors; an HTTP
// error status is not, as the page it returns loads like any other.
func (p *Page) Navigate(ctx context.Context, url string, opts NavigateOptions) error {
	wait := opts.WaitUntil
	switch wait {
	case "":
		wait = WaitLoad
	case WaitLoad, WaitDOMContentLoaded, WaitNetworkIdle:
	default:
		return fmt.Errorf("navigate to %s: unknown waitUntil %q (want load, domcontentloaded or networkidle)", url, wait)
	}
	defer p.noteAction()
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultNavigateTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// Listen before navigating: the lifecycle events of a fast page can
	// arrive before Page.navigate's reply names the loader they belong to.
	events := make(chan *page.EventLifecycleEvent, 64)
	lctx, lcancel := context.WithCancel(p.ctx)
	defer lcancel()
	mainFrame := cdp.FrameID(p.main.target) // a tab's main frame id is its target id
	chromedp.ListenTarget(lctx, func(ev any) {
		e, ok := ev.(*page.EventLifecycleEvent)
		if !ok || e.FrameID != mainFrame || (e.Name != "load" && e.Name != "DOMContentLoaded") {
			return
		}
		select {
		case events <- e:
		default:
			// Two events per navigation: the buffer only fills if the
			// page keeps navigating, and then the latest ones matter
			// less than not blocking chromedp's event loop.
		}
	})

	var res struct {
		FrameID   cdp.FrameID  `json:"frameId"`
		LoaderID  cdp.LoaderID `json:"loaderId"`
		ErrorText string       `json:"errorText"`
	}
	params := map[string]any{"url": url}
	if opts.Referer != "" {
		params["referrer"] = opts.Referer
		// Send the referer as given. Chrome's default policy would strip it
		// from an https referer to an http page and cut it to the origin
		// across sites, and the caller asked for this one.
		params["referrerPolicy"] = "unsafeUrl"
	}
	if err := p.main.call(ctx, "Page.navigate", params, &res); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The timeout can run out before Chromium answers Page.navigate
			// (a busy machine, a slow server's first byte): the same
			// timeout as while waiting for the page, so the same words.
			return fmt.Errorf("navigate to %s: timed out: %w", url, ctx.Err())
		}
		return fmt.Errorf("navigate to %s: %w", url, err)
	}
	if res.ErrorText != "" {
		return fmt.Errorf("navigate to %s: %s", url, res.ErrorText)
	}

	if res.LoaderID != "" {
		// A cross-document navigation: wait for its lifecycle event. A
		// same-document one (a fragment) has no loader and is done.
		want := "load"
		if wait == WaitDOMContentLoaded {
			want = "DOMContentLoaded"
		}
		if err := waitLifecycle(ctx, events, res.FrameID, res.LoaderID, want); err != nil {
			return fmt.Errorf("navigate to %s: waiting for %s: %w", url, wait, err)
		}
	}
	if wait == WaitNetworkIdle {
		deadline, _ := ctx.Deadline()
		if err := p.Settle(ctx, time.Until(deadline)); err != nil {
			return fmt.Errorf("navigate to %s: waiting for %s: %w", url, wait, err)
		}
	}
	return nil
}

// stopTimeout bounds StopLoading.
const stopTimeout = 2 * time.Second

// StopLoading stops a navigation the caller gave up on (a Navigate, GoBack
// or GoForward that timed out), as the browser's stop button does, so that
// the next command does not wait behind it: Chromium holds some commands,
// Page.getLayoutMetrics among them, while a navigation is pending. It runs
// even when ctx has ended, within stopTimeout.
func (p *Page) StopLoading(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := p.main.call(sctx, "Page.stopLoading", nil, nil); err != nil {
		return fmt.Errorf("stop loading: %w", err)
	}
	return nil
}

func waitLifecycle(ctx context.Context, events <-chan *page.EventLifecycleEvent, frame cdp.FrameID, loader cdp.LoaderID, name string) error {
	for {
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("timed out: %w", ctx.Err())
			}
			return ctx.Err()
		case e := <-events:
			if e.FrameID == frame && e.LoaderID == loader && e.Name == name {
				return nil
			}
		}
	}
}
