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
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// newTestServer serves the runner RPC over b with engine.
func newTestServer(t *testing.T, b *chromium.Browser, engine operations.Interface) (*Server, runnertest.Client, *runnertest.SyncBuffer) {
	t.Helper()
	log, buf := runnertest.Logger(t)
	s := NewServer(ServerOptions{Token: config.NewSecret(runnertest.Token), Operations: engine, Logger: log})
	if b != nil {
		s.SetBrowser(b)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, runnertest.Client{Base: hs.URL, Token: runnertest.Token}, buf
}

const buttonsPage = `<!doctype html><title>buttons</title>
<script>window.clicks = [];</script>
<button id="a" onclick="clicks.push('a')">A</button>
<button id="b" onclick="clicks.push('b')">B</button>
<button id="c" onclick="clicks.push('c')">C</button>`

func TestAuth(t *testing.T) {
	_, c, _ := newTestServer(t, browsertest.Shared(t), nil)
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
		{"token of another length", rpc.ActPath, http.MethodPost, "Bearer " + runnertest.Token + "x", 401, `{"error":"invalid runner token","code":"UNAUTHORIZED"}`},
		{"other scheme", rpc.ObservePath, http.MethodPost, "Basic " + runnertest.Token, 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"empty bearer", rpc.ExtractPath, http.MethodPost, "Bearer ", 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"cdp without token", rpc.CDPPath, http.MethodGet, "", 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"unknown path without token", "/v1/nope", http.MethodGet, "", 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"unknown path with token", "/v1/nope", http.MethodGet, "Bearer " + runnertest.Token, 404, `{"error":"no such path","code":"NOT_FOUND"}`},
		{"cdp with token but no upgrade", rpc.CDPPath, http.MethodGet, "bearer " + runnertest.Token, 400, `{"error":"/cdp is a WebSocket endpoint","code":"BAD_REQUEST"}`},
		{"health needs no token", rpc.HealthPath, http.MethodGet, "", 200, `{"status":"ready"}`},
		{"health ignores a wrong token", rpc.HealthPath, http.MethodGet, "Bearer wrong", 200, `{"status":"ready"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, c.Base+tt.path, strings.NewReader(`{"url":"about:blank"}`))
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			runnertest.Want(t, "status", resp.StatusCode, tt.wantStatus)
			if diff := cmp.Diff(tt.wantBody, strings.TrimSpace(string(body))); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
	// And the token works.
	status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: "about:blank"})
	runnertest.Want(t, "status with the token", status, 200)
	runnertest.WantContains(t, "body", string(body), `"url":"about:blank"`)
}

func TestBadRequests(t *testing.T) {
	_, c, _ := newTestServer(t, browsertest.Shared(t), nil)
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
			req, _ := http.NewRequest(http.MethodPost, c.Base+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+runnertest.Token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			e := runnertest.DecodeError(t, body)
			runnertest.Want(t, "code", e.Code, tt.wantCode)
			runnertest.Want(t, "status", resp.StatusCode, rpc.HTTPStatus(tt.wantCode))
		})
	}
	// A method the path does not take.
	resp, err := http.Get(c.Base + rpc.ActPath + "?x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	runnertest.Want(t, "status of GET /v1/act without a token", resp.StatusCode, 401)
}

func TestDispatchToEngine(t *testing.T) {
	b := browsertest.Shared(t)
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(buttonsPage))
	engine := browsertest.NewOperations()
	_, c, _ := newTestServer(t, b, engine)
	c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: page.URL})

	// act with an instruction, then with an action object.
	status, body := c.MustCall(t, rpc.ActPath, browsertest.Act("click #a"))
	runnertest.Want(t, "act status", status, 200)
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
	status, _ = c.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#b", Method: "click"}}})
	runnertest.Want(t, "act with an action status", status, 200)
	var clicks []string
	browsertest.Evaluate(t, b, "window.clicks", &clicks)
	if diff := cmp.Diff([]string{"a", "b"}, clicks); diff != "" {
		t.Errorf("clicks on the page (-want +got):\n%s", diff)
	}

	status, body = c.MustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "buttons"})
	runnertest.Want(t, "observe status", status, 200)
	var obs rpc.Result[[]rpc.Action]
	if err := json.Unmarshal(body, &obs); err != nil {
		t.Fatal(err)
	}
	runnertest.Want(t, "observed actions", len(obs.Result), 3)

	status, body = c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "the title"})
	runnertest.Want(t, "extract status", status, 200)
	if diff := cmp.Diff(`{"result":{"extraction":"buttons"},"usage":{"inputTokens":20,"outputTokens":5,"reasoningTokens":0,"cachedInputTokens":0,"inferenceTimeMs":0}}`, strings.TrimSpace(string(body))); diff != "" {
		t.Errorf("extract body (-want +got):\n%s", diff)
	}

	// An engine error that is not an *rpc.Error is ENGINE_ERROR.
	status, body = c.MustCall(t, rpc.ActPath, browsertest.Act("fail"))
	runnertest.Want(t, "failing act status", status, 500)
	e := runnertest.DecodeError(t, body)
	runnertest.Want(t, "failing act code", e.Code, rpc.CodeEngineError)
	runnertest.Want(t, "failing act message", e.Message, "the element is not there")
}

func TestOperationsRunInArrivalOrder(t *testing.T) {
	b := browsertest.Shared(t)
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(buttonsPage))
	engine := browsertest.NewOperations()
	s, c, _ := newTestServer(t, b, engine)
	c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: page.URL})

	type outcome struct {
		name   string
		status int
		body   []byte
	}
	results := make(chan outcome, 3)
	send := func(name, instruction string) {
		go func() {
			status, body, err := c.Call(context.Background(), rpc.ActPath, browsertest.Act(instruction))
			if err != nil {
				body = []byte(err.Error())
			}
			results <- outcome{name, status, body}
		}()
	}
	// first holds the page; second and third arrive while it does, in
	// that order, and must run after it, in that order.
	send("first", "hold first")
	engine.WaitStarted(t, "hold first")
	send("second", "click #c")
	runnertest.WaitFor(t, "the second call to queue", func() bool { return s.queue.pending() == 1 })
	send("third", "click #a")
	runnertest.WaitFor(t, "the third call to queue", func() bool { return s.queue.pending() == 2 })
	if h := engine.History(); len(h) != 1 {
		t.Fatalf("while the first call holds the page, the engine ran %v", h)
	}
	engine.Release("first")
	for range 3 {
		r := <-results
		if r.status != 200 {
			t.Errorf("%s call: %d %s", r.name, r.status, r.body)
		}
	}
	wantHistory := []string{"start hold first", "end hold first", "start click #c", "end click #c", "start click #a", "end click #a"}
	if diff := cmp.Diff(wantHistory, engine.History()); diff != "" {
		t.Errorf("engine history (-want +got):\n%s", diff)
	}
	var clicks []string
	browsertest.Evaluate(t, b, "window.clicks", &clicks)
	if diff := cmp.Diff([]string{"c", "a"}, clicks); diff != "" {
		t.Errorf("clicks on the page (-want +got):\n%s", diff)
	}
}

// TestQueueIsBounded: with as many operations waiting as the runner lets
// wait, the next one is refused at once with 429 SESSION_BUSY, plain or
// streamed, and the waiting ones still run.
func TestQueueIsBounded(t *testing.T) {
	b := browsertest.Shared(t)
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(buttonsPage))
	engine := browsertest.NewOperations()
	log, _ := runnertest.Logger(t)
	s := NewServer(ServerOptions{Token: config.NewSecret(runnertest.Token), Operations: engine, Logger: log, MaxQueuedOperations: 2})
	s.SetBrowser(b)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	c := runnertest.Client{Base: hs.URL, Token: runnertest.Token}
	c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: page.URL})

	statuses := make(chan int, 3)
	send := func(instruction string) {
		go func() {
			status, _, err := c.Call(context.Background(), rpc.ActPath, browsertest.Act(instruction))
			if err != nil {
				t.Error(err)
			}
			statuses <- status
		}()
	}
	send("hold first")
	engine.WaitStarted(t, "hold first")
	send("click #a")
	runnertest.WaitFor(t, "the second call to queue", func() bool { return s.queue.pending() == 1 })
	send("click #b")
	runnertest.WaitFor(t, "the third call to queue", func() bool { return s.queue.pending() == 2 })

	status, body := c.MustCall(t, rpc.ActPath, browsertest.Act("click #c"))
	runnertest.Want(t, "status beyond the bound", status, http.StatusTooManyRequests)
	e := runnertest.DecodeError(t, body)
	runnertest.Want(t, "code beyond the bound", e.Code, rpc.CodeSessionBusy)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	status, _, _, err := c.Stream(ctx, rpc.ActPath, browsertest.Act("click #c"))
	if err != nil {
		t.Fatal(err)
	}
	runnertest.Want(t, "streamed status beyond the bound", status, http.StatusTooManyRequests)
	runnertest.Want(t, "waiting", s.queue.pending(), 2)

	engine.Release("first")
	for range 3 {
		if st := <-statuses; st != http.StatusOK {
			t.Errorf("a call within the bound answered %d", st)
		}
	}
}

func TestStreaming(t *testing.T) {
	b := browsertest.Shared(t)
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(buttonsPage))
	_, c, _ := newTestServer(t, b, browsertest.NewOperations())
	c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: page.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("result", func(t *testing.T) {
		status, header, lines, err := c.Stream(ctx, rpc.ActPath, browsertest.Act("click #b"))
		if err != nil {
			t.Fatal(err)
		}
		runnertest.Want(t, "status", status, 200)
		runnertest.Want(t, "content type", header.Get("Content-Type"), rpc.ContentTypeNDJSON)
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
		runnertest.Want(t, "result message", res.Result.Message, "clicked #b")
		runnertest.Want(t, "usage", res.Usage.InputTokens, 100)
	})
	t.Run("error", func(t *testing.T) {
		status, _, lines, err := c.Stream(ctx, rpc.ActPath, browsertest.Act("fail"))
		if err != nil {
			t.Fatal(err)
		}
		runnertest.Want(t, "status", status, 200)
		if len(lines) != 2 || lines[0].Type != rpc.StreamLog || lines[1].Type != rpc.StreamError {
			t.Fatalf("lines = %+v, want a log line then an error line", lines)
		}
		var e rpc.Error
		if err := json.Unmarshal(lines[1].Data, &e); err != nil {
			t.Fatal(err)
		}
		runnertest.Want(t, "code", e.Code, rpc.CodeEngineError)
	})
	t.Run("refused before it starts", func(t *testing.T) {
		// A bad body is answered with its status, not streamed.
		status, header, lines, err := c.Stream(ctx, rpc.NavigatePath, rpc.NavigateRequest{})
		if err != nil {
			t.Fatal(err)
		}
		runnertest.Want(t, "status", status, 400)
		runnertest.Want(t, "content type", header.Get("Content-Type"), rpc.ContentTypeJSON)
		runnertest.Want(t, "lines", len(lines), 1) // the JSON error body, one line
	})
}

func TestCallerDisconnectCancelsOperation(t *testing.T) {
	b := browsertest.Shared(t)
	engine := browsertest.NewOperations()
	s, c, _ := newTestServer(t, b, engine)

	ctx, cancel := context.WithCancel(rpc.WithActionID(context.Background(), "abandoned-1"))
	done := make(chan error, 1)
	go func() {
		_, err := rpc.NewClient(c.Base, c.Token, nil).Act(ctx, browsertest.Act("hold forever"), nil)
		done <- err
	}()
	engine.WaitStarted(t, "hold forever")
	cancel()
	select {
	case cause := <-engine.Canceled:
		runnertest.Want(t, "cause the engine saw", rpc.CodeOf(cause), rpc.CodeCanceled)
	case <-time.After(60 * time.Second):
		t.Fatal("the engine did not see the operation's context end")
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the client's call returned %v, want context.Canceled", err)
	}
	// The page is free again.
	runnertest.WaitFor(t, "the queue to be free", func() bool { return s.queue.ahead() == 0 })
	status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: "about:blank"})
	runnertest.Want(t, "next call status", status, 200)
	_ = body
	// The abandoned call is in the history, as cancelled.
	var got *replay.Action
	for _, p := range s.History().Replay().Pages {
		for _, a := range p.Actions {
			if a.ActionID == "abandoned-1" {
				got = &a
			}
		}
	}
	if got == nil {
		t.Fatal("the abandoned call is not in the history")
	}
	runnertest.WantContains(t, "its result", string(got.Result), `"code":"CANCELED"`)
}

func TestNavigate(t *testing.T) {
	b := browsertest.Shared(t)
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
	page := runnertest.NewPageServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		status, body := c.MustCall(t, rpc.NavigatePath, req)
		if status != 200 {
			return status, rpc.NavigateResult{}, runnertest.DecodeError(t, body)
		}
		var res rpc.Result[rpc.NavigateResult]
		if err := json.Unmarshal(body, &res); err != nil {
			t.Fatal(err)
		}
		return status, res.Result, nil
	}
	location := func(t *testing.T) string {
		var href string
		browsertest.Evaluate(t, b, "location.href", &href)
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
		runnertest.Want(t, "location", location(t), page.URL+"/first")
	})
	t.Run("redirects and errors", func(t *testing.T) {
		_, res, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/redirect"})
		if e != nil {
			t.Fatal(e)
		}
		runnertest.Want(t, "url after the redirect", res.URL, page.URL+"/landing")
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
		runnertest.Want(t, "unreachable status", status, 502)
		if e != nil {
			runnertest.Want(t, "unreachable code", e.Code, rpc.CodeNavigationFailed)
			runnertest.WantContains(t, "unreachable message", e.Message, "connection refused")
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
		runnertest.Want(t, "status", status, 502)
		if e == nil {
			t.Fatal("no error")
		}
		runnertest.Want(t, "code", e.Code, rpc.CodeNavigationFailed)
		if strings.Contains(e.Message, "pw-5ecret") {
			t.Errorf("message %q carries the URL's password", e.Message)
		}
	})
	t.Run("frameId", func(t *testing.T) {
		_, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/main", FrameID: string(b.TargetID())})
		if e != nil {
			t.Fatalf("the main frame's id: %v", e)
		}
		status, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/sub", FrameID: "F00D"})
		runnertest.Want(t, "status for another frame", status, 400)
		if e != nil {
			runnertest.Want(t, "code", e.Code, rpc.CodeBadRequest)
		}
	})
	t.Run("referer", func(t *testing.T) {
		const referer = "https://referrer.example/search?q=browserfleet"
		if _, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/referred", Options: rpc.NavigateOptions{Referer: referer}}); e != nil {
			t.Fatal(e)
		}
		got := page.Seen(func(r *http.Request) bool { return r.URL.Path == "/referred" })
		if len(got) != 1 {
			t.Fatalf("the server saw %d requests for /referred", len(got))
		}
		runnertest.Want(t, "Referer", got[0].Header.Get("Referer"), referer)
	})
	t.Run("waitUntil domcontentloaded returns before images load", func(t *testing.T) {
		defer close(gate("/slow/dcl"))
		_, res, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/img?gate=dcl", Options: rpc.NavigateOptions{WaitUntil: rpc.WaitUntilDOMContentLoaded}})
		if e != nil {
			t.Fatal(e)
		}
		runnertest.Want(t, "status", res.Status, 200)
	})
	t.Run("waitUntil load waits for images", func(t *testing.T) {
		done := make(chan *rpc.Error, 1)
		go func() {
			_, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/img?gate=load", Options: rpc.NavigateOptions{WaitUntil: rpc.WaitUntilLoad}})
			done <- e
		}()
		runnertest.WaitFor(t, "the image request", func() bool {
			return len(page.Seen(func(r *http.Request) bool { return r.URL.Path == "/slow/load" })) > 0
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
		runnertest.WaitFor(t, "the fetch after load", func() bool {
			return len(page.Seen(func(r *http.Request) bool { return r.URL.Path == "/slow/idle" })) > 0
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
		browsertest.Evaluate(t, b, "document.title", &title)
		runnertest.Want(t, "title set by the fetch", title, "late")
	})
	t.Run("timeout", func(t *testing.T) {
		timeout := 1000.0
		status, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/never", Options: rpc.NavigateOptions{Timeout: &timeout}})
		runnertest.Want(t, "status", status, 504)
		if e == nil {
			t.Fatal("no error")
		}
		runnertest.Want(t, "code", e.Code, rpc.CodeTimeout)
		runnertest.WantContains(t, "message", e.Message, "navigate did not finish within 1s")
		// The page is usable right after.
		if _, _, e := navigateTo(t, rpc.NavigateRequest{URL: page.URL + "/after"}); e != nil {
			t.Fatalf("navigate after a timeout: %v", e)
		}
		runnertest.Want(t, "location", location(t), page.URL+"/after")
	})
}

func TestCDPProxy(t *testing.T) {
	b := browsertest.Shared(t)
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(`<!doctype html><title>seen through the cdp proxy</title>`))
	_, c, _ := newTestServer(t, b, nil)

	// A session whose cdpUrl is this runner's /cdp, with the runner token in
	// its cdpHeaders, drives the browser through the proxy: its header
	// bridge adds the Authorization header chromedp cannot send.
	cdpURL := strings.Replace(c.Base, "http://", "ws://", 1) + rpc.CDPPath
	other := browsertest.Start(t, runnertest.AttachConfig(cdpURL, map[string]string{"Authorization": "Bearer " + runnertest.Token}, nil))
	browsertest.MustNavigate(t, other, page.URL)
	var title string
	browsertest.Evaluate(t, other, "document.title", &title)
	runnertest.Want(t, "title", title, "seen through the cdp proxy")

	// The runner's own tab is untouched by the other client.
	var href string
	browsertest.Evaluate(t, b, "location.href", &href)
	if href == page.URL+"/" || href == page.URL {
		t.Errorf("the runner's tab moved to %s", href)
	}
}

// The schemes navigate takes and refuses (rpc.NavigateURLProblem, shared
// with the API), through the RPC.
func TestNavigateSchemes(t *testing.T) {
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(`<!doctype html><title>plain</title>`))
	tlsSrv := httptest.NewTLSServer(runnertest.HTMLHandler(`<!doctype html><title>secure</title>`))
	t.Cleanup(tlsSrv.Close)
	b := browsertest.Start(t, runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) { lo.IgnoreHTTPSErrors = ptr.To(true) })))
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
		status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: tt.url})
		if tt.wantErr == "" {
			if status != http.StatusOK {
				t.Errorf("navigate %s = %d %s, want it loaded", tt.url, status, body)
			}
			continue
		}
		runnertest.Want(t, "status of "+tt.url, status, http.StatusBadRequest)
		e := runnertest.DecodeError(t, body)
		runnertest.Want(t, "code of "+tt.url, e.Code, rpc.CodeBadRequest)
		runnertest.Want(t, "message of "+tt.url, e.Message, tt.wantErr)
	}
}
