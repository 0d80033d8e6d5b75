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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// newTestServer serves the runner RPC over b with engine.
func newTestServer(t *testing.T, b *Browser, engine Engine) (*Server, rpcClient, *syncBuffer) {
	t.Helper()
	log, buf := testLogger(t)
	s := NewServer(ServerOptions{Token: NewSecret(testToken), Engine: engine, Logger: log})
	if b != nil {
		s.SetBrowser(b)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, rpcClient{base: hs.URL, token: testToken}, buf
}

// stream posts body asking for NDJSON and returns the status and lines.
func (c rpcClient) stream(ctx context.Context, path string, body any) (*http.Response, []rpc.StreamLine, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", rpc.ContentTypeNDJSON)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var lines []rpc.StreamLine
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l rpc.StreamLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return resp, lines, fmt.Errorf("line %q is not a stream line: %w", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return resp, lines, sc.Err()
}

func act(instruction string) rpc.ActRequest {
	return rpc.ActRequest{Input: rpc.ActInput{Instruction: instruction}}
}

const buttonsPage = `<!doctype html><title>buttons</title>
<script>window.clicks = [];</script>
<button id="a" onclick="clicks.push('a')">A</button>
<button id="b" onclick="clicks.push('b')">B</button>
<button id="c" onclick="clicks.push('c')">C</button>`

func TestAuth(t *testing.T) {
	_, c, _ := newTestServer(t, sharedBrowser(t), nil)
	tests := []struct {
		name       string
		path       string
		method     string
		header     string
		wantStatus int
		wantBody   string
	}{
		{"no header", rpc.NavigatePath, http.MethodPost, "", 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"wrong token", rpc.NavigatePath, http.MethodPost, "Bearer not-the-token", 401, `{"error":"invalid runner token","code":"UNAUTHORIZED"}`},
		{"token of another length", rpc.ActPath, http.MethodPost, "Bearer " + testToken + "x", 401, `{"error":"invalid runner token","code":"UNAUTHORIZED"}`},
		{"other scheme", rpc.ObservePath, http.MethodPost, "Basic " + testToken, 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"empty bearer", rpc.ExtractPath, http.MethodPost, "Bearer ", 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"cdp without token", rpc.CDPPath, http.MethodGet, "", 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"unknown path without token", "/v1/nope", http.MethodGet, "", 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"unknown path with token", "/v1/nope", http.MethodGet, "Bearer " + testToken, 404, `{"error":"no such path","code":"NOT_FOUND"}`},
		{"cdp with token but no upgrade", rpc.CDPPath, http.MethodGet, "bearer " + testToken, 400, `{"error":"/cdp is a WebSocket endpoint","code":"BAD_REQUEST"}`},
		{"health needs no token", rpc.HealthPath, http.MethodGet, "", 200, `{"status":"ready"}`},
		{"health ignores a wrong token", rpc.HealthPath, http.MethodGet, "Bearer wrong", 200, `{"status":"ready"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, c.base+tt.path, strings.NewReader(`{"url":"about:blank"}`))
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			want(t, "status", resp.StatusCode, tt.wantStatus)
			if diff := cmp.Diff(tt.wantBody, strings.TrimSpace(string(body))); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
	// And the token works.
	status, body := c.mustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: "about:blank"})
	want(t, "status with the token", status, 200)
	wantContains(t, "body", string(body), `"url":"about:blank"`)
}

func TestBadRequests(t *testing.T) {
	_, c, _ := newTestServer(t, sharedBrowser(t), nil)
	tests := []struct {
		name     string
		path     string
		body     string
		wantCode rpc.ErrorCode
	}{
		{"empty body", rpc.ActPath, ``, rpc.CodeBadRequest},
		{"malformed", rpc.ActPath, `{"input":`, rpc.CodeBadRequest},
		{"act without input", rpc.ActPath, `{"options":{}}`, rpc.CodeBadRequest},
		{"act input of the wrong kind", rpc.ActPath, `{"input":42}`, rpc.CodeBadRequest},
		{"act action without selector", rpc.ActPath, `{"input":{"method":"click"}}`, rpc.CodeBadRequest},
		{"negative timeout", rpc.ActPath, `{"input":"x","options":{"timeout":-1}}`, rpc.CodeBadRequest},
		{"extract schema without instruction", rpc.ExtractPath, `{"schema":{"type":"object"}}`, rpc.CodeBadRequest},
		{"navigate without url", rpc.NavigatePath, `{}`, rpc.CodeBadRequest},
		{"navigate to a file", rpc.NavigatePath, `{"url":"file:///proc/self/environ"}`, rpc.CodeBadRequest},
		{"navigate with an unknown waitUntil", rpc.NavigatePath, `{"url":"about:blank","options":{"waitUntil":"idle"}}`, rpc.CodeBadRequest},
		{"trailing data", rpc.NavigatePath, `{"url":"about:blank"} {}`, rpc.CodeBadRequest},
		{"too large", rpc.ActPath, `{"input":"` + strings.Repeat("x", rpc.MaxRequestBytes) + `"}`, rpc.CodePayloadTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, c.base+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+testToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			e := decodeError(t, body)
			want(t, "code", e.Code, tt.wantCode)
			want(t, "status", resp.StatusCode, rpc.HTTPStatus(tt.wantCode))
		})
	}
	// A method the path does not take.
	resp, err := http.Get(c.base + rpc.ActPath + "?x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want(t, "status of GET /v1/act without a token", resp.StatusCode, 401)
}

func TestDispatchToEngine(t *testing.T) {
	b := sharedBrowser(t)
	page := newPageServer(t, htmlHandler(buttonsPage))
	engine := newTestEngine()
	_, c, _ := newTestServer(t, b, engine)
	c.mustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: page.URL})

	// act with an instruction, then with an action object.
	status, body := c.mustCall(t, rpc.ActPath, act("click #a"))
	want(t, "act status", status, 200)
	var actRes rpc.Result[rpc.ActResult]
	if err := json.Unmarshal(body, &actRes); err != nil {
		t.Fatal(err)
	}
	wantAct := rpc.Result[rpc.ActResult]{
		Result: rpc.ActResult{Success: true, Message: "clicked #a", ActionDescription: "click #a",
			Actions: []rpc.Action{{Selector: "#a", Description: "the element", Method: "click"}}},
		Usage: rpc.Usage{InputTokens: 100, OutputTokens: 7},
	}
	if diff := cmp.Diff(wantAct, actRes); diff != "" {
		t.Errorf("act result (-want +got):\n%s", diff)
	}
	status, _ = c.mustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#b", Method: "click"}}})
	want(t, "act with an action status", status, 200)
	var clicks []string
	evaluate(t, b, "window.clicks", &clicks)
	if diff := cmp.Diff([]string{"a", "b"}, clicks); diff != "" {
		t.Errorf("clicks on the page (-want +got):\n%s", diff)
	}

	status, body = c.mustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "buttons"})
	want(t, "observe status", status, 200)
	var obs rpc.Result[[]rpc.Action]
	if err := json.Unmarshal(body, &obs); err != nil {
		t.Fatal(err)
	}
	want(t, "observed actions", len(obs.Result), 3)

	status, body = c.mustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "the title"})
	want(t, "extract status", status, 200)
	if diff := cmp.Diff(`{"result":{"extraction":"buttons"},"usage":{"inputTokens":20,"outputTokens":5,"reasoningTokens":0,"cachedInputTokens":0,"inferenceTimeMs":0}}`, strings.TrimSpace(string(body))); diff != "" {
		t.Errorf("extract body (-want +got):\n%s", diff)
	}

	// An engine error that is not an *rpc.Error is ENGINE_ERROR.
	status, body = c.mustCall(t, rpc.ActPath, act("fail"))
	want(t, "failing act status", status, 500)
	e := decodeError(t, body)
	want(t, "failing act code", e.Code, rpc.CodeEngineError)
	want(t, "failing act message", e.Message, "the element is not there")
}

func TestOperationsRunInArrivalOrder(t *testing.T) {
	b := sharedBrowser(t)
	page := newPageServer(t, htmlHandler(buttonsPage))
	engine := newTestEngine()
	s, c, _ := newTestServer(t, b, engine)
	c.mustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: page.URL})

	type outcome struct {
		name   string
		status int
		body   []byte
	}
	results := make(chan outcome, 3)
	send := func(name, instruction string) {
		go func() {
			status, body, err := c.call(context.Background(), rpc.ActPath, act(instruction))
			if err != nil {
				body = []byte(err.Error())
			}
			results <- outcome{name, status, body}
		}()
	}
	// first holds the page; second and third arrive while it does, in
	// that order, and must run after it, in that order.
	send("first", "hold first")
	engine.waitStarted(t, "hold first")
	send("second", "click #c")
	waitFor(t, "the second call to queue", func() bool { return s.queue.pending() == 1 })
	send("third", "click #a")
	waitFor(t, "the third call to queue", func() bool { return s.queue.pending() == 2 })
	if h := engine.history(); len(h) != 1 {
		t.Fatalf("while the first call holds the page, the engine ran %v", h)
	}
	engine.release("first")
	for range 3 {
		r := <-results
		if r.status != 200 {
			t.Errorf("%s call: %d %s", r.name, r.status, r.body)
		}
	}
	wantHistory := []string{"start hold first", "end hold first", "start click #c", "end click #c", "start click #a", "end click #a"}
	if diff := cmp.Diff(wantHistory, engine.history()); diff != "" {
		t.Errorf("engine history (-want +got):\n%s", diff)
	}
	var clicks []string
	evaluate(t, b, "window.clicks", &clicks)
	if diff := cmp.Diff([]string{"c", "a"}, clicks); diff != "" {
		t.Errorf("clicks on the page (-want +got):\n%s", diff)
	}
}

// TestQueueIsBounded: with as many operations waiting as the runner lets
// wait, the next one is refused at once with 429 SESSION_BUSY, plain or
// streamed, and the waiting ones still run.
func TestQueueIsBounded(t *testing.T) {
	b := sharedBrowser(t)
	page := newPageServer(t, htmlHandler(buttonsPage))
	engine := newTestEngine()
	log, _ := testLogger(t)
	s := NewServer(ServerOptions{Token: NewSecret(testToken), Engine: engine, Logger: log, MaxQueuedOperations: 2})
	s.SetBrowser(b)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	c := rpcClient{base: hs.URL, token: testToken}
	c.mustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: page.URL})

	statuses := make(chan int, 3)
	send := func(instruction string) {
		go func() {
			status, _, err := c.call(context.Background(), rpc.ActPath, act(instruction))
			if err != nil {
				t.Error(err)
			}
			statuses <- status
		}()
	}
	send("hold first")
	engine.waitStarted(t, "hold first")
	send("click #a")
	waitFor(t, "the second call to queue", func() bool { return s.queue.pending() == 1 })
	send("click #b")
	waitFor(t, "the third call to queue", func() bool { return s.queue.pending() == 2 })

	status, body := c.mustCall(t, rpc.ActPath, act("click #c"))
	want(t, "status beyond the bound", status, http.StatusTooManyRequests)
	e := decodeError(t, body)
	want(t, "code beyond the bound", e.Code, rpc.CodeSessionBusy)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, _, err := c.stream(ctx, rpc.ActPath, act("click #c"))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "streamed status beyond the bound", resp.StatusCode, http.StatusTooManyRequests)
	want(t, "waiting", s.queue.pending(), 2)

	engine.release("first")
	for range 3 {
		if st := <-statuses; st != http.StatusOK {
			t.Errorf("a call within the bound answered %d", st)
		}
	}
}

func TestStreaming(t *testing.T) {
	b := sharedBrowser(t)
	page := newPageServer(t, htmlHandler(buttonsPage))
	_, c, _ := newTestServer(t, b, newTestEngine())
	c.mustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: page.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("result", func(t *testing.T) {
		resp, lines, err := c.stream(ctx, rpc.ActPath, act("click #b"))
		if err != nil {
			t.Fatal(err)
		}
		want(t, "status", resp.StatusCode, 200)
		want(t, "content type", resp.Header.Get("Content-Type"), rpc.ContentTypeNDJSON)
		var types []rpc.StreamLineType
		var messages []string
		for _, l := range lines {
			types = append(types, l.Type)
			if l.Type == rpc.StreamLog {
				var ll rpc.LogLine
				if err := json.Unmarshal(l.Data, &ll); err != nil {
					t.Fatal(err)
				}
				messages = append(messages, ll.Message)
			}
		}
		if diff := cmp.Diff([]rpc.StreamLineType{rpc.StreamLog, rpc.StreamLog, rpc.StreamResult}, types); diff != "" {
			t.Fatalf("line types (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"clicking #b", "clicked #b"}, messages); diff != "" {
			t.Errorf("log messages (-want +got):\n%s", diff)
		}
		var res rpc.Result[rpc.ActResult]
		if err := json.Unmarshal(lines[len(lines)-1].Data, &res); err != nil {
			t.Fatal(err)
		}
		want(t, "result message", res.Result.Message, "clicked #b")
		want(t, "usage", res.Usage.InputTokens, 100)
	})
	t.Run("error", func(t *testing.T) {
		resp, lines, err := c.stream(ctx, rpc.ActPath, act("fail"))
		if err != nil {
			t.Fatal(err)
		}
		want(t, "status", resp.StatusCode, 200)
		if len(lines) != 2 || lines[0].Type != rpc.StreamLog || lines[1].Type != rpc.StreamError {
			t.Fatalf("lines = %+v, want a log line then an error line", lines)
		}
		var e rpc.Error
		if err := json.Unmarshal(lines[1].Data, &e); err != nil {
			t.Fatal(err)
		}
		want(t, "code", e.Code, rpc.CodeEngineError)
	})
	t.Run("refused before it starts", func(t *testing.T) {
		// A bad body is answered with its status, not streamed.
		resp, lines, err := c.stream(ctx, rpc.NavigatePath, rpc.NavigateRequest{})
		if err != nil {
			t.Fatal(err)
		}
		want(t, "status", resp.StatusCode, 400)
		want(t, "content type", resp.Header.Get("Content-Type"), rpc.ContentTypeJSON)
		want(t, "lines", len(lines), 1) // the JSON error body, one line
	})
}

func TestCallerDisconnectCancelsOperation(t *testing.T) {
	b := sharedBrowser(t)
	engine := newTestEngine()
	s, c, _ := newTestServer(t, b, engine)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.call(ctx, rpc.ActPath, act("hold forever"))
		done <- err
	}()
	engine.waitStarted(t, "hold forever")
	cancel()
	select {
	case cause := <-engine.canceled:
		want(t, "cause the engine saw", rpc.CodeOf(cause), rpc.CodeCanceled)
	case <-time.After(60 * time.Second):
		t.Fatal("the engine did not see the operation's context end")
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the client's call returned %v, want context.Canceled", err)
	}
	// The page is free again.
	waitFor(t, "the queue to be free", func() bool { return s.queue.ahead() == 0 })
	status, body := c.mustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: "about:blank"})
	want(t, "next call status", status, 200)
	_ = body
}

func TestNavigate(t *testing.T) {
	b := sharedBrowser(t)
	var mu sync.Mutex
	gates := map[string]chan struct{}{}
	gate := func(name string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if gates[name] == nil {
			gates[name] = make(chan struct{})
		}
		return gates[name]
	}
	page := newPageServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/slow/"):
			// Held until the test opens the gate.
			select {
			case <-gate(r.URL.Path):
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("late"))
		case r.URL.Path == "/never":
			<-r.Context().Done()
		case r.URL.Path == "/redirect":
			http.Redirect(w, r, "/landing", http.StatusFound)
		case r.URL.Path == "/missing":
			http.NotFound(w, r)
		case r.URL.Path == "/img":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>img</title><img src="/slow/%s">`, r.URL.Query().Get("gate"))
		case r.URL.Path == "/fetch":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>fetch</title><script>
				addEventListener('load', () => fetch('/slow/%s').then(r => r.text()).then(t => document.title = t));
			</script>`, r.URL.Query().Get("gate"))
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>%s</title>`, r.URL.Path)
		}
	}))
	_, c, _ := newTestServer(t, b, nil)

	navigateTo := func(t *testing.T, req rpc.NavigateRequest) (int, rpc.NavigateResult, *rpc.Error) {
		t.Helper()
		status, body := c.mustCall(t, rpc.NavigatePath, req)
		if status != 200 {
			return status, rpc.NavigateResult{}, decodeError(t, body)
		}
		var res rpc.Result[rpc.NavigateResult]
		if err := json.Unmarshal(body, &res); err != nil {
			t.Fatal(err)
		}
		return status, res.Result, nil
	}
	location := func(t *testing.T) string {
		var href string
		evaluate(t, b, "location.href", &href)
		return href
	}

	t.Run("the page moves", func(t *testing.T) {
		_, res, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/first"})
		if e != nil {
			t.Fatal(e)
		}
		if diff := cmp.Diff(rpc.NavigateResult{URL: page.URL + "/first", Status: 200, OK: true}, res); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		want(t, "location", location(t), page.URL+"/first")
	})
	t.Run("redirects and errors", func(t *testing.T) {
		_, res, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/redirect"})
		if e != nil {
			t.Fatal(e)
		}
		want(t, "url after the redirect", res.URL, page.URL+"/landing")
		_, res, e = navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/missing"})
		if e != nil {
			t.Fatal(e)
		}
		if diff := cmp.Diff(rpc.NavigateResult{URL: page.URL + "/missing", Status: 404, OK: false}, res); diff != "" {
			t.Errorf("a 404 is a result (-want +got):\n%s", diff)
		}
		// A port nothing listens on any more.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + ln.Addr().String() + "/"
		ln.Close()
		status, _, e := navigateTo(t, rpc.NavigateRequest{URL: closed})
		want(t, "unreachable status", status, 502)
		if e != nil {
			want(t, "unreachable code", e.Code, rpc.CodeNavigationFailed)
			wantContains(t, "unreachable message", e.Message, "connection refused")
		}
	})
	t.Run("credentials in the URL stay out of errors", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://ada:pw-5ecret@" + ln.Addr().String() + "/"
		ln.Close()
		status, _, e := navigateTo(t, rpc.NavigateRequest{URL: closed})
		want(t, "status", status, 502)
		if e == nil {
			t.Fatal("no error")
		}
		want(t, "code", e.Code, rpc.CodeNavigationFailed)
		if strings.Contains(e.Message, "pw-5ecret") {
			t.Errorf("message %q carries the URL's password", e.Message)
		}
	})
	t.Run("frameId", func(t *testing.T) {
		_, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/main", FrameID: string(b.targetID)})
		if e != nil {
			t.Fatalf("the main frame's id: %v", e)
		}
		status, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/sub", FrameID: "F00D"})
		want(t, "status for another frame", status, 400)
		if e != nil {
			want(t, "code", e.Code, rpc.CodeBadRequest)
		}
	})
	t.Run("referer", func(t *testing.T) {
		const referer = "https://referrer.example/search?q=browserfleet"
		if _, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/referred", Options: rpc.NavigateOptions{Referer: referer}}); e != nil {
			t.Fatal(e)
		}
		got := page.seen(func(r *http.Request) bool { return r.URL.Path == "/referred" })
		if len(got) != 1 {
			t.Fatalf("the server saw %d requests for /referred", len(got))
		}
		want(t, "Referer", got[0].Header.Get("Referer"), referer)
	})
	t.Run("waitUntil domcontentloaded returns before images load", func(t *testing.T) {
		defer close(gate("/slow/dcl"))
		_, res, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/img?gate=dcl", Options: rpc.NavigateOptions{WaitUntil: rpc.WaitUntilDOMContentLoaded}})
		if e != nil {
			t.Fatal(e)
		}
		want(t, "status", res.Status, 200)
	})
	t.Run("waitUntil load waits for images", func(t *testing.T) {
		done := make(chan *rpc.Error, 1)
		go func() {
			_, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/img?gate=load", Options: rpc.NavigateOptions{WaitUntil: rpc.WaitUntilLoad}})
			done <- e
		}()
		waitFor(t, "the image request", func() bool {
			return len(page.seen(func(r *http.Request) bool { return r.URL.Path == "/slow/load" })) > 0
		})
		select {
		case e := <-done:
			t.Fatalf("navigate returned (%v) while an image was loading", e)
		default:
		}
		close(gate("/slow/load"))
		if e := <-done; e != nil {
			t.Fatal(e)
		}
	})
	t.Run("waitUntil networkidle waits for requests after load", func(t *testing.T) {
		done := make(chan *rpc.Error, 1)
		go func() {
			_, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/fetch?gate=idle", Options: rpc.NavigateOptions{WaitUntil: rpc.WaitUntilNetworkIdle}})
			done <- e
		}()
		waitFor(t, "the fetch after load", func() bool {
			return len(page.seen(func(r *http.Request) bool { return r.URL.Path == "/slow/idle" })) > 0
		})
		select {
		case e := <-done:
			t.Fatalf("navigate returned (%v) while a fetch was running", e)
		default:
		}
		close(gate("/slow/idle"))
		if e := <-done; e != nil {
			t.Fatal(e)
		}
		var title string
		evaluate(t, b, "document.title", &title)
		want(t, "title set by the fetch", title, "late")
	})
	t.Run("timeout", func(t *testing.T) {
		timeout := 1000.0
		status, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/never", Options: rpc.NavigateOptions{Timeout: &timeout}})
		want(t, "status", status, 504)
		if e == nil {
			t.Fatal("no error")
		}
		want(t, "code", e.Code, rpc.CodeTimeout)
		wantContains(t, "message", e.Message, "navigate did not finish within 1s")
		// The page is usable right after.
		if _, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/after"}); e != nil {
			t.Fatalf("navigate after a timeout: %v", e)
		}
		want(t, "location", location(t), page.URL+"/after")
	})
}

func TestCDPProxy(t *testing.T) {
	b := sharedBrowser(t)
	page := newPageServer(t, htmlHandler(`<!doctype html><title>seen through the cdp proxy</title>`))
	_, c, _ := newTestServer(t, b, nil)

	// chromedp cannot send an Authorization header; the runner's header
	// bridge adds it, as it would for a session whose cdpUrl is another
	// runner's /cdp with cdpHeaders.
	log, _ := testLogger(t)
	cdpURL, _ := url.Parse(strings.Replace(c.base, "http://", "ws://", 1) + rpc.CDPPath)
	bridge, err := newHeaderBridge(cdpURL, http.Header{"Authorization": {"Bearer " + testToken}}, &egress.Dialer{Policy: loopbackEgress()}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bridge.Close()

	actx, acancel := chromedp.NewRemoteAllocator(context.Background(), bridge.url(cdpURL).String(), chromedp.NoModifyURL)
	defer acancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	tctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
	defer tcancel()
	var title string
	if err := chromedp.Run(tctx, chromedp.Navigate(page.URL), chromedp.Title(&title)); err != nil {
		t.Fatalf("driving the browser through /cdp: %v", err)
	}
	want(t, "title", title, "seen through the cdp proxy")

	// The runner's own tab is untouched by the other client.
	var href string
	evaluate(t, b, "location.href", &href)
	if href == page.URL+"/" || href == page.URL {
		t.Errorf("the runner's tab moved to %s", href)
	}
}

// The schemes navigate takes and refuses (rpc.NavigateURLProblem, shared
// with the API), through the RPC.
func TestNavigateSchemes(t *testing.T) {
	page := newPageServer(t, htmlHandler(`<!doctype html><title>plain</title>`))
	tlsSrv := httptest.NewTLSServer(htmlHandler(`<!doctype html><title>secure</title>`))
	t.Cleanup(tlsSrv.Close)
	b := startTestBrowser(t, testConfig(launchOptions(func(lo *v1alpha1.LaunchOptions) { lo.IgnoreHTTPSErrors = ptrTo(true) })))
	_, c, _ := newTestServer(t, b, nil)
	const own = "it opens the browser's own pages"
	tests := []struct {
		url     string
		wantErr string // "" navigates
	}{
		{url: page.URL + "/"},
		{url: tlsSrv.URL + "/"},
		{url: "data:text/html,<title>inline</title>"},
		{url: "about:blank"},
		{url: "file:///proc/self/environ", wantErr: "url must not be a file: URL: it would read the runner's files"},
		{url: "chrome://version", wantErr: "url must not be a chrome: URL: " + own},
		{url: "chrome-extension://abcdefghijklmnopabcdefghijklmnop/manifest.json", wantErr: "url must not be a chrome-extension: URL: " + own},
		{url: "devtools://devtools/bundled/inspector.html", wantErr: "url must not be a devtools: URL: " + own},
		{url: "view-source:" + page.URL + "/", wantErr: "url must not be a view-source: URL: " + own},
		{url: "about:version", wantErr: "url may be about:blank only: the other about: pages are the browser's own"},
		{url: "javascript:alert(1)", wantErr: "url must be an http, https or data URL, or about:blank"},
	}
	for _, tt := range tests {
		status, body := c.mustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: tt.url})
		if tt.wantErr == "" {
			if status != http.StatusOK {
				t.Errorf("navigate %s = %d %s, want it loaded", tt.url, status, body)
			}
			continue
		}
		want(t, "status of "+tt.url, status, http.StatusBadRequest)
		e := decodeError(t, body)
		want(t, "code of "+tt.url, e.Code, rpc.CodeBadRequest)
		want(t, "message of "+tt.url, e.Message, tt.wantErr)
	}
}
