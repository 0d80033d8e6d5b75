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

package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStripID(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, id string
	}{
		{"top line", "[0-1] RootWebArea: Shop\n", "[0] RootWebArea: Shop\n", "0-1"},
		{"indented line", "    [2-345] button: Buy (disabled)\n", "    [2] button: Buy (disabled)\n", "2-345"},
		{"last line without newline", "  [0-7] link: Home", "  [0] link: Home", "0-7"},
		{"an id-like name is content", "[0-9] text: see [1-2] below\n", "[0] text: see [1-2] below\n", "0-9"},
		{"not an id", "[a-1] text\n", "[a-1] text\n", ""},
		{"no closing bracket", "[0-1 text\n", "[0-1 text\n", ""},
		{"plain text", "just text\n", "just text\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, id := stripID(tc.in)
			if diff := cmp.Diff([]string{tc.want, tc.id}, []string{got, id}); diff != "" {
				t.Errorf("stripID(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestContentSum(t *testing.T) {
	a := "[0-1] RootWebArea: Shop\n  [0-5] button: Buy\n  [0-6] link: Terms\n"
	urls := map[string]string{"0-6": "https://shop.example/terms"}
	reload := "[0-101] RootWebArea: Shop\n  [0-187] button: Buy\n  [0-188] link: Terms\n"
	reloadURLs := map[string]string{"0-188": "https://shop.example/terms"}
	if contentSum(a, urls) != contentSum(reload, reloadURLs) {
		t.Error("new node ids for the same content changed the sum")
	}
	for name, other := range map[string]struct {
		tree string
		urls map[string]string
	}{
		"a changed name":        {"[0-1] RootWebArea: Shop\n  [0-5] button: Sold out\n  [0-6] link: Terms\n", urls},
		"a changed depth":       {"[0-1] RootWebArea: Shop\n[0-5] button: Buy\n  [0-6] link: Terms\n", urls},
		"another frame":         {"[0-1] RootWebArea: Shop\n  [1-5] button: Buy\n  [0-6] link: Terms\n", urls},
		"a link's other target": {a, map[string]string{"0-6": "https://shop.example/terms?v=2"}},
	} {
		if contentSum(a, urls) == contentSum(other.tree, other.urls) {
			t.Errorf("%s kept the sum", name)
		}
	}
}
