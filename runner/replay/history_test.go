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

package replay_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/runner/replay"
)

var t0 = time.UnixMilli(1767225600000)

// call is an entry started i seconds after t0, lasting 100ms, whose
// parameters are pad bytes of text.
func call(i int, method string, pad int) replay.Entry {
	return replay.Entry{
		ActionID: fmt.Sprintf("a%d", i),
		Method:   method,
		Params:   map[string]string{"pad": strings.Repeat("x", pad)},
		Result:   map[string]bool{"success": true},
		Started:  t0.Add(time.Duration(i) * time.Second),
		Ended:    t0.Add(time.Duration(i)*time.Second + 100*time.Millisecond),
		Usage:    replay.TokenUsage{InputTokens: 10, OutputTokens: 1},
	}
}

func ids(actions []replay.Action) []string {
	out := []string{}
	for _, a := range actions {
		out = append(out, a.ActionID)
	}
	return out
}

// TestHistoryBounds: the history keeps the newest calls within its count
// and byte bounds, and its summary counts every call.
func TestHistoryBounds(t *testing.T) {
	// An action with 1,000 bytes of parameters encodes to about 1,200.
	tests := []struct {
		name               string
		maxCalls, maxBytes int
		calls              []replay.Entry
		wantIDs            []string
		wantCalls          int64
	}{
		{
			name:     "within both bounds nothing is dropped",
			maxCalls: 5, maxBytes: 1 << 20,
			calls:   []replay.Entry{call(1, "navigate", 0), call(2, "act", 0), call(3, "extract", 0)},
			wantIDs: []string{"a1", "a2", "a3"}, wantCalls: 3,
		},
		{
			name:     "beyond the count the oldest go",
			maxCalls: 2, maxBytes: 1 << 20,
			calls:   []replay.Entry{call(1, "navigate", 0), call(2, "act", 0), call(3, "extract", 0), call(4, "observe", 0)},
			wantIDs: []string{"a3", "a4"}, wantCalls: 4,
		},
		{
			name:     "beyond the bytes the oldest go",
			maxCalls: 100, maxBytes: 3000,
			calls:   []replay.Entry{call(1, "act", 1000), call(2, "act", 1000), call(3, "act", 1000), call(4, "act", 1000)},
			wantIDs: []string{"a3", "a4"}, wantCalls: 4,
		},
		{
			name:     "a small call after large ones pushes out only what it must",
			maxCalls: 100, maxBytes: 3000,
			calls:   []replay.Entry{call(1, "act", 1000), call(2, "act", 1000), call(3, "act", 0)},
			wantIDs: []string{"a1", "a2", "a3"}, wantCalls: 3,
		},
		{
			name:     "the newest call stays even when it alone is over the bytes",
			maxCalls: 100, maxBytes: 100,
			calls:   []replay.Entry{call(1, "act", 0), call(2, "act", 5000)},
			wantIDs: []string{"a2"}, wantCalls: 2,
		},
		{
			name:     "a value over 8 KiB is a stub, so it pushes out little",
			maxCalls: 100, maxBytes: 3000,
			calls:   []replay.Entry{call(1, "act", 0), call(2, "extract", 1<<20)},
			wantIDs: []string{"a1", "a2"}, wantCalls: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := replay.NewHistory(tt.maxCalls, tt.maxBytes)
			for _, e := range tt.calls {
				h.Record(e)
			}
			if diff := cmp.Diff(tt.wantIDs, ids(h.Actions())); diff != "" {
				t.Errorf("kept calls (-want +got):\n%s", diff)
			}
			if got := h.Summary().Calls; got != tt.wantCalls {
				t.Errorf("summary counts %d calls, want %d", got, tt.wantCalls)
			}
			raw, err := json.Marshal(h.Actions())
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Actions()) > 1 && len(raw) > tt.maxBytes {
				t.Errorf("the kept calls take %d bytes, over %d", len(raw), tt.maxBytes)
			}
		})
	}
}

// TestHistoryRecord: what one call becomes in the replay, redacted and
// bounded, grouped into pages by navigate.
func TestHistoryRecord(t *testing.T) {
	h := replay.NewHistory(0, 0)
	fill := call(1, "act", 0)
	fill.Params = map[string]any{"input": map[string]any{"selector": "#pw", "method": "fill", "arguments": []string{"hunter2"}}}
	nav := call(2, "navigate", 0)
	nav.Params = map[string]string{"url": "https://me:pw@shop.example/cart?token=abc#frag"}
	nav.Result = map[string]any{"url": "https://shop.example/cart?token=abc", "ok": true}
	nav.PageURL = "https://shop.example/cart?token=abc"
	failed := call(3, "extract", 0)
	failed.Result = map[string]string{"error": "took too long", "code": "TIMEOUT"}
	failed.Failed = true
	failed.Usage = replay.TokenUsage{}
	big := call(4, "extract", 0)
	big.Result = strings.Repeat("y", 9000)
	for _, e := range []replay.Entry{fill, nav, failed, big} {
		h.Record(e)
	}
	ms := t0.UnixMilli()
	usage := replay.TokenUsage{InputTokens: 10, OutputTokens: 1}
	want := replay.Replay{Pages: []replay.Page{
		{URL: "about:blank", Timestamp: ms + 1000, Duration: 100, Actions: []replay.Action{
			{ActionID: "a1", Method: "act", Parameters: json.RawMessage(`{"input":{"arguments":["[redacted]"],"method":"fill","selector":"#pw"}}`),
				Result: json.RawMessage(`{"success":true}`), Timestamp: ms + 1000, EndTime: ms + 1100, TokenUsage: usage},
		}},
		{URL: "https://shop.example/cart?token=%5Bredacted%5D", Timestamp: ms + 2000, Duration: 2100, Actions: []replay.Action{
			{ActionID: "a2", Method: "navigate", Parameters: json.RawMessage(`{"url":"https://shop.example/cart?token=%5Bredacted%5D"}`),
				Result: json.RawMessage(`{"ok":true,"url":"https://shop.example/cart?token=%5Bredacted%5D"}`), Timestamp: ms + 2000, EndTime: ms + 2100,
				TokenUsage: usage, PageURL: "https://shop.example/cart?token=%5Bredacted%5D"},
			{ActionID: "a3", Method: "extract", Parameters: json.RawMessage(`{"pad":""}`),
				Result: json.RawMessage(`{"code":"TIMEOUT","error":"took too long"}`), Timestamp: ms + 3000, EndTime: ms + 3100},
			{ActionID: "a4", Method: "extract", Parameters: json.RawMessage(`{"pad":""}`),
				Result: json.RawMessage(`{"truncated":true,"bytes":9002}`), Timestamp: ms + 4000, EndTime: ms + 4100, TokenUsage: usage},
		}},
	}}
	if diff := cmp.Diff(want, h.Replay()); diff != "" {
		t.Errorf("replay (-want +got):\n%s", diff)
	}
	wantSummary := replay.Summary{
		Calls: 4, Failed: 1, ByMethod: map[string]int64{"act": 1, "navigate": 1, "extract": 2},
		TokenUsage:  replay.TokenUsage{InputTokens: 30, OutputTokens: 3},
		FirstCallAt: ms + 1000, LastCallAt: ms + 4100,
	}
	if diff := cmp.Diff(wantSummary, h.Summary()); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(replay.Replay{Pages: []replay.Page{}}, replay.NewHistory(0, 0).Replay()); diff != "" {
		t.Errorf("empty replay (-want +got):\n%s", diff)
	}
}

// TestSummaryTerminationMessage: a summary's termination message stays
// within the kubelet's 4096 bytes whatever it holds, and reads back.
func TestSummaryTerminationMessage(t *testing.T) {
	huge := replay.Summary{
		Calls: math.MaxInt64, Failed: math.MaxInt64, ByMethod: map[string]int64{},
		TokenUsage:  replay.TokenUsage{InputTokens: math.MaxInt64, OutputTokens: math.MaxInt64, ReasoningTokens: math.MaxInt64, CachedInputTokens: math.MaxInt64, TimeMs: math.MaxInt64},
		FirstCallAt: math.MaxInt64, LastCallAt: math.MaxInt64,
	}
	for i := range 1000 {
		huge.ByMethod[fmt.Sprintf("m%031d", i)] = math.MaxInt64 / 2000
	}
	strange := replay.Summary{Calls: 3, ByMethod: map[string]int64{strings.Repeat("a", 5000): 1, "<script>": 1, "act": 1}}
	tests := []struct {
		name string
		in   replay.Summary
		want replay.Summary
	}{
		{
			name: "empty",
			in:   replay.Summary{},
			want: replay.Summary{ByMethod: map[string]int64{}},
		},
		{
			name: "a session's calls",
			in:   replay.Summary{Calls: 5, Failed: 1, ByMethod: map[string]int64{"act": 2, "navigate": 1, "extract": 1, "observe": 1}, TokenUsage: replay.TokenUsage{InputTokens: 2800, OutputTokens: 78, TimeMs: 900}, FirstCallAt: 1767225600000, LastCallAt: 1767225660000},
			want: replay.Summary{Calls: 5, Failed: 1, ByMethod: map[string]int64{"act": 2, "navigate": 1, "extract": 1, "observe": 1}, TokenUsage: replay.TokenUsage{InputTokens: 2800, OutputTokens: 78, TimeMs: 900}, FirstCallAt: 1767225600000, LastCallAt: 1767225660000},
		},
		{
			name: "long and strange method names count as other",
			in:   strange,
			want: replay.Summary{Calls: 3, ByMethod: map[string]int64{"other": 2, "act": 1}},
		},
		{
			name: "negative counts are zero",
			in:   replay.Summary{Calls: -1, ByMethod: map[string]int64{"act": -4}},
			want: replay.Summary{ByMethod: map[string]int64{"act": 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := tt.in.TerminationMessage()
			if len(msg) > replay.MaxSummaryBytes {
				t.Fatalf("%d bytes, over %d", len(msg), replay.MaxSummaryBytes)
			}
			got, ok := replay.ParseTerminationMessage(string(msg))
			if !ok {
				t.Fatalf("%s does not read back", msg)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a thousand methods of the longest names and the largest counts", func(t *testing.T) {
		msg := huge.TerminationMessage()
		if len(msg) > replay.MaxSummaryBytes {
			t.Fatalf("%d bytes, over %d", len(msg), replay.MaxSummaryBytes)
		}
		got, ok := replay.ParseTerminationMessage(string(msg))
		if !ok {
			t.Fatalf("%s does not read back", msg)
		}
		if len(got.ByMethod) != replay.MaxSummaryMethods || got.Calls != math.MaxInt64 {
			t.Errorf("got %d methods and %d calls", len(got.ByMethod), got.Calls)
		}
	})
}

// TestParseTerminationMessage: anything but a summary is no summary.
func TestParseTerminationMessage(t *testing.T) {
	for _, msg := range []string{
		"",
		"panic: the browser crashed\ngoroutine 1 [running]:",
		`{"calls": 3}`,
		`{"browserfleetReplaySummary": {"calls": 3, "extra": 1}}`,
		`{"browserfleetReplaySummary": {"calls": -3}}`,
		`{"browserfleetReplaySummary": {"calls": 3, "byMethod": {"not a method": 1}}}`,
		`{"browserfleetReplaySummary": {"calls": 3}, "other": {}}`,
		`{"browserfleetReplaySummary": null}`,
		`{"browserfleetReplaySummary": {"calls": 3}}` + strings.Repeat(" ", 4096),
	} {
		if s, ok := replay.ParseTerminationMessage(msg); ok {
			t.Errorf("%.60q read as %+v", msg, s)
		}
	}
	if _, ok := replay.ParseTerminationMessage(`{"browserfleetReplaySummary": {"calls": 3, "failed": 0, "byMethod": {"act": 3}, "tokenUsage": {"inputTokens": 5}}}`); !ok {
		t.Error("a summary does not read")
	}
}
