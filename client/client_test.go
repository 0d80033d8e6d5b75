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
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// One test per semantic bullet of the issue, for local handles.

func TestCreateIsInitializedAndTheHandleBacksOneInstance(t *testing.T) {
	ctx := testCtx(t)
	c, err := Create(ctx, CreateOptions{Browser: shared, Logging: &LoggingConfig{Level: LogLevelOff}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Initialized() || c.Browser() != shared {
		t.Fatalf("Initialized() = %v, Browser() = %p; want true and the handle", c.Initialized(), c.Browser())
	}
	if _, err := Create(ctx, CreateOptions{Browser: shared}); !errors.Is(err, ErrBrowserInUse) {
		t.Errorf("a second Create on the handle: err = %v, want ErrBrowserInUse", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Close frees the handle.
	again, err := Create(ctx, CreateOptions{Browser: shared, Logging: &LoggingConfig{Level: LogLevelOff}})
	if err != nil {
		t.Fatalf("Create after Close: %v", err)
	}
	if err := again.Close(ctx); err != nil {
		t.Fatal(err)
	}

	closed, err := ConnectLocalBrowser(ctx, LocalBrowserConnectOptions{CDPURL: httpOrigin(shared)})
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(ctx, CreateOptions{Browser: closed}); !errors.Is(err, ErrBrowserClosed) {
		t.Errorf("Create on a closed handle: err = %v, want ErrBrowserClosed", err)
	}
	if _, err := Create(ctx, CreateOptions{}); !errors.Is(err, ErrNoBrowser) {
		t.Errorf("Create without a handle: err = %v, want ErrNoBrowser", err)
	}
}

func TestCreateRefusesOptionsItCannotHonour(t *testing.T) {
	gen := func(context.Context, GenerateRequest) (GenerateResult, error) { return GenerateResult{}, nil }
	for _, tc := range []struct {
		name string
		opts CreateOptions
		want string
	}{
		{"model and generate", CreateOptions{Model: &ModelConfig{ModelName: "openai/gpt-4.1-mini"}, Generate: gen}, "CreateOptions.Model and CreateOptions.Generate"},
		{"model without a name", CreateOptions{Model: &ModelConfig{}}, "CreateOptions.Model.ModelName"},
		{"model of no provider", CreateOptions{Model: &ModelConfig{ModelName: "acme/m1"}}, "CreateOptions.Model.ModelName"},
		{"cache threshold zero", CreateOptions{Cache: CacheWithThreshold(0)}, "CreateOptions.Cache"},
		{"negative settle timeout", CreateOptions{DOMSettleTimeoutMs: -1}, "CreateOptions.DOMSettleTimeoutMs"},
		{"unknown log level", CreateOptions{Logging: &LoggingConfig{Level: "loud"}}, "CreateOptions.Logging.Level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Browser = shared
			_, err := Create(testCtx(t), tc.opts)
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalidArgument naming %s", err, tc.want)
			}
		})
	}
	// None of them kept the handle.
	newInstance(t, CreateOptions{})
}

func TestCloseReleasesTheInstanceAndLeavesTheBrowser(t *testing.T) {
	ctx := testCtx(t)
	p := openPage(t, nil, "/form")
	c := newInstance(t, CreateOptions{})
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Errorf("a second Close: %v, want the first result (nil)", err)
	}
	if c.Initialized() {
		t.Error("Initialized() is true after Close")
	}
	if _, err := c.Act(ctx, ActInstruction("sign in"), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Act after Close: %v, want ErrClosed", err)
	}
	if _, err := c.Observe(ctx, nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Observe after Close: %v, want ErrClosed", err)
	}
	if _, err := Extract[map[string]any](ctx, c, "the title", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Extract after Close: %v, want ErrClosed", err)
	}
	// The browser and its page are as they were.
	if got := eval[string](t, p, "document.title"); got != "Sign in" {
		t.Errorf("the page's title is %q after Close", got)
	}
}

func TestCloseReturnsTheFirstResult(t *testing.T) {
	ctx := testCtx(t)
	c := newInstance(t, CreateOptions{})
	first := errors.New("the runtime could not release")
	c.rt = &failingClose{runtime: c.rt, err: first}
	if err := c.Close(ctx); !errors.Is(err, first) {
		t.Fatalf("Close = %v, want the runtime's error", err)
	}
	c.rt = &failingClose{runtime: c.rt, err: errors.New("another")}
	if err := c.Close(ctx); !errors.Is(err, first) {
		t.Errorf("a second Close = %v, want the first result", err)
	}
}

// failingClose is a runtime whose close fails.
type failingClose struct {
	runtime
	err error
}

func (f *failingClose) close(context.Context) error { return f.err }

// heldAct starts an Act on a new instance whose model answer is held
// until the test ends, and returns once the model has the request: the
// instance, the model server, the page, and where the Act's error goes.
func heldAct(t *testing.T, ctx context.Context) (*Client, *llmtest.Server, *Page, <-chan error) {
	t.Helper()
	srv, model := scripted(t)
	p := openPage(t, nil, "/form")
	c := newInstance(t, CreateOptions{Model: model})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv.Enqueue(llmtest.JSON(actAnswer(idOf(t, p, "button: Sign in"), "click")).WithRelease(release))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Act(ctx, ActInstruction("sign in"), &ActOptions{Page: p})
		errc <- err
	}()
	waitFor(t, func() bool { return len(srv.Requests()) == 1 })
	return c, srv, p, errc
}

func TestCancellingAbandonsACall(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	c, srv, p, errc := heldAct(t, ctx)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled Act returned %v, want context.Canceled", err)
	}
	// The instance serves the next call once the abandoned one stopped.
	srv.Enqueue(llmtest.JSON(`{"extraction":"Sign in"}`))
	res, err := Extract[struct {
		Extraction string `json:"extraction"`
	}](testCtx(t), c, "the page's title", &ExtractOptions{Page: p})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data.Extraction != "Sign in" {
		t.Errorf("extracted %+v", res.Data)
	}
	m, _ := c.Metrics(testCtx(t))
	if m.ActPromptTokens != 0 {
		t.Errorf("metrics %+v: the abandoned act counted", m)
	}
}

func TestCloseAbandonsTheRunningCall(t *testing.T) {
	c, _, _, errc := heldAct(t, testCtx(t))
	if err := c.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("the running Act returned %v, want ErrClosed", err)
	}
	// The handle is free again.
	newInstance(t, CreateOptions{})
}

func TestMetricsCountSuccessfulInference(t *testing.T) {
	srv, model := scripted(t)
	ctx := testCtx(t)
	p := openPage(t, nil, "/list")
	c := newInstance(t, CreateOptions{Model: model})
	zero := Metrics{}
	if m, _ := c.Metrics(ctx); m != zero {
		t.Fatalf("a new instance's metrics: %+v", m)
	}

	buy := idOf(t, p, "button: Buy 2")
	srv.Enqueue(
		llmtest.JSON(actAnswer(buy, "click")).WithUsage(100, 20).WithReasoningTokens(5).WithCachedInputTokens(40),
		llmtest.JSON(observeAnswer(buy, "click", "the second buy button")).WithUsage(70, 9),
		llmtest.JSON(`{"names":["Item 1","Item 2","Item 3"]}`).WithUsage(300, 30),
		llmtest.Status(400).WithMessage("no such model"),
	)
	if _, err := c.Act(ctx, ActInstruction("buy the second item"), &ActOptions{Page: p}); err != nil {
		t.Fatal(err)
	}
	obs, err := c.Observe(ctx, nil, &ObserveOptions{Page: p})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Extract[struct {
		Names []string `json:"names"`
	}](ctx, c, "the item names", &ExtractOptions{Page: p}); err != nil {
		t.Fatal(err)
	}
	afterOps, _ := c.Metrics(ctx)
	// A call that fails, a deterministic act, and reading, leave them.
	if _, err := c.Act(ctx, ActInstruction("buy the first item"), &ActOptions{Page: p}); err == nil {
		t.Fatal("the act the model refused succeeded")
	}
	if res, err := c.Act(ctx, ObservedAction(obs.Data[0]), &ActOptions{Page: p}); err != nil || !res.Data.Success {
		t.Fatalf("the observed action: %v %+v", err, res)
	}
	m, _ := c.Metrics(ctx)
	if diff := cmp.Diff(afterOps, m); diff != "" {
		t.Errorf("a failed call or a deterministic act moved the metrics (-before +after):\n%s", diff)
	}

	// Inference times are measured (whole milliseconds, so a loopback
	// answer may take none), not scripted: check the sum, then compare
	// the rest.
	if m.TotalInferenceTimeMs != m.ActInferenceTimeMs+m.ObserveInferenceTimeMs+m.ExtractInferenceTimeMs {
		t.Errorf("total inference time %v is not the sum of the groups'", m.TotalInferenceTimeMs)
	}
	m.ActInferenceTimeMs, m.ObserveInferenceTimeMs, m.ExtractInferenceTimeMs, m.TotalInferenceTimeMs = 0, 0, 0, 0
	want := Metrics{
		ActPromptTokens: 100, ActCompletionTokens: 20, ActReasoningTokens: 5, ActCachedInputTokens: 40,
		ObservePromptTokens: 70, ObserveCompletionTokens: 9,
		ExtractPromptTokens: 300, ExtractCompletionTokens: 30,
		TotalPromptTokens: 470, TotalCompletionTokens: 59, TotalReasoningTokens: 5, TotalCachedInputTokens: 40,
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if again, _ := c.Metrics(ctx); again != afterOps {
		t.Error("reading the metrics changed them")
	}

	// Counters start at zero on each instance, and stay readable after
	// Close.
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Metrics(ctx); err != nil || m != afterOps {
		t.Errorf("metrics after Close: %+v, %v", m, err)
	}
	if m, _ := newInstance(t, CreateOptions{Model: model}).Metrics(ctx); m != zero {
		t.Errorf("a second instance starts at %+v", m)
	}
}

func TestEveryResultCarriesMetadata(t *testing.T) {
	srv, model := scripted(t)
	ctx := testCtx(t)
	p := openPage(t, nil, "/list")
	c := newInstance(t, CreateOptions{Model: model, Cache: CacheEnabled(true)})
	buy := idOf(t, p, "button: Buy 1")
	srv.Enqueue(
		llmtest.JSON(actAnswer(buy, "click")).WithUsage(11, 2),
		llmtest.JSON(observeAnswer(buy, "click", "buy")).WithUsage(12, 3),
		llmtest.JSON(`{"n":3}`).WithUsage(13, 4),
	)
	act, err := c.Act(ctx, ActInstruction("buy the first item"), &ActOptions{Page: p})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := c.Observe(ctx, nil, &ObserveOptions{Page: p})
	if err != nil {
		t.Fatal(err)
	}
	ext, err := Extract[struct {
		N int `json:"n"`
	}](ctx, c, "how many items", &ExtractOptions{Page: p})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := c.Act(ctx, ObservedAction(obs.Data[0]), &ActOptions{Page: p})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, tc := range []struct {
		name    string
		md      Metadata
		in, out float64
	}{
		{"act", act.Metadata, 11, 2},
		{"observe", obs.Metadata, 12, 3},
		{"extract", ext.Metadata, 13, 4},
		{"observed action", direct.Metadata, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A local handle has no managed cache (the service's).
			if diff := cmp.Diff(CacheMetadata{Status: CacheStatusDISABLED}, tc.md.Cache); diff != "" {
				t.Errorf("cache (-want +got):\n%s", diff)
			}
			if _, err := uuid.Parse(tc.md.ActionID); err != nil || ids[tc.md.ActionID] {
				t.Errorf("action id %q is not a new UUID", tc.md.ActionID)
			}
			ids[tc.md.ActionID] = true
			u := tc.md.Usage
			if u.InputTokens != tc.in || u.OutputTokens != tc.out {
				t.Errorf("usage %+v, want %v in and %v out", u, tc.in, tc.out)
			}
			if tc.in == 0 && u.InferenceTimeMs != 0 {
				t.Errorf("inference time %v with no inference", u.InferenceTimeMs)
			}
		})
	}
}

// waitFor waits, generously, for cond.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// httpOrigin is the http:// origin of b's DevTools endpoint.
func httpOrigin(b *Browser) string {
	return strings.Replace(b.endpoint, "ws://", "http://", 1)
}
