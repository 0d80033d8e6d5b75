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
		name, in, want string
	}{
		{"top line", "[0-1] RootWebArea: Shop\n", "[0] RootWebArea: Shop\n"},
		{"indented line", "    [2-345] button: Buy (disabled)\n", "    [2] button: Buy (disabled)\n"},
		{"last line without newline", "  [0-7] link: Home", "  [0] link: Home"},
		{"an id-like name is content", "[0-9] text: see [1-2] below\n", "[0] text: see [1-2] below\n"},
		{"not an id", "[a-1] text\n", "[a-1] text\n"},
		{"no closing bracket", "[0-1 text\n", "[0-1 text\n"},
		{"plain text", "just text\n", "just text\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, stripID(tc.in)); diff != "" {
				t.Errorf("stripID(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestContentSum(t *testing.T) {
	a := "[0-1] RootWebArea: Shop\n  [0-5] button: Buy\n"
	reload := "[0-101] RootWebArea: Shop\n  [0-187] button: Buy\n"
	changed := "[0-1] RootWebArea: Shop\n  [0-5] button: Sold out\n"
	moved := "[0-1] RootWebArea: Shop\n[0-5] button: Buy\n"
	otherFrame := "[0-1] RootWebArea: Shop\n  [1-5] button: Buy\n"
	if contentSum(a) != contentSum(reload) {
		t.Error("new node ids for the same content changed the sum")
	}
	for name, other := range map[string]string{"a changed name": changed, "a changed depth": moved, "another frame": otherFrame} {
		if contentSum(a) == contentSum(other) {
			t.Errorf("%s kept the sum", name)
		}
	}
}
