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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/cached"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/internal/testing/chromium"
	"github.com/browserfleet/browserfleet/store"
)

// The cache's flows run against a real Chromium, pages served here and the
// embedded store; the model is llmtest's scripted server (the AI is
// scripted: these tests count its requests, they never judge its choices).

var (
	browserCtx context.Context
	site       *httptest.Server
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer site.Close()
	bctx, stop, err := chromium.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting chromium:", err)
		return 1
	}
	defer stop()
	browserCtx = bctx
	return m.Run()
}

var pages = map[string]string{
	"/form": `<!doctype html><title>Sign in</title>
<script>window.clicks = 0</script>
<label for="email">Email</label><input id="email">
<label for="password">Password</label><input id="password" type="password">
<button id="go" onclick="window.clicks++">Sign in</button>
<p id="price">Price: $12</p>`,
	"/framed": `<!doctype html><title>Framed</title><h1>Outer</h1>
<iframe id="inner" src="/inner" style="width:300px;height:120px"></iframe>`,
	"/inner": `<!doctype html><title>Inner</title><button id="b" onclick="parent.innerClicks = (parent.innerClicks || 0) + 1">Inner button</button>`,
}

// harness is a tab on a page, the scripted model and a cache on the
// embedded store that remembers the keys it was given.
type harness struct {
	t     *testing.T
	ctx   context.Context
	e     *engine.Engine
	model *llmtest.Server
	store *recorder
}

func open(t *testing.T, path string) *harness {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	p, err := page.Attach(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := p.Navigate(ctx, site.URL+path, page.NavigateOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t)
	client, err := llm.New(llm.Config{Model: "openai/gpt-4.1-mini", APIKey: "sk-test-key", BaseURL: srv.BaseURL(llmtest.OpenAI)})
	if err != nil {
		t.Fatal(err)
	}
	mem := store.NewMemory(store.MemoryOptions{})
	t.Cleanup(func() { _ = mem.Close() })
	return &harness{t: t, ctx: ctx, model: srv,
		e:     engine.New(p, engine.Options{Model: client, SelfHeal: true}),
		store: &recorder{Store: cache.Local{Store: mem, Project: "p"}}}
}

// recorder is a cache.Store that keeps the keys and entries it was given.
type recorder struct {
	cache.Store
	mu   sync.Mutex
	sets []cache.SetRequest
	gets []cache.GetRequest
}

func (r *recorder) Get(ctx context.Context, req cache.GetRequest) (*cache.GetResponse, error) {
	r.mu.Lock()
	r.gets = append(r.gets, req)
	r.mu.Unlock()
	return r.Store.Get(ctx, req)
}

func (r *recorder) Set(ctx context.Context, req cache.SetRequest) error {
	r.mu.Lock()
	r.sets = append(r.sets, req)
	r.mu.Unlock()
	return r.Store.Set(ctx, req)
}

func (r *recorder) written() []cache.SetRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cache.SetRequest(nil), r.sets...)
}

// idOf finds the id of the snapshot line that contains text.
func (h *harness) idOf(text string) string {
	h.t.Helper()
	snap, err := h.e.Page().Capture(h.ctx, page.SnapshotOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, line := range strings.Split(snap.Tree, "\n") {
		if strings.Contains(line, text) {
			if m := regexp.MustCompile(`\[(\d+-\d+)\]`).FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	h.t.Fatalf("no line with %q in the snapshot:\n%s", text, snap.Tree)
	return ""
}

func (h *harness) eval(expr string, out any) {
	h.t.Helper()
	if err := chromedp.Run(h.ctx, chromedp.Evaluate(expr, out)); err != nil {
		h.t.Fatalf("evaluating %s: %v", expr, err)
	}
}

func (h *harness) clicks() int {
	h.t.Helper()
	var n int
	h.eval(`window.clicks`, &n)
	return n
}

func (h *harness) reload() {
	h.t.Helper()
	u, err := h.e.Page().URL(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.e.Page().Navigate(h.ctx, u, page.NavigateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// enqueueClick scripts the model's answer to click the element whose line
// holds text.
func (h *harness) enqueueClick(text string) {
	h.t.Helper()
	id := h.idOf(text)
	b, _ := json.Marshal(map[string]any{"elementId": id, "method": "click", "arguments": []string{}, "description": "click " + text, "twoStep": false})
	h.model.Enqueue(llmtest.JSON(string(b)).WithUsage(300, 20))
}

func (h *harness) act(set *cache.Setting, instruction string) (*engine.ActResult, cache.Report) {
	h.t.Helper()
	res, rep, err := cached.Act(h.ctx, h.e, h.store, set, engine.ActOptions{Instruction: instruction})
	if err != nil {
		h.t.Fatalf("act: %v", err)
	}
	if !res.Success {
		h.t.Fatalf("act failed: %s", res.Message)
	}
	return res, rep
}

func miss(count, threshold int64, reason string) cache.Report {
	return cache.Report{Status: cache.StatusMiss, Count: count, Threshold: threshold, MissReason: reason}
}

func hit(count, threshold, in, out int64) cache.Report {
	return cache.Report{Status: cache.StatusHit, Count: count, Threshold: threshold, TokensSaved: &cache.TokensSaved{InputTokens: in, OutputTokens: out, TotalTokens: in + out}}
}

func TestActMissThenHitAtThresholdOne(t *testing.T) {
	h := open(t, "/form")
	set := &cache.Setting{Threshold: 1}
	h.enqueueClick("button: Sign in")

	first, rep := h.act(set, "click sign in")
	if diff := cmp.Diff(miss(1, 1, cache.MissNotCached), rep); diff != "" {
		t.Errorf("first report (-want +got):\n%s", diff)
	}
	second, rep := h.act(set, "  click sign in ")
	if diff := cmp.Diff(hit(2, 1, 300, 20), rep); diff != "" {
		t.Errorf("second report (-want +got):\n%s", diff)
	}
	if n := len(h.model.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want 1", n)
	}
	if n := h.clicks(); n != 2 {
		t.Errorf("the button was clicked %d times, want 2: the hit replays the action", n)
	}
	if second.Usage != (llm.Usage{}) {
		t.Errorf("a hit reports usage %+v, want none", second.Usage)
	}
	want := first.Actions[0]
	want.BackendNodeID = 0
	if diff := cmp.Diff([]engine.Action{want}, second.Actions, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("replayed actions (-want +got):\n%s", diff)
	}
	if second.ActionDescription != first.ActionDescription {
		t.Errorf("description %q, want the live one %q", second.ActionDescription, first.ActionDescription)
	}
}

func TestActHitsOnTheFourthCallAtThresholdThree(t *testing.T) {
	h := open(t, "/form")
	set := &cache.Setting{Threshold: 3}
	var reports []cache.Report
	for range 3 {
		h.enqueueClick("button: Sign in")
		_, rep := h.act(set, "click sign in")
		reports = append(reports, rep)
	}
	_, rep := h.act(set, "click sign in")
	reports = append(reports, rep)
	want := []cache.Report{miss(1, 3, cache.MissNotCached), miss(2, 3, cache.MissBelowThreshold), miss(3, 3, cache.MissBelowThreshold), hit(4, 3, 300, 20)}
	if diff := cmp.Diff(want, reports); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if n := len(h.model.Requests()); n != 3 {
		t.Errorf("the model got %d requests, want 3", n)
	}
	if n := h.clicks(); n != 4 {
		t.Errorf("the button was clicked %d times, want 4", n)
	}
}

func TestActOnAChangedPageMissesAndAReloadHits(t *testing.T) {
	h := open(t, "/form")
	set := &cache.Setting{Threshold: 1}
	h.enqueueClick("button: Sign in")
	h.act(set, "click sign in")

	// The same URL with other content: another key.
	var ignored any
	h.eval(`document.getElementById('price').textContent = 'Price: $13'`, &ignored)
	h.enqueueClick("button: Sign in")
	if _, rep := h.act(set, "click sign in"); rep.Status != cache.StatusMiss || rep.MissReason != cache.MissNotCached {
		t.Errorf("after the page changed: %+v, want MISS not_cached", rep)
	}

	// A reload renders the first content again, with new node ids.
	h.reload()
	if _, rep := h.act(set, "click sign in"); rep.Status != cache.StatusHit {
		t.Errorf("after a reload: %+v, want HIT", rep)
	}
	if n := len(h.model.Requests()); n != 2 {
		t.Errorf("the model got %d requests, want 2", n)
	}
	if n := h.clicks(); n != 1 {
		t.Errorf("the reloaded page saw %d clicks, want the replayed one", n)
	}
}

func TestActReplayFailureFallsBackLive(t *testing.T) {
	h := open(t, "/form")
	set := &cache.Setting{Threshold: 1}
	h.enqueueClick("button: Sign in")
	h.act(set, "click sign in")
	sets := h.store.written()
	if len(sets) != 1 {
		t.Fatalf("%d entries written, want 1", len(sets))
	}
	// An entry whose action finds nothing on the page, under the key the
	// same call makes.
	bad, _ := json.Marshal(map[string]any{"description": "stale", "actions": []engine.Action{{Selector: "xpath=/html/body/nav[7]", Method: "click"}}})
	if err := h.store.Store.Set(h.ctx, cache.SetRequest{Key: sets[0].Key, Entry: cache.Entry{Method: "act", Value: bad, Usage: cache.Usage{InputTokens: 1}}}); err != nil {
		t.Fatal(err)
	}

	h.enqueueClick("button: Sign in")
	_, rep := h.act(set, "click sign in")
	if diff := cmp.Diff(miss(2, 1, cache.MissReplayFailed), rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if n := len(h.model.Requests()); n != 2 {
		t.Errorf("the model got %d requests, want 2: the live act after the failed replay", n)
	}
	// The live result replaced the entry: the next call hits.
	if _, rep := h.act(set, "click sign in"); diff(hit(3, 1, 300, 20), rep) != "" {
		t.Errorf("after the live act: %s", diff(hit(3, 1, 300, 20), rep))
	}
	if n := h.clicks(); n != 3 {
		t.Errorf("%d clicks, want 3", n)
	}
}

func diff(want, got cache.Report) string { return cmp.Diff(want, got) }

func TestActVariablesValuesAreNeverStored(t *testing.T) {
	h := open(t, "/form")
	set := &cache.Setting{Threshold: 1}
	id := h.idOf("textbox: Password")
	b, _ := json.Marshal(map[string]any{"elementId": id, "method": "fill", "arguments": []string{"%password%"}, "description": "fill the password", "twoStep": false})
	h.model.Enqueue(llmtest.JSON(string(b)).WithUsage(200, 10))

	fill := func(value string) cache.Report {
		t.Helper()
		res, rep, err := cached.Act(h.ctx, h.e, h.store, set, engine.ActOptions{
			Instruction: "type the password",
			Variables:   map[string]engine.Variable{"password": {Value: value, Description: "the password"}},
		})
		if err != nil || !res.Success {
			t.Fatalf("act: %v %+v", err, res)
		}
		return rep
	}
	fill("correct horse battery")
	// Another value is the same key: values are not in it. (The reload
	// empties the field, which the snapshot shows as filled.)
	h.reload()
	if rep := fill("tr0ub4dor&3"); rep.Status != cache.StatusHit {
		t.Errorf("the second fill: %+v, want HIT", rep)
	}
	var got string
	h.eval(`document.getElementById('password').value`, &got)
	if got != "tr0ub4dor&3" {
		t.Errorf("the replay typed %q, want the second call's value", got)
	}
	for _, s := range h.store.written() {
		raw, _ := json.Marshal(s)
		if strings.Contains(string(raw), "correct horse") || strings.Contains(string(raw), "tr0ub4dor") {
			t.Errorf("a variable's value is in the stored entry: %s", raw)
		}
		if !strings.Contains(string(s.Entry.Value), "%password%") {
			t.Errorf("the entry %s does not keep the placeholder", s.Entry.Value)
		}
	}
}

func TestActInAnIframeFromThePageIsNotStored(t *testing.T) {
	h := open(t, "/framed")
	set := &cache.Setting{Threshold: 1}
	for range 2 {
		h.enqueueClick("button: Inner button")
		if _, rep := h.act(set, "click the inner button"); rep.Status != cache.StatusMiss || rep.MissReason != cache.MissNotCached {
			t.Errorf("report %+v, want MISS not_cached: the action's xpath is the iframe's", rep)
		}
	}
	if n := len(h.store.written()); n != 0 {
		t.Errorf("%d entries written, want none", n)
	}
}

func TestObserveMissThenHit(t *testing.T) {
	h := open(t, "/form")
	set := &cache.Setting{Threshold: 1}
	ans, _ := json.Marshal(map[string]any{"elements": []map[string]any{{"elementId": h.idOf("button: Sign in"), "description": "the sign-in button", "method": "click", "arguments": []string{}}}})
	h.model.Enqueue(llmtest.JSON(string(ans)).WithUsage(400, 30))

	observe := func() (*engine.ObserveResult, cache.Report) {
		t.Helper()
		res, rep, err := cached.Observe(h.ctx, h.e, h.store, set, engine.ObserveOptions{Instruction: "find the sign-in button"})
		if err != nil {
			t.Fatal(err)
		}
		return res, rep
	}
	first, rep := observe()
	if diff := cmp.Diff(miss(1, 1, cache.MissNotCached), rep); diff != "" {
		t.Errorf("first report (-want +got):\n%s", diff)
	}
	h.reload()
	second, rep := observe()
	if diff := cmp.Diff(hit(2, 1, 400, 30), rep); diff != "" {
		t.Errorf("second report (-want +got):\n%s", diff)
	}
	want := first.Actions[0]
	want.BackendNodeID = 0
	if diff := cmp.Diff([]engine.Action{want}, second.Actions, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("served actions (-want +got):\n%s", diff)
	}
	if n := len(h.model.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want 1", n)
	}
}

func TestObserveWithNothingFoundIsNotStored(t *testing.T) {
	h := open(t, "/form")
	h.model.Enqueue(llmtest.JSON(`{"elements":[]}`), llmtest.JSON(`{"elements":[]}`))
	for range 2 {
		_, rep, err := cached.Observe(h.ctx, h.e, h.store, &cache.Setting{Threshold: 1}, engine.ObserveOptions{Instruction: "find a checkout button"})
		if err != nil {
			t.Fatal(err)
		}
		if rep.MissReason != cache.MissNotCached {
			t.Errorf("report %+v, want MISS not_cached", rep)
		}
	}
}

func TestExtractMissHitAndInvalidEntry(t *testing.T) {
	h := open(t, "/form")
	set := &cache.Setting{Threshold: 1}
	schema := json.RawMessage(`{"type":"object","properties":{"price":{"type":"number"}},"required":["price"]}`)
	extract := func(s json.RawMessage) (*engine.ExtractResult, cache.Report) {
		t.Helper()
		res, rep, err := cached.Extract(h.ctx, h.e, h.store, set, engine.ExtractOptions{Instruction: "the price", Schema: s})
		if err != nil {
			t.Fatal(err)
		}
		return res, rep
	}
	h.model.Enqueue(llmtest.JSON(`{"price":12}`).WithUsage(500, 5))
	if _, rep := extract(schema); diff(miss(1, 1, cache.MissNotCached), rep) != "" {
		t.Errorf("first: %s", diff(miss(1, 1, cache.MissNotCached), rep))
	}
	// The same schema written another way is the same key.
	res, rep := extract(json.RawMessage(`{ "required": ["price"], "properties": {"price": {"type": "number"}}, "type": "object" }`))
	if diff(hit(2, 1, 500, 5), rep) != "" {
		t.Errorf("second: %s", diff(hit(2, 1, 500, 5), rep))
	}
	if string(res.Data) != `{"price":12}` {
		t.Errorf("served %s", res.Data)
	}

	// An entry no longer valid against the schema is not served.
	sets := h.store.written()
	if err := h.store.Store.Set(h.ctx, cache.SetRequest{Key: sets[0].Key, Entry: cache.Entry{Method: "extract", Value: json.RawMessage(`{"price":"twelve"}`)}}); err != nil {
		t.Fatal(err)
	}
	h.model.Enqueue(llmtest.JSON(`{"price":12}`).WithUsage(500, 5))
	if _, rep := extract(schema); diff(miss(3, 1, cache.MissInvalidEntry), rep) != "" {
		t.Errorf("tampered: %s", diff(miss(3, 1, cache.MissInvalidEntry), rep))
	}
	if n := len(h.model.Requests()); n != 2 {
		t.Errorf("the model got %d requests, want 2", n)
	}
}

func TestDisabledAndDeterministicCallsMakeNoLookup(t *testing.T) {
	h := open(t, "/form")
	h.enqueueClick("button: Sign in")
	if _, rep := h.act(nil, "click sign in"); rep.Status != cache.StatusDisabled {
		t.Errorf("no setting: %+v, want DISABLED", rep)
	}
	res, rep, err := cached.Act(h.ctx, h.e, h.store, &cache.Setting{Threshold: 1}, engine.ActOptions{Action: &engine.Action{Selector: "#go", Method: "click"}})
	if err != nil || !res.Success || rep.Status != cache.StatusDisabled {
		t.Errorf("an action: %v %+v %+v, want DISABLED", err, res, rep)
	}
	_, rep, err = cached.Extract(h.ctx, h.e, h.store, &cache.Setting{Threshold: 1}, engine.ExtractOptions{})
	if err != nil || rep.Status != cache.StatusDisabled {
		t.Errorf("pageText: %v %+v, want DISABLED", err, rep)
	}
	h.model.Enqueue(llmtest.JSON(`{"elements":[]}`))
	_, rep, err = cached.Observe(h.ctx, h.e, nil, &cache.Setting{Threshold: 1}, engine.ObserveOptions{})
	if err != nil || rep.Status != cache.StatusDisabled {
		t.Errorf("no store: %v %+v, want DISABLED", err, rep)
	}
	if n := len(h.store.gets); n != 0 { // no other goroutine uses it now
		t.Errorf("%d lookups, want none", n)
	}
}

// failing is a store that never answers well.
type failing struct{}

func (failing) Get(context.Context, cache.GetRequest) (*cache.GetResponse, error) {
	return nil, errors.New("connection refused")
}
func (failing) Set(context.Context, cache.SetRequest) error { return errors.New("connection refused") }

func TestStoreFailureRunsLive(t *testing.T) {
	h := open(t, "/form")
	h.enqueueClick("button: Sign in")
	res, rep, err := cached.Act(h.ctx, h.e, failing{}, &cache.Setting{Threshold: 2}, engine.ActOptions{Instruction: "click sign in"})
	if err != nil || !res.Success {
		t.Fatalf("act: %v %+v", err, res)
	}
	if diff := cmp.Diff(cache.Report{Status: cache.StatusMiss, Threshold: 2, MissReason: cache.MissStoreUnavailable}, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if h.clicks() != 1 {
		t.Error("the live act did not click")
	}
}
