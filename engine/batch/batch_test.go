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

package batch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func runScript(t *testing.T, h Host, source string, input json.RawMessage) (*Result, error) {
	t.Helper()
	return Run(t.Context(), h, Call{Source: source, Input: input, Page: "p1", Active: "p1", Timeout: time.Minute})
}

func TestValues(t *testing.T) {
	tests := []struct {
		name   string
		source string
		input  json.RawMessage
		want   string
	}{
		{"sync function", `function (batch, input) { return {a: 1, b: [true, null, "x"]}; }`, nil, `{"a":1,"b":[true,null,"x"]}`},
		{"async arrow", `async (batch, input) => 7`, nil, `7`},
		{"trailing semicolon and comment", "async () => 'ok'; // done", nil, `"ok"`},
		{"nil input is undefined", `(batch, input) => typeof input`, nil, `"undefined"`},
		{"null input is null", `(batch, input) => input === null`, json.RawMessage(`null`), `true`},
		{"input round trip", `(batch, input) => ({got: input.items.length, name: input.name})`, json.RawMessage(`{"items":[1,2,3],"name":"é"}`), `{"got":3,"name":"é"}`},
		{"undefined is null", `async () => undefined`, nil, `null`},
		{"no return is null", `async () => {}`, nil, `null`},
		{"undefined properties are left out", `() => ({a: undefined, b: 1})`, nil, `{"b":1}`},
		{"dates are JSON", `() => new Date(0)`, nil, `"1970-01-01T00:00:00.000Z"`},
		{"no Node.js or browser globals", `() => [typeof require, typeof process, typeof console, typeof setTimeout, typeof fetch, typeof module]`, nil,
			`["undefined","undefined","undefined","undefined","undefined","undefined"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := runScript(t, newFakeHost("p1"), tt.source, tt.input)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tt.want, string(res.Value)); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResultThatIsNotJSON(t *testing.T) {
	tests := []struct {
		name, source, want string
	}{
		{"function", `() => () => 1`, "the value is a function"},
		{"nested function", `() => ({a: {b: function () {}}})`, `the value at key "b" is a function`},
		{"symbol", `() => ({s: Symbol("x")})`, `the value at key "s" is a symbol`},
		{"cycle", `() => { const a = {}; a.self = a; return a; }`, "TypeError"},
		{"bigint", `() => ({n: 10n})`, "TypeError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runScript(t, newFakeHost("p1"), tt.source, nil)
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Run: got %v, want a *ScriptError", err)
			}
			if !strings.HasPrefix(se.Message, "the result is not JSON: ") || !strings.Contains(se.Message, tt.want) {
				t.Errorf("message %q: want the prefix \"the result is not JSON: \" and %q", se.Message, tt.want)
			}
		})
	}
}

func TestAwaitChainsRunInOrder(t *testing.T) {
	h := newFakeHost("p1")
	res, err := runScript(t, h, `async (batch) => {
		const a = await batch.act("click one");
		const o = await batch.observe("the links");
		const e = await batch.extract("the total");
		const e2 = await batch.extract("the total", {type: "object", properties: {total: {type: "number"}}});
		return {act: a.data.success, actions: a.data.actions.length, observed: o.data[0].description,
			extraction: e.data.extraction, total: e2.data.total, status: a.metadata.cache.status, tokens: a.metadata.usage.inputTokens};
	}`, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := `{"act":true,"actions":1,"observed":"a link","extraction":"42","total":42,"status":"DISABLED","tokens":100}`
	if diff := cmp.Diff(want, string(res.Value)); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
	wantCalls := []string{
		"act click one on p1",
		"observe the links on p1",
		"extract the total on p1 " + string(DefaultExtractSchema),
		`extract the total on p1 {"type":"object","properties":{"total":{"type":"number"}}}`,
	}
	if diff := cmp.Diff(wantCalls, h.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	wantUsage := GroupUsage{
		Act:     Usage{InputTokens: 100, OutputTokens: 10, InferenceTimeMs: 5},
		Observe: Usage{InputTokens: 50, OutputTokens: 5},
		Extract: Usage{InputTokens: 40, OutputTokens: 4, ReasoningTokens: 2},
	}
	if diff := cmp.Diff(wantUsage, res.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if res.Operations != 4 {
		t.Errorf("operations: got %d, want 4", res.Operations)
	}
}

func TestPromiseAllRunsOneAfterAnother(t *testing.T) {
	h := newFakeHost("p1")
	res, err := runScript(t, h, `async (batch) => {
		const rs = await Promise.all([batch.act("one"), batch.act("two"), batch.observe(), batch.act("three")]);
		return rs.map(r => r.metadata.actionId || "observe");
	}`, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(`["act-one","act-two","observe","act-three"]`, string(res.Value)); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"act one on p1", "act two on p1", "observe  on p1", "act three on p1"}, h.recorded()); diff != "" {
		t.Errorf("calls, in call order (-want +got):\n%s", diff)
	}
	if h.overlap.Load() {
		t.Error("two operations ran at once")
	}
}

func TestExceptions(t *testing.T) {
	tests := []struct {
		name, source string
		wantMessage  string
		wantStack    string
		wantCause    error
	}{
		{"sync throw", "function () {\n  throw new Error('boom');\n}", "Error: boom", "batch.js:2", nil},
		{"async throw", "async (batch) => {\n  await batch.metrics();\n  null.x;\n}", "TypeError", "batch.js:3", nil},
		{"thrown string", `async () => { throw "plain"; }`, "plain", "", nil},
		{"failed operation", `async (batch) => { await batch.act("fail"); }`, "Error: act: " + errNoSuchButton.Error(), "", errNoSuchButton},
		{"bad argument", `async (batch) => { await batch.act(42); }`, "TypeError: act: takes an instruction (a string) or an action (an object with a selector), not number", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runScript(t, newFakeHost("p1"), tt.source, nil)
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Run: got %v, want a *ScriptError", err)
			}
			if !strings.HasPrefix(se.Message, tt.wantMessage) {
				t.Errorf("message %q: want it to start with %q", se.Message, tt.wantMessage)
			}
			if !strings.Contains(se.Stack, tt.wantStack) {
				t.Errorf("stack %q: want %q in it", se.Stack, tt.wantStack)
			}
			if tt.wantCause != nil && !errors.Is(err, tt.wantCause) {
				t.Errorf("error %v does not wrap %v", err, tt.wantCause)
			}
		})
	}
}

func TestCaughtOperationFailure(t *testing.T) {
	res, err := runScript(t, newFakeHost("p1"), `async (batch) => {
		try { await batch.act("fail"); } catch (e) { return {message: e.message, operation: e.operation, isError: e instanceof Error}; }
	}`, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := `{"message":"act: no element fits the instruction","operation":"act","isError":true}`
	if diff := cmp.Diff(want, string(res.Value)); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
}

func TestInvalidBatches(t *testing.T) {
	tests := []struct {
		name   string
		call   Call
		want   error
		phrase string
	}{
		{"not a function", Call{Source: `42`}, ErrInvalid, "source must be a function expression"},
		{"syntax error", Call{Source: `async (batch) => {`}, ErrInvalid, "source: "},
		{"empty", Call{Source: `  `}, ErrInvalid, "source is empty"},
		{"input not JSON", Call{Source: `() => 1`, Input: json.RawMessage(`{`)}, ErrInvalid, "input: not valid JSON"},
		{"source too large", Call{Source: "() => '" + strings.Repeat("x", MaxSourceBytes) + "'"}, ErrInvalid, "source: "},
		{"input too large", Call{Source: `() => 1`, Input: json.RawMessage(`"` + strings.Repeat("x", MaxInputBytes) + `"`)}, ErrInvalid, "input: "},
		{"negative timeout", Call{Source: `() => 1`, Timeout: -time.Second}, ErrInvalid, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(t.Context(), newFakeHost("p1"), tt.call)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.phrase) {
				t.Errorf("Run: got %v, want %v with %q", err, tt.want, tt.phrase)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	tests := []struct {
		name   string
		source string
		limits Limits
		phrase string
	}{
		{"call stack", `() => { const f = n => f(n + 1) + 1; return f(0); }`, Limits{}, "deeper than 2048 frames"},
		{"result size", `() => "x".repeat(` + "2 * 1024 * 1024" + `)`, Limits{}, "the result is 2097154 bytes of JSON"},
		{"memory", `() => { const keep = []; for (;;) { keep.push("x".repeat(1 << 16) + keep.length); } }`, Limits{MaxHeapGrowth: 32 << 20}, "memory grew by more than 32 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(t.Context(), newFakeHost("p1"), Call{Source: tt.source, Page: "p1", Active: "p1", Timeout: 10 * time.Minute, Limits: tt.limits})
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tt.phrase) {
				t.Errorf("Run: got %v, want ErrLimit with %q", err, tt.phrase)
			}
		})
	}
}

func TestOperationBound(t *testing.T) {
	res, err := Run(t.Context(), newFakeHost("p1"), Call{Source: `async (batch) => {
		for (let i = 0; i < 3; i++) await batch.metrics();
		try { await batch.metrics(); } catch (e) { return e.toString(); }
	}`, Page: "p1", Active: "p1", Limits: Limits{MaxOperations: 3}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(`"RangeError: metrics: the batch passed its bound of 3 operations"`, string(res.Value)); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
}

func TestNeverSettles(t *testing.T) {
	_, err := runScript(t, newFakeHost("p1"), `async () => { await new Promise(() => {}); }`, nil)
	var se *ScriptError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "can never settle") {
		t.Errorf("Run: got %v, want a *ScriptError saying the promise can never settle", err)
	}
}

func TestBusyScriptIsInterrupted(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		_, err := Run(t.Context(), newFakeHost("p1"), Call{Source: `() => { for (;;) {} }`, Page: "p1", Active: "p1", Timeout: 50 * time.Millisecond})
		if !errors.Is(err, ErrDeadline) || !strings.Contains(err.Error(), "50ms") {
			t.Errorf("Run: got %v, want ErrDeadline naming 50ms", err)
		}
	})
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(t.Context())
		h := newFakeHost("p1")
		started := make(chan struct{})
		h.block = func(context.Context, string) error { close(started); return nil }
		go func() {
			<-started
			cancel(errors.New("the caller gave up"))
		}()
		_, err := Run(ctx, h, Call{Source: `async (batch) => { await batch.act("go"); for (;;) {} }`, Page: "p1", Active: "p1", Timeout: time.Hour})
		if err == nil || err.Error() != "the caller gave up" {
			t.Errorf("Run: got %v, want the context's cause", err)
		}
	})
}

// TestDeadlineWithOperationRunning holds an act until the deadline has
// passed: it finishes, the call returns ErrDeadline, and the act after it
// never starts.
func TestDeadlineWithOperationRunning(t *testing.T) {
	h := newFakeHost("p1")
	started, release := make(chan struct{}), make(chan struct{})
	var finished bool
	h.block = func(ctx context.Context, instruction string) error {
		if instruction != "slow" {
			return nil
		}
		close(started)
		<-release
		finished = ctx.Err() == nil
		return nil
	}
	r, err := newRun(t.Context(), h, Call{Source: `async (batch) => { await batch.act("slow"); await batch.act("next"); return 1; }`, Page: "p1", Active: "p1", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	deadline := make(chan time.Time)
	type outcome struct {
		res *Result
		err error
	}
	out := make(chan outcome, 1)
	go func() {
		res, err := r.run(deadline)
		out <- outcome{res, err}
	}()
	<-started
	close(deadline)
	<-r.halted
	close(release)
	o := <-out
	if !errors.Is(o.err, ErrDeadline) || !strings.Contains(o.err.Error(), "30s") {
		t.Errorf("Run: got %v, want ErrDeadline naming 30s", o.err)
	}
	if !finished {
		t.Error("the act running at the deadline was cancelled; it should have finished")
	}
	if diff := cmp.Diff([]string{"act slow on p1"}, h.recorded()); diff != "" {
		t.Errorf("calls: nothing starts after the deadline (-want +got):\n%s", diff)
	}
}

// TestUnawaitedOperationNeverStarts: the batch is over when the script's
// promise settles; an operation it called and did not await by then never
// starts.
func TestUnawaitedOperationNeverStarts(t *testing.T) {
	h := newFakeHost("p1")
	res, err := runScript(t, h, `async (batch) => {
		const first = batch.act("awaited");
		batch.act("not awaited");
		await first;
		return "returned";
	}`, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(res.Value) != `"returned"` {
		t.Errorf("value %s, want \"returned\"", res.Value)
	}
	if diff := cmp.Diff([]string{"act awaited on p1"}, h.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestTargeting(t *testing.T) {
	h := newFakeHost("p1", "p2")
	res, err := Run(t.Context(), h, Call{Source: `async (batch) => {
		const [first, second] = await batch.context.pages();
		const same = first === batch.page;
		await batch.act("on the active page");
		await batch.context.setActivePage(second);
		await batch.act("after setActivePage");
		await batch.act("named page", {page: batch.page});
		const fresh = await batch.context.newPage("https://example.com/");
		await batch.observe("on the new page");
		const active = await batch.context.activePage();
		return {same, pageStill: batch.page.id, fresh: fresh.id, active: active.id, activeIsFresh: active === fresh,
			url: await fresh.url(), title: await second.title()};
	}`, Page: "p1", Active: "p1"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := `{"same":true,"pageStill":"p1","fresh":"new1","active":"new1","activeIsFresh":true,"url":"https://example.com/","title":"Title of p2"}`
	if diff := cmp.Diff(want, string(res.Value)); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
	wantCalls := []string{
		"pages",
		"act on the active page on p1",
		"pages",
		"act after setActivePage on p2",
		"act named page on p1",
		"newPage https://example.com/",
		"observe on the new page on new1",
		"pages",
		"url new1",
		"title p2",
	}
	if diff := cmp.Diff(wantCalls, h.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if res.Active != "new1" {
		t.Errorf("active page at the end: got %q, want new1", res.Active)
	}
}

func TestBatchPageIsFixed(t *testing.T) {
	res, err := runScript(t, newFakeHost("p1"), `async (batch) => {
		"use strict";
		const before = batch.page;
		try { batch.page = null; } catch (e) {}
		await batch.page.goto("https://example.com/a");
		return before === batch.page && (await batch.page.url());
	}`, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(`"https://example.com/a"`, string(res.Value)); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
}

func TestSetActivePageRefusesAClosedPage(t *testing.T) {
	_, err := runScript(t, newFakeHost("p1"), `async (batch) => { await batch.context.setActivePage("gone"); }`, nil)
	if err == nil || !strings.Contains(err.Error(), "page gone is not open") {
		t.Errorf("Run: got %v, want an error saying the page is not open", err)
	}
}

func TestMetrics(t *testing.T) {
	start := Metrics{ActPromptTokens: 1000, TotalPromptTokens: 1000}
	res, err := Run(t.Context(), newFakeHost("p1"), Call{Source: `async (batch) => {
		await batch.act("one");
		try { await batch.act("fail"); } catch (e) {}
		await batch.extract("x");
		return await batch.metrics();
	}`, Page: "p1", Active: "p1", Metrics: start})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var got Metrics
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatal(err)
	}
	want := Metrics{
		ActPromptTokens: 1100, ActCompletionTokens: 10, ActInferenceTimeMs: 5,
		ExtractPromptTokens: 20, ExtractCompletionTokens: 2, ExtractReasoningTokens: 1,
		TotalPromptTokens: 1120, TotalCompletionTokens: 12, TotalReasoningTokens: 1, TotalInferenceTimeMs: 5,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		call    string
		want    Options
		wantErr string
	}{
		{name: "none", call: `batch.act("x")`},
		{name: "null", call: `batch.act("x", null)`},
		{
			name: "every act option",
			call: `batch.act("x", {timeout: 1500, variables: {user: "ann", n: 2, ok: true, pw: {value: "s3cret", description: "the password"}},
				model: {modelName: "openai/gpt-4.1-mini", apiKey: "k", baseURL: "http://127.0.0.1:1/v1", headers: {"X-A": "b"}},
				selector: "#form", ignoreSelectors: ["#ads", "xpath=/html/body/nav"], cache: {threshold: 3}, page: batch.page})`,
			want: Options{
				Timeout:         1500 * time.Millisecond,
				Variables:       map[string]Variable{"user": {Value: "ann"}, "n": {Value: "2"}, "ok": {Value: "true"}, "pw": {Value: "s3cret", Description: "the password"}},
				Model:           &Model{ModelName: "openai/gpt-4.1-mini", APIKey: "k", BaseURL: "http://127.0.0.1:1/v1", Headers: map[string]string{"X-A": "b"}},
				Selector:        "#form",
				IgnoreSelectors: []string{"#ads", "xpath=/html/body/nav"},
				Cache:           &Cache{Enabled: true, Threshold: 3},
			},
		},
		{name: "model by name and cache off", call: `batch.observe("x", {model: "anthropic/claude-sonnet-4-5", cache: false})`,
			want: Options{Model: &Model{ModelName: "anthropic/claude-sonnet-4-5"}, Cache: &Cache{}}},
		{name: "observe with options only", call: `batch.observe({selector: "#main"})`, want: Options{Selector: "#main"}},
		{name: "extract screenshot", call: `batch.extract("x", undefined, {screenshot: true})`, want: Options{Screenshot: true}},
		{name: "unknown option", call: `batch.act("x", {frame: 1})`, wantErr: "act: options.frame is not an option of act; it takes page, timeout, variables, model, selector, ignoreSelectors, cache"},
		{name: "screenshot is extract's", call: `batch.act("x", {screenshot: true})`, wantErr: "options.screenshot is not an option of act"},
		{name: "variables are not extract's", call: `batch.extract("x", null, {variables: {}})`, wantErr: "options.variables is not an option of extract"},
		{name: "negative timeout", call: `batch.act("x", {timeout: -1})`, wantErr: "options.timeout must be between 0 and 86400000 milliseconds"},
		{name: "timeout as text", call: `batch.act("x", {timeout: "5s"})`, wantErr: "options.timeout must be a number of milliseconds, not string"},
		{name: "zero threshold", call: `batch.act("x", {cache: {threshold: 0}})`, wantErr: "options.cache threshold must be a positive integer"},
		{name: "model without a name", call: `batch.act("x", {model: {apiKey: "k"}})`, wantErr: "options.model needs a modelName"},
		{name: "unknown model field", call: `batch.act("x", {model: {modelName: "a/b", apikey: "k"}})`, wantErr: `options.model unknown field "apikey"`},
		{name: "page that is not one", call: `batch.act("x", {page: {}})`, wantErr: "options.page must be a page of the batch"},
		{name: "ignoreSelectors not strings", call: `batch.act("x", {ignoreSelectors: [1]})`, wantErr: "options.ignoreSelectors [0] must be a string"},
		{name: "variable of an object", call: `batch.act("x", {variables: {a: [1]}})`, wantErr: "options.variables a must be a string, a number or a boolean, not array"},
		{name: "options not an object", call: `batch.act("x", "fast")`, wantErr: "act: options must be an object, not string"},
		{name: "schema not an object", call: `batch.extract("x", "string")`, wantErr: "extract: the schema must be a JSON Schema object, not string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost("p1")
			_, err := runScript(t, h, `async (batch) => { await `+tt.call+`; }`, nil)
			if tt.wantErr != "" {
				var se *ScriptError
				if !errors.As(err, &se) || !strings.HasPrefix(se.Message, "TypeError: ") || !strings.Contains(se.Message, tt.wantErr) {
					t.Fatalf("Run: got %v, want a TypeError with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(h.opts) != 1 {
				t.Fatalf("options recorded: %d, want 1", len(h.opts))
			}
			if diff := cmp.Diff(tt.want, h.opts[0]); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActAction(t *testing.T) {
	h := newFakeHost("p1")
	_, err := runScript(t, h, `async (batch) => {
		const [a] = (await batch.observe("the link")).data;
		await batch.act(a);
		await batch.act({selector: "#b", description: "button b", method: "click", arguments: []});
	}`, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"observe the link on p1", "act action xpath=/html/body/a on p1", "act action #b on p1"}
	if diff := cmp.Diff(want, h.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
