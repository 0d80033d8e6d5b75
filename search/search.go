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

// Package search is the agent's web search: the providers an operator may
// configure (Brave's Web Search API, a SearXNG instance), the relay the API
// pod serves to runners so that a provider's key never reaches a runner,
// and the runners' client of that relay. docs/agent.md describes it.
package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Result is one hit of a web search.
type Result struct {
	// Title is the page's title.
	Title string `json:"title"`
	// URL is the page's address.
	URL string `json:"url"`
	// Description is the provider's snippet of the page, when it has one.
	Description string `json:"description,omitempty"`
}

// Searcher searches the web.
type Searcher interface {
	// Search returns at most MaxResults hits for query, best first. query
	// must pass CheckQuery.
	Search(ctx context.Context, query string) ([]Result, error)
}

// Bounds of a search, enforced by the providers, the relay and its client.
const (
	// MaxQueryRunes bounds a query.
	MaxQueryRunes = 400
	// DefaultResults is how many hits a search returns unless the operator
	// says otherwise.
	DefaultResults = 5
	// MaxResults bounds the hits of one search.
	MaxResults = 10
	// maxTitleRunes and maxDescriptionRunes bound each hit's texts, which
	// go to the model; longer ones are cut.
	maxTitleRunes       = 300
	maxDescriptionRunes = 1000
	// maxURLBytes drops hits whose URL is longer.
	maxURLBytes = 4096
	// maxProviderBytes bounds a provider's answer.
	maxProviderBytes = 4 << 20
	// maxRelayRequest bounds a request to the relay: a query.
	maxRelayRequest = 16 << 10
	// maxRelayAnswer bounds the relay's answer: MaxResults bounded hits.
	maxRelayAnswer = 256 << 10
)

// ErrInvalidQuery is a query that is empty, too long or not UTF-8.
var ErrInvalidQuery = errors.New("invalid search query")

// CheckQuery reports whether q may be searched.
func CheckQuery(q string) error {
	switch {
	case strings.TrimSpace(q) == "":
		return fmt.Errorf("%w: empty", ErrInvalidQuery)
	case !utf8.ValidString(q):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidQuery)
	case utf8.RuneCountInString(q) > MaxQueryRunes:
		return fmt.Errorf("%w: longer than %d characters", ErrInvalidQuery, MaxQueryRunes)
	}
	return nil
}

// clean bounds a hit's texts and drops hits without a usable URL, keeping
// at most n.
func clean(in []Result, n int) []Result {
	out := make([]Result, 0, min(len(in), n))
	for _, r := range in {
		if len(out) == n {
			break
		}
		r.URL = strings.TrimSpace(r.URL)
		if r.URL == "" || len(r.URL) > maxURLBytes || !utf8.ValidString(r.URL) {
			continue
		}
		r.Title = cut(strings.TrimSpace(r.Title), maxTitleRunes)
		r.Description = cut(strings.TrimSpace(r.Description), maxDescriptionRunes)
		out = append(out, r)
	}
	return out
}

// cut shortens s to n runes, marking the cut.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
