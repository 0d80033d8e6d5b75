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

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/server/apikey"
)

// TestGatewayNotConfigured: without a gateway the route answers 404 with
// its code, and the runner listener does not serve it.
func TestGatewayNotConfigured(t *testing.T) {
	s := &server{log: logr.Discard()}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v1/models/generate", strings.NewReader(`{}`))
	s.generate(rec, r, apikey.Project{Namespace: "team-a"})
	if diff := cmp.Diff([]any{http.StatusNotFound, `{"success":false,"error":"this deployment has no model gateway; call models with their own API keys","code":"GATEWAY_NOT_CONFIGURED"}`},
		[]any{rec.Code, strings.TrimSpace(rec.Body.String())}); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	mux := http.NewServeMux()
	s.registerRunnerGateway(mux)
	if _, pattern := mux.Handler(httptest.NewRequest(http.MethodPost, gateway.RunnerPathGenerate, nil)); pattern != "" {
		t.Errorf("the runner listener serves a gateway that does not exist, at %q", pattern)
	}
}
