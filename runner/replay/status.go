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
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// A summary travels from the runner's termination message into the
// session's status.history (the manager) and back out of it into the
// replay of an ended session (the API). The two conversions are each
// other's inverse, to the millisecond.

// History is the summary as the session's status holds it.
func (s *Summary) History() *v1alpha1.BrowserSessionHistory {
	h := &v1alpha1.BrowserSessionHistory{Calls: s.Calls, Failed: s.Failed}
	for m, n := range s.ByMethod {
		h.ByMethod = append(h.ByMethod, v1alpha1.MethodCalls{Method: m, Calls: n})
	}
	slices.SortFunc(h.ByMethod, func(a, b v1alpha1.MethodCalls) int { return strings.Compare(a.Method, b.Method) })
	if u := s.TokenUsage; u != (TokenUsage{}) {
		h.Usage = &v1alpha1.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens,
			CachedInputTokens: u.CachedInputTokens, InferenceTimeMs: u.TimeMs}
	}
	if s.FirstCallAt > 0 {
		h.FirstCallAt = &metav1.Time{Time: time.UnixMilli(s.FirstCallAt)}
	}
	if s.LastCallAt > 0 {
		h.LastCallAt = &metav1.Time{Time: time.UnixMilli(s.LastCallAt)}
	}
	return h
}

// SummaryOf is the summary a session's status.history holds.
func SummaryOf(h *v1alpha1.BrowserSessionHistory) *Summary {
	s := &Summary{Calls: h.Calls, Failed: h.Failed, ByMethod: map[string]int64{}}
	for _, m := range h.ByMethod {
		s.ByMethod[m.Method] = m.Calls
	}
	if u := h.Usage; u != nil {
		s.TokenUsage = TokenUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens,
			CachedInputTokens: u.CachedInputTokens, TimeMs: u.InferenceTimeMs}
	}
	if h.FirstCallAt != nil {
		s.FirstCallAt = h.FirstCallAt.UnixMilli()
	}
	if h.LastCallAt != nil {
		s.LastCallAt = h.LastCallAt.UnixMilli()
	}
	return s
}
