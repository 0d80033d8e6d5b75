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

package cached_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine/page"
)

// A page with no URL of its own to reload (a data: URL, as the README's
// examples load) hits like any other once loaded again.
func TestActOnADataURLHitsAfterALoadAgain(t *testing.T) {
	h := open(t, "/form")
	const u = "data:text/html,<h1>Sign up</h1><button id=done onclick=this.textContent=this.id>Sign up</button>"
	load := func() {
		t.Helper()
		if err := h.e.Page().Navigate(h.ctx, u, page.NavigateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	set := &cache.Setting{Threshold: 1}
	load()
	h.enqueueClick("button: Sign up")
	_, rep := h.act(set, "click the Sign up button")
	if diff := cmp.Diff(miss(1, 1, cache.MissNotCached), rep); diff != "" {
		t.Errorf("first report (-want +got):\n%s", diff)
	}
	load()
	_, rep = h.act(set, "click the Sign up button")
	if diff := cmp.Diff(hit(2, 1, 300, 20), rep); diff != "" {
		t.Errorf("second report (-want +got):\n%s", diff)
	}
}
