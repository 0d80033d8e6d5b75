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
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/server/apikey"
)

// CodeGatewayNotConfigured answers a gateway call on a deployment with
// none.
const CodeGatewayNotConfigured = gateway.CodeNotConfigured

// registerGateway mounts the gateway for /v1 callers, who authenticate
// with their project key. The route is always there (the OpenAPI document
// lists it); without a gateway it answers 404 GATEWAY_NOT_CONFIGURED.
func (s *server) registerGateway() {
	s.handle("POST "+gateway.PathGenerate, s.authed(s.generate))
}

func (s *server) generate(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	if s.opts.Gateway == nil {
		writeError(w, http.StatusNotFound, CodeGatewayNotConfigured, "this deployment has no model gateway; call models with their own API keys")
		return
	}
	s.serveGateway(w, r, project.Namespace)
}

// serveGateway runs the gateway's handler with the body's read bounded in
// time, as readBody bounds other bodies (the gateway bounds its size). The
// body is read here, and the deadline lifted, before the model is called:
// net/http watches the connection for the caller going away while the
// answer is prepared, and a deadline would cut a model call that takes
// longer.
func (s *server) serveGateway(w http.ResponseWriter, r *http.Request, project string) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(s.opts.BodyReadTimeout)); err != nil {
		s.log.V(1).Info("cannot bound the body read", "error", err.Error())
	}
	// One byte over the bound lets the gateway answer 413.
	body, err := io.ReadAll(io.LimitReader(r.Body, gateway.MaxRequestBytes+1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, CodeRequestTimeout, fmt.Sprintf("the request body did not arrive within %s", s.opts.BodyReadTimeout))
		return
	}
	_ = rc.SetReadDeadline(time.Time{})
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "reading the request body: "+err.Error())
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.opts.Gateway.Serve(w, r, project)
}

// registerRunnerGateway mounts the gateway on the runner listener, for
// runners with their session's token (forRunners); the session's namespace
// is the project its tokens count against.
func (s *server) registerRunnerGateway(mux *http.ServeMux) {
	if s.opts.Gateway == nil {
		return
	}
	mux.Handle(gateway.RunnerPathGenerate, s.forRunners(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serveGateway(w, r, runnerSessionOf(r.Context()).Namespace)
	})))
}
