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
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// batchServer serves the runner RPC over b with the real engine, the
// session's model at the scripted server srv, and the batch bounds opts.
func batchServer(t *testing.T, b *chromium.Browser, srv *llmtest.Server, opts BatchOptions) (*rpc.Client, runnertest.Client, *runnertest.SyncBuffer) {
	t.Helper()
	cfg := runnertest.Config(nil)
	cfg.Spec.Model.Name = modelNames[llmtest.OpenAI]
	cfg.Spec.Model.BaseURL = srv.BaseURL(llmtest.OpenAI)
	cfg.Secrets.ModelAPIKey = config.NewSecret(sessionModelKey)
	log, buf := runnertest.Logger(t)
	s := NewServer(ServerOptions{
		Token:      config.NewSecret(runnertest.Token),
		Operations: operations.NewAutomation(cfg, log),
		Logger:     log,
		Batch:      opts,
	})
	s.SetBrowser(b)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(func() {
		if strings.Contains(buf.String(), sessionModelKey) {
			t.Error("the session's model key is in the runner's log")
		}
	})
	return rpc.NewClient(hs.URL, runnertest.Token, nil), runnertest.Client{Base: hs.URL, Token: runnertest.Token}, buf
}

func batchCallCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestBatch runs a script whose operations act, read the page and extract
// on the runner's tab, in one call (scripted model).
func TestBatch(t *testing.T) {
	const secret = "correct horse battery staple"
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	rc, c, logs := batchServer(t, b, srv, BatchOptions{})
	open(t, c, site, "/form")
	id, _ := idOf(t, b, "textbox: Password")
	srv.Enqueue(
		actAnswer(id, "fill", []string{"%password%"}, false).WithUsage(300, 20),
		llmtest.JSON(`{"extraction":"a sign-in form"}`).WithUsage(100, 5),
	)

	input, _ := json.Marshal(map[string]string{"password": secret})
	res, err := rc.Batch(batchCallCtx(t), rpc.BatchRequest{
		Source: `async (batch, input) => {
			const a = await batch.act("fill in the password", {variables: {password: {value: input.password, description: "the password"}}});
			const e = await batch.extract("what the page is");
			const m = await batch.metrics();
			return {success: a.data.success, method: a.data.actions[0].method, args: a.data.actions[0].arguments,
				status: a.metadata.cache.status, hasId: a.metadata.actionId.length > 0, extraction: e.data.extraction,
				title: await batch.page.title(), url: await batch.page.url(), pageId: batch.page.id,
				actTokens: m.actPromptTokens, totalTokens: m.totalPromptTokens};
		}`,
		Input:   input,
		Metrics: map[string]float64{"actPromptTokens": 1000, "totalPromptTokens": 1000},
	})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(res.Result.Result, &got); err != nil {
		t.Fatalf("decoding %s: %v", res.Result.Result, err)
	}
	tabID := string(browsertest.Tab(t.Context(), b).TargetID())
	want := map[string]any{
		"success": true, "method": "fill", "args": []any{"%password%"}, "status": "DISABLED", "hasId": true,
		"extraction": "a sign-in form", "title": "Sign in", "url": site.URL + "/form", "pageId": tabID,
		"actTokens": 1300.0, "totalTokens": 1400.0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the script's result (-want +got):\n%s", diff)
	}
	wantUsage := rpc.BatchUsage{Act: rpc.Usage{InputTokens: 300, OutputTokens: 20}, Extract: rpc.Usage{InputTokens: 100, OutputTokens: 5}}
	if diff := cmp.Diff(wantUsage, res.Result.Usage, ignoreInferenceTime); diff != "" {
		t.Errorf("usage by group (-want +got):\n%s", diff)
	}
	runnertest.Want(t, "total usage", res.Usage.InputTokens, 400)
	runnertest.Want(t, "active page", res.Result.ActivePageID, tabID)

	var value string
	browsertest.Evaluate(t, b, `document.getElementById('password').value`, &value)
	runnertest.Want(t, "the password field", value, secret)
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), secret) {
			t.Error("the variable's value reached the model")
		}
	}
	if strings.Contains(logs.String(), secret) {
		t.Error("the variable's value is in the runner's log")
	}

	// The history has the script's operations, each under its own id,
	// then the batch, without its source or input.
	rep, err := rc.Replay(batchCallCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, p := range rep.Pages {
		for _, a := range p.Actions {
			methods = append(methods, a.Method)
			if strings.Contains(string(a.Parameters), secret) || strings.Contains(string(a.Parameters), "input.password") {
				t.Errorf("the history keeps a secret or the source: %s", a.Parameters)
			}
		}
	}
	if diff := cmp.Diff([]string{"navigate", "act", "extract", "batch"}, methods); diff != "" {
		t.Errorf("recorded methods (-want +got):\n%s", diff)
	}
}

var ignoreInferenceTime = cmp.Transformer("noTime", func(u rpc.Usage) rpc.Usage { u.InferenceTimeMs = 0; return u })

// TestBatchFailures: each way a batch fails has its code, and the runner
// serves the next call.
func TestBatchFailures(t *testing.T) {
	b := browsertest.Shared(t)
	srv := llmtest.NewServer(t)
	rc, _, _ := batchServer(t, b, srv, BatchOptions{MaxHeapGrowth: 64 << 20})
	ms := func(d time.Duration) *float64 { v := float64(d / time.Millisecond); return &v }
	tests := []struct {
		name   string
		req    rpc.BatchRequest
		code   rpc.ErrorCode
		phrase string
		stack  string
	}{
		{"exception", rpc.BatchRequest{Source: "async (batch) => {\n  throw new RangeError('too far');\n}"}, rpc.CodeBatchScriptError, "RangeError: too far", "batch.js:2"},
		{"failed operation let through", rpc.BatchRequest{Source: `async (batch) => { await batch.page.goto("file:///etc/passwd"); }`}, rpc.CodeBatchScriptError, "page.goto: BAD_REQUEST: url", ""},
		{"deadline", rpc.BatchRequest{Source: `() => { for (;;) {} }`, Timeout: ms(200 * time.Millisecond)}, rpc.CodeBatchDeadline, "deadline of 200ms", ""},
		{"memory", rpc.BatchRequest{Source: `() => { const keep = []; for (;;) keep.push("x".repeat(1 << 16) + keep.length); }`}, rpc.CodeBatchLimit, "memory grew by more than 64 MiB", ""},
		{"not JSON", rpc.BatchRequest{Source: `() => ({f() {}})`}, rpc.CodeBatchScriptError, "the result is not JSON", ""},
		{"no source", rpc.BatchRequest{}, rpc.CodeBadRequest, "source is required", ""},
		{"not a function", rpc.BatchRequest{Source: `"hello"`}, rpc.CodeBadRequest, "source must be a function expression", ""},
		{"timeout too long", rpc.BatchRequest{Source: `() => 1`, Timeout: ms(11 * time.Minute)}, rpc.CodeBadRequest, "timeout must be between 0 and 600000 milliseconds", ""},
		{"unknown counter", rpc.BatchRequest{Source: `() => 1`, Metrics: map[string]float64{"bogus": 1}}, rpc.CodeBadRequest, "metrics:", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rc.Batch(batchCallCtx(t), tt.req)
			var e *rpc.Error
			if !errors.As(err, &e) {
				t.Fatalf("batch: got %v, want an *rpc.Error", err)
			}
			runnertest.Want(t, "code", e.Code, tt.code)
			runnertest.WantContains(t, "message", e.Message, tt.phrase)
			runnertest.WantContains(t, "stack", e.Stack, tt.stack)
			// The runner lives on and serves the next batch.
			res, err := rc.Batch(batchCallCtx(t), rpc.BatchRequest{Source: `async () => "still here"`})
			if err != nil {
				t.Fatalf("the batch after: %v", err)
			}
			runnertest.Want(t, "the batch after", string(res.Result.Result), `"still here"`)
		})
	}
}

// TestBatchCancelled: a caller that goes away cancels its batch, and the
// queue serves the next operation (scripted model).
func TestBatchCancelled(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	rc, c, _ := batchServer(t, b, srv, BatchOptions{})
	open(t, c, site, "/form")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv.Enqueue(llmtest.JSON(`{"extraction":"never read"}`).WithRelease(release))

	ctx, cancel := context.WithCancel(batchCallCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := rc.Batch(ctx, rpc.BatchRequest{Source: `async (batch) => { await batch.extract("anything"); await batch.act("never"); }`})
		done <- err
	}()
	// The model holds its answer: the batch is in its extract.
	runnertest.WaitFor(t, "the model to be asked", func() bool { return len(srv.Requests()) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("batch: got %v, want the cancellation", err)
	}
	// The queue is free: a navigate runs (it would wait behind a batch
	// still running).
	open(t, c, site, "/buttons")
	runnertest.Want(t, "model requests", len(srv.Requests()), 1)
}

// TestBatchTabs: a script opens a tab, acts there by the active page,
// lists the pages in their order and moves the active page back; the
// runner's own tab is left as it was. The acts are actions: no model.
func TestBatchTabs(t *testing.T) {
	b := browsertest.Start(t, runnertest.Config(nil))
	srv := llmtest.NewServer(t)
	rc, c, _ := batchServer(t, b, srv, BatchOptions{})
	site := runnertest.NewPageServer(t, runnertest.HTMLHandler(`<!doctype html><title>Counter</title><h1>not yet</h1>
<button onclick="document.querySelector('h1').textContent = 'clicked ' + location.pathname">Order</button>`))
	open(t, c, site, "/own")
	own := string(browsertest.Tab(t.Context(), b).TargetID())

	input, _ := json.Marshal(map[string]string{"url": site.URL + "/fresh"})
	res, err := rc.Batch(batchCallCtx(t), rpc.BatchRequest{Source: `async (batch, input) => {
		const own = batch.page;
		const fresh = await batch.context.newPage(input.url);
		await batch.act({selector: "xpath=/html/body/button", method: "click", description: "Order"});
		const pages = (await batch.context.pages()).map(p => p.id);
		await batch.context.setActivePage(own);
		let refused = "";
		try { await batch.context.newPage("file:///etc/passwd"); } catch (e) { refused = e.message; }
		return {own: own.id, fresh: fresh.id, pages, freshTitle: await fresh.title(), freshUrl: await fresh.url(),
			pagesAfter: (await batch.context.pages()).length, refused};
	}`, Input: input})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	var got struct {
		Own, Fresh, FreshTitle, FreshURL, Refused string
		Pages                                     []string
		PagesAfter                                int
	}
	if err := json.Unmarshal(res.Result.Result, &got); err != nil {
		t.Fatal(err)
	}
	runnertest.Want(t, "batch.page", got.Own, own)
	if diff := cmp.Diff([]string{own, got.Fresh}, got.Pages); diff != "" {
		t.Errorf("context.pages(), oldest first (-want +got):\n%s", diff)
	}
	runnertest.Want(t, "the new page's title", got.FreshTitle, "Counter")
	runnertest.Want(t, "the new page's URL", got.FreshURL, site.URL+"/fresh")
	runnertest.WantContains(t, "a refused newPage", got.Refused, "context.newPage: BAD_REQUEST: url")
	runnertest.Want(t, "pages after a refused newPage", got.PagesAfter, 2)
	runnertest.Want(t, "the active page at the end", res.Result.ActivePageID, own)
	runnertest.WantContains(t, "the new tab", pageTextOf(t, c, got.Fresh), "clicked /fresh")
	runnertest.WantNotContains(t, "the runner's own tab", pageTextOf(t, c, own), "clicked")
}
