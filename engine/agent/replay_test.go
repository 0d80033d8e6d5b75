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

package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/agent"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/testing/agentsite"
	"github.com/browserfleet/browserfleet/store"
)

// The server-side cache of agent runs, on the embedded store: a run with
// shouldCache stores its entry; an identical later run replays it on the
// page with no model call, whichever models it names; a step that no
// longer replays hands over to the live agent.

const signInTask = "Sign in as ada and tell me the price of the Green Lamp."

// signInVars is the task's variable: its value is typed, never stored.
func signInVars() map[string]engine.Variable {
	return map[string]engine.Variable{"password": {Value: password, Description: "ada's password"}}
}

// liveSignIn runs the sign-in task live, its models scripted, with the
// cache c at threshold 1, and returns its result.
func liveSignIn(t *testing.T, site *agentsite.Site, c cache.Store) *agent.Result {
	t.Helper()
	e, ctx := newTab(t)
	loop := llmtest.NewServer(t)
	exec := newExecutor(t, llmtest.OpenAI,
		observeFields(`^textbox: Username`, "ada", `^textbox: Password`, "%password%"),
		actOn(`^button: Sign in`, "click"),
		actOn(`^link: Green Lamp`, "click"),
	)
	loop.Enqueue(
		calls(call("goto", map[string]string{"url": site.URL + "/login"})),
		calls(call("fillForm", map[string]any{"fields": []map[string]string{
			{"action": "type ada into the Username field"}, {"action": "type %password% into the Password field"}}})),
		calls(call("act", map[string]string{"action": "click the Sign in button"})),
		calls(call("act", map[string]string{"action": "click the Green Lamp link"})),
		calls(call("done", map[string]any{"reasoning": "The Green Lamp costs 42.50.", "taskComplete": true,
			"output": map[string]string{"price": "42.50"}})),
	)
	res, err := agent.Run(ctx, e, agent.Options{
		Instruction: signInTask, Model: client(t, loop, llmtest.OpenAI), ExecutionModel: exec,
		Variables: signInVars(), ShouldCache: true, Cache: c, CacheSetting: &cache.Setting{Threshold: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// storedEntry reads the entry the store holds under key; the lookup
// counts as one.
func storedEntry(t *testing.T, st store.Store, key string) *cache.Entry {
	t.Helper()
	_, raw, err := st.Lookup(context.Background(), "p", "cache."+key, cache.CountTTL)
	if err != nil || raw == nil {
		t.Fatalf("no entry under %s: %v", key, err)
	}
	var e cache.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return &e
}

func TestCacheReplay(t *testing.T) {
	scripted(t, "a second identical run replays the first with no model call, under other models", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		st := store.NewMemory(store.MemoryOptions{})
		c := cache.Local{Store: st, Project: "p"}

		first := liveSignIn(t, site, c)
		if diff := cmp.Diff(&cache.Report{Status: cache.StatusMiss, Count: 1, Threshold: 1, MissReason: cache.MissNotCached}, first.Cache); diff != "" {
			t.Errorf("the first run's report (-want +got):\n%s", diff)
		}
		if first.CacheEntry == nil {
			t.Fatal("the first run made no entry")
		}

		// Other models, on servers with nothing scripted: any request
		// would fail the run.
		e, ctx := newTab(t)
		loop, execSrv := llmtest.NewServer(t), llmtest.NewServer(t)
		var steps []string
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction: signInTask, Model: client(t, loop, llmtest.Anthropic), ExecutionModel: client(t, execSrv, llmtest.Google),
			Variables: signInVars(), ShouldCache: true, Cache: c, CacheSetting: &cache.Setting{Threshold: 1},
			OnStep: func(i int, s agent.Step, _ llm.Usage) { steps = append(steps, s.Type) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(loop.Requests()) + len(execSrv.Requests()); n != 0 {
			t.Errorf("the replay made %d model requests", n)
		}
		saved := &cache.TokensSaved{InputTokens: first.Usage.InputTokens, OutputTokens: first.Usage.OutputTokens,
			TotalTokens: first.Usage.InputTokens + first.Usage.OutputTokens}
		if diff := cmp.Diff(&cache.Report{Status: cache.StatusHit, Count: 2, Threshold: 1, TokensSaved: saved}, res.Cache); diff != "" {
			t.Errorf("the replay's report (-want +got):\n%s", diff)
		}
		if res.Usage.InputTokens != 0 || res.Usage.OutputTokens != 0 {
			t.Errorf("the replay's usage %+v", res.Usage)
		}
		if !res.Success || !res.Completed || res.Message != first.Message || string(res.Output) != `{"price":"42.50"}` {
			t.Errorf("the replay's result %+v", res)
		}
		want := []string{"goto", "fillForm", "act", "act", "done"}
		if diff := cmp.Diff(want, stepTypes(res.Actions)); diff != "" {
			t.Errorf("the replay's steps (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, steps); diff != "" {
			t.Errorf("the steps OnStep saw (-want +got):\n%s", diff)
		}
		// The page went where the first run went, the password typed
		// from the run's variable.
		if diff := cmp.Diff([]bool{true, true}, site.Logins()); diff != "" {
			t.Errorf("sign-ins (-want +got):\n%s", diff)
		}
		if u := eval[string](t, ctx, `location.pathname`); u != "/items/2" {
			t.Errorf("the replay ended at %s", u)
		}
		stored := storedEntry(t, st, first.CacheEntry.Key)
		if diff := cmp.Diff(cache.Usage{InputTokens: first.Usage.InputTokens, OutputTokens: first.Usage.OutputTokens}, stored.Usage); diff != "" {
			t.Errorf("the stored usage (-want +got):\n%s", diff)
		}
		if stored.Method != "agent" || strings.Contains(string(stored.Value), password) || !strings.Contains(string(stored.Value), "%password%") {
			t.Errorf("the stored entry holds a value or no placeholder: %s %s", stored.Method, stored.Value)
		}
		if res.CacheEntry == nil || res.CacheEntry.Key != first.CacheEntry.Key || string(res.CacheEntry.Entry) != string(stored.Value) {
			t.Errorf("the replay's cache entry %+v is not the stored one", res.CacheEntry)
		}
		for _, s := range res.Actions {
			if strings.Contains(s.Action+s.Instruction+s.Reasoning, password) {
				t.Errorf("a replayed step shows the password: %+v", s)
			}
		}
	})

	scripted(t, "a step that no longer replays hands over to the live agent, whose entry replaces the old", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		st := store.NewMemory(store.MemoryOptions{})
		c := cache.Local{Store: st, Project: "p"}
		first := liveSignIn(t, site, c)
		key := first.CacheEntry.Key

		// The Green Lamp link's selector names an element the page does
		// not have (the site changed, say).
		var entry map[string]any
		if err := json.Unmarshal(first.CacheEntry.Entry, &entry); err != nil {
			t.Fatal(err)
		}
		steps := entry["steps"].([]any)
		lamp := steps[3].(map[string]any)["actions"].([]any)[0].(map[string]any)
		lamp["selector"] = "xpath=/html[1]/body[1]/nav[9]/a[1]"
		broken, _ := json.Marshal(entry)
		if err := c.Set(context.Background(), cache.SetRequest{Key: key, Entry: cache.Entry{Method: "agent", Value: broken, Usage: cache.Usage{InputTokens: 1}}}); err != nil {
			t.Fatal(err)
		}

		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		exec := newExecutor(t, llmtest.OpenAI, actOn(`^link: Green Lamp`, "click"))
		loop.Enqueue(
			calls(call("act", map[string]string{"action": "click the Green Lamp link"})),
			calls(call("done", map[string]any{"reasoning": "The Green Lamp costs 42.50.", "taskComplete": true})),
		)
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction: signInTask, Model: client(t, loop, llmtest.OpenAI), ExecutionModel: exec,
			Variables: signInVars(), ShouldCache: true, Cache: c, CacheSetting: &cache.Setting{Threshold: 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&cache.Report{Status: cache.StatusMiss, Count: 2, Threshold: 1, MissReason: cache.MissReplayFailed}, res.Cache); diff != "" {
			t.Errorf("the report (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"goto", "fillForm", "act", "act", "done"}, stepTypes(res.Actions)); diff != "" {
			t.Errorf("the steps, replayed then live (-want +got):\n%s", diff)
		}
		if !res.Success || res.Usage.InputTokens == 0 {
			t.Errorf("the live part's result %+v", res)
		}
		if u := eval[string](t, ctx, `location.pathname`); u != "/items/2" {
			t.Errorf("the run ended at %s", u)
		}
		reqs := loop.Requests()
		if len(reqs) != 2 || !strings.Contains(reqs[0].Text, "already done") || !strings.Contains(reqs[0].Text, "3. act:") {
			t.Errorf("the live agent was not told what the replay did: %d requests", len(reqs))
		}
		if diff := cmp.Diff([]bool{true, true}, site.Logins()); diff != "" {
			t.Errorf("sign-ins: the live agent signed in again (-want +got):\n%s", diff)
		}

		// The new entry replaced the broken one: the replayed steps and
		// the live one, with the link's selector as the page has it.
		now := storedEntry(t, st, key)
		var got struct {
			Steps []struct {
				Type    string          `json:"type"`
				Actions []engine.Action `json:"actions"`
			} `json:"steps"`
		}
		if err := json.Unmarshal(now.Value, &got); err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, s := range got.Steps {
			types = append(types, s.Type)
		}
		if diff := cmp.Diff([]string{"goto", "fillForm", "act", "act"}, types); diff != "" {
			t.Errorf("the new entry's steps (-want +got):\n%s", diff)
		}
		if len(got.Steps) == 4 && !strings.HasSuffix(got.Steps[3].Actions[0].Selector, "/li[2]/a[1]") {
			t.Errorf("the new entry's link selector is %s", got.Steps[3].Actions[0].Selector)
		}
		if now.Usage.InputTokens != res.Usage.InputTokens || strings.Contains(string(now.Value), password) {
			t.Errorf("the new entry %+v", now)
		}
	})

	scripted(t, "without a setting the cache is not asked, and the report is DISABLED", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		st := store.NewMemory(store.MemoryOptions{})
		first := liveSignIn(t, site, cache.Local{Store: st, Project: "p"})

		e, ctx := newTab(t)
		open(t, ctx, e, "about:blank")
		loop := llmtest.NewServer(t)
		loop.Enqueue(calls(call("done", map[string]any{"reasoning": "nothing to do", "taskComplete": true})))
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction: signInTask, Model: client(t, loop, llmtest.OpenAI),
			Variables: signInVars(), ShouldCache: true, Cache: cache.Local{Store: st, Project: "p"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&cache.Report{Status: cache.StatusDisabled}, res.Cache); diff != "" {
			t.Errorf("the report (-want +got):\n%s", diff)
		}
		if len(loop.Requests()) != 1 {
			t.Errorf("the run made %d model requests, want 1: it ran live", len(loop.Requests()))
		}
		// The store saw no lookup: the first run's was the only one.
		count, _, _ := st.Lookup(context.Background(), "p", "cache."+first.CacheEntry.Key, cache.CountTTL)
		if count != 2 {
			t.Errorf("the key was looked up %d times, this check included; want 2", count)
		}
	})
}

func TestCacheReplayStepTypes(t *testing.T) {
	scripted(t, "every kind of recorded step replays on the page", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		st := store.NewMemory(store.MemoryOptions{})
		c := cache.Local{Store: st, Project: "p"}
		opts := func(loop *llmtest.Server) agent.Options {
			return agent.Options{
				Instruction: "visit the board and type the password", Model: client(t, loop, llmtest.OpenAI),
				Variables: signInVars(), ShouldCache: true, Cache: c, CacheSetting: &cache.Setting{Threshold: 1},
			}
		}
		// A live run of no steps makes the key; its entry is then given
		// the steps (as a run of every tool would have recorded them).
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		loop.Enqueue(calls(call("done", map[string]any{"reasoning": "done", "taskComplete": true})))
		first, err := agent.Run(ctx, e, opts(loop))
		if err != nil || first.CacheEntry == nil {
			t.Fatalf("the first run: %v, %+v", err, first)
		}
		var entry map[string]any
		if err := json.Unmarshal(first.CacheEntry.Entry, &entry); err != nil {
			t.Fatal(err)
		}
		steps := `[
			{"type": "goto", "url": "` + site.URL + `/board", "waitUntil": "load"},
			{"type": "clickAndHold", "instruction": "hold the Reveal code button", "selector": "#reveal", "durationMs": 50},
			{"type": "scroll", "deltaX": 0, "deltaY": 100, "anchor": {"x": 640, "y": 400}},
			{"type": "wait", "timeMs": 10},
			{"type": "goto", "url": "` + site.URL + `/login", "waitUntil": "load"},
			{"type": "navback"},
			{"type": "navforward"},
			{"type": "act", "instruction": "click the Username field", "actions": [{"selector": "#username", "description": "the Username field", "method": "click"}]},
			{"type": "keys", "method": "type", "text": "%password%", "times": 1},
			{"type": "keys", "method": "press", "keys": "Tab", "times": 1}
		]`
		entry["steps"] = json.RawMessage(steps)
		value, _ := json.Marshal(entry)
		if err := c.Set(context.Background(), cache.SetRequest{Key: first.CacheEntry.Key, Entry: cache.Entry{Method: "agent", Value: value}}); err != nil {
			t.Fatal(err)
		}

		e, ctx = newTab(t)
		loop = llmtest.NewServer(t)
		o := opts(loop)
		seen := map[string]string{}
		o.OnStep = func(i int, s agent.Step, _ llm.Usage) {
			switch i {
			case 1:
				seen["code after clickAndHold"] = eval[string](t, ctx, `document.getElementById('code').textContent`)
			case 5:
				seen["page after navback"] = eval[string](t, ctx, `location.pathname`)
			}
		}
		res, err := agent.Run(ctx, e, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Cache == nil || res.Cache.Status != cache.StatusHit || len(loop.Requests()) != 0 {
			t.Fatalf("report %+v, %d model requests", res.Cache, len(loop.Requests()))
		}
		want := []string{"goto", "clickAndHold", "scroll", "wait", "goto", "navback", "navforward", "act", "keys", "keys", "done"}
		if diff := cmp.Diff(want, stepTypes(res.Actions)); diff != "" {
			t.Errorf("steps (-want +got):\n%s", diff)
		}
		seen["page at the end"] = eval[string](t, ctx, `location.pathname`)
		seen["username"] = eval[string](t, ctx, `document.getElementById('username').value`)
		seen["focus"] = eval[string](t, ctx, `document.activeElement.id`)
		wantSeen := map[string]string{
			"code after clickAndHold": "Code: " + agentsite.RevealedCode,
			"page after navback":      "/board",
			"page at the end":         "/login",
			"username":                password,
			"focus":                   "password",
		}
		if diff := cmp.Diff(wantSeen, seen); diff != "" {
			t.Errorf("the page (-want +got):\n%s", diff)
		}
		for _, s := range res.Actions {
			if strings.Contains(s.Action+s.Instruction, password) {
				t.Errorf("a step shows the password: %+v", s)
			}
		}
	})
}

func TestCacheStoreUnavailable(t *testing.T) {
	scripted(t, "a cache that cannot be reached leaves the run live: MISS store_unavailable", func(t *testing.T) {
		// An API address on loopback where nothing listens any more.
		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close()
		c, err := cache.NewClient(cache.ClientOptions{BaseURL: gone.URL, APIKey: "project-key"})
		if err != nil {
			t.Fatal(err)
		}
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		loop.Enqueue(calls(call("done", map[string]any{"reasoning": "done", "taskComplete": true})))
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction: "finish at once", Model: client(t, loop, llmtest.OpenAI),
			ShouldCache: true, Cache: c, CacheSetting: &cache.Setting{Threshold: 2},
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&cache.Report{Status: cache.StatusMiss, Threshold: 2, MissReason: cache.MissStoreUnavailable}, res.Cache); diff != "" {
			t.Errorf("the report (-want +got):\n%s", diff)
		}
		if !res.Success || res.CacheEntry == nil || len(loop.Requests()) != 1 {
			t.Errorf("the live run: %+v, %d model requests", res, len(loop.Requests()))
		}
	})
}

func TestCacheKeyOfAStartURLWithAValue(t *testing.T) {
	scripted(t, "a variable's value in the start URL stays out of the entry", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		const token = "tok-5e1f9a77"
		e, ctx := newTab(t)
		open(t, ctx, e, site.URL+"/?token="+token)
		loop := llmtest.NewServer(t)
		loop.Enqueue(calls(call("done", map[string]any{"reasoning": "done", "taskComplete": true})))
		st := store.NewMemory(store.MemoryOptions{})
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction: "finish at once", Model: client(t, loop, llmtest.OpenAI),
			Variables:   map[string]engine.Variable{"token": {Value: token}},
			ShouldCache: true, Cache: cache.Local{Store: st, Project: "p"}, CacheSetting: &cache.Setting{Threshold: 1},
		})
		if err != nil || res.CacheEntry == nil {
			t.Fatalf("%v, %+v", err, res)
		}
		stored := storedEntry(t, st, res.CacheEntry.Key)
		if strings.Contains(string(stored.Value), token) || !strings.Contains(string(stored.Value), `"startUrl":"`+site.URL+`/?token=%token%"`) {
			t.Errorf("the stored entry %s", stored.Value)
		}
	})
}
