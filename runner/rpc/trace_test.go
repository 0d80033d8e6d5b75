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
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestCallsCarryTraceContext: every runner call a Client builds carries
// the W3C trace context of its ctx's span, sampled or not, and none when
// ctx has no span.
func TestCallsCarryTraceContext(t *testing.T) {
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	state, _ := trace.ParseTraceState("vendor=abc")
	span := func(flags trace.TraceFlags, ts trace.TraceState) context.Context {
		return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: traceID, SpanID: spanID, TraceFlags: flags, TraceState: ts,
		}))
	}
	tests := []struct {
		name                  string
		ctx                   context.Context
		wantParent, wantState string
	}{
		{name: "a sampled span", ctx: span(trace.FlagsSampled, trace.TraceState{}), wantParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{name: "an unsampled span: the runner records nothing either", ctx: span(0, trace.TraceState{}), wantParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"},
		{name: "a trace state", ctx: span(trace.FlagsSampled, state), wantParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", wantState: "vendor=abc"},
		{name: "no span", ctx: context.Background()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan http.Header, 8)
			srv := httptest.NewServer(&fakeRunner{t: t, op: func(w http.ResponseWriter, r *http.Request, _ bool) {
				got <- r.Header.Clone()
				writeTestJSON(w, http.StatusOK, AgentTaskState{UID: "u1", Phase: "Running"})
			}})
			defer srv.Close()
			c := NewClient(srv.URL, testToken, nil)
			// Two kinds of calls: an operation and an agent task's.
			_, _ = c.Navigate(tt.ctx, NavigateRequest{URL: "https://example.com/"}, nil)
			_, _ = c.AgentTask(tt.ctx, "u1")
			for range 2 {
				h := <-got
				if p := h.Get("traceparent"); p != tt.wantParent {
					t.Errorf("traceparent = %q, want %q", p, tt.wantParent)
				}
				if s := h.Get("tracestate"); s != tt.wantState {
					t.Errorf("tracestate = %q, want %q", s, tt.wantState)
				}
			}
		})
	}
}
