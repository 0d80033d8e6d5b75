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
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// Bounds of a Summary: it travels in a container's termination message,
// which the kubelet cuts at 4096 bytes.
const (
	// MaxSummaryBytes bounds an encoded summary (TerminationMessage).
	MaxSummaryBytes = 4096
	// MaxSummaryMethods bounds the methods a summary counts by name;
	// calls of further methods count under OtherMethod.
	MaxSummaryMethods = 16
	// MaxMethodLength bounds a method's name; a longer name, or one with
	// other characters than letters, digits, '-' and '_', counts under
	// OtherMethod.
	MaxMethodLength = 32
	// OtherMethod counts the calls of methods a summary does not name.
	OtherMethod = "other"
)

// Summary is what is left of a session's history once its runner is gone:
// counts and token usage, never a call's parameters or result.
type Summary struct {
	// Calls counts every call recorded, failures included.
	Calls int64 `json:"calls"`
	// Failed counts the calls that failed.
	Failed int64 `json:"failed"`
	// ByMethod counts the calls per method (act, observe, extract,
	// navigate).
	ByMethod map[string]int64 `json:"byMethod"`
	// TokenUsage is the model usage of all calls.
	TokenUsage TokenUsage `json:"tokenUsage"`
	// FirstCallAt is the first call's start, LastCallAt the latest end of
	// a call, in milliseconds since the epoch; 0 without calls.
	FirstCallAt int64 `json:"firstCallAt,omitempty"`
	LastCallAt  int64 `json:"lastCallAt,omitempty"`
}

func (s *Summary) add(method string, failed bool, u TokenUsage, start, end int64) {
	s.Calls++
	if failed {
		s.Failed++
	}
	if s.ByMethod == nil {
		s.ByMethod = map[string]int64{}
	}
	method = methodKey(method)
	if _, ok := s.ByMethod[method]; !ok && len(s.ByMethod) >= MaxSummaryMethods-1 && method != OtherMethod {
		// The last slot is kept for the rest.
		method = OtherMethod
	}
	s.ByMethod[method]++
	s.TokenUsage = s.TokenUsage.Add(u)
	if s.FirstCallAt == 0 || start < s.FirstCallAt {
		s.FirstCallAt = start
	}
	s.LastCallAt = max(s.LastCallAt, end, start)
}

func (s Summary) clone() Summary {
	s.ByMethod = maps.Clone(s.ByMethod)
	return s
}

// methodKey is the name a summary counts a method under.
func methodKey(m string) string {
	if m == "" || len(m) > MaxMethodLength {
		return OtherMethod
	}
	for _, r := range m {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_' {
			return OtherMethod
		}
	}
	return m
}

// bounded returns s with at most MaxSummaryMethods methods, each named
// within MaxMethodLength, and no negative count: whatever s holds, its
// encoding stays well under MaxSummaryBytes.
func (s Summary) bounded() Summary {
	out := s
	out.ByMethod = map[string]int64{}
	for m, n := range s.ByMethod {
		k := methodKey(m)
		if _, ok := out.ByMethod[k]; !ok && len(out.ByMethod) >= MaxSummaryMethods-1 && k != OtherMethod {
			k = OtherMethod
		}
		out.ByMethod[k] += max(n, 0)
	}
	out.Calls, out.Failed = max(out.Calls, 0), max(out.Failed, 0)
	u := &out.TokenUsage
	u.InputTokens, u.OutputTokens, u.ReasoningTokens = max(u.InputTokens, 0), max(u.OutputTokens, 0), max(u.ReasoningTokens, 0)
	u.CachedInputTokens, u.TimeMs = max(u.CachedInputTokens, 0), max(u.TimeMs, 0)
	out.FirstCallAt, out.LastCallAt = max(out.FirstCallAt, 0), max(out.LastCallAt, 0)
	return out
}

// terminationKey is the one key of a termination message that carries a
// summary: it tells it from anything else a container may leave there (a
// log tail, a crash message).
const terminationKey = "browserfleetReplaySummary"

// TerminationMessage encodes s as the runner's termination message, at
// most MaxSummaryBytes: {"browserfleetReplaySummary": {...}}.
func (s Summary) TerminationMessage() []byte {
	b := s.bounded()
	raw, err := json.Marshal(map[string]Summary{terminationKey: b})
	if err != nil || len(raw) > MaxSummaryBytes {
		// Cannot happen with bounded counts; keep the totals at least.
		b.ByMethod = map[string]int64{OtherMethod: b.Calls}
		raw, _ = json.Marshal(map[string]Summary{terminationKey: b})
	}
	return raw
}

// ParseTerminationMessage reads a summary from a container's termination
// message. It reports false for anything else: another message, one over
// MaxSummaryBytes, unknown fields, negative counts, or more or other
// methods than a summary names.
func ParseTerminationMessage(msg string) (*Summary, bool) {
	if len(msg) > MaxSummaryBytes {
		return nil, false
	}
	msg = strings.TrimSpace(msg)
	if !strings.HasPrefix(msg, "{") || !strings.Contains(msg, terminationKey) {
		return nil, false
	}
	var doc struct {
		Summary *Summary `json:"browserfleetReplaySummary"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(msg)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || doc.Summary == nil || dec.More() {
		return nil, false
	}
	s := doc.Summary
	if err := s.check(); err != nil {
		return nil, false
	}
	return s, true
}

func (s *Summary) check() error {
	u := s.TokenUsage
	for _, n := range []int64{s.Calls, s.Failed, u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CachedInputTokens, u.TimeMs, s.FirstCallAt, s.LastCallAt} {
		if n < 0 {
			return fmt.Errorf("a negative count")
		}
	}
	if len(s.ByMethod) > MaxSummaryMethods {
		return fmt.Errorf("%d methods", len(s.ByMethod))
	}
	for m, n := range s.ByMethod {
		if methodKey(m) != m || n < 0 {
			return fmt.Errorf("method %q", m)
		}
	}
	return nil
}
