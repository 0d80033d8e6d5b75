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
	"errors"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
	for _, tc := range []struct {
		in   string
		want selector
		err  error
	}{
		{in: "#main", want: selector{"css", "#main", -1}},
		{in: "css=div > a", want: selector{"css", "div > a", -1}},
		{in: "xpath=/html[1]/body[1]", want: selector{"xpath", "/html[1]/body[1]", -1}},
		{in: "/html/body", want: selector{"xpath", "/html/body", -1}},
		{in: "//footer", want: selector{"xpath", "//footer", -1}},
		{in: "(//a)[2]", want: selector{"xpath", "(//a)[2]", -1}},
		{in: "  main  ", want: selector{"css", "main", -1}},
		{in: "li >> nth=2", want: selector{"css", "li", 2}},
		{in: "ul > li>>nth=0 ", want: selector{"css", "ul > li", 0}},
		{in: "xpath=//li >> nth=1", want: selector{"xpath", "//li", 1}},
		{in: "li >> nth=-1", err: ErrBadSelector},
		{in: "li >> nth=x", err: ErrBadSelector},
		{in: "li >> nth=", err: ErrBadSelector},
		{in: ">> nth=1", err: ErrBadSelector},
		{in: "xpath=", err: ErrBadSelector},
		{in: "text=Sign in", err: ErrTextSelector},
		{in: "text=Sign in >> nth=1", err: ErrTextSelector},
	} {
		got, err := parseSelector(tc.in)
		if !errors.Is(err, tc.err) {
			t.Errorf("parseSelector(%q) error %v, want %v", tc.in, err, tc.err)
			continue
		}
		if tc.err == nil {
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(selector{})); diff != "" {
				t.Errorf("parseSelector(%q) (-want +got):\n%s", tc.in, diff)
			}
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

func TestDecodeRows(t *testing.T) {
	type doc struct {
		Ints   rows[int32]   `json:"ints"`
		Floats rows[float64] `json:"floats"`
	}
	for _, tc := range []struct {
		in      string
		ints    [][]int32
		floats  [][]float64
		wantErr bool
	}{
		{in: `{"ints": [[1, 2], [], [3]], "floats": [[0.5, 1e3, -2, 4]]}`, ints: [][]int32{{1, 2}, {}, {3}}, floats: [][]float64{{0.5, 1000, -2, 4}}},
		{in: `{"ints": [], "floats": null}`},
		{in: `{}`},
		{in: `{"ints": [[1, "x"]]}`, wantErr: true},
		{in: `{"ints": [1]}`, wantErr: true},
		{in: `{"ints": [[1]`, wantErr: true},
		{in: `{"ints": {"a": 1}}`, wantErr: true},
	} {
		var d doc
		err := json.Unmarshal([]byte(tc.in), &d)
		if (err != nil) != tc.wantErr {
			t.Errorf("decode %s: err = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		got := struct {
			Ints   [][]int32
			Floats [][]float64
		}{}
		for i := range d.Ints.len() {
			got.Ints = append(got.Ints, d.Ints.row(i))
		}
		for i := range d.Floats.len() {
			got.Floats = append(got.Floats, d.Floats.row(i))
		}
		want := struct {
			Ints   [][]int32
			Floats [][]float64
		}{tc.ints, tc.floats}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("decode %s (-want +got):\n%s", tc.in, diff)
		}
	}
}
