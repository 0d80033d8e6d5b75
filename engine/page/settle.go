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
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
)

const (
	// QuietWindow is how long the network must stay idle for Settle.
	QuietWindow = 500 * time.Millisecond
	// StallTimeout is how long a request may stay in flight before Settle
	// stops waiting for it: long polls, beacons and slow trackers would
	// otherwise keep a page from ever settling.
	StallTimeout = 2 * time.Second
	// DefaultSettleTimeout bounds Settle when the caller gives no timeout.
	DefaultSettleTimeout = 30 * time.Second
	// ActionGrace bounds how long after an input action or a navigation
	// Settle waits at least, unless the quiet probe ends the wait earlier:
	// long enough for a request the action triggers to be announced, and
	// for what the action's handlers schedule to run.
	// Input.dispatchMouseEvent answers once the renderer has handled the
	// event, so a request a click handler starts is announced about when
	// Perform returns: measured on a page whose click handler calls fetch()
	// (headless Chromium, two cores, 20 clicks per run),
	// Network.requestWillBeSent arrived between 0.3 ms before and 1.8 ms
	// after Perform returned, and at most 3.1 ms after with three busy loops
	// competing for the cores. 25 ms is eight times the worst of those.
	ActionGrace = 25 * time.Millisecond
	// QuietProbeTimeout bounds the wait for a renderer to answer Settle's
	// quiet probe; a renderer that has not run a zero-delay task by then
	// is busy with something of its own, and Settle goes on as it would
	// without the probe.
	QuietProbeTimeout = 500 * time.Millisecond
)

// ErrNotSettled reports that the page was still busy when Settle gave up.
// The page is usable; callers usually log it and carry on.
var ErrNotSettled = errors.New("page did not settle")

// pollInterval paces Settle's checks of the document state.
const pollInterval = 50 * time.Millisecond

// Settle waits until the main document has been parsed and then until the
// network has been quiet for QuietWindow, counting requests of the tab and
// of its out-of-process frames, and navigations a document has asked for
// and the browser has not started yet. WebSocket and EventSource
// connections are not counted, and requests in flight for longer than
// StallTimeout stop counting. The quiet window counts from the last network
// activity, so a page that has been idle settles at once.
//
// After a Perform or Navigate it also waits for what the action set off:
// until the quiet probe has seen each renderer of the tab run a task queued
// after the action with no DOM change during it (see jsQuietProbe; DOM
// changes are waited for until ActionGrace after the action, a renderer's
// answer for at most QuietProbeTimeout), or, when the probe cannot tell,
// until ActionGrace has passed. A renderer reports the requests and
// navigations a task starts before the probe's answer, on the same
// connection, so that a request the action triggers is counted before
// Settle decides. Work a page schedules later than the probe's task (a
// setTimeout with a delay) is not waited for unless it changes the DOM
// while the probe watches.
//
// Chrome throttles timers in background tabs, so a request a background
// page schedules with setTimeout may start after the quiet window; Perform
// brings the tab to the front, as a user would.
//
// It returns an error wrapping ErrNotSettled when timeout (or
// DefaultSettleTimeout, if timeout is zero) passes first, and ctx's error
// if ctx ends first.
func (p *Page) Settle(ctx context.Context, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultSettleTimeout
	}
	deadline := time.Now().Add(timeout)
	tctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	if err := p.waitParsed(tctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w within %s: document still loading", ErrNotSettled, timeout)
	}
	for {
		now := time.Now()
		last := p.lastAction()
		floor := last.Add(ActionGrace)
		if p.quietSince.Load() == last.UnixNano() {
			// The probe has seen the page quiet since the action.
			floor = time.Time{}
		}
		busy, quietAt, changed := p.net.state(now, floor)
		if !busy && !now.Before(quietAt) {
			return nil
		}
		if !busy && quietAt.Equal(floor) && p.probeQuiet(tctx, last, floor) {
			continue
		}
		wait := time.Until(quietAt)
		if busy {
			// The first in-flight request stalls at the latest by then.
			wait = time.Until(p.net.nextStall(now))
		}
		wait = max(wait, time.Millisecond)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-tctx.Done():
			timer.Stop()
			return fmt.Errorf("%w within %s: %s", ErrNotSettled, timeout, p.net.describe(time.Now()))
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// jsQuietProbe resolves to true once four setTimeout(0) turns in a row
// have run with no DOM change, and to false when changes go on for longer
// than its argument, in milliseconds. Timers of equal delay run in the
// order they were set, so the probe's chain of turns interleaves with the
// page's own zero-delay timers: four quiet turns wait out a chain of up to
// three timers that each set the next (a click handler's setTimeout whose
// callback sets another), which one turn would not. It runs in the page's main world and changes
// nothing there; it calls the page's setTimeout and MutationObserver, so a
// page that replaced them with ones that never call back costs one action
// QuietProbeTimeout, after which Settle waits ActionGrace instead of
// probing until the main frame commits another document.
const jsQuietProbe = `(ms => new Promise(resolve => {
  const end = performance.now() + ms;
  let changed = false;
  const mo = new MutationObserver(() => { changed = true; });
  mo.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  let quiet = 0;
  const turn = () => setTimeout(() => {
    quiet = changed ? 0 : quiet + 1;
    changed = false;
    if (quiet >= 4 || performance.now() >= end) { mo.disconnect(); resolve(quiet >= 4); return; }
    turn();
  }, 0);
  turn();
}))`

// probeQuiet runs jsQuietProbe in every renderer of the tab (the main
// frame's and each out-of-process frame's), once per action, and reports
// whether all of them answered true, each within the later of until and
// QuietProbeTimeout from now. It then records that the page has been quiet
// since the action at last, which ends Settle's ActionGrace early. Any failure (a document being replaced, an
// out-of-process frame still attaching, a renderer too busy to answer in
// time) leaves the fixed grace in place.
func (p *Page) probeQuiet(ctx context.Context, last, until time.Time) bool {
	mark := last.UnixNano()
	if p.probedFor.Swap(mark) == mark {
		return false
	}
	budget := time.Until(until)
	if budget <= 0 {
		return false
	}
	if g := p.docGen.Load(); g > 0 && p.probeStuck.Load() == g {
		return false
	}
	sessions, ok := p.rendererSessions()
	if !ok {
		return false
	}
	// The probe's task may wait behind the page's (Chrome runs them after
	// the frame that follows an input event): it gets QuietProbeTimeout to
	// answer, even past ActionGrace, so that a busy renderer's consequences
	// are still seen; DOM changes that go on are waited for only until
	// ActionGrace has passed.
	pctx, cancel := context.WithTimeout(ctx, max(budget, QuietProbeTimeout))
	defer cancel()
	expr := fmt.Sprintf("%s(%d)", jsQuietProbe, budget.Milliseconds())
	results := make(chan bool, len(sessions))
	for _, s := range sessions {
		go func() {
			var r evalResult
			err := s.call(pctx, "Runtime.evaluate", map[string]any{
				"expression":    expr,
				"awaitPromise":  true,
				"returnByValue": true,
			}, &r)
			results <- err == nil && r.ExceptionDetails == nil && string(r.Result.Value) == "true"
		}()
	}
	quiet := true
	for range sessions {
		quiet = <-results && quiet
	}
	if !quiet && pctx.Err() != nil && ctx.Err() == nil {
		// A renderer did not answer in time: the rest of this document's
		// actions wait ActionGrace rather than QuietProbeTimeout each.
		p.probeStuck.Store(p.docGen.Load())
	}
	if quiet {
		p.quietSince.Store(mark)
	}
	return quiet
}

// rendererSessions returns the tab's session and those of its out-of-process
// frames, or false while one of them is still being attached.
func (p *Page) rendererSessions() ([]*session, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []*session{p.main}
	for _, e := range p.oopifs {
		select {
		case <-e.ready:
		default:
			return nil, false
		}
		if e.err == nil && e.sess != nil && e.sess.alive.Err() == nil {
			out = append(out, e.sess)
		}
	}
	return out, true
}

// waitParsed polls document.readyState until the main document is no longer
// "loading". Evaluations fail while a navigation swaps documents; those are
// retried. It asks nothing when the tab has reported DOMContentLoaded for
// the last document it committed since Attach.
func (p *Page) waitParsed(ctx context.Context) error {
	if g := p.docGen.Load(); g > 0 && p.parsedGen.Load() == g {
		return nil
	}
	for {
		o, err := p.main.evaluate(ctx, "document.readyState", true)
		if err == nil && len(o.Value) > 0 && string(o.Value) != `"loading"` {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// netTracker counts the requests in flight across the Page's sessions.
//
// Requests of a document that a frame has navigated away from do not count.
// Chrome does not always report how they end: when a page is left right
// after it loads, the favicon request Chrome sends for it (frame: the main
// frame, loader: the old document's, type Other, initiator "other") may get
// neither loadingFinished nor loadingFailed, and would keep every Settle
// waiting until StallTimeout. Such a request can be announced before the
// new document commits or just after it, so the tracker drops a frame's
// in-flight requests of other documents when the frame commits one, and
// ignores requests announced later for a document already replaced.
type netTracker struct {
	mu       sync.Mutex
	inflight map[requestKey]*request
	// current is the loader of the document each frame shows, as of its
	// last commit.
	current map[cdp.FrameID]cdp.LoaderID
	// retired holds the loader ids of the last documents frames have
	// navigated away from, oldest first; a loader id is never reused.
	retired []cdp.LoaderID
	// last is when a request last started or finished.
	last time.Time
	// changed is closed and replaced whenever the in-flight set changes.
	changed chan struct{}
}

type requestKey struct {
	target target.ID
	id     network.RequestID
}

type request struct {
	url    string
	frame  cdp.FrameID
	loader cdp.LoaderID
	// document marks a navigation request, whose loader is that of the
	// document it creates.
	document bool
	started  time.Time
}

// maxRetired bounds netTracker.retired. An orphaned request is announced
// within milliseconds of the navigation that replaces its document, so only
// the most recent replaced documents matter.
const maxRetired = 32

func newNetTracker() *netTracker {
	return &netTracker{
		inflight: make(map[requestKey]*request),
		current:  make(map[cdp.FrameID]cdp.LoaderID),
		last:     time.Now(),
		changed:  make(chan struct{}),
	}
}

// listener returns the network event handler of one session. It runs on
// chromedp's event goroutine and only touches the tracker.
func (t *netTracker) listener(tid target.ID) func(ev any) {
	return func(ev any) {
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			switch e.Type {
			case network.ResourceTypeWebSocket, network.ResourceTypeEventSource:
				return
			}
			if e.Request != nil && strings.HasPrefix(e.Request.URL, "data:") {
				return
			}
			url := ""
			if e.Request != nil {
				url = e.Request.URL
			}
			t.update(func(now time.Time) bool {
				if e.Type == network.ResourceTypeDocument {
					// The requested navigation has started; its request
					// counts from now on.
					delete(t.inflight, navKey(e.FrameID))
				}
				// A navigation request carries the loader of the
				// document it will create, never a retired one; any
				// other request of a replaced document is an orphan,
				// and not even activity.
				if e.Type != network.ResourceTypeDocument && t.isRetired(e.LoaderID) {
					return false
				}
				// A redirect reuses the request id; it keeps its start.
				if _, ok := t.inflight[requestKey{tid, e.RequestID}]; !ok {
					t.inflight[requestKey{tid, e.RequestID}] = &request{
						url: url, frame: e.FrameID, loader: e.LoaderID,
						document: e.Type == network.ResourceTypeDocument, started: now,
					}
				}
				return true
			})
		case *page.EventFrameRequestedNavigation:
			// A document asked for a navigation of its frame: the browser
			// announces the request itself (Network.requestWillBeSent)
			// later, on another connection than the renderer's, so that
			// Settle would not see it yet.
			if e.Disposition != page.ClientNavigationDispositionCurrentTab {
				return
			}
			t.update(func(now time.Time) bool {
				t.inflight[navKey(e.FrameID)] = &request{url: e.URL, frame: e.FrameID, document: true, started: now}
				return true
			})
		case *page.EventNavigatedWithinDocument:
			t.navigationEnded(e.FrameID)
		case *page.EventFrameStoppedLoading:
			t.navigationEnded(e.FrameID)
		case *page.EventFrameNavigated:
			if e.Frame != nil && e.Frame.LoaderID != "" {
				t.committed(e.Frame.ID, e.Frame.LoaderID)
			}
		case *page.EventFrameDetached:
			t.mu.Lock()
			delete(t.current, e.FrameID)
			delete(t.inflight, navKey(e.FrameID))
			t.mu.Unlock()
		case *network.EventResponseReceived:
			// An EventSource is only recognisable once it answers when
			// its request was sent as type Other.
			if e.Type == network.ResourceTypeEventSource {
				t.finish(tid, e.RequestID)
			}
		case *network.EventLoadingFinished:
			t.finish(tid, e.RequestID)
		case *network.EventLoadingFailed:
			t.finish(tid, e.RequestID)
		}
	}
}

// committed notes that frame now shows the document of loader. The
// frame's other documents are retired: their requests in flight stop
// counting, and requests announced for them later are ignored. A navigation
// request in flight (of a document yet to commit) still counts.
func (t *netTracker) committed(frame cdp.FrameID, loader cdp.LoaderID) {
	t.update(func(time.Time) bool {
		delete(t.inflight, navKey(frame))
		if old, ok := t.current[frame]; ok && old != loader {
			t.retire(old)
		}
		t.current[frame] = loader
		for k, r := range t.inflight {
			if r.frame == frame && !r.document && r.loader != "" && r.loader != loader {
				delete(t.inflight, k)
				t.retire(r.loader)
			}
		}
		return true
	})
}

// retire adds loader to t.retired. t.mu must be held.
func (t *netTracker) retire(loader cdp.LoaderID) {
	if t.isRetired(loader) {
		return
	}
	t.retired = append(t.retired, loader)
	if n := len(t.retired); n > maxRetired {
		t.retired = append(t.retired[:0], t.retired[n-maxRetired:]...)
	}
}

// isRetired reports whether loader is a document some frame has navigated
// away from. t.mu must be held.
func (t *netTracker) isRetired(loader cdp.LoaderID) bool {
	if loader == "" {
		return false
	}
	for _, l := range t.retired {
		if l == loader {
			return true
		}
	}
	return false
}

// navKey keys the navigation a frame has requested and the browser has not
// announced yet. It is not a request id of any session, and one frame has
// at most one such navigation.
func navKey(frame cdp.FrameID) requestKey {
	return requestKey{id: network.RequestID("navigation:" + string(frame))}
}

// navigationEnded drops the navigation frame requested, if any: it was
// same-document, or the frame stopped loading without it (cancelled,
// a download, a 204).
func (t *netTracker) navigationEnded(frame cdp.FrameID) {
	t.update(func(time.Time) bool {
		if _, ok := t.inflight[navKey(frame)]; !ok {
			return false
		}
		delete(t.inflight, navKey(frame))
		return true
	})
}

func (t *netTracker) finish(tid target.ID, id network.RequestID) {
	t.update(func(time.Time) bool {
		delete(t.inflight, requestKey{tid, id})
		return true
	})
}

// update runs fn under the tracker's lock and, unless fn returns false,
// records network activity now and wakes Settle.
func (t *netTracker) update(fn func(now time.Time) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if !fn(now) {
		return
	}
	t.last = now
	close(t.changed)
	t.changed = make(chan struct{})
}

// state reports whether requests that have not stalled are in flight, when
// the network will have been quiet long enough (and no earlier than floor),
// and a channel closed at the next change.
func (t *netTracker) state(now, floor time.Time) (busy bool, quietAt time.Time, changed <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.inflight {
		if now.Sub(r.started) < StallTimeout {
			busy = true
			break
		}
	}
	quietAt = t.last.Add(QuietWindow)
	if floor.After(quietAt) {
		quietAt = floor
	}
	return busy, quietAt, t.changed
}

// nextStall is when the oldest request that still counts will stall.
func (t *netTracker) nextStall(now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := now.Add(StallTimeout)
	for _, r := range t.inflight {
		if s := r.started.Add(StallTimeout); s.After(now) && s.Before(next) {
			next = s
		}
	}
	return next
}

// describe summarises the requests in flight, for errors.
func (t *netTracker) describe(now time.Time) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var urls []string
	for _, r := range t.inflight {
		if now.Sub(r.started) < StallTimeout {
			urls = append(urls, r.url)
		}
	}
	n := len(urls)
	if n == 0 {
		return "network activity did not pause"
	}
	if n > 3 {
		urls = append(urls[:3], "...")
	}
	return fmt.Sprintf("%d requests in flight: %s", n, strings.Join(urls, ", "))
}
