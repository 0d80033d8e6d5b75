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
	"testing"
	"time"
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
