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
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/search"
)

// RunnerHandler serves runners what the operator provides them without
// handing them its credentials: today the agent's web search
// (search.RelayPath), when Options.Search is set, and the model gateway
// (gateway.RunnerPathGenerate), when Options.Gateway is. The API pod serves it on
// a listener of its own (cmd/api --runner-listen-address), apart from the
// /v1 API, so that a NetworkPolicy can open it to runner pods only. It
// returns nil when there is nothing to serve.
func (x *Server) RunnerHandler() (http.Handler, error) {
	s := x.s
	mux := http.NewServeMux()
	served := false
	if s.opts.Search != nil {
		relay, err := search.NewRelay(search.RelayOptions{
			Searcher:     s.opts.Search,
			Authenticate: s.authenticateRunner,
			MaxInFlight:  s.opts.SearchMaxInFlight,
			Observe:      s.opts.Metrics.ObserveSearch,
			Logger:       s.log.WithName("search"),
		})
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		mux.Handle(search.RelayPath, relay)
		served = true
	}
	served = s.registerRunnerGateway(mux) || served
	if !served {
		return nil, nil
	}
	return mux, nil
}

// authenticateRunner returns the session, "namespace/name", of a runner's
// call: rpc.HeaderRunnerSession names it and Authorization carries its
// runner token. A session outside the projects, unknown or ended, or a
// wrong token, is search.ErrUnauthorized, with no hint which.
func (s *server) authenticateRunner(ctx context.Context, r *http.Request) (string, error) {
	name := r.Header.Get(rpc.HeaderRunnerSession)
	ns, n, ok := strings.Cut(name, "/")
	got, hasToken := rpc.BearerToken(r)
	if !ok || ns == "" || n == "" || !hasToken {
		return "", search.ErrUnauthorized
	}
	if !s.isProject(ns) {
		return "", search.ErrUnauthorized
	}
	bs := &v1alpha1.BrowserSession{}
	if err := s.opts.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: n}, bs); err != nil {
		return "", fmt.Errorf("%w: %w", search.ErrUnauthorized, err)
	}
	if !bs.DeletionTimestamp.IsZero() {
		return "", search.ErrUnauthorized
	}
	want, err := s.runnerToken(ctx, bs)
	if err != nil {
		return "", fmt.Errorf("%w: %w", search.ErrUnauthorized, err)
	}
	if !rpc.SameToken(got, want) {
		return "", search.ErrUnauthorized
	}
	return name, nil
}
