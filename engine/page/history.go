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
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// ErrNoHistory reports that the tab has no earlier page to go back to.
var ErrNoHistory = errors.New("no previous page in the tab's history")

// ErrNoForwardHistory reports that the tab has no later page to go forward
// to.
var ErrNoForwardHistory = errors.New("no next page in the tab's history")

// navigationHistory is Page.getNavigationHistory's answer.
type navigationHistory struct {
	CurrentIndex int `json:"currentIndex"`
	Entries      []struct {
		ID  int64  `json:"id"`
		URL string `json:"url"`
	} `json:"entries"`
}

func (p *Page) history(ctx context.Context) (*navigationHistory, error) {
	var h navigationHistory
	if err := p.main.call(ctx, "Page.getNavigationHistory", nil, &h); err != nil {
		return nil, err
	}
	if h.CurrentIndex < 0 || h.CurrentIndex >= len(h.Entries) {
		return nil, fmt.Errorf("navigation history has no entry %d", h.CurrentIndex)
	}
	return &h, nil
}

// urlRetries bounds URL's retries while Chrome swaps the tab's document.
const urlRetries = 40

// URL returns the URL of the tab's current page (its committed navigation
// entry, so that it answers during a navigation too). While a navigation
// swaps the tab's renderer, Chrome answers "Not attached to an active
// page" for a moment; URL retries then, for up to two seconds.
func (p *Page) URL(ctx context.Context) (string, error) {
	for i := 0; ; i++ {
		h, err := p.history(ctx)
		if err == nil {
			return h.Entries[h.CurrentIndex].URL, nil
		}
		if i >= urlRetries || !strings.Contains(err.Error(), "Not attached to an active page") {
			return "", fmt.Errorf("page url: %w", err)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("page url: %w", ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// jsLoaded resolves once the document has fired load (at once if it has).
const jsLoaded = `document.readyState === 'complete' ? true :
  new Promise(r => addEventListener('load', () => r(true), {once: true}))`

// GoBack goes back one entry in the tab's history, as the browser's back
// button does, and waits for the page it shows to load; a page restored
// from the back-forward cache is loaded already. The wait is bounded by
// opts.Timeout (DefaultNavigateTimeout when zero); opts.WaitUntil and
// Referer do not apply. With no earlier entry it returns an error wrapping
// ErrNoHistory.
func (p *Page) GoBack(ctx context.Context, opts NavigateOptions) error {
	return p.goHistory(ctx, opts, -1)
}

// GoForward goes forward one entry in the tab's history, as the browser's
// forward button does, and waits as GoBack does. With no later entry it
// returns an error wrapping ErrNoForwardHistory.
func (p *Page) GoForward(ctx context.Context, opts NavigateOptions) error {
	return p.goHistory(ctx, opts, 1)
}

// goHistory moves delta (-1 or 1) entries through the tab's history.
func (p *Page) goHistory(ctx context.Context, opts NavigateOptions, delta int) error {
	defer p.noteAction()
	verb := "go back"
	if delta > 0 {
		verb = "go forward"
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultNavigateTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	h, err := p.history(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	i := h.CurrentIndex + delta
	switch {
	case i < 0:
		return fmt.Errorf("%s: %w", verb, ErrNoHistory)
	case i >= len(h.Entries):
		return fmt.Errorf("%s: %w", verb, ErrNoForwardHistory)
	}
	to := h.Entries[i]

	// Listen before navigating, as Navigate does: the commit of a fast
	// page can come before the command's reply.
	committed := make(chan struct{}, 1)
	lctx, lcancel := context.WithCancel(p.ctx)
	defer lcancel()
	mainFrame := cdp.FrameID(p.main.target)
	chromedp.ListenTarget(lctx, func(ev any) {
		var frame cdp.FrameID
		switch e := ev.(type) {
		case *page.EventFrameNavigated:
			if e.Frame != nil {
				frame = e.Frame.ID
			}
		case *page.EventNavigatedWithinDocument:
			frame = e.FrameID
		default:
			return
		}
		if frame == mainFrame {
			select {
			case committed <- struct{}{}:
			default:
			}
		}
	})
	if err := p.main.call(ctx, "Page.navigateToHistoryEntry", map[string]any{"entryId": to.ID}, nil); err != nil {
		return fmt.Errorf("%s to %s: %w", verb, to.URL, err)
	}
	select {
	case <-committed:
	case <-ctx.Done():
		return fmt.Errorf("%s to %s: waiting for the page: %w", verb, to.URL, ctx.Err())
	}
	// The new document may not have a JavaScript context yet: retry until
	// it reports load.
	for {
		var r evalResult
		err := p.main.call(ctx, "Runtime.evaluate", map[string]any{
			"expression": jsLoaded, "awaitPromise": true, "returnByValue": true,
		}, &r)
		if err == nil && r.ExceptionDetails == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s to %s: waiting for load: %w", verb, to.URL, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}
