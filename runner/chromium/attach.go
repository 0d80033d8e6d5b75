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

package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/runner/egress"
)

// attachRemote connects to the browser at the session's cdpUrl with
// chromedp's RemoteAllocator and opens the runner's own tab in it; the
// browser's existing tabs are left alone, and closing the session closes
// only that tab. Every connection to the cdpUrl's host, the /json/version
// probe included, passes the egress policy; the attached browser's own
// traffic is its own.
func (b *Browser) attachRemote(ctx context.Context) error {
	a := b.settings.attach
	ctx, cancel := context.WithTimeout(ctx, a.connectTimeout)
	defer cancel()

	dialer := *b.dialer
	dialer.Timeout = a.connectTimeout
	header := http.Header{}
	for k, v := range a.headers {
		header.Set(k, v)
	}
	upstream, err := resolveBrowserEndpoint(ctx, &http.Client{Transport: dialer.Transport()}, a.url, header)
	if err != nil {
		return err
	}
	// The bridge would only log a refusal; say it here.
	if _, err := dialer.Resolve(ctx, "tcp", egress.URLHostPort(httpURL(upstream))); err != nil {
		return fmt.Errorf("attaching to %s: %w", RedactURL(a.url), err)
	}
	// chromedp dials with no way to add headers or to choose the dialer;
	// a loopback reverse proxy adds the headers to the handshake, and to
	// every later connection (the /cdp proxy uses it too), and dials
	// through the egress policy.
	b.bridge, err = newHeaderBridge(upstream, header, &dialer, b.log)
	if err != nil {
		return err
	}
	wsURL := b.bridge.url(upstream)
	b.devtoolsURL = wsURL

	b.allocCtx, b.allocCancel = chromedp.NewRemoteAllocator(context.Background(), wsURL.String(), chromedp.NoModifyURL)
	b.ctx, b.cancel = chromedp.NewContext(b.allocCtx, append(b.chromedpLogging(),
		chromedp.WithBrowserOption(chromedp.WithDialTimeout(a.connectTimeout)))...)
	stop := context.AfterFunc(ctx, b.cancel)
	defer stop()
	if err := chromedp.Run(b.ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("attaching to %s: %w", RedactURL(a.url), context.Cause(ctx))
		}
		// chromedp quotes the URL it dialed: the bridge's, which carries
		// the cdpUrl's path and query, where hosted browsers keep tokens.
		return fmt.Errorf("attaching to %s: %s", RedactURL(a.url), strings.ReplaceAll(err.Error(), wsURL.String(), RedactURL(wsURL.String())))
	}
	c := chromedp.FromContext(b.ctx)
	b.cdp = c.Browser
	b.targetID = c.Target.TargetID
	b.log.Info("attached to browser", "cdpUrl", RedactURL(a.url), "headers", len(header))
	return nil
}

// resolveBrowserEndpoint turns a cdpUrl into the browser's WebSocket
// endpoint. A ws(s) URL is used as is; for an http(s) URL the browser is
// asked at /json/version, as Playwright's connectOverCDP does, and the
// answer's path is joined to the URL's own host (the answer names the host
// as the browser sees it, which is wrong behind a proxy).
func resolveBrowserEndpoint(ctx context.Context, client *http.Client, raw string, header http.Header) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url's errors quote the URL, which is a secret.
		return nil, errors.New("cdpUrl is not a URL")
	}
	switch u.Scheme {
	case "ws", "wss":
		return u, nil
	}
	v := *u
	v.Path = strings.TrimSuffix(v.Path, "/") + "/json/version"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("asking %s for its endpoint: %w", RedactURL(raw), err)
	}
	req.Header = header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking %s for its endpoint: %w", RedactURL(raw), ScrubURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("asking %s for its endpoint: %s", RedactURL(raw), resp.Status)
	}
	var version struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&version); err != nil {
		return nil, fmt.Errorf("decoding %s/json/version: %w", RedactURL(raw), err)
	}
	ws, err := url.Parse(version.WebSocketDebuggerURL)
	if err != nil || ws.Path == "" {
		return nil, fmt.Errorf("%s/json/version has no webSocketDebuggerUrl", RedactURL(raw))
	}
	out := *u
	out.Scheme = "ws"
	if u.Scheme == "https" {
		out.Scheme = "wss"
	}
	out.Path, out.RawPath, out.RawQuery = ws.Path, ws.RawPath, ws.RawQuery
	return &out, nil
}

// headerBridge is a loopback reverse proxy to one upstream DevTools server
// that adds headers to every request, WebSocket handshakes included, and
// connects through the egress policy.
type headerBridge struct {
	ln  net.Listener
	srv *http.Server
}

func newHeaderBridge(upstream *url.URL, header http.Header, dialer *egress.Dialer, log *slog.Logger) (*headerBridge, error) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the cdp header bridge: %w", err)
	}
	// A page must not reach the bridge: it would be a way into the
	// attached browser with the session's headers.
	dialer.Policy.DenyOwn(ln.Addr())
	target := httpURL(upstream)
	transport := dialer.Transport()
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = target.Scheme
			pr.Out.URL.Host = target.Host
			pr.Out.Host = target.Host
			for k, v := range header {
				pr.Out.Header[k] = v
			}
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Warn("cdp header bridge: upstream failed", "cdpUrl", RedactURL(upstream.String()), "err", ScrubURLError(err))
			http.Error(w, "upstream browser unreachable", http.StatusBadGateway)
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	b := &headerBridge{ln: ln, srv: &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

// url is upstream's path and query on the bridge.
func (b *headerBridge) url(upstream *url.URL) *url.URL {
	return &url.URL{Scheme: "ws", Host: b.ln.Addr().String(), Path: upstream.Path, RawPath: upstream.RawPath, RawQuery: upstream.RawQuery}
}

func (b *headerBridge) Close() {
	_ = b.srv.Close()
}

// httpURL maps a ws(s) URL to the http(s) URL of its handshake.
func httpURL(u *url.URL) *url.URL {
	out := *u
	switch u.Scheme {
	case "ws":
		out.Scheme = "http"
	case "wss":
		out.Scheme = "https"
	}
	return &out
}

// RedactURL keeps scheme and host: a cdpUrl's path, query or user info may
// carry a token (hosted browsers put one there), so logs and errors never
// show them.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}

// ScrubURLError drops the URL from a *url.Error, keeping what went wrong.
func ScrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
