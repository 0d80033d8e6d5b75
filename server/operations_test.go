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

package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/rpc"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// TestFailOperation: the runner's codes reach the caller with the statuses
// docs/api.md gives.
func TestFailOperation(t *testing.T) {
	tests := []struct {
		err        error
		status     int
		body       string
		retryAfter string
	}{
		{
			err:        rpc.Errorf(rpc.CodeSessionBusy, "the session is busy"),
			status:     http.StatusTooManyRequests,
			body:       `{"success":false,"error":"the session is busy","code":"SESSION_BUSY"}`,
			retryAfter: "1",
		},
		{
			err:    rpc.Errorf(rpc.CodeEgressDenied, "the egress policy refuses connections to 10.0.0.1 (a private address)"),
			status: http.StatusForbidden,
			body:   `{"success":false,"error":"the egress policy refuses connections to 10.0.0.1 (a private address)","code":"EGRESS_DENIED"}`,
		},
		{
			err:    rpc.Errorf(rpc.CodeBudgetExceeded, "the project team-a has spent its model gateway budget"),
			status: http.StatusTooManyRequests,
			body:   `{"success":false,"error":"the project team-a has spent its model gateway budget","code":"BUDGET_EXCEEDED"}`,
		},
		{
			err:    rpc.Errorf(rpc.CodeBrowserStarting, "the browser is starting"),
			status: http.StatusConflict,
			body:   `{"success":false,"error":"the browser is starting","code":"SESSION_NOT_READY"}`,
		},
	}
	s := &server{log: logr.Discard()}
	for _, tt := range tests {
		t.Run(string(rpc.CodeOf(tt.err)), func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.failOperation(context.Background(), plain{w: rec}, &v1alpha1.BrowserSession{}, "act", tt.err)
			if rec.Code != tt.status {
				t.Errorf("status = %d, want %d", rec.Code, tt.status)
			}
			if diff := cmp.Diff(tt.body, strings.TrimSpace(rec.Body.String())); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if got := rec.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
			}
		})
	}
}

// TestForward: the call's cache setting reaches the runner in the request's
// options.cache (of act, observe, extract only), and the runner's cache
// report comes back with the result.
func TestForward(t *testing.T) {
	hit := &cache.Report{Status: cache.StatusHit, Count: 2, Threshold: 1, TokensSaved: cache.Usage{InputTokens: 9, OutputTokens: 1}.Saved()}
	var (
		mu   sync.Mutex
		seen any // options.cache of the last request, as sent
	)
	runner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Options map[string]any `json:"options"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen = req.Options["cache"]
		mu.Unlock()
		w.Header().Set("Content-Type", rpc.ContentTypeJSON)
		switch r.URL.Path {
		case rpc.ObservePath:
			// A runner that says null for no actions.
			_ = json.NewEncoder(w).Encode(rpc.Result[[]rpc.Action]{Cache: hit})
		case rpc.NavigatePath:
			_ = json.NewEncoder(w).Encode(rpc.Result[rpc.NavigateResult]{Result: rpc.NavigateResult{URL: "about:blank", OK: true}})
		default:
			_ = json.NewEncoder(w).Encode(rpc.Result[json.RawMessage]{Result: json.RawMessage(`{"a":1}`), Usage: rpc.Usage{InputTokens: 3}, Cache: hit})
		}
	}))
	defer runner.Close()
	c := rpc.NewClient(runner.URL, "token", runner.Client())

	tests := []struct {
		name    string
		call    func(context.Context, *rpc.Client, *cache.Setting, func(rpc.LogLine)) (opResult, error)
		setting *cache.Setting
		sent    any // options.cache as the runner got it
		want    opResult
	}{
		{
			name:    "act with a setting",
			call:    forward(rpc.ActRequest{Input: rpc.ActInput{Instruction: "x"}}, (*rpc.Client).Act, func(q *rpc.ActRequest, s *cache.Setting) { q.Options.Cache = s }),
			setting: &cache.Setting{Threshold: 3},
			sent:    map[string]any{"threshold": float64(3)},
			want:    opResult{result: rpc.ActResult{}, usage: rpc.Usage{InputTokens: 3}, cache: hit},
		},
		{
			name: "act off",
			call: forward(rpc.ActRequest{Input: rpc.ActInput{Instruction: "x"}}, (*rpc.Client).Act, func(q *rpc.ActRequest, s *cache.Setting) { q.Options.Cache = s }),
			want: opResult{result: rpc.ActResult{}, usage: rpc.Usage{InputTokens: 3}, cache: hit},
		},
		{
			name:    "observe: no actions are []",
			call:    forward(rpc.ObserveRequest{}, (*rpc.Client).Observe, func(q *rpc.ObserveRequest, s *cache.Setting) { q.Options.Cache = s }),
			setting: &cache.Setting{Threshold: 1},
			sent:    map[string]any{"threshold": float64(1)},
			want:    opResult{result: []rpc.Action{}, cache: hit},
		},
		{
			name:    "extract",
			call:    forward(rpc.ExtractRequest{}, (*rpc.Client).Extract, func(q *rpc.ExtractRequest, s *cache.Setting) { q.Options.Cache = s }),
			setting: &cache.Setting{Threshold: 2},
			sent:    map[string]any{"threshold": float64(2)},
			want:    opResult{result: json.RawMessage(`{"a":1}`), usage: rpc.Usage{InputTokens: 3}, cache: hit},
		},
		{
			name:    "navigate has no cache",
			call:    forward(rpc.NavigateRequest{URL: "about:blank"}, (*rpc.Client).Navigate, nil),
			setting: &cache.Setting{Threshold: 2},
			want:    opResult{result: rpc.NavigateResult{URL: "about:blank", OK: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			got, err := tt.call(context.Background(), c, tt.setting, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(opResult{})); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tt.sent, seen); diff != "" {
				t.Errorf("options.cache sent to the runner (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeCachedOperation: a refused x-cache-bypass header is answered
// with the body's and the stream header's issues, in one 400.
func TestDecodeCachedOperation(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		headers map[string]string
		status  int
		want    string // the reply's body; "" when accepted
	}{
		{name: "accepted", body: `{"input":"x","options":{"cache":true}}`, headers: map[string]string{"x-cache-bypass": "false"}, status: http.StatusOK},
		{name: "bypass of another value", body: `{"input":"x"}`, headers: map[string]string{"x-cache-bypass": "yes"}, status: http.StatusBadRequest,
			want: `{"success":false,"error":"invalid request body: x-cache-bypass: header must be \"true\" or \"false\"","code":"INVALID_REQUEST","issues":[{"path":"x-cache-bypass","message":"header must be \"true\" or \"false\""}]}`},
		{name: "every issue at once", body: `{"options":{"cache":{"threshold":0}}}`, headers: map[string]string{"x-cache-bypass": "1", "x-stream-response": "maybe"}, status: http.StatusBadRequest,
			want: `{"success":false,"error":"invalid request body: input: is required; options.cache.threshold: must be at least 1; x-stream-response: header must be \"true\" or \"false\"; x-cache-bypass: header must be \"true\" or \"false\"","code":"INVALID_REQUEST","issues":[{"path":"input","message":"is required"},{"path":"options.cache.threshold","message":"must be at least 1"},{"path":"x-stream-response","message":"header must be \"true\" or \"false\""},{"path":"x-cache-bypass","message":"header must be \"true\" or \"false\""}]}`},
	}
	s := &server{log: logr.Discard(), opts: Options{MaxBodyBytes: DefaultMaxBodyBytes, BodyReadTimeout: DefaultBodyReadTimeout}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/v1/sessions/s/act", strings.NewReader(tt.body))
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			req, _, ok := decodeCachedOperation(s, rec, r, serverv1.DecodeAct, func(b *serverv1.ActBody) *bool { return b.StreamResponse })
			if ok != (tt.status == http.StatusOK) || ok != (req != nil) {
				t.Fatalf("ok = %v, body %v; want status %d", ok, req, tt.status)
			}
			if rec.Code != tt.status {
				t.Errorf("status = %d, want %d", rec.Code, tt.status)
			}
			if diff := cmp.Diff(tt.want, strings.TrimSpace(rec.Body.String())); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}
