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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// TestTraced: the /v1 operations get a span named for their route, a child
// of the caller's traceparent; the CDP WebSocket, probes, the OpenAPI
// document and what no route matches get none.
func TestTraced(t *testing.T) {
	const (
		callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		callerSpan  = "00f067aa0ba902b7"
	)
	tests := []struct {
		method, path string
		status       int
		want         string // the span's name; empty: no span
		wantError    bool
	}{
		{method: http.MethodPost, path: "/v1/sessions/start", status: http.StatusOK, want: "POST /v1/sessions/start"},
		{method: http.MethodPost, path: "/v1/sessions/3f1c6b2e/act", status: http.StatusOK, want: "POST /v1/sessions/{id}/act"},
		{method: http.MethodPost, path: "/v1/sessions/9a0d/extract", status: http.StatusGatewayTimeout, want: "POST /v1/sessions/{id}/extract", wantError: true},
		{method: http.MethodPost, path: "/v1/sessions/3f1c6b2e/observe", status: http.StatusConflict, want: "POST /v1/sessions/{id}/observe"},
		{method: http.MethodGet, path: "/v1/sessions", status: http.StatusOK, want: "GET /v1/sessions"},
		{method: http.MethodGet, path: "/v1/sessions/3f1c6b2e/replay", status: http.StatusOK, want: "GET /v1/sessions/{id}/replay"},
		{method: http.MethodGet, path: "/v1/sessions/3f1c6b2e/devtools/browser/c2lnbmVk", status: http.StatusSwitchingProtocols},
		{method: http.MethodGet, path: "/v1/openapi.json", status: http.StatusOK},
		{method: http.MethodGet, path: "/healthz", status: http.StatusOK},
		{method: http.MethodGet, path: "/readyz", status: http.StatusOK},
		{method: http.MethodGet, path: "/v1/sessions/3f1c6b2e/nope", status: http.StatusNotFound},
		{method: http.MethodDelete, path: "/v1/sessions/3f1c6b2e", status: http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			s := &server{mux: http.NewServeMux(), opts: Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}}
			// The served routes, each answering the case's status.
			for _, r := range serverv1.Routes() {
				s.mux.HandleFunc(r.Method+" "+r.Pattern, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tt.status) })
			}
			s.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tt.status) })
			req := httptest.NewRequest(tt.method, tt.path, nil)
			req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
			w := httptest.NewRecorder()
			s.traced(s.mux).ServeHTTP(w, req)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: the handler did not run", w.Code, tt.status)
			}

			ended := rec.Ended()
			var got []string
			for _, sp := range ended {
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
			sp := ended[0]
			if sp.Parent().TraceID().String() != callerTrace || sp.Parent().SpanID().String() != callerSpan || !sp.Parent().IsRemote() {
				t.Errorf("parent %v, want the caller's span %s of trace %s", sp.Parent(), callerSpan, callerTrace)
			}
			if gotErr := sp.Status().Code == codes.Error; gotErr != tt.wantError {
				t.Errorf("status %v, want an error: %v", sp.Status(), tt.wantError)
			}
			attrs := map[string]any{}
			for _, kv := range sp.Attributes() {
				attrs[string(kv.Key)] = kv.Value.AsInterface()
			}
			_, route, _ := strings.Cut(tt.want, " ")
			if attrs["http.route"] != route {
				t.Errorf("http.route = %v, want %q", attrs["http.route"], route)
			}
			if attrs["http.response.status_code"] != int64(tt.status) {
				t.Errorf("http.response.status_code = %v, want %d", attrs["http.response.status_code"], tt.status)
			}
		})
	}
}

// TestTracedOff: without a TracerProvider the handler is the mux itself.
func TestTracedOff(t *testing.T) {
	s := &server{mux: http.NewServeMux()}
	if h := s.traced(s.mux); h != http.Handler(s.mux) {
		t.Errorf("traced without a provider wraps the handler: %T", h)
	}
}
