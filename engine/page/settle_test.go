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
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/google/go-cmp/cmp"
)

func TestSettleWaitsForAFetch(t *testing.T) {
	tb := newTab(t)
	tb.open("/delayed")
	s := tb.capture(SnapshotOptions{})
	tb.perform(s, findID(t, s, `^button: Load items$`), "click")
	if hasLine(tb.capture(SnapshotOptions{}), `Loaded items`) {
		t.Fatal("content there before the fetch could have returned")
	}
	start := time.Now()
	if err := tb.p.Settle(tb.testCtx(), 10*time.Second); err != nil {
		t.Fatalf("settle: %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("settled after %v, before the 300 ms fetch returned", d)
	}
	if after := tb.capture(SnapshotOptions{}); !hasLine(after, `^paragraph: Loaded items$`) {
		t.Errorf("content missing after settling:\n%s", after.Tree)
	}
}

func TestSettleAfterLoad(t *testing.T) {
	// The page fetches 50 ms after its load event, so the fetch starts
	// after Navigate returns: Settle must still wait for it.
	tb := newTab(t)
	tb.open("/delayed-onload")
	if err := tb.p.Settle(tb.testCtx(), 10*time.Second); err != nil {
		t.Fatalf("settle: %v", err)
	}
	if s := tb.capture(SnapshotOptions{}); !hasLine(s, `Loaded items`) {
		t.Errorf("content missing after settling:\n%s", s.Tree)
	}
}

func TestSettleIgnoresLongLivedRequests(t *testing.T) {
	// An EventSource streams forever and a fetch never answers: neither
	// may keep the page from settling.
	tb := newTab(t)
	tb.open("/longlived")
	start := time.Now()
	if err := tb.p.Settle(tb.testCtx(), 10*time.Second); err != nil {
		t.Fatalf("settle: %v", err)
	}
	if d := time.Since(start); d > StallTimeout+QuietWindow+time.Second {
		t.Errorf("settled after %v", d)
	}
}

func TestSettleQuietPage(t *testing.T) {
	tb := newTab(t)
	tb.open("/content")
	if err := tb.p.Settle(tb.testCtx(), 10*time.Second); err != nil {
		t.Fatalf("first settle: %v", err)
	}
	// Nothing has happened since: the page is settled already, and a
	// second Settle must not make the caller wait out another window.
	start := time.Now()
	if err := tb.p.Settle(tb.testCtx(), 10*time.Second); err != nil {
		t.Fatalf("settle: %v", err)
	}
	if d := time.Since(start); d >= QuietWindow {
		t.Errorf("an idle page took %v to settle again, a whole quiet window", d)
	}
}

func TestSettleTimesOut(t *testing.T) {
	tb := newTab(t)
	tb.open("/busy")
	start := time.Now()
	err := tb.p.Settle(tb.testCtx(), time.Second)
	if !errors.Is(err, ErrNotSettled) {
		t.Fatalf("err = %v, want ErrNotSettled", err)
	}
	if d := time.Since(start); d < time.Second || d > 2*time.Second {
		t.Errorf("gave up after %v, want about 1s", d)
	}
	t.Logf("error: %v", err)
}

// TestSettleIgnoresAnOrphanedFaviconRequest navigates twice in a row, as a
// client does. The first page's favicon request races the second navigation,
// and Chrome sometimes never reports how it ends; Settle must not count it
// until StallTimeout. (Ported from runner's known-bug test.)
func TestSettleIgnoresAnOrphanedFaviconRequest(t *testing.T) {
	// A server of its own, which answers every path (/favicon.ico too)
	// with a page: Chrome then asks for the favicon on every navigation,
	// where it would remember a 404 of the shared fixtures.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>plain</title>`)
	}))
	t.Cleanup(site.Close)
	tb := newTab(t)
	// The race is Chromium's; twenty rounds lose it nearly every time.
	for i := range 20 {
		tb.open(site.URL + "/first")
		tb.open(site.URL + "/second")
		// Well under StallTimeout, well over the quiet window.
		if err := tb.p.Settle(tb.testCtx(), StallTimeout*3/4); err != nil {
			t.Fatalf("round %d: an idle page did not settle: %v", i, err)
		}
	}
}

// TestNetTrackerCountsRequestedNavigations feeds the tracker the events of
// navigations a document requests: each counts from the request until the
// browser announces its request, the frame commits, or it ends otherwise.
func TestNetTrackerCountsRequestedNavigations(t *testing.T) {
	const frame, other = cdp.FrameID("F"), cdp.FrameID("G")
	requested := func(f cdp.FrameID, d page.ClientNavigationDisposition) any {
		return &page.EventFrameRequestedNavigation{FrameID: f, URL: "http://127.0.0.1/next", Disposition: d}
	}
	current := requested(frame, page.ClientNavigationDispositionCurrentTab)
	docRequest := &network.EventRequestWillBeSent{RequestID: "R", FrameID: frame, LoaderID: "L2", Type: network.ResourceTypeDocument, Request: &network.Request{URL: "http://127.0.0.1/next"}}
	for _, tc := range []struct {
		name   string
		events []any
		want   []bool
	}{
		{"requested in this tab", []any{current}, []bool{true}},
		{"in a new tab", []any{requested(frame, page.ClientNavigationDispositionNewTab)}, []bool{false}},
		{"a download", []any{requested(frame, page.ClientNavigationDispositionDownload)}, []bool{false}},
		{"then announced, then loaded", []any{current, docRequest, &network.EventLoadingFinished{RequestID: "R"}}, []bool{true, true, false}},
		{"then committed", []any{current, &page.EventFrameNavigated{Frame: &cdp.Frame{ID: frame, LoaderID: "L2"}}}, []bool{true, false}},
		{"within the document", []any{current, &page.EventNavigatedWithinDocument{FrameID: frame}}, []bool{true, false}},
		{"then stopped", []any{current, &page.EventFrameStoppedLoading{FrameID: frame}}, []bool{true, false}},
		{"then detached", []any{current, &page.EventFrameDetached{FrameID: frame}}, []bool{true, false}},
		{"another frame stopped", []any{current, &page.EventFrameStoppedLoading{FrameID: other}}, []bool{true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newNetTracker()
			on := tr.listener("T")
			var got []bool
			for _, ev := range tc.events {
				on(ev)
				busy, _, _ := tr.state(time.Now(), time.Time{})
				got = append(got, busy)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("busy after each event (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSettleKnowsAParsedDocument checks that the Page follows the main
// frame's documents from the tab's events, so that Settle need not ask the
// page whether the document is parsed: after a navigation, and after a
// second one.
func TestSettleKnowsAParsedDocument(t *testing.T) {
	tb := newTab(t)
	var got []bool
	for _, path := range []string{"/form", "/content"} {
		tb.open(path)
		g := tb.p.docGen.Load()
		got = append(got, g > 0 && tb.p.parsedGen.Load() == g)
	}
	if diff := cmp.Diff([]bool{true, true}, got); diff != "" {
		t.Errorf("document known parsed after each navigation (-want +got):\n%s", diff)
	}
}

// TestSettleStopsProbingAPageThatNeverAnswers replaces the page's
// setTimeout with one that never calls back: the quiet probe cannot
// answer, Settle still returns, and the document is not probed again.
func TestSettleStopsProbingAPageThatNeverAnswers(t *testing.T) {
	tb := newTab(t)
	tb.open("/form")
	var ok bool
	tb.eval(`window.setTimeout = () => 0; true`, &ok)
	// The load's quiet window first: the probe runs only when nothing but
	// the action's grace is left to wait for.
	if err := tb.p.Settle(tb.testCtx(), 10*time.Second); err != nil {
		t.Fatalf("settle: %v", err)
	}
	var got []bool
	for range 2 {
		el, err := tb.p.MainFrame().Query(tb.testCtx(), "#send")
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.p.Perform(tb.testCtx(), el, "click", nil); err != nil {
			t.Fatal(err)
		}
		if err := tb.p.Settle(tb.testCtx(), 10*time.Second); err != nil {
			t.Fatalf("settle: %v", err)
		}
		got = append(got, tb.p.probeStuck.Load() == tb.p.docGen.Load())
	}
	if diff := cmp.Diff([]bool{true, true}, got); diff != "" {
		t.Errorf("document marked as not answering after each click (-want +got):\n%s", diff)
	}
}
