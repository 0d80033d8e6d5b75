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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// TestTracedCalls: a server with a TracerProvider makes a span of each
// operation call its token admits, the child of the caller's traceparent,
// named for the route; health checks, the CDP proxy, unknown paths and
// refused tokens make none. The server has no browser: operations answer
// 503 BROWSER_STARTING, which marks their span failed.
func TestTracedCalls(t *testing.T) {
	const (
		token       = "runner-token-1"
		callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		callerSpan  = "00f067aa0ba902b7"
		actionID    = "6f0c1d0e-61a4-4c55-9b1e-0d6c2f1b9a77"
	)
	tests := []struct {
		name         string
		method, path string
		body         string
		token        string
		want         string // the span's name; empty: none
		wantStatus   int
	}{
		{name: "act", method: http.MethodPost, path: rpc.ActPath, body: `{"input": "click the button"}`, token: token, want: "POST /v1/act", wantStatus: http.StatusServiceUnavailable},
		{name: "extract", method: http.MethodPost, path: rpc.ExtractPath, body: `{}`, token: token, want: "POST /v1/extract", wantStatus: http.StatusServiceUnavailable},
		{name: "a batch", method: http.MethodPost, path: rpc.BatchPath, body: `{"source": "async () => 1"}`, token: token, want: "POST /v1/batch", wantStatus: http.StatusServiceUnavailable},
		{name: "an agent task", method: http.MethodGet, path: rpc.AgentTaskPath("8d2e0c7a-1b5f-4f0e-9f43-4b7a1f3c9e21"), token: token, want: "GET /v1/agent/tasks/{uid}", wantStatus: http.StatusNotFound},
		{name: "a refused token", method: http.MethodPost, path: rpc.ActPath, body: `{"input": "x"}`, token: "wrong", wantStatus: http.StatusUnauthorized},
		{name: "health", method: http.MethodGet, path: rpc.HealthPath, wantStatus: http.StatusServiceUnavailable},
		{name: "an unknown path", method: http.MethodGet, path: "/v1/sessions/3f1c", token: token, wantStatus: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			s := NewServer(ServerOptions{Token: config.NewSecret(token), TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", rpc.ContentTypeJSON)
			if tt.token != "" {
				req.Header.Set("Authorization", rpc.AuthorizationScheme+" "+tt.token)
			}
			req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
			req.Header.Set(rpc.HeaderActionID, actionID)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.wantStatus, w.Body)
			}

			var got []string
			for _, sp := range rec.Ended() {
				got = append(got, sp.Name())
			}
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("spans (-want +got):\n%s", diff)
			}
			if tt.want == "" {
				return
			}
			sp := rec.Ended()[0]
			if sp.Parent().TraceID().String() != callerTrace || sp.Parent().SpanID().String() != callerSpan {
				t.Errorf("parent %v, want the caller's span %s of trace %s", sp.Parent(), callerSpan, callerTrace)
			}
			attrs := map[string]any{}
			for _, kv := range sp.Attributes() {
				attrs[string(kv.Key)] = kv.Value.AsInterface()
			}
			if attrs["browserfleet.action_id"] != actionID {
				t.Errorf("browserfleet.action_id = %v, want the caller's", attrs["browserfleet.action_id"])
			}
			_, route, _ := strings.Cut(tt.want, " ")
			if attrs["http.route"] != route {
				t.Errorf("http.route = %v, want %q", attrs["http.route"], route)
			}
			if failed := sp.Status().Code == codes.Error; failed != (tt.wantStatus >= 500) {
				t.Errorf("span status %v for a %d", sp.Status(), tt.wantStatus)
			}
			for k, v := range attrs {
				if s, ok := v.(string); ok && strings.Contains(s, token) {
					t.Errorf("attribute %s holds the runner token", k)
				}
			}
		})
	}
}
