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
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The compact fixture has what the outline's size rules fold: lists of
// links, tables whose cells hold one control, selects, paragraphs around a
// link, text that repeats its element's name; and, beside each, what they
// must leave alone.
func init() {
	pages["/compact"] = `<!doctype html><title>Compact</title>` + eventsJS + `
<nav id=menu><ul>
 <li><a id=alpha href="/a" onclick="event.preventDefault()">Alpha</a></li>
 <li><a href="/b">Beta</a></li>
 <li><a href="/c">Gamma</a> <span>new</span></li>
 <li aria-label="Delta item"><a href="/d">Delta</a></li>
</ul></nav>
<table id=items>
 <thead><tr><th>Item</th><th>Details</th><th>Buy</th><th>Qty</th><th>Size</th><th>Note</th></tr></thead>
 <tbody>
  <tr><td>Item 0</td><td><a id=details0 href="/item/0" onclick="event.preventDefault()">Details 0</a></td><td><button id=buy0>Buy 0</button></td>
   <td><input id=qty0 aria-label="qty 0" value="1"></td>
   <td><select id=size0 aria-label="size 0"><option>S</option><option selected>M</option></select></td><td></td></tr>
  <tr><td>Item 1</td><td><a href="/item/1">Details 1</a> <a href="/item/1/reviews">Reviews</a></td><td><button disabled>Buy 1</button></td>
   <td><label>Qty <input id=qty1 value="2"></label></td>
   <td><select id=sizes1 multiple aria-label="sizes 1"><option selected>S</option><option selected>M</option><option>L</option></select></td>
   <td id=note1 onclick="window.events.push('note')"><span>Note</span></td></tr>
 </tbody>
</table>
<div role=grid id=grid><div role=row><div role=gridcell><button>Grid button</button></div></div></div>
<div id=paras>
 <p><a id=more href="/more" onclick="event.preventDefault()">More items</a></p>
 <p aria-label="Shipping terms"><a href="/ship">Shipping</a></p>
 <p>Free <a href="/free">returns</a></p>
</div>
<div id=named>
 <div id=hours title="Opens at 9" onclick="window.events.push('hours')">Opens at 9</div>
 <section aria-label="Offers">Offers <b>today</b></section>
</div>`

	// Frames and a shadow root inside the wrappers the outline folds.
	pages["/compact-frames"] = `<!doctype html><title>Compact frames</title>` + eventsJS + `
<table><tr>
 <td><iframe src="/same-inner" style="width:300px;height:120px"></iframe></td>
 <td><x-pick id=pick></x-pick></td>
</tr></table>
<ul><li><iframe src="{{B}}/cross-inner" style="width:420px;height:220px"></iframe></li></ul>
<script>pick.attachShadow({mode: 'open'}).innerHTML = '<button onclick="window.events.push(\'pick\')">Pick</button>';</script>`
}

// stripIDs cuts each line's id to its frame ordinal: backend node ids are
// numbered anew by every render.
func stripIDs(tree string) string {
	return regexp.MustCompile(`(?m)^( *)\[(\d+)-\d+\]`).ReplaceAllString(tree, "$1[$2]")
}

func TestCompactOutline(t *testing.T) {
	tb := newTab(t)
	tb.open("/compact")
	for _, tc := range []struct {
		name     string
		selector string
		want     string
	}{
		{
			name:     "a list item around one link gives way to it; one with more, or a name, stays",
			selector: "#menu",
			want: `[0] navigation
  [0] list
    [0] link: Alpha
    [0] link: Beta
    [0] listitem
      [0] link: Gamma
      [0] StaticText: new
    [0] listitem: Delta item
      [0] link: Delta
`,
		},
		{
			// Each row still has one line per column, in the columns'
			// order; an empty cell and a cell with two links keep theirs.
			name:     "a cell around one control gives way to it",
			selector: "#items",
			want: `[0] table
  [0] row
    [0] columnheader: Item
    [0] columnheader: Details
    [0] columnheader: Buy
    [0] columnheader: Qty
    [0] columnheader: Size
    [0] columnheader: Note
  [0] row
    [0] cell: Item 0
    [0] link: Details 0
    [0] button: Buy 0
    [0] textbox: qty 0 (value="1")
    [0] combobox: size 0 (value="M")
      [0] option: S
      [0] option: M (selected)
    [0] cell
  [0] row
    [0] cell: Item 1
    [0] cell
      [0] link: Details 1
      [0] link: Reviews
    [0] button: Buy 1 (disabled)
    [0] textbox: Qty (value="2")
    [0] listbox: sizes 1
      [0] option: S (selected)
      [0] option: M (selected)
      [0] option: L
    [0] cell: Note
`,
		},
		{
			name:     "a grid cell is a control and keeps its line",
			selector: "#grid",
			want: `[0] grid
  [0] row
    [0] gridcell
      [0] button: Grid button
`,
		},
		{
			name:     "a paragraph around one link gives way to it; a named one, or one with text, stays",
			selector: "#paras",
			want: `[0] generic
  [0] link: More items
  [0] paragraph: Shipping terms
    [0] link: Shipping
  [0] paragraph
    [0] StaticText: Free
    [0] link: returns
`,
		},
		{
			name:     "text that repeats its element's name is said once",
			selector: "#named",
			want: `[0] generic
  [0] generic: Opens at 9 (clickable)
  [0] region: Offers
    [0] StaticText: today
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tb.capture(SnapshotOptions{Selector: tc.selector})
			if diff := cmp.Diff(tc.want, stripIDs(s.Tree)); diff != "" {
				t.Errorf("outline of %s (-want +got):\n%s", tc.selector, diff)
			}
		})
	}
}

// TestCompactOutlineActs acts on the elements that took the place of their
// wrappers, by the ids the outline gives them.
func TestCompactOutlineActs(t *testing.T) {
	tb := newTab(t)
	tb.open("/compact")
	s := tb.capture(SnapshotOptions{})
	for _, tc := range []struct {
		name    string
		line    string
		method  string
		args    []string
		event   string
		value   string // JavaScript expression
		want    string
		linkURL string
	}{
		{name: "link from a list item", line: `^link: Alpha$`, method: "click", event: "click:alpha", linkURL: "/a"},
		{name: "link from a cell", line: `^link: Details 0$`, method: "click", event: "click:details0", linkURL: "/item/0"},
		{name: "button from a cell", line: `^button: Buy 0$`, method: "click", event: "click:buy0"},
		{name: "textbox from a cell", line: `^textbox: qty 0`, method: "fill", args: []string{"4"}, event: "input:qty0",
			value: `document.getElementById('qty0').value`, want: "4"},
		{name: "labelled textbox from a cell", line: `^textbox: Qty`, method: "fill", args: []string{"3"}, event: "input:qty1",
			value: `document.getElementById('qty1').value`, want: "3"},
		{name: "select from a cell", line: `^combobox: size 0`, method: "selectOptionFromDropdown", args: []string{"S"}, event: "change:size0",
			value: `document.getElementById('size0').value`, want: "S"},
		{name: "link from a paragraph", line: `^link: More items$`, method: "click", event: "click:more", linkURL: "/more"},
		{name: "element whose text was folded", line: `^generic: Opens at 9`, method: "click", event: "hours"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := findID(t, s, tc.line)
			if tc.linkURL != "" {
				if diff := cmp.Diff(originA+tc.linkURL, s.URLs[id]); diff != "" {
					t.Errorf("URL of %s (-want +got):\n%s", id, diff)
				}
			}
			tb.perform(s, id, tc.method, tc.args...)
			if !contains(tb.events(), tc.event) {
				t.Errorf("%s %s: no %q in events %v", tc.method, id, tc.event, tb.events())
			}
			if tc.value != "" {
				var got string
				tb.eval(tc.value, &got)
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", tc.value, diff)
				}
			}
		})
	}
}

// TestBenchPageKeepsEveryControl checks the compact outline of the
// catalogue page the size figures are taken on: every control of its 500
// rows, its navigation and its shadow root is there, with an xpath, and
// every link with its URL.
func TestBenchPageKeepsEveryControl(t *testing.T) {
	if benchPage(); benchHTML.err != nil {
		t.Fatalf("read the bench page: %v", benchHTML.err)
	}
	tb := newTab(t)
	tb.open("/bench")
	s := tb.capture(SnapshotOptions{})

	counts := map[string]int{}
	kinds := []struct{ kind, pattern string }{
		{"nav link", `^link: Section \d+$`},
		{"row", `^row$`},
		{"item cell", `^cell: Item \d+$`},
		{"details link", `^link: Details \d+$`},
		{"buy button", `^button: Buy \d+$`},
		{"qty textbox", `^textbox: qty \d+ \(value="1"\)$`},
		{"size select", `^combobox \(value="S"\)$`},
		{"selected option", `^option: S \(selected\)$`},
		{"option", `^option: M$`},
		{"search field", `^textbox: Search$`},
		{"shadow button", `^button: Shadow button$`},
		{"shadow input", `^textbox: shadow input$`},
	}
	res := make([]*regexp.Regexp, len(kinds))
	for i, k := range kinds {
		res[i] = regexp.MustCompile(k.pattern)
	}
	ids := map[string]string{}
	for _, line := range strings.Split(s.Tree, "\n") {
		m := lineRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for i, k := range kinds {
			if res[i].MatchString(m[2]) {
				counts[k.kind]++
				ids[k.kind] = m[1]
			}
		}
		if s.XPaths[m[1]] == "" {
			t.Errorf("%s has no xpath", line)
		}
		if strings.HasPrefix(m[2], "link: ") && s.URLs[m[1]] == "" {
			t.Errorf("%s has no URL", line)
		}
	}
	want := map[string]int{
		"nav link": 40, "row": 500, "item cell": 500, "details link": 500, "buy button": 500, "qty textbox": 500,
		"size select": 500, "selected option": 500, "option": 500, "search field": 1, "shadow button": 1, "shadow input": 1,
	}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("lines of each kind (-want +got):\n%s", diff)
	}

	// The last row's controls, and the shadow root's, act.
	tb.perform(s, ids["qty textbox"], "fill", "7")
	tb.perform(s, ids["size select"], "selectOptionFromDropdown", "M")
	tb.perform(s, ids["shadow input"], "fill", "deep")
	var got []string
	tb.eval(`[document.querySelector('input[aria-label="qty 499"]').value,
		document.querySelectorAll('select')[499].value,
		document.getElementById('host').shadowRoot.querySelector('input').value]`, &got)
	if diff := cmp.Diff([]string{"7", "M", "deep"}, got); diff != "" {
		t.Errorf("values after the acts (-want +got):\n%s", diff)
	}
}

// TestCompactOutlineFrames folds a cell around a same-process iframe, a
// cell around a shadow host and a list item around an out-of-process
// iframe, and acts in each.
func TestCompactOutlineFrames(t *testing.T) {
	tb := newTab(t, isolatedBrowser(t))
	tb.open("/compact-frames")
	s := tb.capture(SnapshotOptions{})
	want := `[0] RootWebArea: Compact frames
  [0] table
    [0] row
      [0] Iframe
        [1] RootWebArea: Inner
          [1] button: Inner button
          [1] link: Inner link
      [0] button: Pick
  [0] list
    [0] Iframe
      [2] RootWebArea: Cross inner
        [2] textbox: Remote field
        [2] button: Remote button
        [2] Iframe
          [3] RootWebArea
            [3] paragraph: Nested text
            [3] button: Nested button
`
	if diff := cmp.Diff(want, stripIDs(s.Tree)); diff != "" {
		t.Fatalf("outline (-want +got):\n%s", diff)
	}
	if !s.Frames[2].OutOfProcess {
		t.Errorf("the cross-site frame is in process under --site-per-process")
	}

	tb.perform(s, findID(t, s, `^button: Inner button$`), "click")
	tb.perform(s, findID(t, s, `^button: Pick$`), "click")
	tb.perform(s, findID(t, s, `^textbox: Remote field$`), "fill", "from the list")
	type effects struct {
		InnerClicks int
		Picked      bool
		RemoteValue bool
	}
	got := effects{
		Picked:      contains(tb.events(), "pick"),
		RemoteValue: hasLine(tb.capture(SnapshotOptions{}), `^textbox: Remote field \(value="from the list"\)$`),
	}
	tb.eval(`window.clicked || 0`, &got.InnerClicks)
	if diff := cmp.Diff(effects{InnerClicks: 1, Picked: true, RemoteValue: true}, got); diff != "" {
		t.Errorf("after the acts (-want +got):\n%s", diff)
	}
}
