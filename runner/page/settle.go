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

	"github.com/chromedp/cdproto/network"
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
	// ActionGrace is how long after an input action or a navigation Settle
	// waits at least: long enough for a request the action triggers to be
	// announced, which happens within milliseconds.
	ActionGrace = 150 * time.Millisecond
)

// ErrNotSettled reports that the page was still busy when Settle gave up.
// The page is usable; callers usually log it and carry on.
var ErrNotSettled = errors.New("page did not settle")

// pollInterval paces Settle's checks of the document state.
const pollInterval = 50 * time.Millisecond

// Settle waits until the main document has been parsed and then until the
// network has been quiet for QuietWindow, counting requests of the tab and
// of its out-of-process frames. WebSocket and EventSource connections are
// not counted, and requests in flight for longer than StallTimeout stop
// counting. The quiet window counts from the last network activity, so a
// page that has been idle settles at once; it also lasts at least
// ActionGrace past the last Perform or Navigate, so that a request an action
// triggers a moment later is still waited for.
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
		busy, quietAt, changed := p.net.state(now, p.lastAction().Add(ActionGrace))
		if !busy && !now.Before(quietAt) {
			return nil
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

// waitParsed polls document.readyState until the main document is no longer
// "loading". Evaluations fail while a navigation swaps documents; those are
// retried.
func (p *Page) waitParsed(ctx context.Context) error {
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
type netTracker struct {
	mu       sync.Mutex
	inflight map[requestKey]*request
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
	url     string
	started time.Time
}

func newNetTracker() *netTracker {
	return &netTracker{
		inflight: make(map[requestKey]*request),
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
			t.update(func(now time.Time) {
				// A redirect reuses the request id; it keeps its start.
				if _, ok := t.inflight[requestKey{tid, e.RequestID}]; !ok {
					t.inflight[requestKey{tid, e.RequestID}] = &request{url: url, started: now}
				}
			})
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

func (t *netTracker) finish(tid target.ID, id network.RequestID) {
	t.update(func(time.Time) {
		delete(t.inflight, requestKey{tid, id})
	})
}

func (t *netTracker) update(fn func(now time.Time)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	fn(now)
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
