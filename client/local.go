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
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

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
	Viewport *Viewport
	// DeviceScaleFactor is how many device pixels a CSS pixel takes;
	// zero is the display's.
	DeviceScaleFactor float64
	// HasTouch makes pages see a touch screen.
	HasTouch bool
	// Locale is the pages' language and formatting locale, such as
	// "de-DE", also sent as Accept-Language.
	Locale string
	// Proxy is where the browser's traffic goes; nil is direct.
	// Credentials are sent through a loopback proxy of the library's,
	// since Chromium takes none on its command line.
	Proxy *LocalProxy
	// IgnoreHTTPSErrors lets pages with certificate errors load.
	IgnoreHTTPSErrors bool
	// DownloadsPath is where downloads go when AcceptDownloads; empty is
	// the profile's Downloads directory (removed with a temporary
	// profile). Without AcceptDownloads downloads are refused.
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
// ctx and ConnectTimeout bound the start; the browser runs until the
// handle's Close, or until this process exits.
func LaunchLocalBrowser(ctx context.Context, opts LocalBrowserLaunchOptions) (*Browser, error) {
	lo, err := checkLaunchOptions(opts)
	if err != nil {
		return nil, err
	}
	timeout := lo.ConnectTimeout
	if timeout == 0 {
		timeout = DefaultConnectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	proc, wsURL, err := startBrowser(ctx, lo)
	if err != nil {
		return nil, err
	}
	drv := &localDriver{proc: proc}
	b, err := newCDPBrowser(ctx, wsURL, nil, drv)
	if err != nil {
		_ = proc.stop(context.WithoutCancel(ctx))
		return nil, err
	}
	drv.b = b
	b.setupPage = lo.setupPage
	if err := lo.setupDownloads(ctx, b, proc.downloads); err != nil {
		_ = b.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return b, nil
}

// setupDownloads lets downloads land in dir, or refuses them when dir is
// empty.
func (lo *launchOptions) setupDownloads(ctx context.Context, b *Browser, dir string) error {
	set := cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorDeny)
	if dir != "" {
		set = cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(dir)
	}
	if err := set.Do(b.browserExec(ctx)); err != nil {
		return fmt.Errorf("setting the browser's downloads up: %w", err)
	}
	return nil
}

// setupPage applies the launch options a switch cannot give every page:
// the viewport (the window size the switch sets includes the window's
// frame, headless too), touch, and the locale's formatting (Intl).
func (lo *launchOptions) setupPage(ctx context.Context, t *chromedp.Target) error {
	actions := []chromedp.Action{
		emulation.SetDeviceMetricsOverride(int64(lo.viewport.Width), int64(lo.viewport.Height), lo.DeviceScaleFactor, false),
	}
	if lo.HasTouch {
		actions = append(actions, emulation.SetTouchEmulationEnabled(true).WithMaxTouchPoints(1))
	}
	if lo.Locale != "" {
		actions = append(actions, emulation.SetLocaleOverride().WithLocale(lo.Locale))
	}
	return chromedp.Tasks(actions).Do(cdp.WithExecutor(ctx, t))
}

// ConnectLocalBrowser attaches to a running browser by its DevTools
// endpoint and returns its handle. Its Close disconnects and leaves the
// browser and its pages as they are.
func ConnectLocalBrowser(ctx context.Context, opts LocalBrowserConnectOptions) (*Browser, error) {
	if opts.CDPURL == "" {
		return nil, invalid("LocalBrowserConnectOptions.CDPURL", "is required")
	}
	if opts.ConnectTimeout < 0 {
		return nil, invalid("LocalBrowserConnectOptions.ConnectTimeout", "must not be negative")
	}
	timeout := opts.ConnectTimeout
	if timeout == 0 {
		timeout = DefaultConnectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wsURL, err := browserEndpoint(ctx, opts.CDPURL, opts.Headers)
	if err != nil {
		return nil, err
	}
	drv := &localDriver{}
	b, err := newCDPBrowser(ctx, wsURL, opts.Headers, drv)
	if err != nil {
		return nil, err
	}
	drv.b = b
	return b, nil
}

// maxVersionBody bounds the /json/version answer read.
const maxVersionBody = 1 << 20

// browserEndpoint turns a CDPURL into the browser's WebSocket endpoint. A
// ws(s) URL is used as is; for an http(s) one the browser is asked at
// /json/version, as Playwright's connectOverCDP does, and the answer's
// path is joined to the URL's own host: the answer names the host as the
// browser sees it, which is wrong behind a proxy or a port forward.
func browserEndpoint(ctx context.Context, raw string, headers map[string]string) (string, error) {
	const field = "LocalBrowserConnectOptions.CDPURL"
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		// url's errors quote the URL, which may hold a token.
		return "", invalid(field, "is not a URL")
	}
	switch u.Scheme {
	case "ws", "wss":
		return raw, nil
	case "http", "https":
	default:
		return "", invalid(field, "scheme %q: want ws, wss, http or https", u.Scheme)
	}
	v := *u
	v.Path = strings.TrimSuffix(v.Path, "/") + "/json/version"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.String(), nil)
	if err != nil {
		return "", invalid(field, "is not a URL")
	}
	for k, val := range headers {
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("asking %s for its DevTools endpoint: %w", redactURL(raw), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("asking %s for its DevTools endpoint: %s", redactURL(raw), resp.Status)
	}
	var version struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxVersionBody)).Decode(&version); err != nil {
		return "", fmt.Errorf("decoding %s/json/version: %w", redactURL(raw), err)
	}
	ws, err := url.Parse(version.WebSocketDebuggerURL)
	if err != nil || ws.Path == "" {
		return "", fmt.Errorf("%s/json/version names no webSocketDebuggerUrl", redactURL(raw))
	}
	out := *u
	out.Scheme = "ws"
	if u.Scheme == "https" {
		out.Scheme = "wss"
	}
	out.Path, out.RawPath, out.RawQuery = ws.Path, ws.RawPath, ws.RawQuery
	return out.String(), nil
}
