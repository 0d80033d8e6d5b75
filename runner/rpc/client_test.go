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

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testToken = "s3cret-runner-token"

// fakeRunner mimics the runner's wire: the token check, plain JSON or NDJSON
// as Accept asks, and error bodies. Each test gives the operation's
// behaviour as op.
type fakeRunner struct {
	t  *testing.T
	op func(w http.ResponseWriter, r *http.Request, stream bool)
}

func (f *fakeRunner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == HealthPath {
		f.op(w, r, false)
		return
	}
	if r.Header.Get("Authorization") != AuthorizationScheme+" "+testToken {
		writeTestJSON(w, http.StatusUnauthorized, Errorf(CodeUnauthorized, "invalid runner token"))
		return
	}
	if ct := r.Header.Get("Content-Type"); r.Method == http.MethodPost && ct != ContentTypeJSON {
		f.t.Errorf("Content-Type = %q, want %q", ct, ContentTypeJSON)
	}
	f.op(w, r, r.Header.Get("Accept") == ContentTypeNDJSON)
}

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", ContentTypeJSON)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeLine writes one StreamLine and flushes it, as the runner does.
func writeLine(t *testing.T, w http.ResponseWriter, typ StreamLineType, data any) {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(StreamLine{Type: typ, Data: raw})
	_, _ = w.Write(append(line, '\n'))
	_ = http.NewResponseController(w).Flush()
}

func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", ContentTypeNDJSON)
	w.WriteHeader(http.StatusOK)
}

func newTestClient(t *testing.T, op func(w http.ResponseWriter, r *http.Request, stream bool)) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(&fakeRunner{t: t, op: op})
	t.Cleanup(srv.Close)
	return NewClient(srv.URL+"/", testToken, srv.Client()), srv
}

var (
	testLogs = []LogLine{
		{Category: "queue", Message: "1 operation ahead", Level: LogLevelInfo},
		{Category: "action", Message: "clicking", Level: LogLevelDebug, Auxiliary: map[string]AuxiliaryValue{"selector": {Value: "xpath=/html/body/button", Type: "string"}}},
	}
	testActResult = Result[ActResult]{
		Result: ActResult{Success: true, Message: "clicked", ActionDescription: "the button", Actions: []Action{{Selector: "xpath=/html/body/button", Description: "the button", Method: "click"}}},
		Usage:  Usage{InputTokens: 10, OutputTokens: 2},
	}
)

func TestClientAct(t *testing.T) {
	tests := []struct {
		name     string
		token    string
		stream   bool
		op       func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool)
		want     *Result[ActResult]
		wantLogs []LogLine
		wantErr  *Error
	}{
		{
			name:    "wrong token",
			token:   "wrong",
			op:      func(*testing.T, http.ResponseWriter, *http.Request, bool) {},
			wantErr: &Error{Code: CodeUnauthorized, Message: "invalid runner token"},
		},
		{
			name:  "plain result",
			token: testToken,
			op: func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool) {
				if stream {
					t.Error("a call without onLog asked for a stream")
				}
				writeTestJSON(w, http.StatusOK, testActResult)
			},
			want: &testActResult,
		},
		{
			name:  "plain coded error",
			token: testToken,
			op: func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool) {
				writeTestJSON(w, http.StatusServiceUnavailable, Errorf(CodeBrowserStarting, "the browser is starting"))
			},
			wantErr: &Error{Code: CodeBrowserStarting, Message: "the browser is starting"},
		},
		{
			name:   "coded error before a stream starts",
			token:  testToken,
			stream: true,
			op: func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool) {
				writeTestJSON(w, http.StatusBadRequest, Errorf(CodeBadRequest, "input is required"))
			},
			wantErr: &Error{Code: CodeBadRequest, Message: "input is required"},
		},
		{
			name:   "stream of logs then result",
			token:  testToken,
			stream: true,
			op: func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool) {
				if !stream {
					t.Error("a call with onLog did not ask for a stream")
				}
				startStream(w)
				for _, l := range testLogs {
					writeLine(t, w, StreamLog, l)
				}
				writeLine(t, w, StreamResult, testActResult)
			},
			want:     &testActResult,
			wantLogs: testLogs,
		},
		{
			name:   "stream skips unknown line types",
			token:  testToken,
			stream: true,
			op: func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool) {
				startStream(w)
				writeLine(t, w, "progress", map[string]int{"percent": 50})
				writeLine(t, w, StreamResult, testActResult)
			},
			want: &testActResult,
		},
		{
			name:   "stream ending in an error line",
			token:  testToken,
			stream: true,
			op: func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool) {
				startStream(w)
				writeLine(t, w, StreamLog, testLogs[0])
				writeLine(t, w, StreamError, Errorf(CodeTimeout, "act ran out of its 1000 ms"))
			},
			wantLogs: testLogs[:1],
			wantErr:  &Error{Code: CodeTimeout, Message: "act ran out of its 1000 ms"},
		},
		{
			name:   "runner closes mid-stream",
			token:  testToken,
			stream: true,
			op: func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool) {
				startStream(w)
				writeLine(t, w, StreamLog, testLogs[0])
				// Drops the connection without the final chunk, as a
				// runner whose pod dies does.
				panic(http.ErrAbortHandler)
			},
			wantLogs: testLogs[:1],
			wantErr:  &Error{Code: CodeRunnerUnreachable, Message: "runner /v1/act: the stream ended before the result"},
		},
		{
			name:   "stream that ends cleanly without a result",
			token:  testToken,
			stream: true,
			op: func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool) {
				startStream(w)
				writeLine(t, w, StreamLog, testLogs[0])
			},
			wantLogs: testLogs[:1],
			wantErr:  &Error{Code: CodeRunnerUnreachable, Message: "runner /v1/act: the stream ended before the result"},
		},
		{
			name:  "proxy error page without a code",
			token: testToken,
			op: func(t *testing.T, w http.ResponseWriter, r *http.Request, stream bool) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusBadGateway)
				_, _ = io.WriteString(w, "<html>502 Bad Gateway</html>")
			},
			wantErr: &Error{Code: CodeRunnerUnreachable, Message: "runner /v1/act answered 502 Bad Gateway without an error body"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&fakeRunner{t: t, op: func(w http.ResponseWriter, r *http.Request, stream bool) {
				if r.Method != http.MethodPost || r.URL.Path != ActPath {
					t.Errorf("request %s %s, want POST %s", r.Method, r.URL.Path, ActPath)
				}
				var body ActRequest
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Input.Instruction != "click the button" {
					t.Errorf("body = %+v, %v; want the instruction", body, err)
				}
				tt.op(t, w, r, stream)
			}})
			defer srv.Close()
			c := NewClient(srv.URL, tt.token, srv.Client())

			var logs []LogLine
			var onLog func(LogLine)
			if tt.stream {
				onLog = func(l LogLine) { logs = append(logs, l) }
			}
			got, err := c.Act(context.Background(), ActRequest{Input: ActInput{Instruction: "click the button"}}, onLog)

			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLogs, logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			var gotErr *Error
			if err != nil && !errors.As(err, &gotErr) {
				t.Fatalf("error %v (%T) is not an *rpc.Error", err, err)
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if err != nil && strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q carries the token", err)
			}
		})
	}
}

// TestClientOperations checks that each operation posts to its path and
// decodes its own result type, streamed and plain.
func TestClientOperations(t *testing.T) {
	results := map[string]any{
		ObservePath:  []Action{{Selector: "xpath=/html/body/a", Description: "a link"}},
		ExtractPath:  map[string]string{"extraction": "42"},
		NavigatePath: NavigateResult{URL: "https://example.com/", Status: 200, OK: true},
	}
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request, stream bool) {
		res, ok := results[r.URL.Path]
		if !ok {
			writeTestJSON(w, http.StatusNotFound, Errorf(CodeNotFound, "no such path"))
			return
		}
		body := Result[any]{Result: res}
		if !stream {
			writeTestJSON(w, http.StatusOK, body)
			return
		}
		startStream(w)
		writeLine(t, w, StreamLog, LogLine{Message: r.URL.Path})
		writeLine(t, w, StreamResult, body)
	})
	ctx := context.Background()

	for _, stream := range []bool{false, true} {
		var logs []string
		var onLog func(LogLine)
		if stream {
			onLog = func(l LogLine) { logs = append(logs, l.Message) }
		}
		obs, err := c.Observe(ctx, ObserveRequest{Instruction: "links"}, onLog)
		if err != nil {
			t.Fatalf("Observe (stream %v): %v", stream, err)
		}
		if diff := cmp.Diff(results[ObservePath], obs.Result); diff != "" {
			t.Errorf("Observe (stream %v) (-want +got):\n%s", stream, diff)
		}
		ext, err := c.Extract(ctx, ExtractRequest{Instruction: "the answer"}, onLog)
		if err != nil {
			t.Fatalf("Extract (stream %v): %v", stream, err)
		}
		if diff := cmp.Diff(`{"extraction":"42"}`, string(ext.Result)); diff != "" {
			t.Errorf("Extract (stream %v) (-want +got):\n%s", stream, diff)
		}
		nav, err := c.Navigate(ctx, NavigateRequest{URL: "https://example.com"}, onLog)
		if err != nil {
			t.Fatalf("Navigate (stream %v): %v", stream, err)
		}
		if diff := cmp.Diff(results[NavigatePath], nav.Result); diff != "" {
			t.Errorf("Navigate (stream %v) (-want +got):\n%s", stream, diff)
		}
		var wantLogs []string
		if stream {
			wantLogs = []string{ObservePath, ExtractPath, NavigatePath}
		}
		if diff := cmp.Diff(wantLogs, logs); diff != "" {
			t.Errorf("logs (stream %v) (-want +got):\n%s", stream, diff)
		}
	}
}

func TestClientCancel(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
	}{
		{name: "while waiting for a plain answer"},
		{name: "mid-stream", stream: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runnerSawCancel := make(chan struct{})
			c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request, stream bool) {
				// As the runner does: net/http notices a caller that
				// went away only once the body is read.
				_, _ = io.Copy(io.Discard, r.Body)
				if stream {
					startStream(w)
					writeLine(t, w, StreamLog, testLogs[0])
				}
				// The runner cancels its operation when its caller
				// goes away: the request's context says so.
				select {
				case <-r.Context().Done():
					close(runnerSawCancel)
				case <-time.After(10 * time.Second):
					t.Error("the runner never saw the cancellation")
				}
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var onLog func(LogLine)
			if tt.stream {
				// Cancels once the stream is under way.
				onLog = func(LogLine) { cancel() }
			} else {
				time.AfterFunc(50*time.Millisecond, cancel)
			}

			_, err := c.Act(ctx, ActRequest{Input: ActInput{Instruction: "wait"}}, onLog)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error = %v, want one wrapping context.Canceled", err)
			}
			if code := CodeOf(err); code != "" {
				t.Errorf("a cancelled call has code %q, want none: the caller cancelled, the runner did not fail", code)
			}
			select {
			case <-runnerSawCancel:
			case <-time.After(10 * time.Second):
				t.Fatal("the runner's request context was not cancelled")
			}
		})
	}
}

func TestClientUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	endpoint := srv.URL
	srv.Close() // nothing listens there any more

	c := NewClient(endpoint, testToken, nil)
	_, err := c.Navigate(context.Background(), NavigateRequest{URL: "https://example.com"}, nil)
	if got := CodeOf(err); got != CodeRunnerUnreachable {
		t.Fatalf("code = %q (error %v), want %q", got, err, CodeRunnerUnreachable)
	}
	var e *Error
	errors.As(err, &e)
	if diff := cmp.Diff("the runner at "+endpoint+" cannot be reached", e.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	// The network error stays in the chain for those who want the cause.
	var netErr interface{ Timeout() bool }
	if !errors.As(err, &netErr) {
		t.Errorf("error %v does not wrap the network error", err)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Errorf("error %q carries the token", err)
	}
	if _, err := c.Health(context.Background()); CodeOf(err) != CodeRunnerUnreachable {
		t.Errorf("Health: error %v, want code %q", err, CodeRunnerUnreachable)
	}
}

func TestClientHealth(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		want     *Health
		wantCode ErrorCode
	}{
		{name: "ready", status: http.StatusOK, body: `{"status":"ready"}`, want: &Health{Status: HealthReady}},
		{name: "starting", status: http.StatusServiceUnavailable, body: `{"status":"starting","reason":"the browser is starting"}`, want: &Health{Status: HealthStarting, Reason: "the browser is starting"}},
		{name: "proxy 503", status: http.StatusServiceUnavailable, body: `no healthy upstream`, wantCode: CodeRunnerUnreachable},
		{name: "coded error", status: http.StatusMethodNotAllowed, body: `{"error":"/healthz takes GET","code":"METHOD_NOT_ALLOWED"}`, wantCode: CodeMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request, _ bool) {
				if r.Method != http.MethodGet {
					t.Errorf("method %s, want GET", r.Method)
				}
				if h := r.Header.Get("Authorization"); h != "" {
					t.Errorf("Health sent Authorization %q; it needs no token", h)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			got, err := c.Health(context.Background())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
			if code := CodeOf(err); code != tt.wantCode {
				t.Errorf("code = %q (error %v), want %q", code, err, tt.wantCode)
			}
		})
	}
}
