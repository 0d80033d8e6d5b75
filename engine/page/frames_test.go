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
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSameOriginIframe(t *testing.T) {
	tb := newTab(t)
	tb.open("/same-outer")
	s := tb.capture(SnapshotOptions{})

	btn := findID(t, s, `^button: Inner button$`)
	if !strings.HasPrefix(btn, "1-") {
		t.Errorf("inner button id %s, want frame ordinal 1", btn)
	}
	if len(s.Frames) != 2 || s.Frames[1].OutOfProcess || !strings.HasSuffix(s.Frames[1].URL, "/same-inner") {
		t.Fatalf("frames %+v", s.Frames)
	}
	if s.XPaths[btn] != "xpath=/html[1]/body[1]/button[1]" {
		t.Errorf("xpath within the frame's document: %q", s.XPaths[btn])
	}
	if got := s.URLs[findID(t, s, `^link: Inner link$`)]; got != originA+"/elsewhere" {
		t.Errorf("inner link URL %q", got)
	}

	// The frame sits 90px right and 60px down, plus the button's own
	// offset: a click at the wrong coordinates would miss it.
	tb.perform(s, btn, "click")
	var clicked int
	tb.eval(`window.clicked || 0`, &clicked)
	if clicked != 1 {
		t.Errorf("inner button clicked %d times, want 1", clicked)
	}
}

// TestCrossOriginIframe runs on the default browser and on one started with
// --site-per-process, so that the out-of-process path is certainly taken.
func TestCrossOriginIframe(t *testing.T) {
	for _, tc := range []struct {
		name      string
		browser   func(t *testing.T) context.Context
		mustOOPIF bool
	}{
		{"default flags", func(*testing.T) context.Context { return browserCtx }, false},
		{"site-per-process", isolatedBrowser, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTab(t, tc.browser(t))
			tb.open("/cross-outer")
			s := tb.capture(SnapshotOptions{})

			field := findID(t, s, `^textbox: Remote field$`)
			nested := findID(t, s, `^button: Nested button$`)
			if !strings.HasPrefix(field, "1-") || !strings.HasPrefix(nested, "2-") {
				t.Errorf("ids %s and %s, want frame ordinals 1 and 2:\n%s", field, nested, s.Tree)
			}
			if !hasLine(s, `^paragraph: Nested text$`) || !hasLine(s, `^heading: Host page$`) {
				t.Errorf("missing content:\n%s", s.Tree)
			}
			f := s.Frames[1]
			if !strings.HasPrefix(f.URL, originB) {
				t.Errorf("frame 1 URL %q, want origin %s", f.URL, originB)
			}
			if tc.mustOOPIF && !f.OutOfProcess {
				t.Errorf("frame 1 is in process under --site-per-process")
			}
			t.Logf("frame 1 out of process: %v", f.OutOfProcess)

			tb.perform(s, field, "fill", "hello from the test")
			tb.perform(s, findID(t, s, `^button: Remote button$`), "click")
			tb.perform(s, nested, "click")

			// The frames report to the host page with postMessage.
			var msgs []string
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				tb.eval(`window.msgs`, &msgs)
				if slices.Contains(msgs, "nested") {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			for _, want := range []string{"input:hello from the test", "clicked", "nested"} {
				if !slices.Contains(msgs, want) {
					t.Errorf("host page did not receive %q; got %v", want, msgs)
				}
			}

			after := tb.capture(SnapshotOptions{})
			if !hasLine(after, `^textbox: Remote field \(value="hello from the test"\)$`) {
				t.Errorf("the frame's field does not show the value:\n%s", after.Tree)
			}

			// Selectors work inside the frame too.
			el, err := after.Frames[1].Query(tb.testCtx(), "xpath=/html[1]/body[1]/button[1]")
			if err != nil {
				t.Fatalf("query in frame 1: %v", err)
			}
			if !strings.HasPrefix(el.ID, "1-") || el.XPath != "xpath=/html[1]/body[1]/button[1]" {
				t.Errorf("queried element %+v", el)
			}
		})
	}
}
