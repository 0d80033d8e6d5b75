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

import "strings"

// Role names used by the outline beyond the ARIA ones.
const (
	roleGeneric    = "generic"
	roleNone       = "none"
	roleText       = "StaticText"
	roleRoot       = "RootWebArea"
	roleIframe     = "Iframe"
	roleCombobox   = "combobox"
	roleTextbox    = "textbox"
	roleListbox    = "listbox"
	roleOption     = "option"
	roleLink       = "link"
	roleButton     = "button"
	roleCheckbox   = "checkbox"
	roleRadio      = "radio"
	roleSearchbox  = "searchbox"
	roleSpinbutton = "spinbutton"
	roleSlider     = "slider"
	// roleImage is Chrome's name for ARIA's img role (ARIA 1.3 "image").
	roleImage = "image"
)

// skippedTags are elements whose subtree never reaches the outline.
var skippedTags = map[string]bool{
	"HEAD": true, "SCRIPT": true, "STYLE": true, "NOSCRIPT": true, "TEMPLATE": true,
	"META": true, "LINK": true, "BASE": true, "TITLE": true, "DATALIST": true,
}

// implicitRoles maps HTML element names to their implicit ARIA role
// (HTML-AAM). Elements missing here are generic; the ones that depend on
// attributes or context are handled in roleOf.
var implicitRoles = map[string]string{
	"ADDRESS": "group", "ARTICLE": "article", "ASIDE": "complementary",
	"BLOCKQUOTE": "blockquote", "BUTTON": roleButton, "CAPTION": "caption",
	"CODE": "code", "DD": "definition", "DEL": "deletion", "DETAILS": "group",
	"DFN": "term", "DIALOG": "dialog", "DL": "list", "DT": "term",
	"EM": "emphasis", "FIELDSET": "group", "FIGURE": "figure", "FORM": "form",
	"H1": "heading", "H2": "heading", "H3": "heading", "H4": "heading", "H5": "heading", "H6": "heading",
	"HGROUP": "group", "HR": "separator", "INS": "insertion", "LI": "listitem",
	"MAIN": "main", "MARK": "mark", "MATH": "math", "MENU": "list", "METER": "meter",
	"NAV": "navigation", "OL": "list", "OPTGROUP": "group", "OPTION": roleOption,
	"OUTPUT": "status", "P": "paragraph", "PROGRESS": "progressbar", "SEARCH": "search",
	"STRONG": "strong", "SUB": "subscript", "SUMMARY": roleButton, "SUP": "superscript",
	"TABLE": "table", "TEXTAREA": roleTextbox, "TIME": "time", "TR": "row", "UL": "list",
	"LEGEND": "legend",
	// Chrome's accessibility tree ignores table sections and the body;
	// the outline treats them as transparent.
	"TBODY": roleNone, "THEAD": roleNone, "TFOOT": roleNone, "BODY": roleNone,
}

// sectioningTags change header and footer from landmarks to generic.
var sectioningTags = map[string]bool{"ARTICLE": true, "ASIDE": true, "MAIN": true, "NAV": true, "SECTION": true}

// roleOf returns the element's role: the first token of its role attribute,
// or its implicit role. The empty string means the element is not exposed
// at all (an <input type=hidden>).
func roleOf(x *docIndex, i int32, st *walkState) string {
	if r, ok := x.attr(i, "role"); ok {
		if f := strings.Fields(strings.ToLower(r)); len(f) > 0 {
			if f[0] == "presentation" {
				return roleNone
			}
			return f[0]
		}
	}
	tag := x.name(i)
	switch tag {
	case "A", "AREA":
		if _, ok := x.attr(i, "href"); ok {
			return roleLink
		}
		return roleGeneric
	case "IMG":
		if alt, ok := x.attr(i, "alt"); ok && alt == "" {
			return roleNone
		}
		return roleImage
	case "INPUT":
		return inputRole(x, i)
	case "SELECT":
		if _, ok := x.attr(i, "multiple"); ok {
			return roleListbox
		}
		if s, ok := x.attr(i, "size"); ok && s != "" && s != "0" && s != "1" {
			return roleListbox
		}
		return roleCombobox
	case "TD":
		if st.grid {
			return "gridcell"
		}
		return "cell"
	case "TH":
		if s, _ := x.attr(i, "scope"); strings.EqualFold(s, "row") {
			return "rowheader"
		}
		return "columnheader"
	case "HEADER", "FOOTER":
		if st.sectioning {
			return roleGeneric
		}
		if tag == "HEADER" {
			return "banner"
		}
		return "contentinfo"
	case "SECTION":
		if hasAttrText(x, i, "aria-label") || hasAttrText(x, i, "aria-labelledby") {
			return "region"
		}
		return roleGeneric
	case "svg":
		// Icons are noise unless they are named.
		if hasAttrText(x, i, "aria-label") || svgTitle(x, i) != "" {
			return roleImage
		}
		return roleNone
	}
	if r, ok := implicitRoles[tag]; ok {
		return r
	}
	return roleGeneric
}

func inputRole(x *docIndex, i int32) string {
	typ, _ := x.attr(i, "type")
	_, hasList := x.attr(i, "list")
	switch strings.ToLower(typ) {
	case "hidden":
		return ""
	case "button", "submit", "reset", "image", "file", "color":
		return roleButton
	case "checkbox":
		return roleCheckbox
	case "radio":
		return roleRadio
	case "range":
		return roleSlider
	case "number":
		return roleSpinbutton
	case "search":
		if hasList {
			return roleCombobox
		}
		return roleSearchbox
	default:
		if hasList {
			return roleCombobox
		}
		return roleTextbox
	}
}

func hasAttrText(x *docIndex, i int32, name string) bool {
	v, ok := x.attr(i, name)
	return ok && strings.TrimSpace(v) != ""
}

// nameFromContent lists the roles whose accessible name is computed from
// their content when nothing else names them (ARIA 1.2, as Chrome applies
// it: rows and list items are not among them).
var nameFromContent = map[string]bool{
	roleButton: true, "cell": true, roleCheckbox: true, "columnheader": true, "gridcell": true,
	"heading": true, roleLink: true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, roleOption: true, roleRadio: true, "rowheader": true, "switch": true,
	"tab": true, "tooltip": true, "treeitem": true, "caption": true, "legend": true, "term": true,
}

// interactiveRoles are never pruned and keep their own line even when
// empty.
var interactiveRoles = map[string]bool{
	roleButton: true, roleLink: true, roleCheckbox: true, roleRadio: true, roleTextbox: true,
	roleSearchbox: true, roleCombobox: true, roleListbox: true, roleOption: true, roleSlider: true,
	roleSpinbutton: true, "switch": true, "tab": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "treeitem": true, "gridcell": true,
}

// wrapperRoles only hold what is in them: without a name or a state and
// around a single element, that element's line stands in for theirs.
var wrapperRoles = map[string]bool{"cell": true, "listitem": true, "paragraph": true}

// valueRoles show their current value.
var valueRoles = map[string]bool{
	roleTextbox: true, roleSearchbox: true, roleCombobox: true, roleSpinbutton: true, roleSlider: true,
}
