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

package chromium

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// MaxAttachedTabs bounds the tabs besides its own that the runner holds
// attached for operations: tabs a client opened through the session's
// cdpUrl and named by frameId. Attaching one more detaches the least
// recently used (it stays open; the next operation naming it attaches it
// again, and applies the session's emulation again).
const MaxAttachedTabs = 8

// maxParentHops bounds the walk from an out-of-process frame's target up
// to its tab.
const maxParentHops = 32

// Target is a tab of the session's browser that operations run on: the
// runner's own, or one a client opened through the session's cdpUrl that
// the runner attached to when an operation named it (see Browser.Target).
type Target struct {
	b    *Browser
	id   target.ID
	ctx  context.Context
	page *page.Page
}

// ID is the tab's DevTools target id, also its main frame's id.
func (t *Target) ID() target.ID { return t.id }

// Context is the tab's long-lived chromedp context: an operation's context
// is its child, so that the tab's closing (or the browser's death) ends
// the operation.
func (t *Target) Context() context.Context { return t.ctx }

// TabFor is the Tab of one call on this tab: ctx is the call's context, a
// child of Context.
func (t *Target) TabFor(ctx context.Context, settle time.Duration) *Tab {
	return &Tab{ctx: ctx, tabCtx: t.ctx, tab: t.page, targetID: t.id, egress: t.b.egress, settle: settle}
}

// own is the runner's tab as a Target.
func (b *Browser) own() *Target {
	return &Target{b: b, id: b.targetID, ctx: b.ctx, page: b.tab}
}

// attachedTab is a tab the runner attached to for operations.
type attachedTab struct {
	Target
	// session is the runner's DevTools session with the tab.
	session target.SessionID
	// end ends the tab's contexts with a cause that an operation on the
	// tab fails with (nil: the browser went away); detach then ends
	// chromedp's hold on the tab without closing it.
	end    context.CancelCauseFunc
	detach context.CancelFunc
	// used orders the tabs by their last use, for eviction.
	used uint64
	once sync.Once
}

// release lets the tab go: its engine handle stops, operations on it end
// with cause, and the runner's DevTools session detaches from it. The tab
// stays open: it is the client's.
func (a *attachedTab) release(cause error) {
	a.once.Do(func() {
		// chromedp closes a tab whose context ends, unless its Target has
		// no target id. Only the end below (never a parent's) ends that
		// context, and chromedp set the Target before the attach
		// returned, so nothing reads or writes it concurrently.
		if c := chromedp.FromContext(a.ctx); c != nil && c.Target != nil {
			c.Target.TargetID = ""
		}
		a.stop(cause)
	})
}

// stop ends the tab's contexts, and with them chromedp's hold on it.
func (a *attachedTab) stop(cause error) {
	if a.page != nil {
		a.page.Close()
	}
	a.end(cause)
	a.detach()
}

// attachGrace is how long an attach that its caller gave up on may still
// take before the runner stops waiting for it.
const attachGrace = 30 * time.Second

// abandon lets go of a tab whose attach the caller stopped waiting for,
// once the attach has ended (done): only then can release keep chromedp
// from closing the tab. An attach that hangs past attachGrace, or outlives
// the browser, is stopped as it is.
func (a *attachedTab) abandon(done <-chan error, cause error) {
	go func() {
		t := time.NewTimer(attachGrace)
		defer t.Stop()
		select {
		case err := <-done:
			if err != nil {
				a.b.log.Debug("an abandoned attach failed", "target", a.id, "err", err)
			}
			a.release(cause)
		case <-t.C:
			a.once.Do(func() { a.stop(cause) })
		case <-a.b.ctx.Done():
			a.once.Do(func() { a.stop(cause) })
		}
	}()
}

// tabs are the tabs attached besides the runner's own.
type tabs struct {
	mu   sync.Mutex
	byID map[target.ID]*attachedTab
	seq  uint64
}

// get returns an attached tab and marks it used.
func (ts *tabs) get(id target.ID) *attachedTab {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	a := ts.byID[id]
	if a != nil {
		ts.seq++
		a.used = ts.seq
	}
	return a
}

// take removes the tab id names, or the one whose session is sid, and
// returns it; nil when there is none.
func (ts *tabs) take(id target.ID, sid target.SessionID) *attachedTab {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for k, a := range ts.byID {
		if (id != "" && k == id) || (sid != "" && a.session == sid) {
			delete(ts.byID, k)
			return a
		}
	}
	return nil
}

// add records a newly attached tab and returns those it pushed over
// MaxAttachedTabs, least recently used first, for the caller to release.
func (ts *tabs) add(a *attachedTab) (evicted []*attachedTab) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.byID == nil {
		ts.byID = map[target.ID]*attachedTab{}
	}
	ts.seq++
	a.used = ts.seq
	ts.byID[a.id] = a
	for len(ts.byID) > MaxAttachedTabs {
		var oldest *attachedTab
		for _, c := range ts.byID {
			if oldest == nil || c.used < oldest.used {
				oldest = c
			}
		}
		delete(ts.byID, oldest.id)
		evicted = append(evicted, oldest)
	}
	return evicted
}

// all removes every tab and returns them.
func (ts *tabs) all() []*attachedTab {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make([]*attachedTab, 0, len(ts.byID))
	for _, a := range ts.byID {
		out = append(out, a)
	}
	ts.byID = nil
	return out
}

// ids are the attached tabs' ids, most recently used first.
func (ts *tabs) ids() []target.ID {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make([]target.ID, 0, len(ts.byID))
	for id := range ts.byID {
		out = append(out, id)
	}
	// Few entries: a plain insertion sort by use.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && ts.byID[out[j]].used > ts.byID[out[j-1]].used; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// AttachedTabs lists the ids of the tabs the runner holds attached besides
// its own, most recently used first.
func (b *Browser) AttachedTabs() []target.ID { return b.tabs.ids() }

// watchTargets forgets an attached tab when it closes, and releases every
// one when the browser goes away. Chromium reports a closed tab to the
// browser's session once target discovery is on there.
func (b *Browser) watchTargets(ctx context.Context) error {
	if err := target.SetDiscoverTargets(true).Do(cdp.WithExecutor(ctx, b.cdp)); err != nil {
		return fmt.Errorf("watching the browser's tabs: %w", err)
	}
	chromedp.ListenBrowser(b.ctx, func(ev any) {
		var a *attachedTab
		switch e := ev.(type) {
		case *target.EventTargetDestroyed:
			a = b.tabs.take(e.TargetID, "")
		case *target.EventDetachedFromTarget:
			a = b.tabs.take("", e.SessionID)
		}
		if a != nil {
			b.log.Info("attached tab closed", "target", a.id)
			// Listeners run on chromedp's event goroutine, which the
			// detach's commands need.
			go a.release(errTabClosed(a.id))
		}
	})
	context.AfterFunc(b.ctx, b.releaseTabs)
	return nil
}

// errTabClosed is the error of an operation whose tab closed under it.
func errTabClosed(id target.ID) error {
	return rpc.Errorf(rpc.CodeBadRequest, "frameId: the tab %s closed during the operation", id)
}

// releaseTabs lets every attached tab go, leaving them open.
func (b *Browser) releaseTabs() {
	for _, a := range b.tabs.all() {
		a.release(nil)
	}
}

// Target is the tab an operation naming frameID runs on: the runner's own
// for none or its main frame's id; the tab whose target id frameID is, for
// any other tab of the browser (one a client opened through cdpUrl),
// attached on first use and kept while it lives; for an iframe's id, the
// tab that has the frame, looked for in the runner's tab first. An id
// found nowhere is the runner's tab's: the engine checks the frame there
// and answers the caller's BAD_REQUEST naming frameId. ctx bounds the
// lookup and the attach.
func (b *Browser) Target(ctx context.Context, frameID string) (*Target, error) {
	if frameID == "" || frameID == string(b.targetID) {
		return b.own(), nil
	}
	id := target.ID(frameID)
	if a := b.tabs.get(id); a != nil {
		return &a.Target, nil
	}
	infos, err := target.GetTargets().Do(cdp.WithExecutor(ctx, b.cdp))
	if err != nil {
		return nil, fmt.Errorf("listing the browser's tabs: %w", err)
	}
	byID := make(map[target.ID]*target.Info, len(infos))
	var pages []target.ID
	for _, in := range infos {
		byID[in.TargetID] = in
		if isTab(in) && in.TargetID != b.targetID {
			pages = append(pages, in.TargetID)
		}
	}
	if in, ok := byID[id]; ok && isTab(in) {
		return b.attach(ctx, id)
	}
	// An out-of-process iframe is a target of its own: its parents lead
	// to its tab.
	if in, ok := byID[id]; ok && in.Type == "iframe" {
		for range maxParentHops {
			parent, ok := byID[in.ParentID]
			if !ok {
				break
			}
			if isTab(parent) {
				if parent.TargetID == b.targetID {
					return b.own(), nil
				}
				return b.attach(ctx, parent.TargetID)
			}
			in = parent
		}
	}
	// A same-process iframe is in its tab's frame tree.
	if found, err := hasFrame(b.ContextFor(ctx), cdp.FrameID(id)); err != nil || found {
		return b.own(), err
	}
	for _, pid := range pages {
		t, err := b.attach(ctx, pid)
		if err != nil {
			// A tab that closed meanwhile, or refuses a session: not
			// the one.
			b.log.Debug("could not look for a frame in a tab", "target", pid, "err", err)
			continue
		}
		tctx, cancel := bound(t.ctx, ctx)
		found, err := hasFrame(tctx, cdp.FrameID(id))
		cancel()
		if err == nil && found {
			return t, nil
		}
	}
	return b.own(), nil
}

// isTab reports whether a target is a tab operations can run on: a page,
// not a prerendering one.
func isTab(in *target.Info) bool { return in.Type == "page" && in.Subtype == "" }

// hasFrame reports whether the frame tree of ctx's tab has id, at any
// depth. Out-of-process frames' documents are not in it (their targets
// are found by Target.getTargets), but a same-process iframe is.
func hasFrame(ctx context.Context, id cdp.FrameID) (bool, error) {
	var tree *cdppage.FrameTree
	err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		tree, err = cdppage.GetFrameTree().Do(ctx)
		return err
	}))
	if err != nil {
		return false, fmt.Errorf("reading the tab's frames: %w", err)
	}
	var walk func(*cdppage.FrameTree) bool
	walk = func(t *cdppage.FrameTree) bool {
		if t == nil || t.Frame == nil {
			return false
		}
		if t.Frame.ID == id {
			return true
		}
		for _, c := range t.ChildFrames {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(tree), nil
}

// bound is a chromedp context of tabCtx's tab that ctx cancels too.
func bound(tabCtx, ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancelCause(tabCtx)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return c, func() {
		stop()
		cancel(context.Canceled)
	}
}

// attach attaches the runner to the tab id (or returns it, attached
// already), applies the session's emulation to it and attaches the
// engine's page handle, which tracks its network from now on.
func (b *Browser) attach(ctx context.Context, id target.ID) (*Target, error) {
	if a := b.tabs.get(id); a != nil {
		return &a.Target, nil
	}
	if b.ctx.Err() != nil {
		return nil, errors.New("the browser is gone")
	}
	// Only release ends the tab's context (see attachedTab.release): not
	// the runner's tab's, whose end would close this one.
	parent, end := context.WithCancelCause(context.WithoutCancel(b.ctx))
	tctx, detach := chromedp.NewContext(parent, chromedp.WithTargetID(id))
	a := &attachedTab{Target: Target{b: b, id: id, ctx: tctx}, end: end, detach: detach}
	// chromedp attaches on the first Run, with its context: bound it by
	// ctx from outside.
	done := make(chan error, 1)
	go func() { done <- chromedp.Run(tctx) }()
	select {
	case err := <-done:
		if err != nil {
			a.release(nil)
			return nil, fmt.Errorf("attaching to tab %s: %w", id, err)
		}
	case <-ctx.Done():
		a.abandon(done, nil)
		return nil, fmt.Errorf("attaching to tab %s: %w", id, context.Cause(ctx))
	case <-b.ctx.Done():
		a.abandon(done, nil)
		return nil, errors.New("the browser is gone")
	}
	a.session = chromedp.FromContext(tctx).Target.SessionID
	var err error
	if a.page, err = page.Attach(tctx, b.pageOptions()...); err == nil {
		ectx, cancel := bound(tctx, ctx)
		err = b.emulate(ectx)
		cancel()
	}
	if err != nil {
		a.release(nil)
		return nil, fmt.Errorf("attaching to tab %s: %w", id, err)
	}
	for _, old := range b.tabs.add(a) {
		b.log.Info("detaching the least recently used tab", "target", old.id, "max", MaxAttachedTabs)
		old.release(rpc.Errorf(rpc.CodeBadRequest, "frameId: the tab %s was detached: more than %d tabs were attached", old.id, MaxAttachedTabs))
	}
	b.log.Info("attached a tab", "target", id)
	// The browser may have gone while attaching: releaseTabs ran already.
	if b.ctx.Err() != nil {
		b.releaseTabs()
	}
	return &a.Target, nil
}
