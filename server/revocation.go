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
	"sync"
	"time"

	"github.com/browserfleet/browserfleet/server/apikey"
)

// Revocation bites within seconds: every request an API key makes, and
// every CDP connection it opened (with a cdpUrl it asked for), is held
// under that key here, and a sweep cancels those of keys that were revoked
// or expired. Cancelling a request ends its reply (an SSE stream ends; a
// CDP connection is closed, both ways). The sweep reads the cache only.

// DefaultRevocationCheck is how often the keys of open requests and
// connections are checked.
const DefaultRevocationCheck = time.Second

// holds are the open requests and connections, by the key that made them.
type holds struct {
	mu   sync.Mutex
	next uint64
	by   map[apikey.Project]map[uint64]context.CancelFunc
}

// hold registers cancel under p until release is called.
func (h *holds) hold(p apikey.Project, cancel context.CancelFunc) (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.by == nil {
		h.by = map[apikey.Project]map[uint64]context.CancelFunc{}
	}
	h.next++
	id := h.next
	if h.by[p] == nil {
		h.by[p] = map[uint64]context.CancelFunc{}
	}
	h.by[p][id] = cancel
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.by[p], id)
		if len(h.by[p]) == 0 {
			delete(h.by, p)
		}
	}
}

// keys are the keys that hold something.
func (h *holds) keys() []apikey.Project {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]apikey.Project, 0, len(h.by))
	for p := range h.by {
		out = append(out, p)
	}
	return out
}

// cancel cancels everything p holds, and reports how much that was.
func (h *holds) cancel(p apikey.Project) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.by[p])
	for _, cancel := range h.by[p] {
		cancel()
	}
	delete(h.by, p)
	return n
}

// sweepRevoked checks, every interval until ctx ends, the keys that hold
// requests or connections, and cancels those of keys that no longer work.
func (s *server) sweepRevoked(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, p := range s.held.keys() {
			ok, err := s.opts.Authenticator.Valid(ctx, p)
			if err != nil {
				// The cache cannot answer: keep what is open, check again.
				s.log.Error(err, "checking api key", "namespace", p.Namespace, "key", p.KeyID)
				continue
			}
			if !ok {
				n := s.held.cancel(p)
				s.log.Info("closed the requests and connections of a revoked or expired api key", "namespace", p.Namespace, "key", p.KeyID, "closed", n)
			}
		}
	}
}

// projectKey carries the request's project in its context, for what
// builds replies (the cdpUrl is signed for the key that asked).
type projectKey struct{}

func withProject(ctx context.Context, p apikey.Project) context.Context {
	return context.WithValue(ctx, projectKey{}, p)
}

func projectOf(ctx context.Context) (apikey.Project, bool) {
	p, ok := ctx.Value(projectKey{}).(apikey.Project)
	return p, ok
}
