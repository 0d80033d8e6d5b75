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

import (
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// Bounds of a runner's history: the most calls it keeps, and the most bytes
// their encoded actions take. Each call's parameters and result are bounded
// too (MaxValueBytes), so one call never takes more than a few percent.
const (
	DefaultMaxCalls = 1000
	DefaultMaxBytes = 512 << 10
)

// Entry is one call as the runner served it.
type Entry struct {
	// ActionID is the call's id, the one its caller answered with.
	ActionID string
	// Method is the operation: act, observe, extract, navigate.
	Method string
	// Params is what was asked. It is redacted (Redact), but the caller
	// keeps out what Redact cannot know: model keys and headers.
	Params any
	// Result is the call's result, or for a failure its {error, code}.
	Result any
	// Failed says the call failed.
	Failed bool
	// Started and Ended bound the call.
	Started, Ended time.Time
	// Usage is the model usage the call took.
	Usage TokenUsage
	// PageURL is the page the call ended on, when it says so (navigate);
	// it starts a page of the replay.
	PageURL string
}

// History is a session's calls, bounded: at most maxCalls calls and
// maxBytes of encoded actions, the oldest dropped first. Its Summary counts
// every call, dropped ones too. It is safe for concurrent use.
type History struct {
	maxCalls, maxBytes int

	mu      sync.Mutex
	actions []Action
	sizes   []int
	bytes   int
	summary Summary
}

// NewHistory returns an empty History with the given bounds; a bound of 0
// or less is the default's.
func NewHistory(maxCalls, maxBytes int) *History {
	if maxCalls <= 0 {
		maxCalls = DefaultMaxCalls
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &History{maxCalls: maxCalls, maxBytes: maxBytes}
}

// Record adds a call, redacted and bounded, and drops the oldest calls
// beyond the bounds. The newest call is always kept.
func (h *History) Record(e Entry) {
	a := Action{
		ActionID:   e.ActionID,
		Method:     e.Method,
		Parameters: BoundedJSON(e.Params),
		Result:     BoundedJSON(e.Result),
		Timestamp:  e.Started.UnixMilli(),
		EndTime:    e.Ended.UnixMilli(),
		TokenUsage: e.Usage,
	}
	if e.PageURL != "" {
		a.PageURL = RedactURL(e.PageURL)
	}
	size := encodedSize(a)

	h.mu.Lock()
	defer h.mu.Unlock()
	h.summary.add(e.Method, e.Failed, a.TokenUsage, a.Timestamp, a.EndTime)
	h.actions = append(h.actions, a)
	h.sizes = append(h.sizes, size)
	h.bytes += size
	drop := 0
	for len(h.actions)-drop > 1 && (len(h.actions)-drop > h.maxCalls || h.bytes > h.maxBytes) {
		h.bytes -= h.sizes[drop]
		drop++
	}
	if drop > 0 {
		h.actions = slices.Delete(h.actions, 0, drop)
		h.sizes = slices.Delete(h.sizes, 0, drop)
	}
}

// encodedSize is what an action takes in the replay's JSON.
func encodedSize(a Action) int {
	raw, err := json.Marshal(a)
	if err != nil {
		return len(a.Parameters) + len(a.Result)
	}
	return len(raw)
}

// Actions returns the calls the history keeps, oldest first.
func (h *History) Actions() []Action {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.actions)
}

// Replay returns the calls the history keeps, grouped into pages.
func (h *History) Replay() Replay {
	return Replay{Pages: Pages(h.Actions())}
}

// Summary returns the counts of every call recorded.
func (h *History) Summary() Summary {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.summary.clone()
}
