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

package rpcserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/browserfleet/browserfleet/runner/cdpfilter"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// maxCDPConnections bounds the /cdp connections open at once: each may
// hold a client message of cdpfilter.MaxMessageBytes, and clients need one.
const maxCDPConnections = 8

// cdpLogPerMinute bounds the lines a runner logs for the filter's
// refusals and rewrites, which a client decides.
const cdpLogPerMinute = 60

// cdpDialTimeout bounds the handshake with the browser's DevTools endpoint.
const cdpDialTimeout = 10 * time.Second

// cdpBrowserClient dials the browser's DevTools endpoint: a loopback
// address (the browser's port, or the header bridge of an attached
// browser), so no proxy from the environment applies.
var cdpBrowserClient = &http.Client{Transport: &http.Transport{Proxy: nil}}

// serveCDP is a WebSocket proxy to the browser's DevTools browser endpoint:
// what chromedp.NewRemoteAllocator, Playwright's connectOverCDP or
// puppeteer.connect connect to, with the runner token in the Authorization
// header. The browser's own port listens on loopback only, so this
// token-checked proxy is the only way in from the network. It ends both
// WebSockets: each message the client sends passes runner/cdpfilter
// (forwarded, rewritten, or refused with a CDP error reply that the browser
// never sees); the browser's messages stream to the client unchanged, so
// CDP's large ones (screenshots, DOM snapshots) pass whole. An attached
// browser (cdpUrl) gets the same filter.
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
	if s.cdpConns.Add(1) > maxCDPConnections {
		s.cdpConns.Add(-1)
		writeError(w, rpc.Errorf(rpc.CodeSessionBusy, "the session has %d DevTools connections open, as many as it takes; close one first", maxCDPConnections))
		return
	}
	defer s.cdpConns.Add(-1)
	filter, err := cdpfilter.New(cdpfilter.Policy{DownloadsDir: b.DownloadsDir()})
	if err != nil {
		s.log.Error("cdp proxy: no filter for the session", "err", err)
		writeError(w, rpc.Errorf(rpc.CodeInternal, "the DevTools proxy is not available"))
		return
	}

	// The browser first: a client whose handshake succeeds has a browser
	// behind it. The request to the browser carries none of the
	// client's headers: the runner token is for the runner, and an
	// Origin would make Chromium refuse the handshake
	// (--remote-allow-origins).
	dctx, cancel := context.WithTimeout(r.Context(), cdpDialTimeout)
	browser, resp, err := websocket.Dial(dctx, b.DevToolsURL().String(), &websocket.DialOptions{HTTPClient: cdpBrowserClient})
	cancel()
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		s.log.Warn("cdp proxy: the browser did not take the connection", "err", chromium.ScrubURLError(err))
		if cerr := b.Err(); cerr != nil {
			writeError(w, rpc.Errorf(rpc.CodeBrowserCrashed, "%s", cerr.Error()))
			return
		}
		writeError(w, rpc.Errorf(rpc.CodeBrowserCrashed, "the browser did not take the DevTools connection"))
		return
	}
	browser.SetReadLimit(-1) // the browser's messages are streamed, not held

	// The runner token has decided who may connect, and it travels in a
	// header no page can set: the Origin check guards cookie-based
	// handshakes, which this is not.
	client, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		// Accept has answered the client.
		s.log.Debug("cdp proxy: handshake failed", "err", err)
		_ = browser.CloseNow()
		return
	}
	// The proxy bounds client messages itself (cdpfilter.MaxMessageBytes),
	// so that an oversized one gets the proxy's close reason.
	client.SetReadLimit(-1)
	s.log.Debug("cdp proxy: connection opened", "remote", r.RemoteAddr)
	p := &cdpPipe{log: s.cdpLogf, filter: filter.NewConn(), client: client, browser: browser}
	p.run(context.WithoutCancel(r.Context()))
	s.log.Debug("cdp proxy: connection closed", "remote", r.RemoteAddr)
}

// cdpLogf logs a line of the filter at info, at most cdpLogPerMinute a
// minute; the next line says how many were held back.
func (s *Server) cdpLogf(msg string, args ...any) {
	if !s.cdpLog.Allow() {
		s.cdpSuppressed.Add(1)
		return
	}
	if n := s.cdpSuppressed.Swap(0); n > 0 {
		s.log.Info("cdp proxy: log lines suppressed", "count", n)
	}
	s.log.Info(msg, args...)
}

// cdpPipe is one client's connection and the proxy's own connection to the
// browser for it.
type cdpPipe struct {
	log             func(msg string, args ...any)
	filter          *cdpfilter.Conn
	client, browser *websocket.Conn
}

// run copies both ways until either side closes, then closes the other.
func (p *cdpPipe) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.down(ctx)
		// The browser went away, or the proxy closed it after the
		// client left (then the client is closed already and this is
		// a no-op). The close handshake runs while up still reads the
		// client; cancelling first would drop the connection without a
		// close frame.
		_ = p.client.Close(websocket.StatusGoingAway, "the browser's DevTools connection ended")
		cancel()
	}()
	if status, reason := p.up(ctx); status != 0 {
		_ = p.client.Close(status, reason)
	}
	_ = p.browser.Close(websocket.StatusNormalClosure, "")
	<-done
}

// up reads the client's messages and passes each through the filter. It
// returns the close status and reason when the proxy ends the connection
// (0 when the client or the browser did).
func (p *cdpPipe) up(ctx context.Context) (websocket.StatusCode, string) {
	for {
		typ, r, err := p.client.Reader(ctx)
		if err != nil {
			return 0, ""
		}
		var v cdpfilter.Verdict
		if typ != websocket.MessageText {
			v = cdpfilter.CheckBinary()
		} else {
			msg, err := io.ReadAll(io.LimitReader(r, cdpfilter.MaxMessageBytes+1))
			switch {
			case err != nil:
				return 0, ""
			case len(msg) > cdpfilter.MaxMessageBytes:
				v = cdpfilter.TooLarge()
				p.log("cdp proxy: message too large; closing", "bytes", len(msg))
				return websocket.StatusMessageTooBig, v.Reason
			default:
				v = p.filter.Check(msg)
			}
		}
		switch v.Action {
		case cdpfilter.Close:
			p.log("cdp proxy: malformed message; closing", "reason", v.Reason)
			status := websocket.StatusPolicyViolation
			if typ != websocket.MessageText {
				status = websocket.StatusUnsupportedData
			}
			return status, v.Reason
		case cdpfilter.Refuse:
			p.log("cdp proxy: refused", "method", v.Method, "reason", v.Reason)
			if err := p.client.Write(ctx, websocket.MessageText, v.Message); err != nil {
				return 0, ""
			}
		case cdpfilter.Rewrite:
			p.log("cdp proxy: rewritten", "method", v.Method, "reason", v.Reason)
			fallthrough
		default:
			if err := p.browser.Write(ctx, websocket.MessageText, v.Message); err != nil {
				return 0, ""
			}
		}
	}
}

// down streams the browser's messages to the client as they come, without
// holding a whole message, except the few the filter must read before the
// client does (cdpfilter.Watched: the announcements of target sessions,
// which are small).
func (p *cdpPipe) down(ctx context.Context) error {
	head := make([]byte, cdpfilter.WatchBytes)
	for {
		typ, r, err := p.browser.Reader(ctx)
		if err != nil {
			return err
		}
		n, err := io.ReadFull(r, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return err
		}
		msg := io.MultiReader(bytes.NewReader(head[:n]), r)
		if typ == websocket.MessageText && cdpfilter.Watched(head[:n]) {
			whole, err := io.ReadAll(io.LimitReader(msg, cdpfilter.MaxMessageBytes+1))
			if err != nil {
				return err
			}
			// One too large to read leaves its session unknown, so
			// refused; the client gets the message all the same.
			if len(whole) <= cdpfilter.MaxMessageBytes {
				p.filter.Observe(whole)
			}
			msg = io.MultiReader(bytes.NewReader(whole), r)
		}
		w, err := p.client.Writer(ctx, typ)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, msg); err != nil {
			_ = w.Close()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
}
