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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/store"
)

// cacheSession is the session the runner's cache calls name.
const cacheSession = "ns1/s1"

// cacheAPI stands in for the API's runner listener: the cache's runner
// paths over cache.Local on the embedded store, for the runner of
// cacheSession with runnertest.Token (the API's own handler is in
// server/).
type cacheAPI struct {
	local cache.Local
	calls atomic.Int32
}

func (a *cacheAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.calls.Add(1)
	tok, _ := rpc.BearerToken(r)
	if r.Header.Get(rpc.HeaderRunnerSession) != cacheSession || tok != runnertest.Token {
		http.Error(w, `{"success":false,"error":"unknown runner","code":"UNAUTHORIZED"}`, http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case cache.RunnerPathGet:
		var req cache.GetRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		resp, err := a.local.Get(r.Context(), req)
		if err != nil {
			http.Error(w, `{"success":false,"error":"bad request","code":"BAD_REQUEST"}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(resp)
	case cache.RunnerPathSet:
		var req cache.SetRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		if err := a.local.Set(r.Context(), req); err != nil {
			http.Error(w, `{"success":false,"error":"bad request","code":"BAD_REQUEST"}`, http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(`{"success":true}`))
	default:
		http.NotFound(w, r)
	}
}

// cachedServer serves the runner RPC over b with the real engine, the
// session's model at the scripted server srv, and the cache through a
// cache.Client to a cacheAPI, as cmd/runner sets it up for
// --services-url.
func cachedServer(t *testing.T, b *chromium.Browser, srv *llmtest.Server) (runnertest.Client, *cacheAPI) {
	t.Helper()
	mem := store.NewMemory(store.MemoryOptions{})
	t.Cleanup(func() { _ = mem.Close() })
	api := &cacheAPI{local: cache.Local{Store: mem, Project: "ns1"}}
	apiServer := httptest.NewServer(api)
	t.Cleanup(apiServer.Close)

	cfg := runnertest.Config(nil)
	cfg.Spec.Model.Name, cfg.Spec.Model.BaseURL = modelNames[llmtest.OpenAI], srv.BaseURL(llmtest.OpenAI)
	cfg.Secrets.ModelAPIKey = config.NewSecret(sessionModelKey)
	c, err := cache.NewClient(cache.ClientOptions{BaseURL: apiServer.URL, Runner: true, Session: cacheSession, Token: runnertest.Token})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Cache = c
	log, _ := runnertest.Logger(t)
	s := NewServer(ServerOptions{
		Token:            config.NewSecret(runnertest.Token),
		Operations:       operations.NewAutomation(cfg, log),
		Logger:           log,
		DOMSettleTimeout: time.Duration(ptr.Deref(cfg.Spec.DOMSettleTimeoutMs, 0)) * time.Millisecond,
	})
	s.SetBrowser(b)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return runnertest.Client{Base: hs.URL, Token: runnertest.Token}, api
}

func TestActThroughTheCacheMissThenHitScriptedModel(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, api := cachedServer(t, b, srv)
	open(t, c, site, "/form")
	id, _ := idOf(t, b, "textbox: Email")
	srv.Enqueue(actAnswer(id, "fill", []string{"ada@example.com"}, false).WithUsage(210, 17))
	req := browsertest.Act("type ada@example.com into the email field")
	req.Options.Cache = &cache.Setting{Threshold: 1}

	status, body := c.MustCall(t, rpc.ActPath, req)
	first := decodeResult[rpc.ActResult](t, status, body)
	if diff := cmp.Diff(&cache.Report{Status: cache.StatusMiss, Count: 1, Threshold: 1, MissReason: cache.MissNotCached}, first.Cache); diff != "" {
		t.Errorf("first report (-want +got):\n%s", diff)
	}
	runnertest.Want(t, "first usage", first.Usage.InputTokens, 210)

	// The page loaded again: the same content, new node ids.
	open(t, c, site, "/form")
	status, body = c.MustCall(t, rpc.ActPath, req)
	second := decodeResult[rpc.ActResult](t, status, body)
	want := &cache.Report{Status: cache.StatusHit, Count: 2, Threshold: 1, TokensSaved: &cache.TokensSaved{InputTokens: 210, OutputTokens: 17, TotalTokens: 227}}
	if diff := cmp.Diff(want, second.Cache); diff != "" {
		t.Errorf("second report (-want +got):\n%s", diff)
	}
	runnertest.Want(t, "a hit's usage", second.Usage, rpc.Usage{})
	if !second.Result.Success || len(second.Result.Actions) != 1 || second.Result.Actions[0].Selector != first.Result.Actions[0].Selector {
		t.Errorf("the hit's result %+v, want the first's actions", second.Result)
	}
	var value string
	browsertest.Evaluate(t, b, `document.getElementById('email').value`, &value)
	runnertest.Want(t, "the field's value after the replay", value, "ada@example.com")
	runnertest.Want(t, "model requests", len(srv.Requests()), 1)
	if api.calls.Load() != 3 {
		t.Errorf("the API got %d cache calls, want get, set, get", api.calls.Load())
	}
}

func TestExtractThroughTheCacheStreamsItsReportScriptedModel(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := cachedServer(t, b, srv)
	open(t, c, site, "/list")
	srv.Enqueue(llmtest.JSON(`{"extraction":"150 items"}`).WithUsage(900, 4))
	req := rpc.ExtractRequest{Instruction: "how many items", Options: rpc.ExtractOptions{Cache: &cache.Setting{Threshold: 1}}}

	status, body := c.MustCall(t, rpc.ExtractPath, req)
	first := decodeResult[json.RawMessage](t, status, body)
	runnertest.Want(t, "first status", first.Cache.Status, cache.StatusMiss)

	status, _, lines, err := c.Stream(t.Context(), rpc.ExtractPath, req)
	if err != nil || status != 200 {
		t.Fatalf("streamed extract: %d %v", status, err)
	}
	last := lines[len(lines)-1]
	if last.Type != rpc.StreamResult {
		t.Fatalf("the stream ended with %s: %s", last.Type, last.Data)
	}
	var res rpc.Result[json.RawMessage]
	if err := json.Unmarshal(last.Data, &res); err != nil {
		t.Fatal(err)
	}
	want := &cache.Report{Status: cache.StatusHit, Count: 2, Threshold: 1, TokensSaved: &cache.TokensSaved{InputTokens: 900, OutputTokens: 4, TotalTokens: 904}}
	if diff := cmp.Diff(want, res.Cache); diff != "" {
		t.Errorf("streamed report (-want +got):\n%s", diff)
	}
	runnertest.Want(t, "served value", string(res.Result), `{"extraction":"150 items"}`)
	runnertest.Want(t, "model requests", len(srv.Requests()), 1)
}

func TestCallsWithoutACacheSettingAnswerAsBeforeScriptedModel(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, api := cachedServer(t, b, srv)
	open(t, c, site, "/form")
	srv.Enqueue(llmtest.JSON(`{"elements":[]}`))
	status, body := c.MustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "find buttons"})
	if status != 200 {
		t.Fatalf("observe: %d %s", status, body)
	}
	if strings.Contains(string(body), `"cache"`) {
		t.Errorf("a call without a setting answers a cache report: %s", body)
	}
	runnertest.Want(t, "cache calls", api.calls.Load(), int32(0))
}

func TestACacheThresholdOutOfBoundsIsRefused(t *testing.T) {
	b := browsertest.Shared(t)
	srv := llmtest.NewServer(t)
	c, api := cachedServer(t, b, srv)
	for path, body := range map[string]any{
		rpc.ActPath:     rpc.ActRequest{Input: rpc.ActInput{Instruction: "click"}, Options: rpc.ActOptions{Cache: &cache.Setting{Threshold: 0}}},
		rpc.ObservePath: rpc.ObserveRequest{Options: rpc.ObserveOptions{Cache: &cache.Setting{Threshold: 1001}}},
		rpc.ExtractPath: rpc.ExtractRequest{Instruction: "x", Options: rpc.ExtractOptions{Cache: &cache.Setting{Threshold: -1}}},
	} {
		status, raw := c.MustCall(t, path, body)
		if status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", path, status)
			continue
		}
		e := runnertest.DecodeError(t, raw)
		runnertest.WantContains(t, path+" error", e.Message, "options.cache.threshold: threshold must be from 1 to 1000")
	}
	runnertest.Want(t, "cache calls", api.calls.Load(), int32(0))
	runnertest.Want(t, "model requests", len(srv.Requests()), 0)
}
