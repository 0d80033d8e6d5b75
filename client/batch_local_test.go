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

package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// TestBatchRunsItsOperationsInProcess runs a script whose act and extract run in this process on
// the page, with the instance's model (scripted model).
func TestBatchRunsItsOperationsInProcess(t *testing.T) {
	srv, model := scripted(t)
	c := newInstance(t, CreateOptions{Model: model})
	p := openPage(t, nil, "/form")
	srv.Enqueue(
		llmtest.JSON(actAnswer(idOf(t, p, "textbox: Email"), "fill", "ada@example.com")).WithUsage(200, 20),
		llmtest.JSON(`{"greeting":"welcome"}`).WithUsage(100, 10),
	)
	var got struct {
		Success  bool     `json:"success"`
		Args     []string `json:"args"`
		HasID    bool     `json:"hasId"`
		Status   string   `json:"status"`
		Greeting string   `json:"greeting"`
		Title    string   `json:"title"`
		Tokens   float64  `json:"tokens"`
	}
	err := c.ExperimentalBatch(testCtx(t), `async (batch, input) => {
		const a = await batch.act("type " + input.email + " into the email field");
		const e = await batch.extract("the greeting", {type: "object", properties: {greeting: {type: "string"}}, required: ["greeting"]});
		const m = await batch.metrics();
		return {success: a.data.success, args: a.data.actions[0].arguments, hasId: a.metadata.actionId.length > 0,
			status: a.metadata.cache.status, greeting: e.data.greeting, title: await batch.page.title(), tokens: m.totalPromptTokens};
	}`, map[string]string{"email": "ada@example.com"}, &got, &BatchOptions{Page: p})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if !got.Success || got.Greeting != "welcome" || got.Title != "Sign in" || !got.HasID || got.Status != "DISABLED" || got.Tokens != 300 {
		t.Errorf("the script's result: %+v", got)
	}
	if diff := cmp.Diff([]string{"ada@example.com"}, got.Args); diff != "" {
		t.Errorf("act's arguments (-want +got):\n%s", diff)
	}
	if v := eval[string](t, p, `document.getElementById('email').value`); v != "ada@example.com" {
		t.Errorf("the email field holds %q", v)
	}
	m, _ := c.Metrics(testCtx(t))
	want := Metrics{ActPromptTokens: 200, ActCompletionTokens: 20, ExtractPromptTokens: 100, ExtractCompletionTokens: 10,
		TotalPromptTokens: 300, TotalCompletionTokens: 30}
	noTime := cmp.Transformer("noTime", func(m Metrics) Metrics {
		m.ActInferenceTimeMs, m.ExtractInferenceTimeMs, m.ObserveInferenceTimeMs, m.TotalInferenceTimeMs = 0, 0, 0, 0
		return m
	})
	if diff := cmp.Diff(want, m, noTime); diff != "" {
		t.Errorf("metrics after the batch (-want +got):\n%s", diff)
	}
}

func TestBatchArguments(t *testing.T) {
	c := newInstance(t, CreateOptions{})
	var s string
	var nilPtr *string
	tests := []struct {
		name   string
		source string
		input  any
		result any
		opts   *BatchOptions
		field  string
	}{
		{"nil result", `() => 1`, nil, nil, nil, "result"},
		{"result not a pointer", `() => 1`, nil, s, nil, "result"},
		{"nil pointer", `() => 1`, nil, nilPtr, nil, "result"},
		{"empty source", ` `, nil, &s, nil, "source"},
		{"not a function", `42`, nil, &s, nil, "source"},
		{"syntax error", `async () => {`, nil, &s, nil, "source"},
		{"input not JSON", `() => 1`, make(chan int), &s, nil, "input"},
		{"negative timeout", `() => 1`, nil, &s, &BatchOptions{Timeout: -time.Second}, "BatchOptions.Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.ExperimentalBatch(testCtx(t), tt.source, tt.input, tt.result, tt.opts)
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("got %v, want ErrInvalidArgument naming %s", err, tt.field)
			}
		})
	}
}

func TestBatchValues(t *testing.T) {
	c := newInstance(t, CreateOptions{})
	openPage(t, nil, "/list")

	var kind string
	if err := c.ExperimentalBatch(testCtx(t), `(batch, input) => typeof input`, nil, &kind, nil); err != nil || kind != "undefined" {
		t.Errorf("nil input: %q, %v; want undefined", kind, err)
	}
	if err := c.ExperimentalBatch(testCtx(t), `(batch, input) => input === null ? "null" : typeof input`, json.RawMessage("null"), &kind, nil); err != nil || kind != "null" {
		t.Errorf("JSON null input: %q, %v; want null", kind, err)
	}
	s := "before"
	out := &s
	if err := c.ExperimentalBatch(testCtx(t), `async () => undefined`, nil, &out, nil); err != nil || out != nil {
		t.Errorf("undefined result: %v, %v; want the pointer set to nil", out, err)
	}
	var be *BatchError
	err := c.ExperimentalBatch(testCtx(t), `() => ({f: () => 1})`, nil, &kind, nil)
	if !errors.As(err, &be) || !strings.Contains(be.Message, "the result is not JSON") {
		t.Errorf("a function in the result: %v, want a *BatchError saying it is not JSON", err)
	}
}

func TestBatchErrors(t *testing.T) {
	c := newInstance(t, CreateOptions{})
	openPage(t, nil, "/list")
	var v any

	err := c.ExperimentalBatch(testCtx(t), "async (batch) => {\n  await batch.metrics();\n  throw new TypeError('no such item');\n}", nil, &v, nil)
	var be *BatchError
	if !errors.As(err, &be) || be.Message != "TypeError: no such item" || !strings.Contains(be.Stack, "batch.js:3") {
		t.Errorf("an exception: %v (%+v), want a *BatchError with the message and its line", err, be)
	}

	// An operation's failure the script lets through wraps the
	// operation's error.
	err = c.ExperimentalBatch(testCtx(t), `async (batch) => { await batch.act("buy the second item"); }`, nil, &v, nil)
	if !errors.As(err, &be) || !strings.HasPrefix(be.Message, "Error: act: ") || !errors.Is(err, ErrNoModel) {
		t.Errorf("act without a model: %v, want a *BatchError wrapping ErrNoModel", err)
	}

	// A script can catch it.
	err = c.ExperimentalBatch(testCtx(t), `async (batch) => {
		try { await batch.act("buy the second item"); } catch (e) { return e.operation; }
	}`, nil, &v, nil)
	if err != nil || v != "act" {
		t.Errorf("a caught failure: %v, %v; want the result act", v, err)
	}
}

// TestBatchDeadline: a script past its deadline is stopped, and the
// instance serves the next call.
func TestBatchDeadline(t *testing.T) {
	c := newInstance(t, CreateOptions{})
	p := openPage(t, nil, "/list")
	var v any
	err := c.ExperimentalBatch(testCtx(t), `async (batch) => { await batch.page.title(); for (;;) {} }`, nil, &v, &BatchOptions{Timeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrBatchDeadline) || !strings.Contains(err.Error(), "300ms") {
		t.Errorf("got %v, want ErrBatchDeadline naming 300ms", err)
	}
	if _, err := c.Act(testCtx(t), ObservedAction(Action{Selector: "xpath=/html/body/ul/li[2]/button", Method: "click", Description: "Buy 2"}), &ActOptions{Page: p}); err != nil {
		t.Fatalf("the act after: %v", err)
	}
	if n := eval[int](t, p, `window.bought`); n != 2 {
		t.Errorf("bought %d, want 2", n)
	}
}

// TestBatchCancelled: cancelling ctx stops the batch where it is, here in
// a page load that does not end.
func TestBatchCancelled(t *testing.T) {
	arrived := make(chan struct{})
	var once sync.Once
	hold := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		<-r.Context().Done()
	}))
	t.Cleanup(hold.Close)
	c := newInstance(t, CreateOptions{})
	openPage(t, nil, "/list")
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		var v any
		done <- c.ExperimentalBatch(ctx, `async (batch, input) => { await batch.page.goto(input); }`, hold.URL, &v, &BatchOptions{Timeout: time.Hour})
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want the cancellation", err)
	}
	var v any
	if err := c.ExperimentalBatch(testCtx(t), `() => "next"`, nil, &v, nil); err != nil || v != "next" {
		t.Errorf("the batch after: %v, %v", v, err)
	}
}

// TestBatchPages: batch.page, the active page, setActivePage and newPage,
// with actions that need no model; the active page at the end becomes the
// handle's.
func TestBatchPages(t *testing.T) {
	c := newInstance(t, CreateOptions{})
	first := openPage(t, nil, "/list")
	second := openPage(t, nil, "/list")
	var got struct {
		Page     string `json:"page"`
		Active   string `json:"active"`
		Fresh    string `json:"fresh"`
		FreshURL string `json:"freshUrl"`
		Listed   bool   `json:"listed"`
	}
	err := c.ExperimentalBatch(testCtx(t), `async (batch, input) => {
		const buy = n => ({selector: "xpath=/html/body/ul/li[" + n + "]/button", method: "click", description: "Buy " + n});
		await batch.act(buy(1));
		const pages = await batch.context.pages();
		const other = pages.find(p => p.id === input.first);
		await batch.context.setActivePage(other);
		await batch.act(buy(3));
		await batch.act(buy(2), {page: batch.page});
		const fresh = await batch.context.newPage(input.url);
		return {page: batch.page.id, active: (await batch.context.activePage()).id, fresh: fresh.id,
			freshUrl: await fresh.url(), listed: (await batch.context.pages()).includes(fresh)};
	}`, map[string]string{"first": first.ID(), "url": site.URL + "/form"}, &got, &BatchOptions{Page: second})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if got.Page != second.ID() || got.Active != got.Fresh || got.FreshURL != site.URL+"/form" || !got.Listed {
		t.Errorf("the script's view: %+v", got)
	}
	if n := eval[int](t, first, `window.bought`); n != 3 {
		t.Errorf("the first page bought %d, want 3 (after setActivePage)", n)
	}
	if n := eval[int](t, second, `window.bought`); n != 2 {
		t.Errorf("batch.page bought %d, want 2 (its act ran first on the active page, then by its page option)", n)
	}
	active, err := c.Browser().Context().ActivePage(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if active.ID() != got.Fresh {
		t.Errorf("the handle's active page is %s, want the batch's %s", active.ID(), got.Fresh)
	}
	_ = active.Close(context.Background())
}

func TestBatchAfterClose(t *testing.T) {
	c := newInstance(t, CreateOptions{})
	if err := c.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var v any
	if err := c.ExperimentalBatch(testCtx(t), `() => 1`, nil, &v, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("got %v, want ErrClosed", err)
	}
}
