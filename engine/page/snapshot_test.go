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
	"regexp"
	"strings"
	"testing"
)

func TestCaptureOutline(t *testing.T) {
	tb := newTab(t)
	tb.open("/content")
	s := tb.capture(SnapshotOptions{})

	for _, tc := range []struct {
		name    string
		pattern string
		want    bool
	}{
		{"root line carries the title", `^RootWebArea: Content$`, true},
		{"landmarks", `^navigation$`, true},
		{"heading named by its text", `^heading: Welcome$`, true},
		{"links named by their text", `^link: About$`, true},
		{"states", `^button: Disabled button \(disabled\)$`, true},
		{"aria-expanded false reads collapsed", `^button: Menu \(collapsed\)$`, true},
		{"images named by alt", `^image: Logo image$`, true},
		{"a paragraph absorbs its only text", `^paragraph: First para$`, true},
		{"display:none content is left out", `Hidden button`, false},
		{"aria-hidden content is left out", `Aria hidden`, false},
		{"unnamed svg icons are left out", `^image$`, false},
		{"table sections and body are transparent", `^none`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hasLine(s, tc.pattern); got != tc.want {
				t.Errorf("line matching %q present = %v, want %v, in:\n%s", tc.pattern, got, tc.want, s.Tree)
			}
		})
	}

	t.Run("empty wrappers are pruned", func(t *testing.T) {
		// <div><div><span>Deeply wrapped text</span></div></div> sits
		// directly under main: no generic line for any wrapper.
		lines := strings.Split(s.Tree, "\n")
		for i, l := range lines {
			if strings.Contains(l, "Deeply wrapped text") {
				if !strings.Contains(lines[i-1], "heading: Welcome") {
					t.Errorf("wrapped text not hoisted next to the heading:\n%s", s.Tree)
				}
				if indent(l) != indent(lines[i-1]) {
					t.Errorf("wrapped text at depth %d, heading at %d", indent(l), indent(lines[i-1]))
				}
				return
			}
		}
		t.Fatalf("no wrapped text in:\n%s", s.Tree)
	})

	t.Run("structural node with several children is kept", func(t *testing.T) {
		// <div><p>First para</p><p>Second para</p></div>
		lines := strings.Split(s.Tree, "\n")
		for i, l := range lines {
			if strings.Contains(l, "paragraph: First para") {
				if !strings.HasSuffix(lines[i-1], "] generic") || indent(lines[i-1]) != indent(l)-2 {
					t.Errorf("want a generic parent line before %q, got %q", l, lines[i-1])
				}
				return
			}
		}
	})

	t.Run("every id has an xpath and every link a URL", func(t *testing.T) {
		for _, l := range strings.Split(strings.TrimSpace(s.Tree), "\n") {
			m := lineRe.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("malformed line %q", l)
			}
			if !strings.HasPrefix(s.XPaths[m[1]], "xpath=/html[1]") {
				t.Errorf("id %s: xpath %q", m[1], s.XPaths[m[1]])
			}
			if strings.HasPrefix(m[2], "link:") && s.URLs[m[1]] == "" {
				t.Errorf("link %s has no URL", m[1])
			}
		}
	})
}

func indent(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

func TestCaptureLinkURLs(t *testing.T) {
	tb := newTab(t)
	tb.open("/content")
	s := tb.capture(SnapshotOptions{})
	// The page has <base href="/docs/">.
	for name, want := range map[string]string{
		"Home":     originA + "/home",
		"About":    originA + "/docs/about",
		"External": "https://example.org/x?y=1",
		"Up one":   originA + "/up",
		"Legal":    originA + "/legal",
	} {
		id := findID(t, s, `^link: `+regexp.QuoteMeta(name)+`$`)
		if got := s.URLs[id]; got != want {
			t.Errorf("link %q (%s): URL %q, want %q", name, id, got, want)
		}
	}
}

// TestXPathsResolveToTheirNodes checks every id of several pages against
// its xpath both ways: document.evaluate finds an element with the line's
// text, and Frame.Query finds the very node the id names.
func TestXPathsResolveToTheirNodes(t *testing.T) {
	for _, path := range []string{"/content", "/form", "/shadow", "/same-outer", "/cross-outer"} {
		t.Run(path, func(t *testing.T) {
			tb := newTab(t)
			tb.open(path)
			s := tb.capture(SnapshotOptions{})
			for id, xp := range s.XPaths {
				el, err := s.Resolve(tb.testCtx(), id)
				if err != nil {
					t.Fatalf("resolve %s: %v", id, err)
				}
				got, err := el.Frame.Query(tb.testCtx(), xp)
				if err != nil {
					t.Errorf("query %s (%s): %v", xp, id, err)
					continue
				}
				if got.BackendNodeID != el.BackendNodeID {
					t.Errorf("%s: %s finds node %d, want %d", id, xp, got.BackendNodeID, el.BackendNodeID)
				}
			}

			// Light-DOM xpaths of the main frame are plain XPath.
			for _, l := range strings.Split(s.Tree, "\n") {
				m := lineRe.FindStringSubmatch(l)
				if m == nil || !strings.HasPrefix(m[1], "0-") || strings.Contains(s.XPaths[m[1]], "//") {
					continue
				}
				role, name, _ := strings.Cut(m[2], ": ")
				name, _, _ = strings.Cut(name, " (")
				if name == "" || (role != "link" && role != "button" && role != "heading" && role != "StaticText") {
					continue
				}
				xp := strings.TrimPrefix(s.XPaths[m[1]], "xpath=")
				var text string
				tb.eval(`(() => { const n = document.evaluate(`+jsString(xp)+`, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue; return n ? n.textContent.replace(/\s+/g, ' ').trim() : '<none>'; })()`, &text)
				if text != name {
					t.Errorf("%s: document.evaluate(%s) has text %q, want %q", m[1], xp, text, name)
				}
			}
		})
	}
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func TestCaptureScopeAndIgnore(t *testing.T) {
	tb := newTab(t)
	tb.open("/content")
	for _, tc := range []struct {
		name     string
		opts     SnapshotOptions
		want     []string
		dontWant []string
	}{
		{
			name:     "scope to main by CSS",
			opts:     SnapshotOptions{Selector: "#main"},
			want:     []string{`^main$`, `^heading: Welcome$`, `^link: External$`},
			dontWant: []string{`^link: Home$`, `^link: Legal$`, `^RootWebArea`},
		},
		{
			name:     "scope by xpath",
			opts:     SnapshotOptions{Selector: "xpath=/html/body/footer"},
			want:     []string{`^contentinfo$`, `^link: Legal$`},
			dontWant: []string{`^heading: Welcome$`},
		},
		{
			name:     "ignore by CSS and xpath",
			opts:     SnapshotOptions{IgnoreSelectors: []string{"nav", "xpath=//footer", "ul li:first-child"}},
			want:     []string{`^RootWebArea: Content$`, `^heading: Welcome$`, `^link: Up one$`},
			dontWant: []string{`^link: Home$`, `^link: About$`, `^link: Legal$`, `^link: External$`, `^navigation$`},
		},
		{
			name:     "scope and ignore together",
			opts:     SnapshotOptions{Selector: "main", IgnoreSelectors: []string{"ul"}},
			want:     []string{`^heading: Welcome$`},
			dontWant: []string{`^list$`, `^link: External$`, `^link: Home$`},
		},
		// The nth suffix picks one match.
		{
			name:     "scope to the second paragraph",
			opts:     SnapshotOptions{Selector: "main p >> nth=1"},
			want:     []string{`Second para`},
			dontWant: []string{`First para`, `heading: Welcome`},
		},
		{
			name:     "scope to the first of an xpath's matches",
			opts:     SnapshotOptions{Selector: "xpath=//main//p >> nth=0"},
			want:     []string{`First para`},
			dontWant: []string{`Second para`},
		},
		{
			name:     "ignore only the second list item",
			opts:     SnapshotOptions{Selector: "main", IgnoreSelectors: []string{"li >> nth=1"}},
			want:     []string{`^link: External$`},
			dontWant: []string{`^link: Up one$`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tb.capture(tc.opts)
			checkLines(t, s, tc.want, tc.dontWant)
			for id := range s.XPaths {
				if !strings.Contains(s.Tree, "["+id+"]") {
					t.Errorf("xpath map has %s, which the tree does not show", id)
				}
			}
		})
	}

	t.Run("scope selector that matches nothing", func(t *testing.T) {
		_, err := tb.p.Capture(tb.testCtx(), SnapshotOptions{Selector: "#nope"})
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
}

// checkLines checks that the snapshot has a line matching each pattern of
// want and none matching one of dontWant.
func checkLines(t *testing.T, s *Snapshot, want, dontWant []string) {
	t.Helper()
	for _, p := range want {
		if !hasLine(s, p) {
			t.Errorf("missing %q in:\n%s", p, s.Tree)
		}
	}
	for _, p := range dontWant {
		if hasLine(s, p) {
			t.Errorf("unexpected %q in:\n%s", p, s.Tree)
		}
	}
}

func TestCaptureShadowDOM(t *testing.T) {
	tb := newTab(t)
	tb.open("/shadow")
	s := tb.capture(SnapshotOptions{})
	for _, p := range []string{`^heading: Card title$`, `^button: Shadow button$`, `^StaticText: Slotted text$`, `^link: Deep link$`} {
		if !hasLine(s, p) {
			t.Errorf("missing %q in:\n%s", p, s.Tree)
		}
	}
	btn := findID(t, s, `^button: Shadow button$`)
	if xp := s.XPaths[btn]; xp != "xpath=/html[1]/body[1]/x-card[1]//button[1]" {
		t.Errorf("shadow button xpath %q", xp)
	}
	if xp := s.XPaths[findID(t, s, `^link: Deep link$`)]; xp != "xpath=/html[1]/body[1]/x-card[1]//x-inner[1]//a[1]" {
		t.Errorf("nested shadow link xpath %q", xp)
	}
	// The slotted span is a light child of the host, not of the slot.
	if xp := s.XPaths[findID(t, s, `^StaticText: Slotted text$`)]; xp != "xpath=/html[1]/body[1]/x-card[1]/span[1]/text()[1]" {
		t.Errorf("slotted text xpath %q", xp)
	}

	tb.perform(s, btn, "click")
	if !contains(tb.events(), "shadow-click") {
		t.Errorf("shadow button click not seen; events %v", tb.events())
	}

	// The xpath works as a selector too.
	el, err := tb.p.MainFrame().Query(tb.testCtx(), s.XPaths[btn])
	if err != nil {
		t.Fatalf("query shadow xpath: %v", err)
	}
	if err := tb.p.Perform(tb.testCtx(), el, "click", nil); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range tb.events() {
		if e == "shadow-click" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d shadow clicks, want 2", n)
	}
}

func TestCaptureChromeAccessibility(t *testing.T) {
	tb := newTab(t)
	tb.open("/form")
	s := tb.capture(SnapshotOptions{ChromeAccessibility: true})
	for _, p := range []string{`^textbox: Email`, `^checkbox: Subscribe to news`, `^button: Send$`} {
		if !hasLine(s, p) {
			t.Errorf("missing %q in:\n%s", p, s.Tree)
		}
	}
	id := findID(t, s, `^textbox: Email`)
	tb.perform(s, id, "fill", "ax@example.com")
	var v string
	tb.eval(`document.getElementById('email').value`, &v)
	if v != "ax@example.com" {
		t.Errorf("email value %q", v)
	}
}

func TestResolve(t *testing.T) {
	tb := newTab(t)
	tb.open("/dropdown")
	s := tb.capture(SnapshotOptions{})
	id := findID(t, s, `Choose a fruit`)

	t.Run("malformed ids", func(t *testing.T) {
		for _, bad := range []string{"", "12", "a-b", "0-", "-3", "0-0"} {
			if _, err := s.Resolve(tb.testCtx(), bad); err == nil {
				t.Errorf("Resolve(%q) succeeded", bad)
			}
		}
	})
	t.Run("unknown frame", func(t *testing.T) {
		if _, err := s.Resolve(tb.testCtx(), "7-1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("a replaced node heals through its xpath", func(t *testing.T) {
		tb.eval(`(() => { const n = document.getElementById('dd').cloneNode(true); document.getElementById('dd').replaceWith(n); return true; })()`, new(bool))
		el, err := s.Resolve(tb.testCtx(), id)
		if err != nil {
			t.Fatalf("resolve after re-render: %v", err)
		}
		if el.ID == id {
			t.Errorf("resolved to the old node %s", id)
		}
		tb.perform(s, id, "click")
		var hidden bool
		tb.eval(`document.getElementById('menu').hidden`, &hidden)
		// The clone has no listener, so the menu stays closed; what
		// matters is that the click reached the live node without error.
		if !hidden {
			t.Errorf("menu opened by a node without listener")
		}
	})
}
