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
	"sync"
	"sync/atomic"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Page drives one browser tab. Create it with Attach; it is safe for
// concurrent use, and input actions are serialised so that two mouse
// sequences never interleave.
type Page struct {
	// tabCtx is the chromedp context of the tab; out-of-process frame
	// sessions are created as its children.
	tabCtx context.Context
	// ctx bounds the Page's event listeners. It ends with Close or with the
	// tab.
	ctx    context.Context
	cancel context.CancelFunc

	main *session
	net  *netTracker

	mu sync.Mutex
	// oopifs holds the sessions of out-of-process iframes, by target id
	// (which is also the frame id).
	oopifs map[target.ID]*oopifEntry
	// held are the remote objects Query results keep, oldest first.
	held []*heldObject

	// inputMu serialises input sequences: a click is three events and must
	// not interleave with another action's.
	inputMu sync.Mutex

	// lastActionNano is when the last Perform or Navigate ended, in Unix
	// nanoseconds; Settle waits a little past it.
	lastActionNano atomic.Int64
	// probedFor is the lastActionNano Settle last ran its quiet probe
	// for, and quietSince the one the probe found the page quiet after.
	probedFor, quietSince atomic.Int64
	// docGen counts the main frame's documents committed since Attach;
	// parsedGen is the docGen whose DOMContentLoaded the tab reported.
	// When they are equal, Settle knows the document is parsed without
	// asking the page.
	docGen, parsedGen atomic.Int64
	// probeStuck is the docGen of a document whose renderers once failed
	// to answer Settle's quiet probe in time; it is not probed again.
	probeStuck atomic.Int64

	// laneEndpoint is the browser's DevTools endpoint for the input lane
	// (WithInputLane); empty: none.
	laneEndpoint string
	// laneMu guards lane and laneFailed.
	laneMu sync.Mutex
	lane   *inputLane
	// laneFailed is set once opening the lane failed; clicks then go
	// through the tab's own session for the rest of the Page's life.
	laneFailed bool
}

// Option configures a Page at Attach.
type Option func(*Page)

// WithInputLane lets the Page open a DevTools connection of its own to the
// browser at endpoint (its ws:// endpoint), on the first click, for the
// click's events: sent back to back on it, a mouse move does not wait for
// the renderer's next animation frame (see inputLane). Without it, or when
// the connection cannot be opened, a click waits for its move's answer
// before pressing the button, and takes a frame longer.
func WithInputLane(endpoint string) Option {
	return func(p *Page) { p.laneEndpoint = endpoint }
}

// inputLane returns the Page's lane, opening it on first use; nil when the
// Page has none or it cannot be opened. A lane whose connection ended is
// opened again.
func (p *Page) inputLane(ctx context.Context) *inputLane {
	if p.laneEndpoint == "" {
		return nil
	}
	p.laneMu.Lock()
	defer p.laneMu.Unlock()
	if p.lane != nil && p.lane.alive() {
		return p.lane
	}
	if p.laneFailed || p.ctx.Err() != nil {
		return nil
	}
	l, err := dialLane(ctx, p.laneEndpoint, p.main.target)
	if err != nil {
		p.laneFailed = ctx.Err() == nil
		return nil
	}
	context.AfterFunc(p.ctx, l.close)
	p.lane = l
	return l
}

// noteAction records that an action or navigation just ended.
func (p *Page) noteAction() { p.lastActionNano.Store(time.Now().UnixNano()) }

// lastAction is when the last Perform or Navigate ended; the zero time when
// there was none.
func (p *Page) lastAction() time.Time {
	if n := p.lastActionNano.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Attach returns a Page for the tab of ctx, which must be a chromedp context
// (from chromedp.NewContext). If the context has no tab yet, Attach creates
// one, the way chromedp.Run does. The Page tracks network activity from this
// moment on (see Settle) and lives until Close is called or the tab's context
// ends.
func Attach(ctx context.Context, opts ...Option) (*Page, error) {
	c := chromedp.FromContext(ctx)
	if c == nil {
		return nil, errors.New("page: attach: not a chromedp context")
	}
	if c.Target == nil {
		// chromedp attaches the tab lazily on the first Run.
		if err := chromedp.Run(ctx); err != nil {
			return nil, fmt.Errorf("page: attach to tab: %w", err)
		}
	}
	if c.Target == nil {
		return nil, errors.New("page: attach: chromedp context has no target")
	}

	lctx, cancel := context.WithCancel(ctx)
	p := &Page{
		tabCtx: ctx,
		ctx:    lctx,
		cancel: cancel,
		net:    newNetTracker(),
		oopifs: make(map[target.ID]*oopifEntry),
	}
	for _, o := range opts {
		o(p)
	}
	p.parsedGen.Store(-1)
	p.main = newSession(lctx, c.Target.TargetID, c.Target.SessionID, c.Target)
	chromedp.ListenTarget(lctx, p.onTargetEvent(p.main))
	chromedp.ListenBrowser(lctx, p.onBrowserEvent)
	return p, nil
}

// maxHeld bounds the remote objects that Query results keep for Perform.
// An Element performed on releases its object at once; this only limits
// what queries without a Perform leave behind. An Element whose object was
// released this way still works, through its backend node id.
const maxHeld = 16

// heldObject is a remote object that an Element of Query keeps for the
// element's node, in an object group of its own.
type heldObject struct {
	sess     *session
	id       string
	released atomic.Bool
	release  func()
}

// hold records the remote object id of sess, whose group release frees, as
// held by an Element, releasing the oldest held object past maxHeld.
func (p *Page) hold(sess *session, id string, release func()) *heldObject {
	h := &heldObject{sess: sess, id: id, release: release}
	p.mu.Lock()
	p.held = append(p.held, h)
	var evict []*heldObject
	if n := len(p.held); n > maxHeld {
		evict = append(evict, p.held[:n-maxHeld]...)
		p.held = append(p.held[:0], p.held[n-maxHeld:]...)
	}
	p.mu.Unlock()
	for _, e := range evict {
		e.free()
	}
	return h
}

// unhold releases h, if the Page still holds it.
func (p *Page) unhold(h *heldObject) {
	if h == nil {
		return
	}
	p.mu.Lock()
	for i, e := range p.held {
		if e == h {
			p.held = append(p.held[:i], p.held[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	h.free()
}

// object returns the held object id, or "" once it is released.
func (h *heldObject) object() string {
	if h == nil || h.released.Load() {
		return ""
	}
	return h.id
}

// free releases the object's group in the background: nothing waits for
// it, and a failure only leaks the object until the page navigates.
func (h *heldObject) free() {
	if h.released.CompareAndSwap(false, true) {
		go h.release()
	}
}

// Close stops the Page's event listeners. It neither closes the tab nor
// detaches from it. Sessions to out-of-process frames stay attached until the
// tab's context ends: detaching them through chromedp would close their
// targets, and closing an iframe's target closes the whole tab.
func (p *Page) Close() {
	p.cancel()
}

// onTargetEvent returns the event listener of one session (the tab's or an
// out-of-process frame's). Listeners run on chromedp's event goroutine, so
// they must not block or issue CDP commands themselves.
func (p *Page) onTargetEvent(s *session) func(ev any) {
	track := p.net.listener(s.target)
	return func(ev any) {
		track(ev)
		if s == p.main {
			p.trackParsed(ev)
		}
		if e, ok := ev.(*target.EventAttachedToTarget); ok && e.TargetInfo != nil && e.TargetInfo.Type == "iframe" {
			// chromedp sets auto-attach on every session, so Chrome
			// announces each out-of-process child frame here. Attaching our
			// own session right away lets Settle see the frame's network
			// traffic and makes the first snapshot of it cheaper.
			id := e.TargetInfo.TargetID
			go func() { _, _ = p.frameSession(p.ctx, id) }()
		}
	}
}

// trackParsed follows the main frame's documents: a commit starts one
// (which Chrome reports before anything the document does), the tab's
// DOMContentLoaded ends its parsing.
func (p *Page) trackParsed(ev any) {
	switch e := ev.(type) {
	case *cdppage.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ParentID == "" {
			p.docGen.Add(1)
		}
	case *cdppage.EventDomContentEventFired:
		p.parsedGen.Store(p.docGen.Load())
	}
}

// onBrowserEvent notices sessions that Chrome detached, for instance when an
// out-of-process iframe is removed or navigates back to its parent's site.
func (p *Page) onBrowserEvent(ev any) {
	var sid target.SessionID
	switch e := ev.(type) {
	case *target.EventDetachedFromTarget:
		sid = e.SessionID
	default:
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, e := range p.oopifs {
		if e.sess != nil && e.sess.id == sid {
			e.sess.kill(fmt.Errorf("frame target %s detached", id))
			delete(p.oopifs, id)
		}
	}
}
