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
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// serveCDP proxies a WebSocket to the browser's DevTools browser endpoint:
// what chromedp.NewRemoteAllocator or Playwright's connectOverCDP connect
// to, with the runner token in the Authorization header. The browser's own
// port listens on loopback only, so this token-checked proxy is the only way
// in from the network. The proxy copies bytes, so CDP's large messages
// (screenshots, DOM snapshots) pass whole.
func (s *Server) serveCDP(w http.ResponseWriter, r *http.Request) {
	b, rerr := s.readyBrowser()
	if rerr != nil {
		writeError(w, rerr)
		return
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		writeError(w, rpc.Errorf(rpc.CodeBadRequest, "%s is a WebSocket endpoint", rpc.CDPPath))
		return
	}
	target := httpURL(b.DevToolsURL())
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = target.Scheme
			pr.Out.URL.Host = target.Host
			pr.Out.URL.Path, pr.Out.URL.RawPath, pr.Out.URL.RawQuery = target.Path, target.RawPath, target.RawQuery
			pr.Out.Host = target.Host
			// The runner token is for the runner; the browser must
			// not see it. An Origin would make Chromium refuse the
			// handshake (--remote-allow-origins), and the token has
			// already decided who may connect.
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
			pr.Out.Header.Del("Origin")
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.log.Warn("cdp proxy: the browser did not take the connection", "err", scrubURLError(err))
			if cerr := b.Err(); cerr != nil {
				writeError(w, rpc.Errorf(rpc.CodeBrowserCrashed, "%s", cerr.Error()))
				return
			}
			writeError(w, rpc.Errorf(rpc.CodeBrowserCrashed, "the browser did not take the DevTools connection"))
		},
	}
	proxy.ErrorLog = slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)
	s.log.Debug("cdp proxy: connection opened", "remote", r.RemoteAddr)
	proxy.ServeHTTP(w, r)
	s.log.Debug("cdp proxy: connection closed", "remote", r.RemoteAddr)
}
