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
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/tracing"
)

// attrActionID is the id the API gave the call (rpc.HeaderActionID), under
// which the session's replay lists it.
const attrActionID = attribute.Key("browserfleet.action_id")

// traced gives each operation call a server span when tp is set, continuing
// the W3C trace context the caller sent (runner/rpc injects the API's span):
// the runner's span of an act is a child of the API's span of the /v1 act.
// It spans the call's wait for its turn on the page and the operation.
//
// Spans are named for the route ("POST /v1/act"; an agent task's
// "GET /v1/agent/tasks/{uid}"), never the raw path. Their attributes are
// tracing.ServerHandler's and the call's action id. The /cdp proxy and unknown
// paths are not traced. Whether a call is recorded is the sampler's: the
// manager starts runners with parentbased_always_off, so the runner records
// exactly the calls of the traces the API records.
func traced(tp trace.TracerProvider, next http.Handler) http.Handler {
	if tp == nil {
		return next
	}
	tagged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(rpc.HeaderActionID); actionIDPattern.MatchString(id) {
			trace.SpanFromContext(r.Context()).SetAttributes(attrActionID.String(id))
		}
		next.ServeHTTP(w, r)
	})
	h := tracing.ServerHandler(tp, tagged)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, ok := tracedRoute(r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		// otelhttp names the span and sets http.route from the pattern.
		r.Pattern = r.Method + " " + route
		h.ServeHTTP(w, r)
	})
}

// tracedRoute maps a request path to its route, for the calls that get a
// span.
func tracedRoute(path string) (string, bool) {
	switch path {
	case rpc.ActPath, rpc.ObservePath, rpc.ExtractPath, rpc.NavigatePath, rpc.BatchPath, rpc.ReplayPath, rpc.AgentTasksPath:
		return path, true
	}
	if strings.HasPrefix(path, rpc.AgentTaskPathPrefix) {
		return rpc.AgentTaskPathPrefix + "{uid}", true
	}
	return "", false
}
