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

package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond, true},
		{"zero", map[string]string{"Retry-After": "0"}, 0, true},
		{"milliseconds win", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, 1500 * time.Millisecond, true},
		{"bad milliseconds fall back", map[string]string{"Retry-After-Ms": "soon", "Retry-After": "2"}, 2 * time.Second, true},
		{"HTTP date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"past HTTP date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"huge", map[string]string{"Retry-After": "1e300"}, 24 * time.Hour, true},
		{"negative", map[string]string{"Retry-After": "-5"}, 0, false},
		{"garbage", map[string]string{"Retry-After": "later"}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("retryAfter = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	base := 500 * time.Millisecond
	for attempt, nominal := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		for range 20 {
			// Jitter takes off up to a quarter, never adds.
			if got := backoff(base, attempt); got > nominal || got < nominal*3/4 {
				t.Errorf("backoff(%v, %d) = %v, want within [%v, %v]", base, attempt, got, nominal*3/4, nominal)
			}
		}
	}
	if got := backoff(base, 1000); got > maxBackoff {
		t.Errorf("backoff(%v, 1000) = %v, want at most %v", base, got, maxBackoff)
	}
}

// scriptedHandler answers with the statuses of script in turn, and records
// the bodies it received.
type scriptedHandler struct {
	mu     sync.Mutex
	script []int
	bodies []string
	header http.Header
}

func (h *scriptedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, string(b))
	status := http.StatusOK
	if len(h.script) > 0 {
		status, h.script = h.script[0], h.script[1:]
	}
	h.mu.Unlock()
	for k, v := range h.header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "answer")
}

func TestRetryTransport(t *testing.T) {
	tests := []struct {
		name       string
		script     []int
		header     http.Header
		maxRetries int
		timeout    time.Duration
		wantStatus int
		wantCalls  int
	}{
		{"success", nil, nil, 2, 0, 200, 1},
		{"429 then success", []int{429}, nil, 2, 0, 200, 2},
		{"5xx then success", []int{500, 502, 503}, nil, 3, 0, 200, 4},
		{"retries exhausted", []int{500, 500, 500, 500}, nil, 2, 0, 500, 3},
		{"no retries", []int{503}, nil, 0, 0, 503, 1},
		{"client errors not retried", []int{400, 200}, nil, 2, 0, 400, 1},
		{"408 and 409 not retried", []int{408, 200}, nil, 2, 0, 408, 1},
		{"Retry-After honoured", []int{429}, http.Header{"Retry-After": {"0"}}, 2, 0, 200, 2},
		{"Retry-After beyond the limit", []int{429}, http.Header{"Retry-After": {"3600"}}, 2, 0, 429, 1},
		{"Retry-After beyond the deadline", []int{429}, http.Header{"Retry-After": {"5"}}, 2, time.Second, 429, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &scriptedHandler{script: tc.script, header: tc.header}
			srv := httptest.NewServer(h)
			defer srv.Close()
			// A millisecond of backoff keeps the test fast.
			c := newHTTPClient(nil, tc.maxRetries, time.Millisecond)

			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			ctx, trace := withCallTrace(ctx)
			// A body without GetBody must be buffered to be sent again.
			body := io.NopCloser(strings.NewReader(`{"prompt":"hi"}`))
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
			got, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || string(got) != "answer" {
				t.Errorf("answer = %d %q, want %d %q", resp.StatusCode, got, tc.wantStatus, "answer")
			}
			want := make([]string, tc.wantCalls)
			for i := range want {
				want[i] = `{"prompt":"hi"}`
			}
			if diff := cmp.Diff(want, h.bodies); diff != "" {
				t.Errorf("bodies received (-want +got):\n%s", diff)
			}
			if n := int(trace.attempts.Load()); n != tc.wantCalls {
				t.Errorf("trace counted %d attempts, want %d", n, tc.wantCalls)
			}
			if s := int(trace.lastStatus.Load()); s != tc.wantStatus {
				t.Errorf("trace saw last status %d, want %d", s, tc.wantStatus)
			}
		})
	}
}

func TestRetryTransportStopsWhenContextEnds(t *testing.T) {
	h := &scriptedHandler{script: []int{503, 503, 503}}
	srv := httptest.NewServer(h)
	defer srv.Close()
	// The context has no deadline, so the wait (an hour, capped to
	// maxBackoff) starts; cancelling the context must end it.
	c := newHTTPClient(nil, 2, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	time.AfterFunc(50*time.Millisecond, cancel)
	resp, err := c.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("Do error = %v, want context canceled", err)
	}
	if n := len(h.bodies); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}
