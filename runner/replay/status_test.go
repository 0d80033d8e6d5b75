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
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHistoryRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		sum  Summary
	}{
		{"no calls", Summary{ByMethod: map[string]int64{}}},
		{"calls without a model", Summary{Calls: 2, Failed: 1, ByMethod: map[string]int64{"navigate": 2},
			FirstCallAt: 1767225600000, LastCallAt: 1767225601234}},
		{"calls with a model", Summary{Calls: 5, ByMethod: map[string]int64{"act": 3, "extract": 1, "navigate": 1},
			TokenUsage:  TokenUsage{InputTokens: 2100, OutputTokens: 38, ReasoningTokens: 7, CachedInputTokens: 1000, TimeMs: 950},
			FirstCallAt: 1767225600000, LastCallAt: 1767225660000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(&tc.sum, SummaryOf(tc.sum.History())); diff != "" {
				t.Errorf("SummaryOf(History()) (-want +got):\n%s", diff)
			}
		})
	}
}
