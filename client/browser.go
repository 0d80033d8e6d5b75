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
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/engine/page"
)

// Bounds of a handle's DevTools connection.
const (
	// DefaultConnectTimeout bounds connecting to a browser (and, for
	// LaunchLocalBrowser, its start) when the options say none.
	DefaultConnectTimeout = 30 * time.Second
	// releaseTimeout bounds the clean-up calls of Close that go over the
	// connection (closing the browser gracefully, a page's detach).
	releaseTimeout = 5 * time.Second
)

// Browser is a browser handle: the caller's, from LaunchLocalBrowser,
// ConnectLocalBrowser, LaunchCloudBrowser or ConnectCloudBrowser. It backs
// at most one open instance; closing the instance leaves it open. Its
// methods are safe for concurrent use.
type Browser struct {
	drv driver
	// endpoint names the DevTools endpoint in errors: scheme and host
	// only, as a cdpUrl's path and query may hold a token.
	endpoint string

	allocCancel context.CancelFunc
	// ctx is the chromedp context of the browser connection; cancel
	// closes the connection.
	ctx    context.Context
	cancel context.CancelFunc
	cdp    *chromedp.Browser
	bridge *headerBridge
	// setupPage, when set, prepares each page the handle attaches to
	// (a launched browser's per-page emulation).
	setupPage func(ctx context.Context, t *chromedp.Target) error

	mu sync.Mutex
	// pages are the open page targets by id; order lists them oldest
	// first; gone remembers destroyed ids, so that a late listing does
	// not bring one back.
	pages  map[target.ID]*Page
	order  []*Page
	gone   map[target.ID]bool
	active *Page
	// owner is the open instance the handle backs, if any.
	owner  *Client
	closed bool

	closeOnce sync.Once
	closeErr  error
}

// newCDPBrowser connects to a browser's DevTools WebSocket endpoint (with
// headers on the handshake) and returns a handle of the driver's kind whose
// pages are reached through that connection. The cloud driver makes its
// handles with it from a session's cdpUrl. ctx bounds the connection only.
func newCDPBrowser(ctx context.Context, wsURL string, headers map[string]string, drv driver) (*Browser, error) {
	b := &Browser{
		drv:      drv,
		endpoint: redactURL(wsURL),
		pages:    make(map[target.ID]*Page),
		gone:     make(map[target.ID]bool),
	}
	dial := wsURL
	if len(headers) > 0 {
		// chromedp dials with no way to add headers; a loopback proxy
		// adds them to the handshake.
		br, err := newHeaderBridge(wsURL, headers)
		if err != nil {
			return nil, err
		}
		b.bridge = br
		dial = br.url
	}
	timeout := DefaultConnectTimeout
	if d, ok := ctx.Deadline(); ok {
		// chromedp takes a zero or negative timeout for none.
		timeout = max(time.Until(d), time.Millisecond)
	}
	// The connection outlives ctx, which bounds the connecting only.
	allocCtx, allocCancel := chromedp.NewRemoteAllocator(context.Background(), dial, chromedp.NoModifyURL)
	bctx, cancel := chromedp.NewContext(allocCtx,
		// chromedp logs to the standard logger unasked: unknown events
		// of a newer browser, say. Nothing of it is the caller's concern.
		chromedp.WithLogf(func(string, ...any) {}),
		chromedp.WithErrorf(func(string, ...any) {}),
		chromedp.WithBrowserOption(chromedp.WithDialTimeout(timeout)))
	b.allocCancel, b.ctx, b.cancel = allocCancel, bctx, cancel
	stop := context.AfterFunc(ctx, cancel)
	err := b.connect(ctx)
	if !stop() && err == nil {
		// ctx ended as the connection was made, and closed it.
		err = context.Cause(ctx)
	}
	if err != nil {
		b.disconnect()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to %s: %w", b.endpoint, context.Cause(ctx))
		}
		// chromedp quotes the URL it dialled, which may hold a token.
		return nil, fmt.Errorf("connecting to %s: %s", b.endpoint, strings.ReplaceAll(err.Error(), dial, redactURL(dial)))
	}
	return b, nil
}

// connect opens the connection and learns the browser's pages: those open
// now, in the order the browser lists them, then each one that opens later.
func (b *Browser) connect(ctx context.Context) error {
	// Targets allocates the connection without opening a tab, as Run would.
	if _, err := chromedp.Targets(b.ctx); err != nil {
		return err
	}
	b.cdp = chromedp.FromContext(b.ctx).Browser
	chromedp.ListenBrowser(b.ctx, b.onTargetEvent)
	bx := cdp.WithExecutor(ctx, b.cdp)
	if err := target.SetDiscoverTargets(true).Do(bx); err != nil {
		return fmt.Errorf("watching the browser's pages: %w", err)
	}
	infos, err := target.GetTargets().Do(bx)
	if err != nil {
		return fmt.Errorf("listing the browser's pages: %w", err)
	}
	for _, in := range infos {
		if in.Type == "page" {
			b.addPage(in.TargetID)
		}
	}
	return nil
}

// onTargetEvent keeps the page list. It runs on chromedp's event goroutine
// and must not block.
func (b *Browser) onTargetEvent(ev any) {
	switch e := ev.(type) {
	case *target.EventTargetCreated:
		if e.TargetInfo != nil && e.TargetInfo.Type == "page" {
			b.addPage(e.TargetInfo.TargetID)
		}
	case *target.EventTargetDestroyed:
		b.removePage(e.TargetID)
	case *target.EventTargetCrashed:
		// A crashed tab stays listed: navigating it again recovers it.
	}
}

// addPage registers a page target, once; it returns the page, or nil for
// a target that has gone.
func (b *Browser) addPage(id target.ID) *Page {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.pages[id]; p != nil {
		return p
	}
	if b.gone[id] || b.closed {
		return nil
	}
	p := &Page{b: b, id: string(id)}
	b.pages[id] = p
	b.order = append(b.order, p)
	return p
}

// removePage forgets a page target that has gone, and lets its attachment
// go.
func (b *Browser) removePage(id target.ID) {
	b.mu.Lock()
	b.gone[id] = true
	p := b.pages[id]
	if p != nil {
		delete(b.pages, id)
		b.order = slices.DeleteFunc(b.order, func(q *Page) bool { return q == p })
		if b.active == p {
			b.active = nil
		}
	}
	b.mu.Unlock()
	if p != nil {
		p.release()
	}
}

// usable reports ErrBrowserClosed once the handle is closed, and an error
// once the connection to the browser is lost.
func (b *Browser) usable() error {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return ErrBrowserClosed
	}
	select {
	case <-b.cdp.LostConnection:
		return fmt.Errorf("the connection to the browser at %s was lost", b.endpoint)
	default:
	}
	return nil
}

// claim makes c the instance the handle backs.
func (b *Browser) claim(c *Client) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return ErrBrowserClosed
	case b.owner != nil:
		return ErrBrowserInUse
	}
	b.owner = c
	return nil
}

// unclaim frees the handle of instance c.
func (b *Browser) unclaim(c *Client) {
	b.mu.Lock()
	if b.owner == c {
		b.owner = nil
	}
	b.mu.Unlock()
}

// Close ends the handle: a launched local browser is stopped and its
// temporary profile removed; a connected one is disconnected from and left
// running, its pages open; a launched cloud browser's session is ended; a
// connected cloud session is disconnected from and left running. An
// instance the handle backs can serve no more calls. Later calls return the
// first result.
func (b *Browser) Close(ctx context.Context) error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		pages := b.order
		b.pages, b.order, b.active = map[target.ID]*Page{}, nil, nil
		b.mu.Unlock()
		for _, p := range pages {
			p.closePage()
		}
		b.closeErr = b.drv.close(ctx)
		b.disconnect()
		// Only now, with the connection gone, may the pages' chromedp
		// contexts end: chromedp closes the target of a context that
		// ends while it is connected.
		for _, p := range pages {
			p.release()
		}
	})
	return b.closeErr
}

// disconnect closes the DevTools connection and waits, briefly, for it to
// be gone.
func (b *Browser) disconnect() {
	b.cancel()
	b.allocCancel()
	if b.cdp != nil {
		select {
		case <-b.cdp.LostConnection:
		case <-time.After(releaseTimeout):
		}
	}
	if b.bridge != nil {
		b.bridge.close()
	}
}

// browserExec is ctx with the browser's connection as the executor of
// browser-wide commands.
func (b *Browser) browserExec(ctx context.Context) context.Context {
	return cdp.WithExecutor(ctx, b.cdp)
}

// Context is the browser context the handle's pages are in.
func (b *Browser) Context() *BrowserContext { return &BrowserContext{b: b} }

// BrowserContext reaches a handle's pages and keeps which one is active: the
// page operations act on when they name none.
type BrowserContext struct{ b *Browser }

// ActivePage is the page operations act on when they name none: the page
// most recently opened with NewPage or set with SetActivePage, else the
// browser's first page. A page that closed stops being active. A browser
// with no page open is an error.
func (c *BrowserContext) ActivePage(ctx context.Context) (*Page, error) {
	b := c.b
	if err := b.usable(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.active != nil {
		return b.active, nil
	}
	if len(b.order) == 0 {
		return nil, errors.New("the browser has no open page; open one with NewPage")
	}
	return b.order[0], nil
}

// Pages lists the browser's open pages (tabs), oldest first: those open
// when the handle connected, in the order the browser lists them, then the
// ones opened since, in the order they opened.
func (c *BrowserContext) Pages(ctx context.Context) ([]*Page, error) {
	b := c.b
	if err := b.usable(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.order), nil
}

// NewPage opens a tab at url ("about:blank" when empty), waits for it to
// load, and makes it the active page. A url that fails to load closes the
// tab again and returns the error.
func (c *BrowserContext) NewPage(ctx context.Context, url string) (*Page, error) {
	b := c.b
	if err := b.usable(); err != nil {
		return nil, err
	}
	// The tab opens blank and then navigates, so that the wait for the
	// load cannot miss it.
	id, err := target.CreateTarget("about:blank").Do(b.browserExec(ctx))
	if err != nil {
		return nil, fmt.Errorf("opening a page: %w", err)
	}
	p := b.addPage(id)
	if p == nil {
		return nil, fmt.Errorf("opening a page: the new page %s closed at once", id)
	}
	if url != "" && url != "about:blank" {
		if err := p.Goto(ctx, url); err != nil {
			_ = p.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	} else if _, err := p.attach(ctx); err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.pages[id] == p {
		b.active = p
	}
	b.mu.Unlock()
	return p, nil
}

// SetActivePage makes page the active page; it must be one of this
// handle's open pages.
func (c *BrowserContext) SetActivePage(ctx context.Context, page *Page) error {
	b := c.b
	if err := b.usable(); err != nil {
		return err
	}
	if page == nil || page.b != b {
		return invalid("SetActivePage", "the page is not one of this browser handle's")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pages[target.ID(page.id)] != page {
		return invalid("SetActivePage", "page %s is closed", page.id)
	}
	b.active = page
	return nil
}

// Page is one tab of a handle's browser.
type Page struct {
	b  *Browser
	id string

	mu sync.Mutex
	// attaching is the attachment under way or done: the tab's chromedp
	// context and the engine's Page on it.
	attaching *attachment
}

// attachment is a Page's session with its tab, made once, on first use.
type attachment struct {
	done   chan struct{}
	tabCtx context.Context
	cancel context.CancelFunc
	pg     *page.Page
	err    error
}

// ID is the page's DevTools target id, which is also its main frame's id.
func (p *Page) ID() string { return p.id }

// Locator returns a locator of the elements selector matches on the page: a
// CSS selector, or an XPath as "xpath=/html/body/...".
func (p *Page) Locator(selector string) *Locator { return &Locator{page: p, selector: selector} }

// open reports an error unless the page is one of its handle's open pages.
func (p *Page) open() error {
	if err := p.b.usable(); err != nil {
		return err
	}
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	if p.b.pages[target.ID(p.id)] != p {
		return fmt.Errorf("page %s is closed", p.id)
	}
	return nil
}

// attach returns the engine's Page on the tab, attaching on first use. An
// attachment that ctx cuts short goes on for the next call: the tab's
// chromedp context must not end while the browser is connected (chromedp
// would close the tab).
func (p *Page) attach(ctx context.Context) (*page.Page, error) {
	if err := p.open(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	a := p.attaching
	if a != nil {
		select {
		case <-a.done:
			if a.err != nil {
				// A failed attempt is retried.
				a = nil
			}
		default:
		}
	}
	if a == nil {
		a = &attachment{done: make(chan struct{})}
		p.attaching = a
		go p.doAttach(a)
	}
	p.mu.Unlock()
	select {
	case <-a.done:
		return a.pg, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("attaching to page %s: %w", p.id, context.Cause(ctx))
	}
}

func (p *Page) doAttach(a *attachment) {
	defer close(a.done)
	b := p.b
	// The tab's context does not end with the connection's: see Close.
	a.tabCtx, a.cancel = chromedp.NewContext(context.WithoutCancel(b.ctx), chromedp.WithTargetID(target.ID(p.id)))
	ctx, cancel := context.WithTimeout(context.Background(), DefaultConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, a.cancel)
	defer stop()
	if err := chromedp.Run(a.tabCtx); err != nil {
		a.err = fmt.Errorf("attaching to page %s: %w", p.id, err)
		return
	}
	pg, err := page.Attach(a.tabCtx)
	if err != nil {
		a.err = fmt.Errorf("attaching to page %s: %w", p.id, err)
		return
	}
	if b.setupPage != nil {
		if err := b.setupPage(ctx, chromedp.FromContext(a.tabCtx).Target); err != nil {
			pg.Close()
			a.err = fmt.Errorf("setting page %s up: %w", p.id, err)
			return
		}
	}
	a.pg = pg
}

// target is the chromedp target of an attached page, the executor of its
// commands.
func (p *Page) target(ctx context.Context) (*chromedp.Target, error) {
	if _, err := p.attach(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return chromedp.FromContext(p.attaching.tabCtx).Target, nil
}

// closePage stops the engine's Page of the tab, leaving the tab's session
// to the connection's end.
func (p *Page) closePage() {
	p.mu.Lock()
	a := p.attaching
	p.mu.Unlock()
	if a == nil {
		return
	}
	select {
	case <-a.done:
		if a.pg != nil {
			a.pg.Close()
		}
	default:
	}
}

// release ends the tab's chromedp context, once the tab or the connection
// has gone. An attachment still under way ends when it gives up.
func (p *Page) release() {
	p.mu.Lock()
	a := p.attaching
	p.mu.Unlock()
	if a == nil {
		return
	}
	go func() {
		<-a.done
		if a.pg != nil {
			a.pg.Close()
		}
		if a.cancel != nil {
			a.cancel()
		}
	}()
}

// URL is the page's current URL.
func (p *Page) URL(ctx context.Context) (string, error) {
	pg, err := p.attach(ctx)
	if err != nil {
		return "", err
	}
	u, err := pg.URL(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the URL of page %s: %w", p.id, err)
	}
	return u, nil
}

// Title is the page's document title.
func (p *Page) Title(ctx context.Context) (string, error) {
	var title string
	if err := p.Evaluate(ctx, "document.title", &title); err != nil {
		return "", err
	}
	return title, nil
}

// Goto loads url in the page and waits for its load event, for at most
// page.DefaultNavigateTimeout (30 s) unless ctx ends first. An HTTP error
// status is not an error: its page loads like any other.
func (p *Page) Goto(ctx context.Context, url string) error {
	pg, err := p.attach(ctx)
	if err != nil {
		return err
	}
	if err := pg.Navigate(ctx, url, page.NavigateOptions{WaitUntil: page.WaitLoad}); err != nil {
		return fmt.Errorf("page %s: %w", p.id, err)
	}
	return nil
}

// Evaluate runs a JavaScript expression in the page's main frame, awaits
// it when it is a promise, and decodes its value, as JSON, into out (which
// may be nil to drop it). A thrown exception is an error with its message.
func (p *Page) Evaluate(ctx context.Context, expression string, out any) error {
	t, err := p.target(ctx)
	if err != nil {
		return err
	}
	var res struct {
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err = t.Execute(ctx, "Runtime.evaluate", map[string]any{
		"expression":    expression,
		"returnByValue": true,
		"awaitPromise":  true,
	}, &res)
	if err != nil {
		return fmt.Errorf("evaluating in page %s: %w", p.id, err)
	}
	if d := res.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg, _, _ = strings.Cut(d.Exception.Description, "\n")
		}
		return fmt.Errorf("evaluating in page %s: %s", p.id, msg)
	}
	if out == nil {
		return nil
	}
	v := res.Result.Value
	if len(v) == 0 {
		// undefined, or a value JSON cannot carry.
		v = json.RawMessage("null")
	}
	if err := json.Unmarshal(v, out); err != nil {
		return fmt.Errorf("decoding the value of %s: %w", res.Result.Type, err)
	}
	return nil
}

// Close closes the tab. Closing a closed page is not an error.
func (p *Page) Close(ctx context.Context) error {
	if err := p.b.usable(); err != nil {
		return err
	}
	if err := target.CloseTarget(target.ID(p.id)).Do(p.b.browserExec(ctx)); err != nil && p.open() == nil {
		return fmt.Errorf("closing page %s: %w", p.id, err)
	}
	// The tab leaves the list when the browser says it is gone; wait for
	// that, so that Pages no longer lists it when Close returns.
	for p.open() == nil {
		select {
		case <-ctx.Done():
			return fmt.Errorf("closing page %s: %w", p.id, context.Cause(ctx))
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// Locator names elements of a page by selector, for an operation's Locator
// and IgnoreLocators options.
type Locator struct {
	page     *Page
	selector string
	nth      int
	hasNth   bool
}

// Nth returns a locator of the index-th match (from 0) only.
func (l *Locator) Nth(index int) *Locator {
	c := *l
	c.nth, c.hasNth = index, true
	return &c
}

// Page is the page the locator belongs to.
func (l *Locator) Page() *Page { return l.page }

// Selector is the selector the locator was made with.
func (l *Locator) Selector() string { return l.selector }

// engineSelector is the locator as the engine's selector: Nth becomes
// Playwright's " >> nth=<i>" suffix.
func (l *Locator) engineSelector() string {
	if !l.hasNth {
		return l.selector
	}
	return fmt.Sprintf("%s >> nth=%d", l.selector, l.nth)
}
