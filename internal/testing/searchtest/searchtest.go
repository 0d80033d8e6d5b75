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

// Package searchtest is a stand-in for a web search provider, speaking
// Brave's Web Search API on loopback: a provider cannot be reached from a
// test, and tests built on it prove only our side of the wire.
package searchtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
)

// Hit is one scripted result, in Brave's shape.
type Hit struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
}

// Brave is a scripted Brave Web Search API.
type Brave struct {
	// URL is the search endpoint.
	URL string

	key  string
	mu   sync.Mutex
	hits map[string][]Hit
	seen []Request
}

// Request is what the server received.
type Request struct {
	Query string
	Count int
	// KeyOK is whether X-Subscription-Token was the server's key.
	KeyOK bool
}

// TB is what NewBrave needs of a test: testing.TB or Ginkgo's GinkgoT().
type TB interface {
	Helper()
	Cleanup(func())
}

// NewBrave starts a server that wants key as its subscription token and
// answers each query with the hits set by Answer (none by default). It
// stops when the test ends.
func NewBrave(t TB, key string) *Brave {
	t.Helper()
	b := &Brave{key: key, hits: make(map[string][]Hit)}
	srv := httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(srv.Close)
	b.URL = srv.URL + "/res/v1/web/search"
	return b
}

// Answer scripts the hits of query.
func (b *Brave) Answer(query string, hits ...Hit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hits[query] = hits
}

// Requests returns what the server received so far.
func (b *Brave) Requests() []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Request(nil), b.seen...)
}

func (b *Brave) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	n, _ := strconv.Atoi(r.URL.Query().Get("count"))
	ok := r.Header.Get("X-Subscription-Token") == b.key
	b.mu.Lock()
	b.seen = append(b.seen, Request{Query: q, Count: n, KeyOK: ok})
	hits := b.hits[q]
	b.mu.Unlock()
	if !ok {
		http.Error(w, `{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}`, http.StatusUnauthorized)
		return
	}
	if n > 0 && len(hits) > n {
		hits = hits[:n]
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type":  "search",
		"query": map[string]any{"original": q},
		"web":   map[string]any{"type": "search", "results": hits},
	})
}
