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
	"time"
)

// errUnbuilt marks what the contract commit of issue 13 declares and the
// pieces after it build; nothing returns it once they land.
var errUnbuilt = errors.New("not built yet")

// Browser is a browser handle: the caller's, from LaunchLocalBrowser,
// ConnectLocalBrowser, LaunchCloudBrowser or ConnectCloudBrowser. It backs
// at most one open instance; closing the instance leaves it open. Its
// methods are safe for concurrent use.
type Browser struct {
	// Built by the pieces of issue 13: the CDP connection the pages are
	// reached through, the driver of the handle's kind (local or cloud),
	// the instance it backs, the active page.
	drv driver
}

// newCDPBrowser connects to a browser's DevTools WebSocket endpoint (with
// headers on the handshake) and returns a handle of the driver's kind whose
// pages are reached through that connection. The cloud driver makes its
// handles with it from a session's cdpUrl.
func newCDPBrowser(ctx context.Context, wsURL string, headers map[string]string, drv driver) (*Browser, error) {
	return nil, errUnbuilt
}

// Close ends the handle: a launched local browser is stopped and its
// temporary profile removed; a connected one is disconnected from and left
// running; a launched cloud browser's session is ended; a connected cloud
// session is disconnected from and left running. Later calls return the
// first result.
func (b *Browser) Close(ctx context.Context) error { return errUnbuilt }

// Context is the browser context the handle's pages are in.
func (b *Browser) Context() *BrowserContext { return &BrowserContext{b: b} }

// BrowserContext reaches a handle's pages and keeps which one is active: the
// page operations act on when they name none.
type BrowserContext struct{ b *Browser }

// ActivePage is the page operations act on when they name none: the page
// most recently opened with NewPage or set with SetActivePage, else the
// browser's first page. A page that closed stops being active.
func (c *BrowserContext) ActivePage(ctx context.Context) (*Page, error) { return nil, errUnbuilt }

// Pages lists the browser's open pages (tabs), oldest first.
func (c *BrowserContext) Pages(ctx context.Context) ([]*Page, error) { return nil, errUnbuilt }

// NewPage opens a tab at url ("about:blank" when empty), waits for it to
// load, and makes it the active page.
func (c *BrowserContext) NewPage(ctx context.Context, url string) (*Page, error) {
	return nil, errUnbuilt
}

// SetActivePage makes page the active page; it must be one of this
// handle's open pages.
func (c *BrowserContext) SetActivePage(ctx context.Context, page *Page) error { return errUnbuilt }

// Page is one tab of a handle's browser.
type Page struct {
	b  *Browser
	id string
}

// ID is the page's DevTools target id, which is also its main frame's id.
func (p *Page) ID() string { return p.id }

// Locator returns a locator of the elements selector matches on the page: a
// CSS selector, or an XPath as "xpath=/html/body/...".
func (p *Page) Locator(selector string) *Locator { return &Locator{page: p, selector: selector} }

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

// Viewport is a page's size in CSS pixels.
type Viewport struct {
	Width  int
	Height int
}

// LocalProxy is the proxy a local browser's traffic goes through.
type LocalProxy struct {
	// Server is the proxy, such as "http://proxy:3128" or
	// "socks5://proxy:1080". Required.
	Server string
	// Bypass lists hosts that go direct, comma-separated.
	Bypass   string
	Username string
	Password string
}

// LocalBrowserLaunchOptions say how LaunchLocalBrowser starts Chromium on
// this machine; they mirror the HTTP API's launchOptions. The zero value
// starts a headless Chromium found on PATH with a temporary profile.
type LocalBrowserLaunchOptions struct {
	// ExecutablePath is the browser to start; empty looks for chromium,
	// chromium-browser, google-chrome and chrome on PATH.
	ExecutablePath string
	// Args are added to the browser's command line.
	Args []string
	// IgnoreDefaultArgs leaves these of the library's default arguments
	// out; IgnoreAllDefaultArgs leaves all of them out.
	IgnoreDefaultArgs    []string
	IgnoreAllDefaultArgs bool
	// Headless starts the browser without a window; nil is true.
	Headless *bool
	// Devtools opens DevTools for each tab (headful only).
	Devtools bool
	// ChromiumSandbox keeps Chromium's sandbox on.
	ChromiumSandbox bool
	// Port is the remote-debugging port; zero picks a free one.
	Port int
	// UserDataDir is the profile directory; empty makes a temporary one,
	// removed at Close unless PreserveUserDataDir.
	UserDataDir         string
	PreserveUserDataDir bool
	// Viewport is the pages' size; nil is 1288x711.
	Viewport          *Viewport
	DeviceScaleFactor float64
	HasTouch          bool
	Locale            string
	Proxy             *LocalProxy
	IgnoreHTTPSErrors bool
	// DownloadsPath is where downloads go when AcceptDownloads.
	DownloadsPath   string
	AcceptDownloads bool
	// ConnectTimeout bounds the wait for the browser's DevTools endpoint;
	// zero is 30 s.
	ConnectTimeout time.Duration
}

// LocalBrowserConnectOptions say which running browser ConnectLocalBrowser
// attaches to.
type LocalBrowserConnectOptions struct {
	// CDPURL is the browser's DevTools endpoint: its WebSocket URL
	// (ws://127.0.0.1:9222/devtools/browser/...) or its HTTP origin
	// (http://127.0.0.1:9222). Required.
	CDPURL string
	// Headers are sent with the WebSocket handshake.
	Headers map[string]string
	// ConnectTimeout bounds the connection; zero is 30 s.
	ConnectTimeout time.Duration
}

// LaunchLocalBrowser starts Chromium on this machine and returns its handle.
func LaunchLocalBrowser(ctx context.Context, opts LocalBrowserLaunchOptions) (*Browser, error) {
	return nil, errUnbuilt
}

// ConnectLocalBrowser attaches to a running browser by its DevTools
// endpoint and returns its handle.
func ConnectLocalBrowser(ctx context.Context, opts LocalBrowserConnectOptions) (*Browser, error) {
	return nil, errUnbuilt
}
