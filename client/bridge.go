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
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// headerBridge is a loopback reverse proxy to one DevTools endpoint that
// adds headers to the WebSocket handshake, which chromedp cannot.
type headerBridge struct {
	// url is the endpoint's path and query on the bridge.
	url string
	ln  net.Listener
	srv *http.Server
}

func newHeaderBridge(wsURL string, headers map[string]string) (*headerBridge, error) {
	up, err := url.Parse(wsURL)
	if err != nil || up.Host == "" {
		// url's errors quote the URL, which may hold a token.
		return nil, fmt.Errorf("%w: the DevTools endpoint %s is not a URL", ErrInvalidArgument, redactURL(wsURL))
	}
	target := *up
	switch up.Scheme {
	case "ws":
		target.Scheme = "http"
	case "wss":
		target.Scheme = "https"
	default:
		return nil, fmt.Errorf("%w: the DevTools endpoint %s is not a ws:// or wss:// URL", ErrInvalidArgument, redactURL(wsURL))
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the DevTools header bridge: %w", err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = target.Scheme
			pr.Out.URL.Host = target.Host
			pr.Out.Host = target.Host
			for k, v := range headers {
				pr.Out.Header.Set(k, v)
			}
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			http.Error(w, "the browser's DevTools endpoint is unreachable", http.StatusBadGateway)
		},
		// Its own failures reach chromedp as the answer above.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	b := &headerBridge{
		url: (&url.URL{Scheme: "ws", Host: ln.Addr().String(), Path: up.Path, RawPath: up.RawPath, RawQuery: up.RawQuery}).String(),
		ln:  ln,
		srv: &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second},
	}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

func (b *headerBridge) close() { _ = b.srv.Close() }

// redactURL keeps a URL's scheme and host: a DevTools endpoint's path,
// query or user info may carry a token, so errors never show them.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}
