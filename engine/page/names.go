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
	"strings"
	"unicode"
)

// The accessible name follows the order of the accessible-name algorithm
// (accname 1.2) for what pages commonly use: aria-labelledby, aria-label,
// the host language's own labels (label elements, alt, value, legend,
// caption...), content for roles named by their content, then title and
// placeholder. Hidden content does not count, except inside elements that
// aria-labelledby points at, as the algorithm says.

// nameOf computes the element's accessible name.
func nameOf(x *docIndex, i int32, role string, st *walkState) string {
	if ids, ok := x.attr(i, "aria-labelledby"); ok {
		var parts []string
		for _, id := range strings.Fields(ids) {
			if ref, ok := x.ids[id]; ok {
				parts = append(parts, textAlternative(x, ref, -1, true))
			}
		}
		if n := collapse(strings.Join(parts, " ")); n != "" {
			return n
		}
	}
	if l, ok := x.attr(i, "aria-label"); ok {
		if n := collapse(l); n != "" {
			return n
		}
	}
	if n := nativeName(x, i, role, st); n != "" {
		return n
	}
	if nameFromContent[role] {
		// Options of a <select> are drawn by its popup and have no layout
		// of their own, so their text counts although it is not rendered.
		o := textOpts{skip: -1, hidden: st.inSelect, noControls: containerRoles[role]}
		if n := collapse(contentTextOpts(x, i, o)); n != "" {
			return n
		}
	}
	if t, ok := x.attr(i, "title"); ok {
		if n := collapse(t); n != "" {
			return n
		}
	}
	switch role {
	case roleTextbox, roleSearchbox, roleCombobox, roleSpinbutton:
		for _, a := range []string{"placeholder", "aria-placeholder"} {
			if p, ok := x.attr(i, a); ok {
				if n := collapse(p); n != "" {
					return n
				}
			}
		}
	}
	return ""
}

// nativeName is the name HTML itself gives the element.
func nativeName(x *docIndex, i int32, role string, st *walkState) string {
	switch tag := x.name(i); tag {
	case "INPUT":
		typ, _ := x.attr(i, "type")
		switch strings.ToLower(typ) {
		case "button", "submit", "reset":
			if v, ok := x.attr(i, "value"); ok {
				return collapse(v)
			}
			switch strings.ToLower(typ) {
			case "submit":
				return "Submit"
			case "reset":
				return "Reset"
			}
			return ""
		case "image":
			for _, a := range []string{"alt", "value"} {
				if v, ok := x.attr(i, a); ok && strings.TrimSpace(v) != "" {
					return collapse(v)
				}
			}
			return "Submit"
		}
		return labelText(x, i, st)
	case "TEXTAREA", "SELECT", "METER", "PROGRESS", "OUTPUT":
		return labelText(x, i, st)
	case "BUTTON":
		if n := labelText(x, i, st); n != "" {
			return n
		}
	case "IMG", "AREA":
		if alt, ok := x.attr(i, "alt"); ok {
			return collapse(alt)
		}
	case "FIELDSET":
		return childText(x, i, "LEGEND")
	case "FIGURE":
		return childText(x, i, "FIGCAPTION")
	case "TABLE":
		return childText(x, i, "CAPTION")
	case "svg":
		return svgTitle(x, i)
	case "IFRAME", "FRAME":
		if t, ok := x.attr(i, "title"); ok {
			return collapse(t)
		}
	}
	return ""
}

// labelText joins the text of the <label> elements of a labelable element:
// the ones pointing at it with for=, and the one it sits in.
func labelText(x *docIndex, i int32, st *walkState) string {
	var parts []string
	for _, l := range x.labelsFor[i] {
		parts = append(parts, contentText(x, l, i, false))
	}
	if st != nil && st.label >= 0 {
		if f, ok := x.attr(st.label, "for"); !ok || f == "" || x.ids[f] == i {
			if !containsInt(x.labelsFor[i], st.label) {
				parts = append(parts, contentText(x, st.label, i, false))
			}
		}
	}
	return collapse(strings.Join(parts, " "))
}

func containsInt(s []int32, v int32) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// childText is the text of the element's first child element named tag.
func childText(x *docIndex, i int32, tag string) string {
	for c := x.firstChild[i]; c >= 0; c = x.nextSibling[c] {
		if x.nodeType(c) == elementNode && x.name(c) == tag {
			return collapse(contentText(x, c, -1, false))
		}
	}
	return ""
}

// svgTitle is the text of an <svg>'s <title> child.
func svgTitle(x *docIndex, i int32) string {
	for c := x.firstChild[i]; c >= 0; c = x.nextSibling[c] {
		if x.nodeType(c) == elementNode && x.name(c) == "title" {
			return collapse(contentText(x, c, -1, true))
		}
	}
	return ""
}

// textAlternative is the name an element contributes when it is referenced
// or embedded: its aria-label, else its content.
func textAlternative(x *docIndex, i int32, skip int32, hidden bool) string {
	if x.nodeType(i) == textNode {
		return x.value(i)
	}
	if l, ok := x.attr(i, "aria-label"); ok && strings.TrimSpace(l) != "" {
		return l
	}
	return contentText(x, i, skip, hidden)
}

// containerRoles are named by their content but hold controls that the
// outline shows on their own lines.
var containerRoles = map[string]bool{"cell": true, "gridcell": true, "columnheader": true, "rowheader": true}

// inlineTags do not separate their text from the text around them.
var inlineTags = map[string]bool{
	"A": true, "ABBR": true, "B": true, "BDI": true, "BDO": true, "CITE": true, "CODE": true,
	"DATA": true, "DFN": true, "EM": true, "FONT": true, "I": true, "KBD": true, "LABEL": true,
	"MARK": true, "Q": true, "S": true, "SAMP": true, "SMALL": true, "SPAN": true, "STRONG": true,
	"SUB": true, "SUP": true, "TIME": true, "U": true, "VAR": true,
}

// textOpts select the content that counts towards a name.
type textOpts struct {
	// skip leaves out one node: the control a label names.
	skip int32
	// hidden counts content that is not rendered.
	hidden bool
	// noControls leaves out links and form controls, which have lines of
	// their own; used for table cells, whose name would repeat them.
	noControls bool
}

// contentText concatenates the text an element's content contributes to a
// name, leaving out node skip (the control a label names) and, unless hidden
// is set, content that is not rendered.
func contentText(x *docIndex, i int32, skip int32, hidden bool) string {
	return contentTextOpts(x, i, textOpts{skip: skip, hidden: hidden})
}

func contentTextOpts(x *docIndex, i int32, o textOpts) string {
	var b strings.Builder
	appendContent(x, i, o, &b)
	return b.String()
}

func appendContent(x *docIndex, i int32, o textOpts, b *strings.Builder) {
	for c := x.firstChild[i]; c >= 0; c = x.nextSibling[c] {
		if c == o.skip || x.has(c, flagPseudo) {
			continue
		}
		switch x.nodeType(c) {
		case textNode:
			if o.hidden || x.rendered(c) {
				b.WriteString(x.value(c))
			}
		case elementNode:
			appendElement(x, c, o, b)
		}
	}
}

// controlTags are the elements noControls leaves out.
var controlTags = map[string]bool{"A": true, "BUTTON": true, "INPUT": true, "SELECT": true, "TEXTAREA": true}

func appendElement(x *docIndex, c int32, o textOpts, b *strings.Builder) {
	tag := x.name(c)
	if skippedTags[tag] {
		return
	}
	if o.noControls {
		if controlTags[tag] {
			return
		}
		if r, ok := x.attr(c, "role"); ok && interactiveRoles[strings.ToLower(strings.TrimSpace(r))] {
			return
		}
	}
	if !o.hidden {
		if v, _ := x.attr(c, "aria-hidden"); v == "true" {
			return
		}
		if x.rendered(c) {
			if v := x.style(c, styleVisibility); v == "hidden" || v == "collapse" {
				return
			}
		}
	}
	block := !inlineTags[tag]
	if block {
		b.WriteByte(' ')
	}
	switch {
	case hasAttrText(x, c, "aria-label"):
		v, _ := x.attr(c, "aria-label")
		b.WriteString(v)
	case tag == "IMG" || tag == "AREA":
		alt, _ := x.attr(c, "alt")
		b.WriteString(alt)
	case tag == "INPUT" || tag == "TEXTAREA":
		// An embedded control contributes its value.
		if typ, _ := x.attr(c, "type"); typ != "checkbox" && typ != "radio" && typ != "hidden" {
			b.WriteString(x.inputText(c))
		}
	case tag == "SELECT":
		b.WriteString(selectedText(x, c))
	case tag == "BR":
		b.WriteByte(' ')
	default:
		appendContent(x, c, o, b)
	}
	if block {
		b.WriteByte(' ')
	}
}

// selectedText is the text of a <select>'s selected options.
func selectedText(x *docIndex, i int32) string {
	var parts []string
	var walk func(n int32)
	walk = func(n int32) {
		for c := x.firstChild[n]; c >= 0; c = x.nextSibling[c] {
			if x.nodeType(c) != elementNode {
				continue
			}
			switch x.name(c) {
			case "OPTION":
				if x.has(c, flagSelected) {
					parts = append(parts, collapse(contentText(x, c, -1, true)))
				}
			case "OPTGROUP":
				walk(c)
			}
		}
	}
	walk(i)
	return strings.Join(parts, ", ")
}

// collapse trims s and collapses every run of white space to one space.
func collapse(s string) string {
	// Fast path: most strings need no change.
	clean := true
	prevSpace := true
	for _, r := range s {
		sp := unicode.IsSpace(r)
		if sp && (prevSpace || r != ' ') {
			clean = false
			break
		}
		prevSpace = sp
	}
	if clean && !prevSpace {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
