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
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// The frame scope: SnapshotOptions.Frame and Page.Frame, on /frames under
// --site-per-process, so that the cross-site frame is certainly out of
// process. Frame ids are learned from DevTools (Page.getFrameTree of the
// tab and of each out-of-process frame, whose id is its target id), not
// from the code under test.

// frameTree is the part of Page.getFrameTree the tests read.
type frameTree struct {
	Frame struct {
		ID  cdp.FrameID `json:"id"`
		URL string      `json:"url"`
	} `json:"frame"`
	ChildFrames []frameTree `json:"childFrames"`
}

// frameIDs returns the ids of the tab's frames by their URL's path.
func frameIDs(t *testing.T, tb *tab) map[string]cdp.FrameID {
	t.Helper()
	ids := make(map[string]cdp.FrameID)
	var walk func(ft frameTree)
	walk = func(ft frameTree) {
		if u, err := url.Parse(ft.Frame.URL); err == nil {
			ids[u.Path] = ft.Frame.ID
		}
		for _, c := range ft.ChildFrames {
			walk(c)
		}
	}
	tree := func(s *session) {
		var r struct {
			FrameTree frameTree `json:"frameTree"`
		}
		if err := s.call(tb.testCtx(), "Page.getFrameTree", nil, &r); err != nil {
			t.Fatalf("Page.getFrameTree: %v", err)
		}
		walk(r.FrameTree)
	}
	tree(tb.p.main)
	targets, err := chromedp.Targets(tb.ctx)
	if err != nil {
		t.Fatalf("listing targets: %v", err)
	}
	for _, ti := range targets {
		if ti.Type != "iframe" || !strings.HasPrefix(ti.URL, originB+"/frames") {
			continue
		}
		s, err := tb.p.frameSession(tb.testCtx(), ti.TargetID)
		if err != nil {
			t.Fatalf("attaching to frame target %s: %v", ti.URL, err)
		}
		tree(s)
	}
	for _, p := range []string{"/frames", "/frames-same", "/frames-nested", "/frames-cross", "/frames-cross-nested", "/frames-hidden"} {
		if ids[p] == "" {
			t.Fatalf("no frame %s in the tab's frame trees: %v", p, ids)
		}
	}
	return ids
}

// framesTab opens /frames on the --site-per-process browser once its
// frames have loaded.
func framesTab(t *testing.T) (*tab, map[string]cdp.FrameID) {
	t.Helper()
	tb := newTab(t, isolatedBrowser(t))
	tb.open("/frames")
	// The load event waits for every iframe, the out-of-process one
	// included; its target is announced by then.
	return tb, frameIDs(t, tb)
}

// treeLines are the "role: name" parts of a tree's lines.
func treeLines(s *Snapshot) []string {
	var out []string
	for _, l := range strings.Split(s.Tree, "\n") {
		if m := lineRe.FindStringSubmatch(l); m != nil {
			out = append(out, m[2])
		}
	}
	return out
}

func TestCaptureFrameScope(t *testing.T) {
	tb, ids := framesTab(t)
	whole := tb.capture(SnapshotOptions{})
	if f := whole.Frames[findOrdinal(t, whole, `^button: Cross button$`)]; !f.OutOfProcess {
		t.Fatalf("the cross-site frame is in process under --site-per-process")
	}

	for _, tc := range []struct {
		name  string
		frame cdp.FrameID
		// want are the tree's lines, in order ("role: name").
		want []string
	}{
		{
			name:  "no frame: the whole page",
			frame: "",
			want: []string{"RootWebArea: Frames host", "heading: Host heading", "button: Host button",
				"Iframe", "RootWebArea: Same frame", "heading: Same heading", "navigation", "link: Same nav link",
				"textbox: Same field", "button: Same button", "Iframe", "RootWebArea: Nested frame", "paragraph: Nested text", "button: Nested button",
				"Iframe", "RootWebArea: Cross frame", "heading: Cross heading", "textbox: Cross field", "button: Cross button",
				"Iframe", "RootWebArea: Cross nested frame", "paragraph: Cross nested text"},
		},
		{
			name:  "the main frame's id: the whole page",
			frame: ids["/frames"],
			want: []string{"RootWebArea: Frames host", "heading: Host heading", "button: Host button",
				"Iframe", "RootWebArea: Same frame", "heading: Same heading", "navigation", "link: Same nav link",
				"textbox: Same field", "button: Same button", "Iframe", "RootWebArea: Nested frame", "paragraph: Nested text", "button: Nested button",
				"Iframe", "RootWebArea: Cross frame", "heading: Cross heading", "textbox: Cross field", "button: Cross button",
				"Iframe", "RootWebArea: Cross nested frame", "paragraph: Cross nested text"},
		},
		{
			name:  "a same-process iframe, with the iframe nested in it",
			frame: ids["/frames-same"],
			want: []string{"RootWebArea: Same frame", "heading: Same heading", "navigation", "link: Same nav link",
				"textbox: Same field", "button: Same button", "Iframe", "RootWebArea: Nested frame", "paragraph: Nested text", "button: Nested button"},
		},
		{
			name:  "an iframe nested in a same-process iframe",
			frame: ids["/frames-nested"],
			want:  []string{"RootWebArea: Nested frame", "paragraph: Nested text", "button: Nested button"},
		},
		{
			name:  "an out-of-process iframe, with the iframe nested in it",
			frame: ids["/frames-cross"],
			want: []string{"RootWebArea: Cross frame", "heading: Cross heading", "textbox: Cross field", "button: Cross button",
				"Iframe", "RootWebArea: Cross nested frame", "paragraph: Cross nested text"},
		},
		{
			name:  "an iframe nested in an out-of-process iframe",
			frame: ids["/frames-cross-nested"],
			want:  []string{"RootWebArea: Cross nested frame", "paragraph: Cross nested text"},
		},
		{
			// Its iframe is display:none: the document is there, nothing
			// in it is rendered.
			name:  "a hidden iframe",
			frame: ids["/frames-hidden"],
			want:  []string{"RootWebArea: Hidden frame"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tb.capture(SnapshotOptions{Frame: tc.frame})
			if got := treeLines(s); !slices.Equal(got, tc.want) {
				t.Errorf("tree lines\n got %q\nwant %q\nin:\n%s", got, tc.want, s.Tree)
			}
			if strings.HasPrefix(s.Tree, " ") {
				t.Errorf("the scoped tree does not start at depth 0:\n%s", s.Tree)
			}
			// Only the ids the tree shows, each resolving in its frame.
			for id := range s.XPaths {
				if !strings.Contains(s.Tree, "["+id+"]") {
					t.Errorf("xpath map has %s, which the tree does not show", id)
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(s.Tree), "\n") {
				m := lineRe.FindStringSubmatch(l)
				el, err := s.Resolve(tb.testCtx(), m[1])
				if err != nil {
					t.Fatalf("resolve %s: %v", m[1], err)
				}
				got, err := el.Frame.Query(tb.testCtx(), s.XPaths[m[1]])
				if err != nil || got.BackendNodeID != el.BackendNodeID {
					t.Errorf("%s: its xpath %s finds %v (%v)", m[1], s.XPaths[m[1]], got, err)
				}
			}
			// Ids keep the whole page's frame ordinals.
			for _, l := range strings.Split(strings.TrimSpace(s.Tree), "\n") {
				m := lineRe.FindStringSubmatch(l)
				if !strings.Contains(whole.Tree, "["+m[1]+"] "+m[2]) && tc.frame != ids["/frames-hidden"] {
					t.Errorf("line [%s] %s is not the whole page's", m[1], m[2])
				}
			}
		})
	}

	t.Run("a frame the page does not have", func(t *testing.T) {
		_, err := tb.p.Capture(tb.testCtx(), SnapshotOptions{Frame: "F00D"})
		var nf *NoFrameError
		if !errors.Is(err, ErrNoFrame) || !errors.As(err, &nf) || nf.Frame != "F00D" {
			t.Fatalf("err = %v, want a NoFrameError for F00D", err)
		}
		if !strings.Contains(err.Error(), "F00D") {
			t.Errorf("the error %q does not name the frame", err)
		}
	})

	t.Run("the frames keep their parents", func(t *testing.T) {
		s := tb.capture(SnapshotOptions{Frame: ids["/frames-cross-nested"]})
		var chain []string
		for f := s.Frames[findOrdinal(t, s, `^paragraph: Cross nested text$`)]; f != nil; f = f.Parent {
			u, _ := url.Parse(f.URL)
			chain = append(chain, u.Path)
		}
		if want := []string{"/frames-cross-nested", "/frames-cross", "/frames"}; !slices.Equal(chain, want) {
			t.Errorf("frame chain %q, want %q", chain, want)
		}
	})
}

// findOrdinal is the frame ordinal of the first line matching pattern.
func findOrdinal(t *testing.T, s *Snapshot, pattern string) int {
	t.Helper()
	ord, _, err := parseID(findID(t, s, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return ord
}

func TestCaptureFrameScopeSelectors(t *testing.T) {
	tb, ids := framesTab(t)
	whole := tb.capture(SnapshotOptions{})
	for _, tc := range []struct {
		name  string
		opts  SnapshotOptions
		want  []string
		error error
	}{
		{
			name: "a CSS scope in the frame's document",
			opts: SnapshotOptions{Frame: ids["/frames-same"], Selector: "nav"},
			want: []string{"navigation", "link: Same nav link"},
		},
		{
			name: "an XPath scope in an out-of-process frame's document",
			opts: SnapshotOptions{Frame: ids["/frames-cross"], Selector: "xpath=/html/body/h2"},
			want: []string{"heading: Cross heading"},
		},
		{
			name: "ignored elements of the frame's document",
			opts: SnapshotOptions{Frame: ids["/frames-same"], IgnoreSelectors: []string{"nav", "xpath=//button", "iframe"}},
			want: []string{"RootWebArea: Same frame", "heading: Same heading", "textbox: Same field"},
		},
		{
			name: "ignored elements of an out-of-process frame's document",
			opts: SnapshotOptions{Frame: ids["/frames-cross"], IgnoreSelectors: []string{"input", "iframe"}},
			want: []string{"RootWebArea: Cross frame", "heading: Cross heading", "button: Cross button"},
		},
		{
			name: "scope and ignore together",
			opts: SnapshotOptions{Frame: ids["/frames-same"], Selector: "body", IgnoreSelectors: []string{".act", "h2"}},
			want: []string{"navigation", "link: Same nav link", "textbox: Same field", "Iframe", "RootWebArea: Nested frame", "paragraph: Nested text", "button: Nested button"},
		},
		{
			// The host page has an h1; the frame's document has none.
			name:  "a selector of the main document matches nothing in the frame",
			opts:  SnapshotOptions{Frame: ids["/frames-same"], Selector: "h1"},
			error: ErrNotFound,
		},
		{
			name: "the main frame's selectors stay the main document's",
			opts: SnapshotOptions{Selector: "h1"},
			want: []string{"heading: Host heading"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tb.p.Capture(tb.testCtx(), tc.opts)
			if tc.error != nil {
				if !errors.Is(err, tc.error) {
					t.Fatalf("err = %v, want %v", err, tc.error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := treeLines(s); !slices.Equal(got, tc.want) {
				t.Errorf("tree lines\n got %q\nwant %q", got, tc.want)
			}
			// A walk from an element inside the frame reaches the nested
			// frame again: it keeps its ordinal, and nothing else shows.
			for _, l := range strings.Split(strings.TrimSpace(s.Tree), "\n") {
				m := lineRe.FindStringSubmatch(l)
				if !strings.Contains(whole.Tree, "["+m[1]+"] "+m[2]) {
					t.Errorf("line [%s] %s is not the whole page's", m[1], m[2])
				}
			}
			for id := range s.XPaths {
				if !strings.Contains(s.Tree, "["+id+"]") {
					t.Errorf("xpath map has %s, which the tree does not show", id)
				}
			}
			// (A main-frame selector scope, as ever, registers only the
			// frames below its element.)
			if tc.opts.Frame != "" && len(s.Frames) != len(whole.Frames) {
				t.Errorf("%d frames, want the page's %d", len(s.Frames), len(whole.Frames))
			}
		})
	}
}

// TestFrameScopeActs performs input on the ids of scoped snapshots and on
// selectors queried in Page.Frame, and checks that it reached the frame.
func TestFrameScopeActs(t *testing.T) {
	tb, ids := framesTab(t)
	counter := func(expr string) func() int {
		return func() int {
			var n int
			tb.eval(`(`+expr+`) || 0`, &n)
			return n
		}
	}
	posted := func(msg string) func() int {
		return func() int {
			var msgs []string
			tb.eval(`window.msgs`, &msgs)
			n := 0
			for _, m := range msgs {
				if m == msg {
					n++
				}
			}
			return n
		}
	}
	typed := func(expr string) func() string {
		return func() string {
			var v string
			tb.eval(`String(`+expr+` || '')`, &v)
			return v
		}
	}
	for _, tc := range []struct {
		name      string
		frame     cdp.FrameID
		button    string
		selector  string
		clicks    func() int
		field     string
		fieldText func() string
	}{
		{"same-process iframe", ids["/frames-same"], "button: Same button", "button.act", counter("window.sameClicked"), "textbox: Same field", typed("window.sameInput")},
		{"nested iframe", ids["/frames-nested"], "button: Nested button", "xpath=/html/body/button", counter("window.nestedClicked"), "", nil},
		{"out-of-process iframe", ids["/frames-cross"], "button: Cross button", "css=.act", posted("clicked"), "textbox: Cross field", func() string {
			var msgs []string
			tb.eval(`window.msgs`, &msgs)
			for _, m := range slices.Backward(msgs) {
				if v, ok := strings.CutPrefix(m, "input:"); ok {
					return v
				}
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.clicks()
			s := tb.capture(SnapshotOptions{Frame: tc.frame})
			tb.perform(s, findID(t, s, `^`+tc.button+`$`), "click")
			waitFor(t, func() bool { return tc.clicks() == before+1 })

			f, err := tb.p.Frame(tb.testCtx(), tc.frame)
			if err != nil {
				t.Fatalf("Page.Frame: %v", err)
			}
			if f.ID != tc.frame {
				t.Errorf("Page.Frame gave frame %s, want %s", f.ID, tc.frame)
			}
			el, err := f.Query(tb.testCtx(), tc.selector)
			if err != nil {
				t.Fatalf("query %s in the frame: %v", tc.selector, err)
			}
			if err := tb.p.Perform(tb.testCtx(), el, "click", nil); err != nil {
				t.Fatalf("click %s: %v", tc.selector, err)
			}
			waitFor(t, func() bool { return tc.clicks() == before+2 })

			if tc.field == "" {
				return
			}
			tb.perform(s, findID(t, s, `^`+tc.field+`$`), "fill", "typed in "+tc.name)
			waitFor(t, func() bool { return tc.fieldText() == "typed in "+tc.name })
		})
	}

	t.Run("the main frame and frames the page does not have", func(t *testing.T) {
		f, err := tb.p.Frame(tb.testCtx(), ids["/frames"])
		if err != nil || f.Parent != nil || f.ID != ids["/frames"] {
			t.Fatalf("Page.Frame(main) = %+v, %v", f, err)
		}
		if _, err := f.Query(tb.testCtx(), "h1"); err != nil {
			t.Errorf("query in the main frame: %v", err)
		}
		if _, err := tb.p.Frame(tb.testCtx(), "F00D"); !errors.Is(err, ErrNoFrame) {
			t.Errorf("Page.Frame(F00D) err = %v, want ErrNoFrame", err)
		}
	})

	t.Run("a frame that navigated since", func(t *testing.T) {
		// The frame keeps its id: the scope follows it to its new
		// document, same-process or out-of-process.
		for _, tc := range []struct {
			frame, iframe, url, want string
		}{
			{"/frames-same", "same", originA + "/frames-hidden", "paragraph: Hidden text"},
			{"/frames-cross", "cross", originB + "/frames-cross-nested", "paragraph: Cross nested text"},
		} {
			tb.eval(`document.getElementById('`+tc.iframe+`').src = '`+tc.url+`', true`, new(bool))
			var s *Snapshot
			waitFor(t, func() bool {
				var err error
				s, err = tb.p.Capture(tb.testCtx(), SnapshotOptions{Frame: ids[tc.frame]})
				return err == nil && hasLine(s, `^`+tc.want+`$`)
			})
			if got := treeLines(s); len(got) != 2 || got[1] != tc.want {
				t.Errorf("frame %s after navigating: %q", tc.frame, got)
			}
		}
	})

	t.Run("a frame removed since", func(t *testing.T) {
		tb.eval(`document.getElementById('same').remove(), true`, new(bool))
		_, err := tb.p.Capture(tb.testCtx(), SnapshotOptions{Frame: ids["/frames-same"]})
		if !errors.Is(err, ErrNoFrame) {
			t.Errorf("capture of a removed frame: err = %v, want ErrNoFrame", err)
		}
		if _, err := tb.p.Capture(tb.testCtx(), SnapshotOptions{Frame: ids["/frames-nested"]}); !errors.Is(err, ErrNoFrame) {
			t.Errorf("capture of a frame nested in a removed one: err = %v, want ErrNoFrame", err)
		}
	})
}

// TestClickReachesAFreshOutOfProcessFrame clicks into an out-of-process
// frame right after its page loaded, on several fresh tabs: until the
// renderers have drawn, the browser routes a click at the right point to
// the parent's <iframe> element, and without moveTo's check about one
// click in five was lost that way.
func TestClickReachesAFreshOutOfProcessFrame(t *testing.T) {
	for i := range 6 {
		tb := newTab(t, isolatedBrowser(t))
		tb.open("/frames")
		s := tb.capture(SnapshotOptions{})
		tb.perform(s, findID(t, s, `^button: Cross button$`), "click")
		var msgs []string
		waitFor(t, func() bool {
			tb.eval(`window.msgs`, &msgs)
			return len(msgs) > 0
		})
		if !slices.Equal(msgs, []string{"clicked"}) {
			t.Errorf("tab %d: the frame posted %q, want one click", i, msgs)
		}
	}
}
