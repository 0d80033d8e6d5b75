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

package replay

import "encoding/json"

// Replay is the answer of GET /v1/sessions/{id}/replay: the calls grouped
// into pages, in the reference server's shape. Summary is set only for a
// session whose runner is gone: its pages are then empty.
type Replay struct {
	Pages   []Page   `json:"pages"`
	Summary *Summary `json:"summary,omitempty"`
}

// Page groups the calls made on one page: a navigate starts a page.
type Page struct {
	URL string `json:"url"`
	// Timestamp is the page's first call's start, in milliseconds since
	// the epoch.
	Timestamp int64 `json:"timestamp"`
	// Duration runs from Timestamp to the latest end of its calls, in
	// milliseconds.
	Duration int64    `json:"duration"`
	Actions  []Action `json:"actions"`
}

// Action is a recorded call, in the reference server's shape, plus actionId
// and pageUrl.
type Action struct {
	ActionID   string          `json:"actionId"`
	Method     string          `json:"method"`
	Parameters json.RawMessage `json:"parameters"`
	Result     json.RawMessage `json:"result"`
	// Timestamp and EndTime are in milliseconds since the epoch.
	Timestamp  int64      `json:"timestamp"`
	EndTime    int64      `json:"endTime"`
	TokenUsage TokenUsage `json:"tokenUsage"`
	PageURL    string     `json:"pageUrl,omitempty"`
}

// TokenUsage is a call's model usage. The reference has a `cost`; this
// service does not know its users' prices, so it leaves it out.
type TokenUsage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	ReasoningTokens   int64 `json:"reasoningTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	TimeMs            int64 `json:"timeMs"`
}

// Add returns the sum of u and o.
func (u TokenUsage) Add(o TokenUsage) TokenUsage {
	return TokenUsage{
		InputTokens:       u.InputTokens + o.InputTokens,
		OutputTokens:      u.OutputTokens + o.OutputTokens,
		ReasoningTokens:   u.ReasoningTokens + o.ReasoningTokens,
		CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		TimeMs:            u.TimeMs + o.TimeMs,
	}
}

// Pages groups recorded calls, in call order, into pages. A navigate that
// reached a page starts one at its URL; calls before the first are on
// about:blank, where every session starts. A page lasts from its first
// call's start to its calls' latest end. The result is never nil.
func Pages(actions []Action) []Page {
	pages := []Page{}
	for _, a := range actions {
		if len(pages) == 0 || (a.Method == "navigate" && a.PageURL != "") {
			url := a.PageURL
			if url == "" {
				url = "about:blank"
			}
			pages = append(pages, Page{URL: url, Timestamp: a.Timestamp, Actions: []Action{}})
		}
		p := &pages[len(pages)-1]
		p.Actions = append(p.Actions, a)
		p.Duration = max(p.Duration, a.EndTime-p.Timestamp)
	}
	return pages
}
