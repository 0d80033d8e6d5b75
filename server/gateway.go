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
	"errors"
	"net/http"
	"strings"

	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/search"
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
	s.opts.Gateway.Serve(w, r, project.Namespace)
}

// registerRunnerGateway mounts the gateway on the runner listener, for
// runners with their session's token; the session's namespace is the
// project its tokens count against. It reports whether it mounted it.
func (s *server) registerRunnerGateway(mux *http.ServeMux) bool {
	if s.opts.Gateway == nil {
		return false
	}
	mux.HandleFunc(gateway.RunnerPathGenerate, func(w http.ResponseWriter, r *http.Request) {
		session, err := s.authenticateRunner(r.Context(), r)
		if err != nil {
			if !errors.Is(err, search.ErrUnauthorized) {
				s.log.Error(err, "authenticating a runner's model call")
			}
			w.Header().Set("WWW-Authenticate", rpc.AuthorizationScheme)
			writeError(w, http.StatusUnauthorized, CodeUnauthorized, "the model gateway serves runners only, with their session's token")
			return
		}
		ns, _, _ := strings.Cut(session, "/")
		s.opts.Gateway.Serve(w, r, ns)
	})
	return true
}
