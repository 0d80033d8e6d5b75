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

package rpcserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/store"
)

// TestAgentTaskCache runs the same task three times on a runner whose
// cache is the embedded store: without a setting it is not asked, then a
// live run stores its entry, then the same task replays it with no model
// call, the report travelling in the task's result.
func TestAgentTaskCache(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	site := newSite(t)
	f := newAgentFixtureWith(t, b, nil, func(c *config.Config) {
		c.Cache = cache.Local{Store: store.NewMemory(store.MemoryOptions{}), Project: "p"}
	})
	on := &cache.Setting{Threshold: 1}
	tests := []struct {
		uid     string
		setting *cache.Setting
		replies int
		want    *cache.Report
	}{
		{"c0a00000-0000-4000-8000-000000000001", nil, 2, &cache.Report{Status: cache.StatusDisabled}},
		{"c0a00000-0000-4000-8000-000000000002", on, 2, &cache.Report{Status: cache.StatusMiss, Count: 1, Threshold: 1, MissReason: cache.MissNotCached}},
		{"c0a00000-0000-4000-8000-000000000003", on, 0, &cache.Report{Status: cache.StatusHit, Count: 2, Threshold: 1,
			TokensSaved: &cache.TokensSaved{InputTokens: 200, OutputTokens: 20, TotalTokens: 220}}},
	}
	for _, tt := range tests {
		browsertest.MustNavigate(t, b, site.URL+"/form")
		before := len(f.model.Requests())
		if tt.replies > 0 {
			f.model.Enqueue(gotoCall(site.URL+"/list"), doneCall("the list is open"))
		}
		req := taskRequest(tt.uid, "open the list")
		req.ShouldCache, req.Cache = true, tt.setting
		f.start(t, req)
		final := f.final(t, req.UID)
		runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskSucceeded)
		runnertest.Want(t, "model requests", len(f.model.Requests())-before, tt.replies)
		runnertest.Want(t, "the page", pageURL(t, b), site.URL+"/list")
		if final.Result == nil {
			t.Fatalf("task %s: no result", tt.uid)
		}
		if diff := cmp.Diff(tt.want, final.Result.Cache); diff != "" {
			t.Errorf("task %s: the cache report (-want +got):\n%s", tt.uid, diff)
		}
		if final.Result.CacheEntry == nil {
			t.Errorf("task %s: no cache entry", tt.uid)
		}
		var types []string
		for _, a := range final.Actions {
			types = append(types, a.Type)
		}
		if diff := cmp.Diff([]string{"goto", "done"}, types); diff != "" {
			t.Errorf("task %s: steps (-want +got):\n%s", tt.uid, diff)
		}
		if tt.replies == 0 && final.Usage.InputTokens != 0 {
			t.Errorf("task %s: a replay's usage %+v", tt.uid, final.Usage)
		}
	}
}
