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
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	jsonv2 "github.com/go-json-experiment/json"
)

// Frame is one document of the tab: the main frame or an iframe, as seen by
// a snapshot (or, for MainFrame, the current main document).
type Frame struct {
	// Ordinal numbers the frame within its snapshot: 0 for the main frame,
	// 1.. for iframes in document order. It is the prefix of element ids.
	Ordinal int
	// ID is the DevTools frame id.
	ID cdp.FrameID
	// URL is the frame document's URL when the snapshot was taken.
	URL string
	// OutOfProcess reports whether the frame has its own DevTools target,
	// as cross-site iframes do under site isolation.
	OutOfProcess bool
	// Parent is the frame that embeds this one; nil for the main frame.
	Parent *Frame

	page *Page
	sess *session
	// doc is the frame's #document node; zero means "the main frame's
	// current document".
	doc cdp.BackendNodeID
	// owner is the <iframe> element in Parent that shows this frame.
	owner cdp.BackendNodeID
}

// MainFrame returns the tab's main frame as it is now, for selector queries
// that do not come from a snapshot.
func (p *Page) MainFrame() *Frame {
	return &Frame{page: p, sess: p.main, ID: cdp.FrameID(p.main.target)}
}

// Frame returns the frame whose DevTools frame id is id, as it is now: the
// main frame for "" or the main frame's id (the tab's target id), else an
// iframe at any depth, same-process or out-of-process, for selector
// queries in it without a snapshot. Its Ordinal is the one a Capture taken
// now would give it. A frame the page does not have is a *NoFrameError
// (errors.Is ErrNoFrame).
func (p *Page) Frame(ctx context.Context, id cdp.FrameID) (*Frame, error) {
	if id == "" || id == cdp.FrameID(p.main.target) {
		return p.MainFrame(), nil
	}
	// The frame's session, document and chain of embedding iframes (which
	// input needs for coordinates) are what a capture finds; a DOMSnapshot
	// per renderer process is the price.
	b := newBuilder(p)
	root, err := b.gather(ctx, p.main)
	if err != nil {
		return nil, fmt.Errorf("frame %s: %w", id, err)
	}
	x := b.document(id)
	if x == nil {
		return nil, &NoFrameError{Frame: id}
	}
	if err := b.outline(root); err != nil {
		return nil, err
	}
	return b.frameOf(x), nil
}

// Query finds the first element matching selector in the frame's document.
// A selector is CSS ("css=" prefix optional) or XPath ("xpath=" prefix, or
// any selector starting with "/" or "("), optionally ending in
// " >> nth=<i>", which picks its i-th match from 0 (Playwright's form); a
// "text=" selector is refused with ErrTextSelector. XPaths produced by this package
// may cross shadow roots with "//" between a host's step and the first step
// inside its shadow root; Query follows them into open shadow roots only, as
// page scripts cannot see into closed ones (snapshot ids reach both). It
// returns an error wrapping ErrNotFound when nothing matches.
func (f *Frame) Query(ctx context.Context, selector string) (*Element, error) {
	sel, err := parseSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("selector %q: %w", selector, err)
	}
	// The element's remote object outlives the query: Perform locates the
	// element through it, which saves a DOM.resolveNode. The Element
	// releases it (see heldObject); the scope is released here only when
	// no Element takes it.
	ctx, release := withObjects(ctx)
	el, err := f.query(ctx, sel, release)
	if err != nil {
		go release()
		return nil, fmt.Errorf("selector %q: %w", selector, err)
	}
	return el, nil
}

func (f *Frame) query(ctx context.Context, sel selector, release func()) (*Element, error) {
	var (
		res *remoteObject
		err error
	)
	if f.doc == 0 {
		// The current main document: one Runtime.evaluate finds the node,
		// where callOn would need the document's object first.
		var call string
		call, err = jsCall(jsQuery, "document", sel.kind, sel.expr, sel.nth)
		if err == nil {
			res, err = f.sess.evaluate(ctx, call, false)
		}
	} else {
		var doc string
		if doc, err = f.document(ctx); err == nil {
			res, err = f.sess.callOn(ctx, doc, jsQuery, false, sel.kind, sel.expr, sel.nth)
		}
	}
	if err != nil {
		return nil, err
	}
	if res.ObjectID == "" {
		return nil, fmt.Errorf("in frame %d: %w", f.Ordinal, ErrNotFound)
	}
	el, err := f.elementFor(ctx, res.ObjectID)
	if err != nil {
		return nil, err
	}
	el.held = f.page.hold(f.sess, res.ObjectID, release)
	return el, nil
}

// jsCall returns an expression that calls the function fn with this bound
// to the expression self and with args, encoded as JSON, as arguments.
func jsCall(fn, self string, args ...any) (string, error) {
	var b strings.Builder
	b.WriteString("(")
	b.WriteString(fn)
	b.WriteString(").call(")
	b.WriteString(self)
	for _, a := range args {
		v, err := jsonv2.Marshal(a)
		if err != nil {
			return "", err
		}
		b.WriteString(", ")
		b.Write(v)
	}
	b.WriteString(")")
	return b.String(), nil
}

// elementFor builds an Element from a remote object of the frame.
func (f *Frame) elementFor(ctx context.Context, objectID string) (*Element, error) {
	// DOM.describeNode and the XPath do not depend on each other: sent
	// together they cost one round trip instead of two.
	var (
		path   string
		xpErr  error
		xpDone = make(chan struct{})
	)
	go func() {
		defer close(xpDone)
		xp, err := f.sess.callOn(ctx, objectID, jsXPathOf, true)
		if err != nil {
			xpErr = err
			return
		}
		xpErr = unmarshalValue(xp.Value, &path)
	}()
	n, err := f.sess.describe(ctx, map[string]any{"objectId": objectID})
	<-xpDone
	if err != nil {
		return nil, err
	}
	if xpErr != nil {
		return nil, xpErr
	}
	return &Element{
		ID:            elementID(f.Ordinal, n.BackendNodeID),
		XPath:         xpathPrefix + path,
		BackendNodeID: n.BackendNodeID,
		Frame:         f,
		text:          n.NodeType == textNode,
	}, nil
}

// document returns a remote object for the frame's document.
func (f *Frame) document(ctx context.Context) (string, error) {
	if f.doc == 0 {
		o, err := f.sess.evaluate(ctx, "document", false)
		if err != nil {
			return "", err
		}
		return o.ObjectID, nil
	}
	id, err := f.sess.resolveNode(ctx, f.doc)
	if err != nil {
		return "", fmt.Errorf("frame %d (%s) has navigated or gone since the snapshot: %w", f.Ordinal, f.URL, err)
	}
	return id, nil
}

// outOfProcess reports whether the frame, or a frame it is in, renders in
// another process than the tab's main frame.
func (f *Frame) outOfProcess() bool {
	for fr := f; fr != nil; fr = fr.Parent {
		if fr.OutOfProcess {
			return true
		}
	}
	return false
}

// toViewport translates a point from the coordinates DOM.getContentQuads
// reports for this frame's nodes into the tab's viewport. Chrome reports
// quads relative to the frame's local root, the outermost frame rendered by
// the same process, so only out-of-process boundaries add an offset: the
// content box of the <iframe> element in the parent.
func (f *Frame) toViewport(ctx context.Context, x, y float64) (float64, float64, error) {
	for fr := f; fr.Parent != nil; fr = fr.Parent {
		if fr.sess == fr.Parent.sess {
			continue
		}
		var box struct {
			Model struct {
				Content []float64 `json:"content"`
			} `json:"model"`
		}
		err := fr.Parent.sess.call(ctx, "DOM.getBoxModel", map[string]any{"backendNodeId": fr.owner}, &box)
		if err != nil {
			return 0, 0, fmt.Errorf("locate iframe of frame %d: %w", fr.Ordinal, err)
		}
		if len(box.Model.Content) < 2 {
			return 0, 0, fmt.Errorf("locate iframe of frame %d: no content box", fr.Ordinal)
		}
		x += box.Model.Content[0]
		y += box.Model.Content[1]
	}
	return x, y, nil
}

// oopifEntry is the session of one out-of-process frame, or the attempt to
// create it; ready closes when the attempt ends.
type oopifEntry struct {
	ready chan struct{}
	sess  *session
	err   error
}

// frameSession returns a session attached to the out-of-process frame whose
// target id is id, attaching on first use. Concurrent callers share one
// attempt; a failed or detached session is replaced on the next call.
func (p *Page) frameSession(ctx context.Context, id target.ID) (*session, error) {
	p.mu.Lock()
	e := p.oopifs[id]
	if e != nil {
		select {
		case <-e.ready:
			if e.err != nil || e.sess.alive.Err() != nil {
				e = nil
			}
		default:
		}
	}
	if e == nil {
		e = &oopifEntry{ready: make(chan struct{})}
		p.oopifs[id] = e
		go p.attachFrameTarget(id, e)
	}
	p.mu.Unlock()

	select {
	case <-e.ready:
		return e.sess, e.err
	case <-ctx.Done():
		return nil, fmt.Errorf("attach to frame %s: %w", id, ctx.Err())
	}
}

// attachFrameTarget attaches a session to an out-of-process frame target.
//
// chromedp only routes replies for sessions it created itself, so the
// session is a chromedp context for the target. That context is deliberately
// never cancelled: chromedp closes a target when its context is cancelled,
// and Target.closeTarget on an iframe target closes the whole tab. It ends
// with the tab's context instead.
func (p *Page) attachFrameTarget(id target.ID, e *oopifEntry) {
	defer close(e.ready)
	cctx, _ := chromedp.NewContext(p.tabCtx, chromedp.WithTargetID(id))
	if err := chromedp.Run(cctx); err != nil {
		p.mu.Lock()
		e.err = fmt.Errorf("attach to frame target %s: %w", id, err)
		p.mu.Unlock()
		return
	}
	c := chromedp.FromContext(cctx)
	if c == nil || c.Target == nil {
		p.mu.Lock()
		e.err = errors.New("attach to frame target " + string(id) + ": no session")
		p.mu.Unlock()
		return
	}
	s := newSession(p.ctx, id, c.Target.SessionID, c.Target)
	// The listener must be registered on the target's own chromedp
	// context; it stops when the session dies or the Page closes.
	lctx, lcancel := context.WithCancel(cctx)
	context.AfterFunc(s.alive, lcancel)
	chromedp.ListenTarget(lctx, p.onTargetEvent(s))

	p.mu.Lock()
	e.sess = s
	p.mu.Unlock()
}
