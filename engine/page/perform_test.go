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
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/google/go-cmp/cmp"
)

func TestPerformBringsABackgroundTabToFront(t *testing.T) {
	tb := newTab(t)
	tb.open("/form")
	// A second tab comes to the front and hides the first.
	newTab(t)
	var state string
	tb.eval(`document.visibilityState`, &state)
	if state != "hidden" {
		t.Fatalf("first tab is %q behind another, want hidden", state)
	}
	el, err := tb.p.MainFrame().Query(tb.testCtx(), "#send")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := tb.p.Perform(tb.testCtx(), el, "click", nil); err != nil {
		t.Fatal(err)
	}
	// Input to a background tab would wait out Chrome's five-second input
	// timeout.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("click took %v", d)
	}
	if !contains(tb.events(), "click:send") {
		t.Errorf("click not seen; events %v", tb.events())
	}
	tb.eval(`document.visibilityState`, &state)
	if state != "visible" {
		t.Errorf("tab is %q after the click, want visible", state)
	}
}

func TestQueryResultsOutliveTheirObjects(t *testing.T) {
	tb := newTab(t)
	tb.open("/form")
	first, err := tb.p.MainFrame().Query(tb.testCtx(), "#send")
	if err != nil {
		t.Fatal(err)
	}
	// Later queries evict the object the first result keeps; Perform must
	// find the node again by its backend id.
	for range maxHeld + 1 {
		if _, err := tb.p.MainFrame().Query(tb.testCtx(), "#email"); err != nil {
			t.Fatal(err)
		}
	}
	if first.held.object() != "" {
		t.Fatal("the first result still holds its object")
	}
	if err := tb.p.Perform(tb.testCtx(), first, "click", nil); err != nil {
		t.Fatal(err)
	}
	// And an element performed on twice: the first Perform releases it.
	for range 2 {
		if err := tb.p.Perform(tb.testCtx(), first, "click", nil); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, e := range tb.events() {
		if e == "click:send" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d clicks seen, want 3; events %v", n, tb.events())
	}
}

// TestNetTrackerRetiresReplacedDocuments feeds the tracker the events of
// an orphaned request announced either side of the commit that replaces
// its document.
func TestNetTrackerRetiresReplacedDocuments(t *testing.T) {
	const frame = cdp.FrameID("main")
	rwbs := func(id string, loader cdp.LoaderID, typ network.ResourceType) *network.EventRequestWillBeSent {
		return &network.EventRequestWillBeSent{
			RequestID: network.RequestID(id), LoaderID: loader, FrameID: frame, Type: typ,
			Request: &network.Request{URL: "http://example.test/" + id},
		}
	}
	commit := func(loader cdp.LoaderID) *page.EventFrameNavigated {
		return &page.EventFrameNavigated{Frame: &cdp.Frame{ID: frame, LoaderID: loader}}
	}
	busy := func(tr *netTracker) bool {
		b, _, _ := tr.state(time.Now(), time.Time{})
		return b
	}
	for _, before := range []bool{true, false} {
		t.Run(fmt.Sprintf("announced before commit %v", before), func(t *testing.T) {
			tr := newNetTracker()
			l := tr.listener("tab")
			l(rwbs("L1", "L1", network.ResourceTypeDocument))
			l(commit("L1"))
			l(&network.EventLoadingFinished{RequestID: "L1"})
			l(rwbs("L2", "L2", network.ResourceTypeDocument))
			if before {
				l(rwbs("favicon", "L1", network.ResourceTypeOther))
			}
			l(commit("L2"))
			if !busy(tr) {
				t.Fatal("the new document's own request stopped counting at its commit")
			}
			l(&network.EventLoadingFinished{RequestID: "L2"})
			if !before {
				l(rwbs("favicon", "L1", network.ResourceTypeOther))
			}
			if busy(tr) {
				t.Errorf("busy with %s", tr.describe(time.Now()))
			}
			// Requests of the current document still count.
			l(rwbs("img", "L2", network.ResourceTypeImage))
			if !busy(tr) {
				t.Error("a request of the current document does not count")
			}
		})
	}
}

// TestClickMovesThePointerFirst checks the order of the events a click
// causes, with the Page's input lane (move, press and release written back
// to back on a connection of its own), without one (the move waited for
// before the press), and with a lane that cannot be opened (the Page falls
// back to waiting): the move reaches the page before the button goes down.
func TestClickMovesThePointerFirst(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []Option
		wantLane bool
	}{
		{"input lane", []Option{WithInputLane(browserEndpoint)}, true},
		{"no input lane", nil, false},
		// Port 9 (discard) of loopback, where nothing listens.
		{"input lane refused", []Option{WithInputLane("ws://127.0.0.1:9/devtools/browser/none")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTabWith(t, browserCtx, tc.opts...)
			tb.open("/form")
			var ok bool
			tb.eval(`window.seen = [];
for (const type of ['mousemove', 'mousedown', 'mouseup', 'click', 'dblclick'])
  document.addEventListener(type, e => {
    const last = window.seen[window.seen.length - 1];
    if (!(type === 'mousemove' && last === 'mousemove')) window.seen.push(type + (e.detail ? e.detail : ''));
  }, true);
true`, &ok)
			var want []string
			// Alternate between two elements, so that each click moves
			// the pointer.
			for i := range 10 {
				sel := []string{"#send", "#email"}[i%2]
				el, err := tb.p.MainFrame().Query(tb.testCtx(), sel)
				if err != nil {
					t.Fatal(err)
				}
				method := "click"
				want = append(want, "mousemove", "mousedown1", "mouseup1", "click1")
				if i == 4 {
					method = "doubleClick"
					want = append(want, "mousedown2", "mouseup2", "click2", "dblclick2")
				}
				if err := tb.p.Perform(tb.testCtx(), el, method, nil); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			tb.eval(`window.seen`, &got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if gotLane := tb.p.lane != nil; gotLane != tc.wantLane {
				t.Errorf("clicked on an input lane: %v, want %v", gotLane, tc.wantLane)
			}
		})
	}
}
