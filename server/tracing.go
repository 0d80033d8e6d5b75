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
	"strings"

	"github.com/browserfleet/browserfleet/tracing"
)

// traced gives every /v1 call a server span when Options.TracerProvider is
// set: the child of the caller's span when the request carries a W3C
// traceparent, else a new trace's root. Its context is the request's, so the
// runner call an operation makes carries it on (runner/rpc injects it) and
// the runner's span is its child.
//
// The span is named for the route ("POST /v1/sessions/{id}/act"), never the
// raw path, whose session ids would make every name unique; its attributes
// are tracing.ServerHandler's. The CDP WebSocket is not traced: its path carries the
// connection's token and it lasts as long as the client stays. Neither are
// probes nor the OpenAPI document, which are not operations.
func (s *server) traced(next http.Handler) http.Handler {
	tp := s.opts.TracerProvider
	if tp == nil {
		return next
	}
	h := tracing.ServerHandler(tp, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := s.mux.Handler(r)
		if !tracedRoute(pattern) {
			next.ServeHTTP(w, r)
			return
		}
		// The route is known before the mux runs, so the span starts with
		// its name and http.route rather than being renamed at the end.
		r.Pattern = pattern
		h.ServeHTTP(w, r)
	})
}

// tracedRoute reports whether calls of a route pattern get a span.
func tracedRoute(pattern string) bool {
	_, path, ok := strings.Cut(pattern, " ")
	if !ok {
		return false
	}
	return strings.HasPrefix(path, "/v1/") && path != CDPPathPattern && path != "/v1/openapi.json"
}
