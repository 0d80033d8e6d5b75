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

package page

import (
	"testing"

	"github.com/chromedp/cdproto/input"
)

// Tests of the parsing helpers; they need no browser.

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		spec      string
		key       string
		modifiers input.Modifier
		texts     []string // text of the char events, if any
		wantErr   bool
	}{
		{spec: "Enter", key: "Enter", texts: []string{"\r"}},
		{spec: "enter", key: "Enter", texts: []string{"\r"}},
		{spec: "Return", key: "Enter", texts: []string{"\r"}},
		{spec: "Tab", key: "Tab"},
		{spec: "ArrowDown", key: "ArrowDown"},
		{spec: "Esc", key: "Escape"},
		{spec: "Space", key: " ", texts: []string{" "}},
		{spec: "a", key: "a", texts: []string{"a"}},
		{spec: "Shift+Tab", key: "Tab", modifiers: input.ModifierShift},
		{spec: "Control+a", key: "a", modifiers: input.ModifierCtrl},
		// A capital letter in a combination names the key, without Shift.
		{spec: "Control+A", key: "a", modifiers: input.ModifierCtrl},
		{spec: "Ctrl+Shift+A", key: "a", modifiers: input.ModifierCtrl | input.ModifierShift},
		{spec: "Ctrl+Shift+ArrowLeft", key: "ArrowLeft", modifiers: input.ModifierCtrl | input.ModifierShift},
		// "+" is Shift+= on the US layout chromedp's tables follow.
		{spec: "Control++", key: "+", modifiers: input.ModifierCtrl | input.ModifierShift},
		{spec: "+", key: "+", modifiers: input.ModifierShift, texts: []string{"+"}},
		{spec: "Hyper+x", wantErr: true},
		{spec: "NoSuchKey", wantErr: true},
		{spec: "", wantErr: true},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			kp, err := parseKey(tc.spec)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("parseKey(%q) succeeded", tc.spec)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			evs := kp.events()
			var main *input.DispatchKeyEventParams
			var texts []string
			for _, e := range evs {
				if e.Type == input.KeyChar {
					texts = append(texts, e.Text)
					continue
				}
				if e.Key == tc.key && main == nil {
					main = e
				}
			}
			if main == nil {
				t.Fatalf("no event for key %q in %+v", tc.key, evs)
			}
			if main.Modifiers != tc.modifiers {
				t.Errorf("modifiers %v, want %v", main.Modifiers, tc.modifiers)
			}
			if len(texts) != len(tc.texts) || (len(texts) > 0 && texts[0] != tc.texts[0]) {
				t.Errorf("char events %q, want %q", texts, tc.texts)
			}
			// Every key that goes down comes up.
			down := map[string]int{}
			for _, e := range evs {
				switch e.Type {
				case input.KeyDown, input.KeyRawDown:
					down[e.Key]++
				case input.KeyUp:
					down[e.Key]--
				}
			}
			for k, n := range down {
				if n != 0 {
					t.Errorf("key %q: %d more downs than ups", k, n)
				}
			}
		})
	}
}

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct{ in, kind, expr string }{
		{"#main", "css", "#main"},
		{"css=div > a", "css", "div > a"},
		{"xpath=/html[1]/body[1]", "xpath", "/html[1]/body[1]"},
		{"/html/body", "xpath", "/html/body"},
		{"//footer", "xpath", "//footer"},
		{"(//a)[2]", "xpath", "(//a)[2]"},
		{"  main  ", "css", "main"},
	} {
		if kind, expr := parseSelector(tc.in); kind != tc.kind || expr != tc.expr {
			t.Errorf("parseSelector(%q) = %q, %q; want %q, %q", tc.in, kind, expr, tc.kind, tc.expr)
		}
	}
}

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in    string
		ord   int
		id    int64
		valid bool
	}{
		{"0-42", 0, 42, true},
		{"[3-7]", 3, 7, true},
		{" 1-1 ", 1, 1, true},
		{"42", 0, 0, false},
		{"x-1", 0, 0, false},
		{"1-x", 0, 0, false},
		{"-1-2", 0, 0, false},
		{"1-0", 0, 0, false},
	} {
		ord, id, err := parseID(tc.in)
		if (err == nil) != tc.valid || (tc.valid && (ord != tc.ord || int64(id) != tc.id)) {
			t.Errorf("parseID(%q) = %d, %d, %v", tc.in, ord, id, err)
		}
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"50%": 50, "50": 50, " 12.5 % ": 12.5, "150%": 100, "-3": 0} {
		if got, err := parsePercent(in); err != nil || got != want {
			t.Errorf("parsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "half", "%"} {
		if _, err := parsePercent(bad); err == nil {
			t.Errorf("parsePercent(%q) succeeded", bad)
		}
	}
}

func TestCollapse(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"plain":             "plain",
		"  padded  ":        "padded",
		"a\n\tb   c":        "a b c",
		"non\u00a0breaking": "non breaking",
	} {
		if got := collapse(in); got != want {
			t.Errorf("collapse(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStepName(t *testing.T) {
	for in, want := range map[string]string{
		"DIV":            "div",
		"MY-WIDGET":      "my-widget",
		"svg":            "*[local-name()='svg']",
		"linearGradient": "*[local-name()='linearGradient']",
	} {
		if got := stepName(in); got != want {
			t.Errorf("stepName(%q) = %q, want %q", in, got, want)
		}
	}
}
