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

	"k8s.io/apimachinery/pkg/types"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/runnertoken"
)

// maxTokens bounds the runner-token cache. A token is a few dozen bytes;
// past the bound the cache starts over rather than tracking use.
const maxTokens = 10000

// tokens caches runner tokens by session UID. A session's token never
// changes, and a UID is never reused, so entries never go stale; they only
// outlive their session, which the bound takes care of.
type tokens struct {
	mu sync.Mutex
	m  map[types.UID]string
}

func (t *tokens) get(uid types.UID) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok := t.m[uid]
	return tok, ok
}

func (t *tokens) put(uid types.UID, tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil || len(t.m) >= maxTokens {
		t.m = map[types.UID]string{}
	}
	t.m[uid] = tok
}

// runnerToken returns the session's runner token. It reads the token Secret
// from the API server, not the cache: the API pod caches only API-key
// Secrets, so that it never holds every session's token in memory.
func (s *server) runnerToken(ctx context.Context, bs *v1alpha1.BrowserSession) (string, error) {
	if tok, ok := s.tokens.get(bs.UID); ok {
		return tok, nil
	}
	tok, err := runnertoken.Read(ctx, s.opts.APIReader, bs)
	if err != nil {
		return "", err
	}
	s.tokens.put(bs.UID, tok)
	return tok, nil
}

// runnerClient returns a client of the session's runner.
func (s *server) runnerClient(ctx context.Context, bs *v1alpha1.BrowserSession) (*rpc.Client, error) {
	tok, err := s.runnerToken(ctx, bs)
	if err != nil {
		return nil, err
	}
	return rpc.NewClient(bs.Status.Endpoint, tok, nil), nil
}
