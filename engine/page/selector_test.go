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
)

// The nth suffix picks one match wherever a selector is resolved: the
// snapshot's scope and ignore selectors (TestCaptureScopeAndIgnore) and
// Query (actions and the drop target of dragAndDrop); text= is refused.

func TestCaptureSelectorErrors(t *testing.T) {
	tb := newTab(t)
	tb.open("/content")
	t.Run("an nth past the matches matches nothing", func(t *testing.T) {
		_, err := tb.p.Capture(tb.testCtx(), SnapshotOptions{Selector: "main p >> nth=2"})
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("text= is refused", func(t *testing.T) {
		for _, opts := range []SnapshotOptions{{Selector: "text=Welcome"}, {IgnoreSelectors: []string{"nav", "text=Home"}}} {
			if _, err := tb.p.Capture(tb.testCtx(), opts); !errors.Is(err, ErrTextSelector) {
				t.Errorf("%+v: err = %v, want ErrTextSelector", opts, err)
			}
		}
	})
}

func TestQueryNth(t *testing.T) {
	tb := newTab(t)
	tb.open("/content")
	f := tb.p.MainFrame()
	for _, tc := range []struct{ selector, want string }{
		{"main p", "First para"},
		{"main p >> nth=0", "First para"},
		{"main p >> nth=1", "Second para"},
		{"xpath=//main//p >> nth=1", "Second para"},
	} {
		el, err := f.Query(tb.testCtx(), tc.selector)
		if err != nil {
			t.Errorf("%s: %v", tc.selector, err)
			continue
		}
		var got string
		tb.eval(`document.evaluate(`+jsString(el.XPath[len(xpathPrefix):])+`, document, null, 9, null).singleNodeValue.textContent`, &got)
		if got != tc.want {
			t.Errorf("%s found %q, want %q", tc.selector, got, tc.want)
		}
	}
	if _, err := f.Query(tb.testCtx(), "main p >> nth=5"); !errors.Is(err, ErrNotFound) {
		t.Errorf("nth past the matches: err = %v, want ErrNotFound", err)
	}
	if _, err := f.Query(tb.testCtx(), "text=Welcome"); !errors.Is(err, ErrTextSelector) {
		t.Errorf("text=: err = %v, want ErrTextSelector", err)
	}
}
