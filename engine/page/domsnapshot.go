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
	"context"
	"fmt"
	"net/url"

	"github.com/chromedp/cdproto/cdp"
	"github.com/go-json-experiment/json/jsontext"
)

// snapshotStyles are the computed styles captureSnapshot reports for every
// rendered node, in this order. Each extra style costs a few milliseconds on
// a large page; these two decide visibility and scrollability.
var snapshotStyles = []string{"visibility", "overflow-y"}

const (
	styleVisibility = iota
	styleOverflowY
)

// domSnapshot is the part of a DOMSnapshot.captureSnapshot reply this package
// reads. Decoding into these small structs rather than cdproto's keeps the
// reply's decoding cheap and independent of cdproto's enums.
type domSnapshot struct {
	Documents []docSnapshot `json:"documents"`
	Strings   []string      `json:"strings"`
}

type docSnapshot struct {
	DocumentURL   int32      `json:"documentURL"`
	Title         int32      `json:"title"`
	BaseURL       int32      `json:"baseURL"`
	FrameID       int32      `json:"frameId"`
	Nodes         nodeTree   `json:"nodes"`
	Layout        layoutTree `json:"layout"`
	ContentHeight float64    `json:"contentHeight"`
}

type nodeTree struct {
	ParentIndex          []int32             `json:"parentIndex"`
	NodeType             []int8              `json:"nodeType"`
	ShadowRootType       rareStrings         `json:"shadowRootType"`
	NodeName             []int32             `json:"nodeName"`
	NodeValue            []int32             `json:"nodeValue"`
	BackendNodeID        []cdp.BackendNodeID `json:"backendNodeId"`
	Attributes           rows[int32]         `json:"attributes"`
	TextValue            rareStrings         `json:"textValue"`
	InputValue           rareStrings         `json:"inputValue"`
	InputChecked         rareBools           `json:"inputChecked"`
	OptionSelected       rareBools           `json:"optionSelected"`
	ContentDocumentIndex rareInts            `json:"contentDocumentIndex"`
	PseudoType           rareStrings         `json:"pseudoType"`
	IsClickable          rareBools           `json:"isClickable"`
}

type layoutTree struct {
	NodeIndex []int32       `json:"nodeIndex"`
	Styles    rows[int32]   `json:"styles"`
	Bounds    rows[float64] `json:"bounds"`
}

// rows is a JSON array of arrays of numbers (a node's attributes, a layout
// box's styles or bounds) decoded into one backing slice: a slice per row
// costs an allocation per node, which on a large page was most of the
// reply's decoding.
type rows[T int32 | float64] struct {
	flat []T
	// end[r] is where row r ends in flat; it starts where row r-1 ends.
	end []int32
}

// len is the number of rows.
func (r *rows[T]) len() int { return len(r.end) }

// row returns row i, which must exist.
func (r *rows[T]) row(i int) []T {
	var start int32
	if i > 0 {
		start = r.end[i-1]
	}
	return r.flat[start:r.end[i]]
}

// UnmarshalJSONFrom decodes [[n, ...], ...] or null.
func (r *rows[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	r.flat, r.end = r.flat[:0], r.end[:0]
	if dec.PeekKind() == jsontext.KindNull {
		_, err := dec.ReadToken()
		return err
	}
	if err := readKind(dec, jsontext.KindBeginArray); err != nil {
		return err
	}
	for dec.PeekKind() == jsontext.KindBeginArray {
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		for dec.PeekKind() == jsontext.KindNumber {
			tok, err := dec.ReadToken()
			if err != nil {
				return err
			}
			f, err := tok.Float()
			if err != nil {
				return err
			}
			r.flat = append(r.flat, T(f))
		}
		if err := readKind(dec, jsontext.KindEndArray); err != nil {
			return err
		}
		r.end = append(r.end, int32(len(r.flat)))
	}
	return readKind(dec, jsontext.KindEndArray)
}

// readKind reads the next token, which must be of kind k.
func readKind(dec *jsontext.Decoder, k jsontext.Kind) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != k {
		return fmt.Errorf("decode DOM snapshot: got %v, want %v", tok.Kind(), k)
	}
	return nil
}

type rareStrings struct {
	Index []int32 `json:"index"`
	Value []int32 `json:"value"`
}

type rareBools struct {
	Index []int32 `json:"index"`
}

type rareInts struct {
	Index []int32 `json:"index"`
	Value []int32 `json:"value"`
}

// captureDOM takes one DOMSnapshot of the session's frames: the frame the
// session is for and every same-process frame below it.
func (s *session) captureDOM(ctx context.Context) (*domSnapshot, error) {
	var snap domSnapshot
	err := s.call(ctx, "DOMSnapshot.captureSnapshot", map[string]any{
		"computedStyles": snapshotStyles,
	}, &snap)
	if err != nil {
		return nil, fmt.Errorf("capture DOM snapshot: %w", err)
	}
	return &snap, nil
}

// Node types, as in the DOM's Node.nodeType.
const (
	elementNode  = 1
	textNode     = 3
	commentNode  = 8
	documentNode = 9
)

// docIndex indexes one document of a DOMSnapshot for the outline walk. The
// snapshot is the flat tree: open and closed shadow roots are not nodes of
// their own, their children appear under the host, and slotted nodes appear
// under their slot.
type docIndex struct {
	strs []string
	d    *docSnapshot
	sess *session
	// docNo is the document's index in its snapshot.
	docNo int

	firstChild, nextSibling []int32
	layout                  []int32 // node -> layout index, or -1
	flags                   []uint8 // node -> flag bits below
	contentDoc              map[int32]int32
	inputValue, textValue   map[int32]int32
	attrs                   *rows[int32]

	// ids maps element id attributes to nodes, for aria-labelledby and
	// label[for].
	ids map[string]int32
	// labelsFor maps a labelable element to the <label for=...> elements
	// naming it.
	labelsFor map[int32][]int32

	// hostPaths holds exact XPaths, keyed by backend node id, for nodes
	// inside shadow hosts; see shadowXPaths.
	hostPaths map[cdp.BackendNodeID]string
	xpaths    map[int32]string

	// base is the parsed base URL links resolve against, once baseParsed.
	base       *url.URL
	baseParsed bool

	// extent caches the vertical extent of each subtree's layout boxes, for
	// scrollability.
	extentTop, extentBottom []float32
}

const (
	flagShadow    uint8 = 1 << iota // inside a shadow tree
	flagPseudo                      // a pseudo-element (::before, ::marker...)
	flagChecked                     // a checked checkbox or radio
	flagSelected                    // a selected <option>
	flagClickable                   // has a click listener or is a link
	flagHost                        // a shadow host in the document tree
	flagInHost                      // below a shadow host (flat tree)
	flagLaidOut                     // the node or a descendant has a layout box
)

func newDocIndex(snap *domSnapshot, docNo int, sess *session) *docIndex {
	d := &snap.Documents[docNo]
	n := len(d.Nodes.ParentIndex)
	x := &docIndex{
		strs:        snap.Strings,
		d:           d,
		sess:        sess,
		docNo:       docNo,
		firstChild:  make([]int32, n),
		nextSibling: make([]int32, n),
		layout:      make([]int32, n),
		flags:       make([]uint8, n),
		attrs:       &d.Nodes.Attributes,
		contentDoc:  make(map[int32]int32, len(d.Nodes.ContentDocumentIndex.Index)),
		inputValue:  rareMap(d.Nodes.InputValue),
		textValue:   rareMap(d.Nodes.TextValue),
		ids:         make(map[string]int32),
		labelsFor:   make(map[int32][]int32),
		xpaths:      make(map[int32]string),
	}
	for i := range n {
		x.firstChild[i], x.nextSibling[i], x.layout[i] = -1, -1, -1
	}
	// Nodes come in document (pre-)order, so each node's children are
	// appended in order by remembering the last child seen per parent.
	last := make([]int32, n)
	for i := range last {
		last[i] = -1
	}
	for i, p := range d.Nodes.ParentIndex {
		if p < 0 {
			continue
		}
		if last[p] < 0 {
			x.firstChild[p] = int32(i)
		} else {
			x.nextSibling[last[p]] = int32(i)
		}
		last[p] = int32(i)
	}
	for li, ni := range d.Layout.NodeIndex {
		x.layout[ni] = int32(li)
		x.flags[ni] |= flagLaidOut
	}
	// Children follow their parents, so a reverse sweep sees every child
	// before its parent.
	for i := n - 1; i >= 0; i-- {
		if p := d.Nodes.ParentIndex[i]; p >= 0 && x.flags[i]&flagLaidOut != 0 {
			x.flags[p] |= flagLaidOut
		}
	}
	setFlags(x.flags, d.Nodes.ShadowRootType.Index, flagShadow)
	setFlags(x.flags, d.Nodes.PseudoType.Index, flagPseudo)
	setFlags(x.flags, d.Nodes.InputChecked.Index, flagChecked)
	setFlags(x.flags, d.Nodes.OptionSelected.Index, flagSelected)
	setFlags(x.flags, d.Nodes.IsClickable.Index, flagClickable)
	for k, i := range d.Nodes.ContentDocumentIndex.Index {
		x.contentDoc[i] = d.Nodes.ContentDocumentIndex.Value[k]
	}

	// A node of the document tree whose flat children are in a shadow tree
	// is a shadow host. Everything shown below it comes from its shadow
	// tree or is slotted into it, and the flat tree alone cannot give such
	// nodes exact XPaths.
	for i, p := range d.Nodes.ParentIndex {
		if p < 0 {
			continue
		}
		// A host's first flat child is the first child of its shadow root,
		// and it follows the host in node order, so one sweep marks the host
		// before any node below it is looked at.
		if x.flags[i]&flagShadow != 0 && x.flags[p]&(flagShadow|flagInHost) == 0 {
			x.flags[p] |= flagHost
		}
		if x.flags[p]&(flagHost|flagInHost) != 0 {
			x.flags[i] |= flagInHost
		}
	}

	for i := range n {
		if d.Nodes.NodeType[i] != elementNode {
			continue
		}
		if id, ok := x.attr(int32(i), "id"); ok && id != "" {
			if _, dup := x.ids[id]; !dup {
				x.ids[id] = int32(i)
			}
		}
	}
	for i := range n {
		if d.Nodes.NodeType[i] != elementNode || x.name(int32(i)) != "LABEL" {
			continue
		}
		if f, ok := x.attr(int32(i), "for"); ok {
			if t, ok := x.ids[f]; ok {
				x.labelsFor[t] = append(x.labelsFor[t], int32(i))
			}
		}
	}
	return x
}

func setFlags(flags []uint8, idx []int32, f uint8) {
	for _, i := range idx {
		flags[i] |= f
	}
}

func rareMap(r rareStrings) map[int32]int32 {
	m := make(map[int32]int32, len(r.Index))
	for k, i := range r.Index {
		m[i] = r.Value[k]
	}
	return m
}

func (x *docIndex) str(i int32) string {
	if i < 0 || int(i) >= len(x.strs) {
		return ""
	}
	return x.strs[i]
}

func (x *docIndex) nodeType(i int32) int8 { return x.d.Nodes.NodeType[i] }

// name is the node's nodeName: upper case for HTML elements.
func (x *docIndex) name(i int32) string { return x.str(x.d.Nodes.NodeName[i]) }

func (x *docIndex) value(i int32) string { return x.str(x.d.Nodes.NodeValue[i]) }

func (x *docIndex) backend(i int32) cdp.BackendNodeID { return x.d.Nodes.BackendNodeID[i] }

func (x *docIndex) has(i int32, f uint8) bool { return x.flags[i]&f != 0 }

// attr returns the value of the element's attribute name (lower case).
func (x *docIndex) attr(i int32, name string) (string, bool) {
	if int(i) >= x.attrs.len() {
		return "", false
	}
	a := x.attrs.row(int(i))
	for k := 0; k+1 < len(a); k += 2 {
		if x.str(a[k]) == name {
			return x.str(a[k+1]), true
		}
	}
	return "", false
}

// rendered reports whether the node has a layout box.
func (x *docIndex) rendered(i int32) bool { return x.layout[i] >= 0 }

func (x *docIndex) style(i int32, s int) string {
	li := x.layout[i]
	if li < 0 || int(li) >= x.d.Layout.Styles.len() {
		return ""
	}
	st := x.d.Layout.Styles.row(int(li))
	if s >= len(st) {
		return ""
	}
	return x.str(st[s])
}

func (x *docIndex) bounds(i int32) (top, bottom float64, ok bool) {
	li := x.layout[i]
	if li < 0 || int(li) >= x.d.Layout.Bounds.len() {
		return 0, 0, false
	}
	b := x.d.Layout.Bounds.row(int(li))
	if len(b) < 4 {
		return 0, 0, false
	}
	return b[1], b[1] + b[3], true
}

// inputText is the current value of an <input> or <textarea>.
func (x *docIndex) inputText(i int32) string {
	if v, ok := x.inputValue[i]; ok {
		return x.str(v)
	}
	if v, ok := x.textValue[i]; ok {
		return x.str(v)
	}
	return ""
}

// computeExtents fills extentTop and extentBottom bottom-up: the vertical
// range covered by the layout boxes of each node's flat descendants.
func (x *docIndex) computeExtents() {
	n := len(x.firstChild)
	x.extentTop = make([]float32, n)
	x.extentBottom = make([]float32, n)
	const inf = 1e30
	for i := range n {
		x.extentTop[i], x.extentBottom[i] = inf, -inf
	}
	// Children follow their parents in the node order, so a reverse sweep
	// sees every child before its parent.
	for i := n - 1; i >= 0; i-- {
		p := x.d.Nodes.ParentIndex[i]
		if p < 0 {
			continue
		}
		top, bottom := x.extentTop[i], x.extentBottom[i]
		if t, b, ok := x.bounds(int32(i)); ok && b > t {
			top, bottom = min(top, float32(t)), max(bottom, float32(b))
		}
		x.extentTop[p] = min(x.extentTop[p], top)
		x.extentBottom[p] = max(x.extentBottom[p], bottom)
	}
}

// scrollable reports whether the element scrolls vertically: its overflow
// lets it, and the boxes of its descendants reach beyond its own box.
func (x *docIndex) scrollable(i int32) bool {
	switch x.style(i, styleOverflowY) {
	case "auto", "scroll", "overlay":
	default:
		return false
	}
	top, bottom, ok := x.bounds(i)
	if !ok {
		return false
	}
	if x.extentTop == nil {
		x.computeExtents()
	}
	return float64(x.extentBottom[i]) > bottom+1 || float64(x.extentTop[i]) < top-1
}
