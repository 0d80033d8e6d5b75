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

package action

import "testing"

func TestCanonical(t *testing.T) {
	tests := []struct {
		name   string
		want   string
		wantOK bool
	}{
		{name: "click", want: Click, wantOK: true},
		{name: "CLICK", want: Click, wantOK: true},
		{name: "dblclick", want: DoubleClick, wantOK: true},
		{name: "doubleclick", want: DoubleClick, wantOK: true},
		{name: "selectOption", want: SelectOption, wantOK: true},
		{name: "selectoptionfromdropdown", want: SelectOption, wantOK: true},
		{name: "scrollIntoView", want: ScrollIntoView, wantOK: true},
		{name: "submit"},
		{name: ""},
	}
	for _, tt := range tests {
		got, ok := Canonical(tt.name)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("Canonical(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}
