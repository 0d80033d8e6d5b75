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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
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
