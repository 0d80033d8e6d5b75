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
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"

	"github.com/browserfleet/browserfleet/runner/cdpfilter"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// cdpConn is a raw DevTools client of a runner's /cdp route: it sends what
// a test asks, byte for byte, and reads the reply to each call.
type cdpConn struct {
	t    *testing.T
	conn *websocket.Conn
	id   int64
}

// cdpReply is a reply to one call.
type cdpReply struct {
	ID        int64           `json:"id"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func dialCDP(t *testing.T, c runnertest.Client) *cdpConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(c.Base, "http://", "ws://", 1)+rpc.CDPPath, //nolint:bodyclose // websocket.Dial closes the handshake's body
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + c.Token}}})
	if err != nil {
		t.Fatalf("dialing /cdp: %v", err)
	}
	conn.SetReadLimit(-1)
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &cdpConn{t: t, conn: conn}
}

// call sends method with params (a JSON object, or "") to the browser or to
// the target session sid, and returns the reply to it; events and other
// replies are skipped.
func (c *cdpConn) call(method, params, sid string) cdpReply {
	c.t.Helper()
	c.id++
	msg := map[string]any{"id": c.id, "method": method}
	if params != "" {
		msg["params"] = json.RawMessage(params)
	}
	if sid != "" {
		msg["sessionId"] = sid
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, raw); err != nil {
		c.t.Fatalf("sending %s: %v", method, err)
	}
	for {
		_, data, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("waiting for the reply to %s: %v", method, err)
		}
		var r cdpReply
		if err := json.Unmarshal(data, &r); err != nil {
			c.t.Fatalf("a message that is not CDP: %s", data)
		}
		if r.ID == c.id {
			return r
		}
	}
}

// mustCall is call that fails the test on an error reply and decodes the
// result into out (when not nil).
func (c *cdpConn) mustCall(method, params, sid string, out any) {
	c.t.Helper()
	r := c.call(method, params, sid)
	if r.Error != nil {
		c.t.Fatalf("%s: %d %s", method, r.Error.Code, r.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			c.t.Fatalf("%s's result %s: %v", method, r.Result, err)
		}
	}
}

// eval evaluates expr in the target session sid and returns its value.
func (c *cdpConn) eval(expr, sid string) any {
	c.t.Helper()
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	params, _ := json.Marshal(map[string]any{"expression": expr, "returnByValue": true})
	c.mustCall("Runtime.evaluate", string(params), sid, &res)
	return res.Result.Value
}

type targetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	URL      string `json:"url"`
}

// targets lists the browser's targets.
func (c *cdpConn) targets() []targetInfo {
	c.t.Helper()
	var res struct {
		Infos []targetInfo `json:"targetInfos"`
	}
	c.mustCall("Target.getTargets", "", "", &res)
	slices.SortFunc(res.Infos, func(a, b targetInfo) int { return strings.Compare(a.TargetID, b.TargetID) })
	return res.Infos
}

// openTab makes a tab of the client's own and a flat session to it.
func (c *cdpConn) openTab() (targetID, sid string) {
	c.t.Helper()
	var created struct {
		TargetID string `json:"targetId"`
	}
	c.mustCall("Target.createTarget", `{"url":"about:blank"}`, "", &created)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	c.mustCall("Target.attachToTarget", `{"targetId":"`+created.TargetID+`","flatten":true}`, "", &attached)
	return created.TargetID, attached.SessionID
}

// The /cdp route passes what a client sends through runner/cdpfilter:
// refused calls get an error reply, reach nothing in the browser, and the
// connection goes on serving the calls that are allowed.
func TestCDPProxyFilter(t *testing.T) {
	// Chromium, not its headless shell: the shell has no WebUI targets
	// (browser_ui) whose refusal this checks.
	cfg := runnertest.Config(nil)
	cfg.HeadlessShellPath = ""
	b := browsertest.Start(t, cfg)
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(`<!doctype html><title>seen through the filter</title>`))
	_, c, logs := newTestServer(t, b, nil)
	cc := dialCDP(t, c)
	_, sid := cc.openTab()

	navigated := page.URL + "/"
	cc.mustCall("Page.navigate", `{"url":"`+navigated+`"}`, sid, nil)
	runnertest.WaitFor(t, "the client's tab to load the page", func() bool {
		return cc.eval("document.readyState === 'complete' && document.title", sid) == "seen through the filter"
	})
	var contexts struct {
		IDs []string `json:"browserContextIds"`
	}
	cc.mustCall("Target.getBrowserContexts", "", "", &contexts)
	contextsBefore := len(contexts.IDs)
	targetsBefore := cc.targets()
	// The browser's own pages (WebUI, with bindings into the browser)
	// are targets too: Chromium 156 keeps its omnibox popup as one.
	var own string
	for _, ti := range targetsBefore {
		if ti.Type == "browser_ui" {
			var attached struct {
				SessionID string `json:"sessionId"`
			}
			cc.mustCall("Target.attachToTarget", `{"targetId":"`+ti.TargetID+`","flatten":true}`, "", &attached)
			own = attached.SessionID
			break
		}
	}
	if own == "" {
		t.Fatalf("the browser has no browser_ui target to attach to: %+v", targetsBefore)
	}

	tests := []struct {
		name, method, params, sid string
		want                      cdpReply
	}{
		{
			name: "a file: navigation", method: "Page.navigate", params: `{"url":"file:///etc/passwd"}`, sid: sid,
			want: cdpReply{SessionID: sid, Error: &cdpError{Code: -32000, Message: "browserfleet: Page.navigate: url must not be a file: URL: it would read the runner's files"}},
		},
		{
			name: "a chrome: tab", method: "Target.createTarget", params: `{"url":"chrome://version"}`,
			want: cdpReply{Error: &cdpError{Code: -32000, Message: "browserfleet: Target.createTarget: url must not be a chrome: URL: it opens the browser's own pages"}},
		},
		{
			name: "a context with its own proxy", method: "Target.createBrowserContext", params: `{"proxyServer":"http://127.0.0.1:1"}`,
			want: cdpReply{Error: &cdpError{Code: -32000, Message: "browserfleet: Target.createBrowserContext: proxyServer is refused: a context's traffic goes through the session's egress proxy"}},
		},
		{
			name: "script in the browser's own page", method: "Runtime.evaluate", params: `{"expression":"chrome.send('x')"}`, sid: own,
			want: cdpReply{SessionID: own, Error: &cdpError{Code: -32000, Message: "browserfleet: Runtime.evaluate: the session's target is one of the browser's own pages, which take no commands through this proxy"}},
		},
		{
			name: "closing the session's browser", method: "Browser.close",
			want: cdpReply{Error: &cdpError{Code: -32000, Message: "browserfleet: Browser.close: refused: the browser is the session's: end the session through the API"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cc.call(tt.method, tt.params, tt.sid)
			tt.want.ID = got.ID
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reply to %s (-want +got):\n%s", tt.method, diff)
			}
		})
	}

	// Nothing of it reached the browser; the same connection still works.
	runnertest.Want[any](t, "the client's tab", cc.eval("location.href", sid), navigated)
	if diff := cmp.Diff(targetsBefore, cc.targets()); diff != "" {
		t.Errorf("the browser's targets changed (-before +after):\n%s", diff)
	}
	cc.mustCall("Target.getBrowserContexts", "", "", &contexts)
	runnertest.Want(t, "browser contexts", len(contexts.IDs), contextsBefore)
	if err := b.Err(); err != nil {
		t.Fatalf("the browser is gone: %v", err)
	}
	// Each refusal is in the runner's log, by method.
	runnertest.WaitFor(t, "the refusals in the log", func() bool {
		return strings.Contains(logs.String(), `msg="cdp proxy: refused" method=Browser.close`)
	})
}

// What cannot be a CDP call closes the connection, with the reason.
func TestCDPProxyCloses(t *testing.T) {
	b := browsertest.Shared(t)
	_, c, _ := newTestServer(t, b, nil)
	tests := []struct {
		name   string
		typ    websocket.MessageType
		msg    []byte
		status websocket.StatusCode
		reason string
	}{
		{"malformed JSON", websocket.MessageText, []byte(`{"id":1,"method":"Runtime.evaluate",`), websocket.StatusPolicyViolation, "browserfleet: the message is not valid JSON"},
		{"no id", websocket.MessageText, []byte(`{"method":"Runtime.evaluate","params":{"expression":"1"}}`), websocket.StatusPolicyViolation, "browserfleet: a message must be a JSON object with an integer id"},
		{"binary", websocket.MessageBinary, []byte(`{"id":1,"method":"Runtime.evaluate"}`), websocket.StatusUnsupportedData, "browserfleet: CDP messages are text"},
		{"too large", websocket.MessageText, []byte(`{"id":1,"method":"Runtime.evaluate","params":{"expression":"'` + strings.Repeat("x", cdpfilter.MaxMessageBytes) + `'"}}`),
			websocket.StatusMessageTooBig, "browserfleet: a message may be 16 MiB at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := dialCDP(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := cc.conn.Write(ctx, tt.typ, tt.msg); err != nil {
				t.Fatalf("sending: %v", err)
			}
			var err error
			for err == nil {
				_, _, err = cc.conn.Read(ctx)
			}
			var ce websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("the connection ended with %v, not a close frame", err)
			}
			if diff := cmp.Diff(websocket.CloseError{Code: tt.status, Reason: tt.reason}, ce); diff != "" {
				t.Errorf("close (-want +got):\n%s", diff)
			}
		})
	}
	if err := b.Err(); err != nil {
		t.Fatalf("the browser is gone: %v", err)
	}
}

// A client's download path is the session's downloads directory: the file
// lands there, never where the client asked.
func TestCDPProxyDownloadPath(t *testing.T) {
	const content = "quarterly numbers\n"
	srv := runnertest.NewPageServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="report.txt"`)
		w.Write([]byte(content))
	}))
	b := browsertest.Start(t, runnertest.Config(nil))
	_, c, _ := newTestServer(t, b, nil)
	cc := dialCDP(t, c)
	elsewhere := t.TempDir()
	cc.mustCall("Browser.setDownloadBehavior", `{"behavior":"allow","downloadPath":"`+elsewhere+`","eventsEnabled":true}`, "", nil)
	_, sid := cc.openTab()
	// The navigation becomes a download: Chromium answers it as aborted.
	cc.call("Page.navigate", `{"url":"`+srv.URL+`/report"}`, sid)
	runnertest.WaitFor(t, "the download in the session's downloads directory", func() bool {
		got, err := os.ReadFile(filepath.Join(b.DownloadsDir(), "report.txt"))
		return err == nil && string(got) == content
	})
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the client's directory got %d files", len(entries))
	}
}

// The connections a session takes at once are bounded; a closed one frees
// its place.
func TestCDPProxyConnectionLimit(t *testing.T) {
	b := browsertest.Shared(t)
	_, c, _ := newTestServer(t, b, nil)
	dial := func() (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return websocket.Dial(ctx, strings.Replace(c.Base, "http://", "ws://", 1)+rpc.CDPPath,
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + c.Token}}})
	}
	var open []*cdpConn
	for range maxCDPConnections {
		open = append(open, dialCDP(t, c))
	}
	conn, resp, err := dial()
	if err == nil {
		_ = conn.CloseNow()
		t.Fatalf("connection %d was taken", maxCDPConnections+1)
	}
	if resp == nil {
		t.Fatalf("no answer to connection %d: %v", maxCDPConnections+1, err)
	}
	runnertest.Want(t, "status", resp.StatusCode, http.StatusTooManyRequests)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	runnertest.Want(t, "body", strings.TrimSpace(string(body)), `{"error":"the session has 8 DevTools connections open, as many as it takes; close one first","code":"SESSION_BUSY"}`)

	// The others still work; one closed frees a place.
	open[0].mustCall("Browser.getVersion", "", "", nil)
	if err := open[1].conn.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	runnertest.WaitFor(t, "a place to free", func() bool {
		conn, _, err := dial() //nolint:bodyclose // websocket.Dial closes the handshake's body
		if err != nil {
			return false
		}
		_ = conn.CloseNow()
		return true
	})
}

// A client decides how many calls are refused; the log takes a bounded
// number of them.
func TestCDPProxyLogIsBounded(t *testing.T) {
	s, c, logs := newTestServer(t, browsertest.Shared(t), nil)
	s.cdpLog = rate.NewLimiter(0, 3) // three lines, no refill
	cc := dialCDP(t, c)
	for range 5 {
		if r := cc.call("SystemInfo.getInfo", "", ""); r.Error == nil {
			t.Fatal("SystemInfo.getInfo passed")
		}
	}
	runnertest.Want(t, "refusals logged", strings.Count(logs.String(), `msg="cdp proxy: refused"`), 3)
	runnertest.Want(t, "held back", s.cdpSuppressed.Load(), int64(2))
}
