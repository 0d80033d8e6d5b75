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
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

// ErrNotFound reports that a selector or element id matches nothing.
var ErrNotFound = errors.New("no matching element")

// ErrNoFrame reports a frame id that names no frame of the page: it never
// was one, or the frame has gone (removed, or its parent navigated). The
// errors wrapping it are *NoFrameError, which names the id.
var ErrNoFrame = errors.New("no such frame in the page")

// NoFrameError is the error of a frame id the page does not have.
type NoFrameError struct {
	// Frame is the id asked for.
	Frame cdp.FrameID
}

func (e *NoFrameError) Error() string { return fmt.Sprintf("no frame %s in the page", e.Frame) }

// Unwrap makes errors.Is(err, ErrNoFrame) hold.
func (e *NoFrameError) Unwrap() error { return ErrNoFrame }

// SnapshotOptions tune Capture.
type SnapshotOptions struct {
	// Frame scopes the snapshot to the document of one frame (its DevTools
	// frame id): an iframe at any depth, same-process or out-of-process,
	// with the frames it embeds. Empty, or the main frame's id, is the
	// whole page. A frame the page does not have is an error wrapping
	// ErrNoFrame.
	Frame cdp.FrameID
	// Selector scopes the snapshot to one element of the frame's document
	// (the main frame's unless Frame says otherwise) and its descendants:
	// CSS, or XPath with an "xpath=" prefix.
	Selector string
	// IgnoreSelectors leave out the elements of that document they match,
	// with everything inside them.
	IgnoreSelectors []string
	// ChromeAccessibility takes roles and names from Chrome's own
	// accessibility tree (Accessibility.getFullAXTree) instead of computing
	// them from the DOM snapshot. Names then match Chrome exactly, at a cost
	// of several hundred milliseconds on large pages.
	ChromeAccessibility bool
}

// Snapshot is a text outline of the page for a language model, with what is
// needed to act on the elements it names.
type Snapshot struct {
	// Tree has one line per kept node,
	//
	//	[<frame ordinal>-<backend node id>] role: name (state, state)
	//
	// indented two spaces per level. States are checked, mixed, selected,
	// expanded or collapsed, disabled, value="...", scrollable and
	// clickable (an element with its own click listener but no role).
	Tree string
	// XPaths maps every id in Tree to an absolute "xpath=" selector within
	// its frame's document (see Frame.Query for paths into shadow roots).
	XPaths map[string]string
	// URLs maps the id of every link in Tree to its absolute URL.
	URLs map[string]string
	// Frames are the frames of the page the snapshot saw, indexed by
	// ordinal: Frames[0] is the main frame, iframes follow in document
	// order. A snapshot scoped to a frame keeps the whole page's ordinals,
	// so its Tree shows only some of them.
	Frames []*Frame

	// texts holds the ids of text nodes, which actions target through
	// their parent element.
	texts map[string]bool
}

// Element is a node to act on.
type Element struct {
	// ID is the node's snapshot id, "<frame ordinal>-<backend node id>".
	ID string
	// XPath is an absolute "xpath=" selector for the node within its
	// frame's document.
	XPath string
	// BackendNodeID is the node's DevTools backend id in its frame's
	// session.
	BackendNodeID cdp.BackendNodeID
	// Frame is the frame whose document holds the node.
	Frame *Frame

	snap *Snapshot
	// text marks a text node; actions then target its parent element.
	text bool
	// held is the remote object of the node that found it, for a Query
	// result; Perform releases it.
	held *heldObject
}

// String names the element in errors and logs.
func (e *Element) String() string {
	if e == nil {
		return "<page>"
	}
	if e.ID != "" {
		return e.ID
	}
	return e.XPath
}

// Capture takes a snapshot of the tab: the main frame, its same-process
// iframes, and its out-of-process iframes, whose sessions the Page attaches
// on demand. An iframe whose document cannot be captured (it is still
// loading, or went away meanwhile) shows as an Iframe line without content.
// A scope selector that matches nothing is an error wrapping ErrNotFound.
func (p *Page) Capture(ctx context.Context, opts SnapshotOptions) (*Snapshot, error) {
	if opts.Frame != "" && opts.Frame != cdp.FrameID(p.main.target) {
		return p.captureFrame(ctx, opts)
	}
	b := newBuilder(p)
	b.ignoreIn = p.main

	// The selectors and the main capture are independent; both run in the
	// renderer, but overlapping them hides the round trips and the Go-side
	// decoding of the larger reply.
	var (
		wg             sync.WaitGroup
		scope          cdp.BackendNodeID
		scopeErr, iErr error
	)
	if opts.Selector != "" || len(opts.IgnoreSelectors) > 0 {
		wg.Go(func() {
			scope, scopeErr, iErr = b.selectors(ctx, p.MainFrame(), opts)
		})
	}
	root, err := b.gather(ctx, p.main)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if scopeErr != nil {
		return nil, scopeErr
	}
	if iErr != nil {
		return nil, iErr
	}
	if opts.ChromeAccessibility {
		if err := b.loadAccessibility(ctx, root); err != nil {
			return nil, err
		}
	}

	mainDoc := root.main()
	if mainDoc == nil {
		return nil, errors.New("capture: the main frame has no document")
	}
	main := b.addFrame(mainDoc, nil, 0, false)
	var top []*outNode
	if scope != 0 {
		// The selector ran in the main document, so that is where the
		// element is.
		i := mainDoc.find(scope)
		if i < 0 {
			return nil, fmt.Errorf("scope selector %q: element is not in the snapshot", opts.Selector)
		}
		top = b.visit(mainDoc, i, walkState{frame: main, label: -1})
	} else if n := b.visitDocument(mainDoc, main); n != nil {
		top = []*outNode{n}
	}

	return b.finish(top), nil
}

func newBuilder(p *Page) *builder {
	return &builder{
		page: p,
		snap: &Snapshot{
			XPaths: make(map[string]string),
			URLs:   make(map[string]string),
			texts:  make(map[string]bool),
		},
		frames:    make(map[*docIndex]*Frame),
		bySession: make(map[*session]*capture),
	}
}

// finish prints the outline's top nodes into the snapshot.
func (b *builder) finish(top []*outNode) *Snapshot {
	var w strings.Builder
	for _, n := range top {
		b.print(&w, n, 0)
	}
	b.snap.Tree = w.String()
	return b.snap
}

// selectors runs the scope selector and the ignore selectors of opts in
// f's document: the scope element's backend id (0 without a Selector) and
// the ignored elements in b.ignore. It returns the scope selector's error
// and the ignore selectors' apart, as Capture reports them in that order.
func (b *builder) selectors(ctx context.Context, f *Frame, opts SnapshotOptions) (scope cdp.BackendNodeID, scopeErr, ignoreErr error) {
	ctx, release := withObjects(ctx)
	defer release()
	if opts.Selector != "" {
		ids, err := f.selectAll(ctx, opts.Selector, true)
		switch {
		case err != nil:
			scopeErr = fmt.Errorf("scope selector %q: %w", opts.Selector, err)
		case len(ids) == 0:
			scopeErr = fmt.Errorf("scope selector %q: %w", opts.Selector, ErrNotFound)
		default:
			scope = ids[0]
		}
	}
	b.ignore = make(map[cdp.BackendNodeID]bool)
	for _, sel := range opts.IgnoreSelectors {
		ids, err := f.selectAll(ctx, sel, false)
		if err != nil {
			return scope, scopeErr, fmt.Errorf("ignore selector %q: %w", sel, err)
		}
		for _, id := range ids {
			b.ignore[id] = true
		}
	}
	return scope, scopeErr, nil
}

// captureFrame is Capture scoped to an iframe. The whole page is captured
// and walked, so that frame ordinals (and the Frames their ids index) are
// the page's; only the frame's part is printed, which keeps every id
// outside it out of the snapshot's maps. The selectors run in the frame's
// document once it is known, after the capture.
func (p *Page) captureFrame(ctx context.Context, opts SnapshotOptions) (*Snapshot, error) {
	b := newBuilder(p)
	root, err := b.gather(ctx, p.main)
	if err != nil {
		return nil, err
	}
	x := b.document(opts.Frame)
	if x == nil {
		return nil, &NoFrameError{Frame: opts.Frame}
	}
	if opts.ChromeAccessibility {
		if err := b.loadAccessibility(ctx, root); err != nil {
			return nil, err
		}
	}
	if err := b.outline(root); err != nil {
		return nil, err
	}
	f := b.frameOf(x)

	var scope cdp.BackendNodeID
	if opts.Selector != "" || len(opts.IgnoreSelectors) > 0 {
		var scopeErr, iErr error
		scope, scopeErr, iErr = b.selectors(ctx, f, opts)
		if scopeErr != nil {
			return nil, scopeErr
		}
		if iErr != nil {
			return nil, iErr
		}
		b.ignoreIn = x.sess
	}
	var top []*outNode
	if scope != 0 {
		// The selector ran in the frame's document, so that is where the
		// element is.
		i := x.find(scope)
		if i < 0 {
			return nil, fmt.Errorf("scope selector %q: element is not in the snapshot", opts.Selector)
		}
		top = b.visit(x, i, walkState{frame: f, label: -1})
	} else if n := b.visitDocument(x, f); n != nil {
		top = []*outNode{n}
	}
	return b.finish(top), nil
}

// outline walks the whole page once, without printing: it registers every
// shown frame under its ordinal, in document order.
func (b *builder) outline(root *capture) error {
	mainDoc := root.main()
	if mainDoc == nil {
		return errors.New("capture: the main frame has no document")
	}
	b.visitDocument(mainDoc, b.addFrame(mainDoc, nil, 0, false))
	return nil
}

// document returns the captured document of the frame id, or nil.
func (b *builder) document(id cdp.FrameID) *docIndex {
	for _, c := range b.bySession {
		for _, x := range c.docs {
			if x.str(x.d.FrameID) == string(id) {
				return x
			}
		}
	}
	return nil
}

// frameOf returns the Frame of document x: the one the walk registered,
// or, for a frame the walk did not show (its iframe is hidden), a new one,
// registered after its ancestors, so that its Parent chain is complete.
func (b *builder) frameOf(x *docIndex) *Frame {
	if f := b.frames[x]; f != nil {
		return f
	}
	c := b.captureOf(x)
	if c != nil && x == c.main() && c.parentDoc != nil {
		return b.addFrame(x, b.frameOf(c.parentDoc), c.owner, true)
	}
	if c != nil {
		for _, y := range c.docs {
			for i, cd := range y.contentDoc {
				if int(cd) == x.docNo {
					return b.addFrame(x, b.frameOf(y), y.backend(i), false)
				}
			}
		}
	}
	// The main document, or one whose owner the capture does not show.
	return b.addFrame(x, nil, 0, false)
}

// Resolve returns the element for an id of the snapshot. When the node has
// been replaced since the snapshot (a framework re-rendered it), Resolve
// falls back to the node now at the id's XPath.
func (s *Snapshot) Resolve(ctx context.Context, id string) (*Element, error) {
	ord, bid, err := parseID(id)
	if err != nil {
		return nil, err
	}
	if ord >= len(s.Frames) {
		return nil, fmt.Errorf("element %s: no frame %d in the snapshot: %w", id, ord, ErrNotFound)
	}
	f := s.Frames[ord]
	el := &Element{ID: id, XPath: s.XPaths[id], BackendNodeID: bid, Frame: f, snap: s, text: s.texts[id]}

	// A backend id stays valid while the node object lives, even after the
	// page removed it, so ask the node itself whether it is still there.
	alive, lerr := f.sess.connected(ctx, bid)
	if lerr == nil && alive {
		return el, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("element %s: %w", id, ctx.Err())
	}
	derr := lerr
	if derr == nil {
		derr = errors.New("node was removed from the document")
	}
	if el.XPath == "" {
		return nil, fmt.Errorf("element %s: %w (%w)", id, ErrNotFound, derr)
	}
	healed, err := f.Query(ctx, el.XPath)
	if err != nil {
		return nil, fmt.Errorf("element %s is gone and %s: %w", id, el.XPath, err)
	}
	healed.snap = s
	return healed, nil
}

// connected reports whether the node with backend id id is still in its
// document.
func (s *session) connected(ctx context.Context, id cdp.BackendNodeID) (bool, error) {
	ctx, release := withObjects(ctx)
	defer release()
	obj, err := s.resolveNode(ctx, id)
	if err != nil {
		return false, err
	}
	r, err := s.callOn(ctx, obj, `function() { return this.isConnected; }`, true)
	if err != nil {
		return false, err
	}
	return string(r.Value) == "true", nil
}

// parseID splits "<frame ordinal>-<backend node id>".
func parseID(id string) (int, cdp.BackendNodeID, error) {
	a, b, ok := strings.Cut(strings.Trim(strings.TrimSpace(id), "[]"), "-")
	ord, err1 := strconv.Atoi(a)
	bid, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || ord < 0 || bid <= 0 {
		return 0, 0, fmt.Errorf("element id %q: want <frame>-<node>, e.g. 0-42", id)
	}
	return ord, cdp.BackendNodeID(bid), nil
}

// capture is the DOM snapshot of one session, with the captures of the
// out-of-process frames it embeds.
type capture struct {
	sess *session
	docs []*docIndex
	// mainDoc is the index of the session's own frame document.
	mainDoc int
	// oopifs maps <iframe> backend ids in this session to the captures of
	// the out-of-process frames they show.
	oopifs map[cdp.BackendNodeID]*capture
	// frameIDs maps those <iframe> backend ids to their frame ids.
	frameIDs map[cdp.BackendNodeID]cdp.FrameID
	// parentDoc and owner are, for an out-of-process frame's capture, the
	// document that embeds it and the <iframe> element there.
	parentDoc *docIndex
	owner     cdp.BackendNodeID
}

func (c *capture) main() *docIndex {
	if c == nil || c.mainDoc >= len(c.docs) {
		return nil
	}
	return c.docs[c.mainDoc]
}

// find returns the index of the node with backend id id, or -1.
func (x *docIndex) find(id cdp.BackendNodeID) int32 {
	for i, b := range x.d.Nodes.BackendNodeID {
		if b == id {
			return int32(i)
		}
	}
	return -1
}

// builder assembles one snapshot.
type builder struct {
	page *Page
	snap *Snapshot
	// ignore holds the backend ids, in session ignoreIn, of the elements
	// IgnoreSelectors matched.
	ignore   map[cdp.BackendNodeID]bool
	ignoreIn *session
	// bySession finds the capture a document belongs to.
	bySession map[*session]*capture
	// frames holds the Frame of each document registered so far: a walk
	// that visits a document again reuses its ordinal.
	frames map[*docIndex]*Frame
	ax     map[*session]map[cdp.BackendNodeID]axInfo
	mu     sync.Mutex
}

// gather captures a session and, concurrently, the out-of-process frames
// it shows, recursively.
func (b *builder) gather(ctx context.Context, s *session) (*capture, error) {
	snap, err := s.captureDOM(ctx)
	if err != nil {
		return nil, err
	}
	c := &capture{
		sess:     s,
		oopifs:   make(map[cdp.BackendNodeID]*capture),
		frameIDs: make(map[cdp.BackendNodeID]cdp.FrameID),
	}
	for k := range snap.Documents {
		x := newDocIndex(snap, k, s)
		c.docs = append(c.docs, x)
		if snap.Strings[snap.Documents[k].FrameID] == string(s.target) {
			c.mainDoc = k
		}
	}
	b.mu.Lock()
	b.bySession[s] = c
	b.mu.Unlock()

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, x := range c.docs {
		wg.Go(func() {
			if err := x.shadowXPaths(ctx); err != nil {
				// The flat-tree XPaths stay as a fallback; only a
				// cancelled context fails the snapshot.
				if ctx.Err() != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
		for i := range x.d.Nodes.NodeType {
			i := int32(i)
			if x.nodeType(i) != elementNode || !x.rendered(i) {
				continue
			}
			if tag := x.name(i); tag != "IFRAME" && tag != "FRAME" {
				continue
			}
			if _, local := x.contentDoc[i]; local {
				continue
			}
			wg.Go(func() {
				fid, child, err := b.gatherFrame(ctx, s, x, x.backend(i))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					// A frame that is still loading, or that went away
					// meanwhile, is shown as an empty iframe.
					if ctx.Err() != nil {
						errs = append(errs, err)
					}
					return
				}
				c.oopifs[x.backend(i)] = child
				c.frameIDs[x.backend(i)] = fid
			})
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return c, nil
}

// gatherFrame captures the out-of-process frame shown by <iframe> owner of
// document parent.
func (b *builder) gatherFrame(ctx context.Context, s *session, parent *docIndex, owner cdp.BackendNodeID) (cdp.FrameID, *capture, error) {
	n, err := s.describe(ctx, map[string]any{"backendNodeId": owner})
	if err != nil {
		return "", nil, fmt.Errorf("describe iframe: %w", err)
	}
	if n.FrameID == "" {
		return "", nil, errors.New("iframe has no frame")
	}
	// An out-of-process frame's target id is its frame id.
	fs, err := b.page.frameSession(ctx, target.ID(n.FrameID))
	if err != nil {
		return "", nil, err
	}
	c, err := b.gather(ctx, fs)
	if err != nil {
		return "", nil, err
	}
	c.parentDoc, c.owner = parent, owner
	return n.FrameID, c, nil
}

func (b *builder) captureOf(x *docIndex) *capture {
	return b.bySession[x.sess]
}

// addFrame registers the next frame ordinal for a document, once: a
// document registered before keeps its Frame.
func (b *builder) addFrame(x *docIndex, parent *Frame, owner cdp.BackendNodeID, outOfProcess bool) *Frame {
	if f := b.frames[x]; f != nil {
		return f
	}
	f := &Frame{
		Ordinal:      len(b.snap.Frames),
		ID:           cdp.FrameID(x.str(x.d.FrameID)),
		URL:          x.str(x.d.DocumentURL),
		OutOfProcess: outOfProcess,
		Parent:       parent,
		page:         b.page,
		sess:         x.sess,
		doc:          x.backend(0),
		owner:        owner,
	}
	b.snap.Frames = append(b.snap.Frames, f)
	b.frames[x] = f
	return f
}

// ignored reports whether an IgnoreSelectors match covers the node. Backend
// ids are unique within a session, and the selectors' matches are all in
// one document of session ignoreIn.
func (b *builder) ignored(x *docIndex, i int32) bool {
	return len(b.ignore) > 0 && x.sess == b.ignoreIn && b.ignore[x.backend(i)]
}

// selectAll returns the backend ids of the elements of the frame's document
// matching selector (only the first one if first is set; only the nth one
// if the selector ends in " >> nth=<i>").
func (f *Frame) selectAll(ctx context.Context, selector string, first bool) ([]cdp.BackendNodeID, error) {
	sel, err := parseSelector(selector)
	if err != nil {
		return nil, err
	}
	doc, err := f.document(ctx)
	if err != nil {
		return nil, err
	}
	s := f.sess
	list, err := s.callOn(ctx, doc, jsQueryAll, false, sel.kind, sel.expr, sel.nth, first)
	if err != nil {
		return nil, err
	}
	var props struct {
		Result []struct {
			Name  string        `json:"name"`
			Value *remoteObject `json:"value"`
		} `json:"result"`
	}
	if err := s.call(ctx, "Runtime.getProperties", map[string]any{"objectId": list.ObjectID, "ownProperties": true}, &props); err != nil {
		return nil, err
	}
	var ids []cdp.BackendNodeID
	for _, p := range props.Result {
		if _, err := strconv.Atoi(p.Name); err != nil || p.Value == nil || p.Value.ObjectID == "" {
			continue
		}
		n, err := s.describe(ctx, map[string]any{"objectId": p.Value.ObjectID})
		if err != nil {
			return nil, err
		}
		ids = append(ids, n.BackendNodeID)
	}
	return ids, nil
}

// jsQueryAll returns the nodes matching a selector as an array; this is the
// document.
const jsQueryAll = `function(kind, expr, nth, first) {` + jsXPathRuntime + `
  if (first || nth >= 0) { const n = resolve(this, kind, expr, nth); return n ? [n] : []; }
  return all(this, kind, expr);
}`
