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
	"math"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

func TestFormFillCheckAndSubmit(t *testing.T) {
	tb := newTab(t)
	tb.open("/form")
	s := tb.capture(SnapshotOptions{})

	email := findID(t, s, `^textbox: Email$`)
	tb.perform(s, email, "fill", "first@example.com")
	// fill replaces what is there.
	tb.perform(s, email, "fill", "ada@example.com")
	tb.perform(s, findID(t, s, `^checkbox: Subscribe to news$`), "click")
	tb.perform(s, findID(t, s, `^textbox: Password$`), "type", "s3cret")
	tb.perform(s, email, "press", "Enter")

	ev := tb.events()
	for _, want := range []string{
		"input:email", "focus:email", "click:sub", "change:sub", "keydown:pw", "input:pw", "keydown:email",
		"submitted:ada@example.com:true",
	} {
		if !contains(ev, want) {
			t.Errorf("the page did not see %q; it saw %v", want, ev)
		}
	}

	after := tb.capture(SnapshotOptions{})
	for _, want := range []string{
		`^textbox: Email \(value="ada@example.com"\)$`,
		`^checkbox: Subscribe to news \(checked\)$`,
		// Password values are masked.
		`^textbox: Password \(value="••••"\)$`,
	} {
		if !hasLine(after, want) {
			t.Errorf("missing %q in:\n%s", want, after.Tree)
		}
	}
	if strings.Contains(after.Tree, "s3cret") {
		t.Errorf("the snapshot shows the password:\n%s", after.Tree)
	}

	t.Run("fill with nothing clears", func(t *testing.T) {
		tb.perform(after, email, "fill", "")
		var v string
		tb.eval(`document.getElementById('email').value`, &v)
		if v != "" {
			t.Errorf("value %q after clearing", v)
		}
	})
	t.Run("fill on a button fails", func(t *testing.T) {
		el, err := after.Resolve(tb.testCtx(), findID(t, after, `^button: Send$`))
		if err != nil {
			t.Fatal(err)
		}
		err = tb.p.Perform(tb.testCtx(), el, "fill", []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "not a text field") {
			t.Errorf("err = %v, want a 'not a text field' error", err)
		}
	})
	t.Run("unknown method", func(t *testing.T) {
		err := tb.p.Perform(tb.testCtx(), nil, "teleport", nil)
		if !errors.Is(err, ErrUnsupportedMethod) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestNativeSelect(t *testing.T) {
	for _, tc := range []struct {
		name, option, wantValue string
		wantErr                 string
	}{
		{name: "by text", option: "Medium", wantValue: "m"},
		{name: "by value", option: "m", wantValue: "m"},
		{name: "by text, any case", option: "medium", wantValue: "m"},
		{name: "missing option lists the options", option: "Huge", wantErr: `no option "Huge"; the options are "Small", "Medium", "Large"`},
		{name: "disabled option", option: "Large", wantErr: "disabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTab(t)
			tb.open("/select")
			s := tb.capture(SnapshotOptions{})
			id := findID(t, s, `^combobox: Size`)
			el, err := s.Resolve(tb.testCtx(), id)
			if err != nil {
				t.Fatal(err)
			}
			err = tb.p.Perform(tb.testCtx(), el, "selectOptionFromDropdown", []string{tc.option})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var v string
			tb.eval(`document.getElementById('size').value`, &v)
			if v != tc.wantValue {
				t.Errorf("value %q, want %q", v, tc.wantValue)
			}
			if ev := tb.events(); !contains(ev, "change:size") || !contains(ev, "input:size") {
				t.Errorf("no input and change events: %v", ev)
			}
			after := tb.capture(SnapshotOptions{})
			if !hasLine(after, `^combobox: Size \(value="Medium"\)$`) || !hasLine(after, `^option: Medium \(selected\)$`) {
				t.Errorf("snapshot does not show the choice:\n%s", after.Tree)
			}
		})
	}
}

func TestCustomDropdown(t *testing.T) {
	tb := newTab(t)
	tb.open("/dropdown")
	s := tb.capture(SnapshotOptions{})
	if strings.Contains(s.Tree, "Banana") {
		t.Fatalf("options visible before opening:\n%s", s.Tree)
	}
	// A div with a click listener and no role is marked clickable.
	dd := findID(t, s, `^generic: Choose a fruit \(clickable\)$`)
	tb.perform(s, dd, "click")

	open := tb.capture(SnapshotOptions{})
	banana := findID(t, open, `Banana`)
	if !hasLine(open, `Apple`) || !hasLine(open, `Cherry`) {
		t.Errorf("not all options shown:\n%s", open.Tree)
	}
	tb.perform(open, banana, "click")
	var text string
	tb.eval(`document.getElementById('dd').textContent`, &text)
	if text != "Banana" {
		t.Errorf("dropdown shows %q after choosing Banana", text)
	}
	if closed := tb.capture(SnapshotOptions{}); !hasLine(closed, `^generic: Banana \(clickable\)$`) || hasLine(closed, `Cherry`) {
		t.Errorf("closed dropdown:\n%s", closed.Tree)
	}
}

func TestMouseActions(t *testing.T) {
	for _, tc := range []struct {
		name, target, method string
		args                 []string
		want                 []string
	}{
		{"hover fires mouseover", `^button: Hover me$`, "hover", nil, []string{"mouseover:hov"}},
		{"doubleClick fires dblclick", `^button: Double me$`, "doubleClick", nil, []string{"dblclick:dbl", "click:dbl"}},
		{"dragAndDrop fires drop", `^StaticText: Drag me$`, "dragAndDrop", []string{"#dst"}, []string{"dragstart:src", "drop:dst"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTab(t)
			tb.open("/mouse")
			s := tb.capture(SnapshotOptions{})
			tb.perform(s, findID(t, s, tc.target), tc.method, tc.args...)
			ev := tb.events()
			for _, w := range tc.want {
				if !contains(ev, w) {
					t.Errorf("the page did not see %q; it saw %v", w, ev)
				}
			}
		})
	}

	t.Run("dragAndDrop onto a snapshot id", func(t *testing.T) {
		tb := newTab(t)
		tb.open("/mouse")
		s := tb.capture(SnapshotOptions{})
		tb.perform(s, findID(t, s, `Drag me`), "dragAndDrop", findID(t, s, `Drop here`))
		var text string
		tb.eval(`document.getElementById('dst').textContent`, &text)
		if text != "Dropped" {
			t.Errorf("drop zone says %q", text)
		}
	})
}

func TestScrolling(t *testing.T) {
	tb := newTab(t)
	tb.open("/long")
	s := tb.capture(SnapshotOptions{})
	root := findID(t, s, `^RootWebArea: Long \(scrollable\)$`)
	box := findID(t, s, `^generic: Inner scroller \(scrollable\)$`)

	// Measure the page after the first action: bringing the tab to the
	// front can resize its viewport.
	tb.perform(s, "", "scrollTo", "50%")
	var maxScroll, inner float64
	tb.eval(`document.documentElement.scrollHeight - document.documentElement.clientHeight`, &maxScroll)
	tb.eval(`document.documentElement.clientHeight`, &inner)
	scrollY := func() float64 {
		var y float64
		tb.eval(`scrollY`, &y)
		return y
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1 }

	if y := scrollY(); !near(y, maxScroll/2) {
		t.Errorf("scrollTo 50%%: scrollY %v, want %v", y, maxScroll/2)
	}
	tb.perform(s, "", "nextChunk")
	if y := scrollY(); !near(y, maxScroll/2+inner) {
		t.Errorf("nextChunk: scrollY %v, want %v", y, maxScroll/2+inner)
	}
	tb.perform(s, root, "prevChunk")
	if y := scrollY(); !near(y, maxScroll/2) {
		t.Errorf("prevChunk on the root: scrollY %v, want %v", y, maxScroll/2)
	}
	tb.perform(s, root, "scrollTo", "0")
	if y := scrollY(); y != 0 {
		t.Errorf("scrollTo 0 on the root: scrollY %v", y)
	}
	// The page fires scroll events when it next renders, which may come
	// after the calls above return: wait for the event rather than read
	// the list at once. The call's 20 s bound fails the test if it never
	// comes.
	var sawScroll bool
	if err := chromedp.Run(tb.testCtx(), chromedp.Evaluate(jsScrollSeen, &sawScroll, awaitPromise)); err != nil || !sawScroll {
		t.Errorf("no scroll event on the document (%v): %v", err, tb.events())
	}

	// An element's scrollTo moves that element, not the page.
	tb.perform(s, box, "scrollTo", "100%")
	var top, boxMax float64
	tb.eval(`document.getElementById('box').scrollTop`, &top)
	tb.eval(`(b => b.scrollHeight - b.clientHeight)(document.getElementById('box'))`, &boxMax)
	if !near(top, boxMax) || scrollY() != 0 {
		t.Errorf("box scrollTop %v (want %v), page scrollY %v (want 0)", top, boxMax, scrollY())
	}

	t.Run("bad percentage", func(t *testing.T) {
		if err := tb.p.Perform(tb.testCtx(), nil, "scrollTo", []string{"half"}); err == nil {
			t.Error("scrollTo half succeeded")
		}
	})
}

// jsScrollSeen resolves once the page has recorded a scroll event on the
// document: at once if it has, else at the next one.
const jsScrollSeen = `window.events.includes('scroll:#document') ? true :
  new Promise(r => {
    const seen = () => {
      if (!window.events.includes('scroll:#document')) return; // an element's scroll
      document.removeEventListener('scroll', seen, true);
      r(true);
    };
    document.addEventListener('scroll', seen, true);
  })`

func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
