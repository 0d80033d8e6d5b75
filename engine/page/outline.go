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
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
)

// outNode is one line of the outline before it is printed.
type outNode struct {
	x        *docIndex
	i        int32
	frame    *Frame
	role     string
	name     string
	states   []string
	children []*outNode
	// text marks a StaticText line.
	text bool
	// keep protects the node from structural pruning.
	keep bool
}

// walkState is what the walk knows about a node's ancestors.
type walkState struct {
	frame *Frame
	// fold is set below an element whose name already contains its text,
	// so the text is not repeated as StaticText lines.
	fold bool
	// label is the nearest enclosing <label>, or -1.
	label      int32
	inSelect   bool
	sectioning bool
	grid       bool
	disabled   bool
}

// visit returns the outline nodes for node i of x: none, one, or, when the
// node itself is pruned, its children.
func (b *builder) visit(x *docIndex, i int32, st walkState) []*outNode {
	switch x.nodeType(i) {
	case textNode:
		if st.fold || !x.rendered(i) {
			return nil
		}
		t := collapse(x.value(i))
		if t == "" {
			return nil
		}
		return []*outNode{{x: x, i: i, frame: st.frame, role: roleText, name: t, text: true}}
	case elementNode:
		return b.visitElement(x, i, st)
	}
	return nil
}

func (b *builder) visitElement(x *docIndex, i int32, st walkState) []*outNode {
	tag := x.name(i)
	if x.has(i, flagPseudo) || skippedTags[tag] || b.ignored(x, i) {
		return nil
	}
	if v, _ := x.attr(i, "aria-hidden"); v == "true" {
		return nil
	}
	if tag == "IFRAME" || tag == "FRAME" {
		return b.visitFrame(x, i, st)
	}

	// Options of a <select> have no layout box of their own: they are
	// drawn by the popup.
	inPopup := st.inSelect && (tag == "OPTION" || tag == "OPTGROUP")
	if !x.has(i, flagLaidOut) && !inPopup {
		// Nothing in this subtree is rendered (display: none).
		return nil
	}
	rendered := x.rendered(i) || inPopup
	visible := rendered
	if v := x.style(i, styleVisibility); v == "hidden" || v == "collapse" {
		visible = false
	}

	role := roleOf(x, i, &st)
	if role == "" {
		return nil
	}
	var name string
	if visible {
		name = nameOf(x, i, role, &st)
		role, name = b.chromeRole(x, i, role, name)
	}

	child := st
	child.fold = st.fold || (visible && name != "" && nameFromContent[role])
	switch tag {
	case "SELECT":
		child.inSelect = true
	case "LABEL":
		child.label = i
		// The text of a label that names a control is that control's
		// name; printing it again would only cost tokens.
		if b.labelsControl(x, i) {
			child.fold = true
		}
	case "svg":
		// An icon's paths and groups say nothing to a model.
		if role == roleNone {
			return nil
		}
		child.fold = true
	case "FIELDSET":
		if _, ok := x.attr(i, "disabled"); ok {
			child.disabled = true
		}
	}
	if sectioningTags[tag] {
		child.sectioning = true
	}
	if role == "grid" || role == "treegrid" {
		child.grid = true
	}

	var children []*outNode
	for c := x.firstChild[i]; c >= 0; c = x.nextSibling[c] {
		children = append(children, b.visit(x, c, child)...)
	}
	if !visible {
		// display: contents, or visibility: hidden with visible
		// descendants: the element is not there, its visible content is.
		return children
	}

	n := &outNode{x: x, i: i, frame: st.frame, role: role, name: name}
	n.states = statesOf(x, i, role, &st)
	scrollable := x.scrollable(i)
	if scrollable {
		n.states = append(n.states, "scrollable")
	}
	// Chrome counts labels as clickable because they forward clicks to
	// their control; that control is what the outline shows.
	clickable := role == roleGeneric && x.has(i, flagClickable) && tag != "LABEL"
	if clickable {
		n.states = append(n.states, "clickable")
	}
	n.keep = scrollable || clickable || interactiveRoles[role] || name != ""

	if name != "" {
		// Text that says the element's name again: actions on text go to
		// its element, which the line above already names.
		children = slices.DeleteFunc(children, func(c *outNode) bool { return c.text && c.name == name })
	}
	switch {
	case role == roleNone && !n.keep:
		return children
	case role == roleGeneric && !n.keep && len(children) <= 1:
		// An empty structural node: it has no name and at most one child.
		return children
	}
	if len(children) == 1 {
		c := children[0]
		switch {
		case name == "" && c.text && !interactiveRoles[role]:
			// "paragraph" over "StaticText: Hi" reads as "paragraph: Hi".
			n.name = c.name
			children = nil
		case name != "" && c.name == name && !c.text:
			// A cell named by the link it holds: say it once, on the link.
			n.name = ""
		}
		if wrapperRoles[role] && n.name == "" && len(n.states) == 0 && !c.text {
			// A cell, list item or paragraph around one element: the
			// element stands in its place, so a row still shows one line
			// per cell and a list one line per item.
			return children
		}
	}
	n.children = children
	return []*outNode{n}
}

// labelsControl reports whether a <label> names a form control: one it
// contains, or the one its for= attribute points at.
func (b *builder) labelsControl(x *docIndex, i int32) bool {
	if f, ok := x.attr(i, "for"); ok && f != "" {
		_, ok := x.ids[f]
		return ok
	}
	found := false
	var walk func(n int32)
	walk = func(n int32) {
		for c := x.firstChild[n]; c >= 0 && !found; c = x.nextSibling[c] {
			if x.nodeType(c) != elementNode {
				continue
			}
			switch x.name(c) {
			case "INPUT", "SELECT", "TEXTAREA", "METER", "PROGRESS", "OUTPUT":
				found = true
			default:
				walk(c)
			}
		}
	}
	walk(i)
	return found
}

// statesOf lists the states shown after the name.
func statesOf(x *docIndex, i int32, role string, st *walkState) []string {
	var s []string
	tag := x.name(i)
	switch role {
	case roleCheckbox, roleRadio, "switch", "menuitemcheckbox", "menuitemradio":
		if tag == "INPUT" {
			if x.has(i, flagChecked) {
				s = append(s, "checked")
			}
		} else {
			switch v, _ := x.attr(i, "aria-checked"); v {
			case "true":
				s = append(s, "checked")
			case "mixed":
				s = append(s, "mixed")
			}
		}
	}
	if tag == "OPTION" && x.has(i, flagSelected) {
		s = append(s, "selected")
	} else if v, _ := x.attr(i, "aria-selected"); v == "true" {
		s = append(s, "selected")
	}
	if v, ok := x.attr(i, "aria-expanded"); ok {
		if v == "true" {
			s = append(s, "expanded")
		} else {
			s = append(s, "collapsed")
		}
	} else if tag == "SUMMARY" {
		if p := x.d.Nodes.ParentIndex[i]; p >= 0 && x.name(p) == "DETAILS" {
			if _, open := x.attr(p, "open"); open {
				s = append(s, "expanded")
			} else {
				s = append(s, "collapsed")
			}
		}
	}
	disabled := st.disabled
	switch tag {
	case "BUTTON", "INPUT", "SELECT", "TEXTAREA", "OPTION", "OPTGROUP", "FIELDSET":
		if _, ok := x.attr(i, "disabled"); ok {
			disabled = true
		}
	}
	if v, _ := x.attr(i, "aria-disabled"); v == "true" {
		disabled = true
	}
	if disabled && (interactiveRoles[role] || role == "group") {
		s = append(s, "disabled")
	}
	if valueRoles[role] {
		if v, ok := valueOf(x, i, tag); ok {
			s = append(s, "value="+v)
		}
	}
	return s
}

// maxValueRunes bounds the value shown for a text field.
const maxValueRunes = 200

// valueOf is the control's current value, quoted, if it has one.
func valueOf(x *docIndex, i int32, tag string) (string, bool) {
	var v string
	switch tag {
	case "INPUT", "TEXTAREA":
		if typ, _ := x.attr(i, "type"); strings.EqualFold(typ, "password") {
			if x.inputText(i) == "" {
				return "", false
			}
			// The model needs to know the field is filled, not with what.
			return `"••••"`, true
		}
		v = x.inputText(i)
	case "SELECT":
		v = selectedText(x, i)
	default:
		v, _ = x.attr(i, "aria-valuetext")
		if v == "" {
			v, _ = x.attr(i, "aria-valuenow")
		}
	}
	v = collapse(v)
	if v == "" {
		return "", false
	}
	if r := []rune(v); len(r) > maxValueRunes {
		v = string(r[:maxValueRunes]) + "…"
	}
	return strconv.Quote(v), true
}

// visitFrame emits an <iframe> and, below it, the document it shows.
func (b *builder) visitFrame(x *docIndex, i int32, st walkState) []*outNode {
	if !x.rendered(i) {
		return nil
	}
	if v := x.style(i, styleVisibility); v == "hidden" || v == "collapse" {
		return nil
	}
	n := &outNode{x: x, i: i, frame: st.frame, role: roleIframe, keep: true}
	n.name = nativeName(x, i, roleIframe, &st)

	var child *docIndex
	outOfProcess := false
	if cd, ok := x.contentDoc[i]; ok {
		if c := b.captureOf(x); c != nil && int(cd) < len(c.docs) {
			child = c.docs[cd]
		}
	} else if c := b.captureOf(x); c != nil {
		if oc := c.oopifs[x.backend(i)]; oc != nil {
			child = oc.main()
			outOfProcess = true
		}
	}
	if child != nil {
		f := b.addFrame(child, st.frame, x.backend(i), outOfProcess)
		if root := b.visitDocument(child, f); root != nil {
			n.children = []*outNode{root}
		}
	}
	return []*outNode{n}
}

// visitDocument emits a document's root line and its content.
func (b *builder) visitDocument(x *docIndex, f *Frame) *outNode {
	html := int32(-1)
	for c := x.firstChild[0]; c >= 0; c = x.nextSibling[c] {
		if x.nodeType(c) == elementNode {
			html = c
			break
		}
	}
	if html < 0 {
		return nil
	}
	n := &outNode{x: x, i: html, frame: f, role: roleRoot, keep: true}
	n.name = collapse(x.str(x.d.Title))
	if x.documentScrolls(html) {
		n.states = []string{"scrollable"}
	}
	st := walkState{frame: f, label: -1}
	for c := x.firstChild[html]; c >= 0; c = x.nextSibling[c] {
		n.children = append(n.children, b.visit(x, c, st)...)
	}
	return n
}

// documentScrolls reports whether the document is taller than its viewport
// and allowed to scroll.
func (x *docIndex) documentScrolls(html int32) bool {
	li := x.layout[0]
	if li < 0 || int(li) >= x.d.Layout.Bounds.len() {
		return false
	}
	if b := x.d.Layout.Bounds.row(int(li)); len(b) < 4 || x.d.ContentHeight <= b[3]+1 {
		return false
	}
	if x.style(html, styleOverflowY) == "hidden" {
		return false
	}
	for c := x.firstChild[html]; c >= 0; c = x.nextSibling[c] {
		if x.nodeType(c) == elementNode && x.name(c) == "BODY" && x.style(c, styleOverflowY) == "hidden" {
			return false
		}
	}
	return true
}

// elementID formats the id of a node: "<frame ordinal>-<backend node id>".
func elementID(ordinal int, id cdp.BackendNodeID) string {
	return strconv.Itoa(ordinal) + "-" + strconv.FormatInt(int64(id), 10)
}

// print writes the outline and fills the snapshot's maps with the ids it
// prints.
func (b *builder) print(w *strings.Builder, n *outNode, depth int) {
	id := elementID(n.frame.Ordinal, n.x.backend(n.i))
	for range depth {
		w.WriteString("  ")
	}
	w.WriteByte('[')
	w.WriteString(id)
	w.WriteString("] ")
	w.WriteString(n.role)
	if n.name != "" {
		w.WriteString(": ")
		w.WriteString(n.name)
	}
	if len(n.states) > 0 {
		w.WriteString(" (")
		w.WriteString(strings.Join(n.states, ", "))
		w.WriteByte(')')
	}
	w.WriteByte('\n')

	b.snap.XPaths[id] = xpathPrefix + n.x.xpath(n.i)
	if n.text {
		b.snap.texts[id] = true
	}
	if n.role == roleLink {
		if u := n.x.linkURL(n.i); u != "" {
			b.snap.URLs[id] = u
		}
	}
	for _, c := range n.children {
		b.print(w, c, depth+1)
	}
}

// linkURL resolves the element's href against its document's base URL.
func (x *docIndex) linkURL(i int32) string {
	href, ok := x.attr(i, "href")
	if !ok {
		return ""
	}
	href = strings.TrimSpace(href)
	ref, err := url.Parse(href)
	if err != nil {
		return href
	}
	base := x.baseURL()
	if base == nil {
		return href
	}
	return base.ResolveReference(ref).String()
}

// baseURL is the document's base URL (its document URL without a <base>),
// parsed once per snapshot: a catalogue page has hundreds of links. Nil
// means neither parses.
func (x *docIndex) baseURL() *url.URL {
	if !x.baseParsed {
		x.baseParsed = true
		base, err := url.Parse(x.str(x.d.BaseURL))
		if err != nil || x.str(x.d.BaseURL) == "" {
			base, err = url.Parse(x.str(x.d.DocumentURL))
			if err != nil {
				base = nil
			}
		}
		x.base = base
	}
	return x.base
}
