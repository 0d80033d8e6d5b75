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

package captcha

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAnswer(t *testing.T) {
	type result struct {
		Answer, Err string
	}
	tests := []struct {
		name, text string
		want       result
	}{
		{"as is", "XK7PQ2", result{Answer: "XK7PQ2"}},
		{"space and quotes trimmed", "  \"XK7PQ2\"\n", result{Answer: "XK7PQ2"}},
		{"backticks trimmed", "`ab12`", result{Answer: "ab12"}},
		{"inner space kept", "two words", result{Answer: "two words"}},
		{"empty", " \n ", result{Err: "it is empty"}},
		{"only quotes", `""`, result{Err: "it is empty"}},
		{"too long", strings.Repeat("A", MaxAnswerLength+1), result{Err: "it has 65 characters, more than 64"}},
		{"the longest", strings.Repeat("A", MaxAnswerLength), result{Answer: strings.Repeat("A", MaxAnswerLength)}},
		{"two lines", "AB\nCD", result{Err: "it has characters that cannot be typed"}},
		{"a control character", "AB\x1bCD", result{Err: "it has characters that cannot be typed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got result
			a, err := parseAnswer(tt.text)
			got.Answer = a
			if err != nil {
				got.Err = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseAnswer(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}
