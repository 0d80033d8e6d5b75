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

// Package browsertest holds the runner's test helpers that need a browser:
// one started per test or shared by a package's tests, a Tab for one step,
// navigation and evaluation, and Operations, a test double of the operations.
// Product code never imports it.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Start starts cfg's browser and closes it when the test ends.
func Start(t *testing.T, cfg *config.Config) *chromium.Browser {
	t.Helper()
	log, _ := runnertest.Logger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := chromium.StartBrowser(ctx, cfg, log)
	if err != nil {
		t.Fatalf("StartBrowser: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// Tab is a chromium.Tab on b's tab for one test step.
func Tab(ctx context.Context, b *chromium.Browser) *chromium.Tab {
	return b.TabFor(b.ContextFor(ctx), 0)
}

// Navigate loads url in b's tab with the runner's Navigate.
func Navigate(t *testing.T, b *chromium.Browser, url string) (*rpc.NavigateResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := Tab(ctx, b)
	return operations.NewAutomation(nil, nil).Navigate(p.Context(), p, rpc.NavigateRequest{URL: url}, nil)
}

// MustNavigate is Navigate, failing the test on an error.
func MustNavigate(t *testing.T, b *chromium.Browser, url string) *rpc.NavigateResult {
	t.Helper()
	res, err := Navigate(t, b, url)
	if err != nil {
		t.Fatalf("navigating to %s: %v", url, err)
	}
	return res
}

// Evaluate runs expr in b's page and decodes its value into out.
func Evaluate(t testing.TB, b *chromium.Browser, expr string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := chromedp.Run(b.ContextFor(ctx), chromedp.Evaluate(expr, out)); err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
}

// One browser serves the RPC tests that do not need a browser of their own
// (crash and shutdown tests start theirs): it is started on first use and
// closed when the package's tests end.
var shared struct {
	once    sync.Once
	browser *chromium.Browser
	log     *runnertest.SyncBuffer
	err     error
}

// CloseShared closes the shared browser; a package's TestMain calls it
// after its tests, and fails when it does.
func CloseShared() (code int) {
	if shared.browser != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := shared.browser.Close(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared browser:", err)
			code = 1
		}
		cancel()
	}
	return code
}

// Shared returns the package's shared browser, started on first use;
// the package's TestMain closes it with CloseShared.
func Shared(t testing.TB) *chromium.Browser {
	t.Helper()
	shared.once.Do(func() {
		shared.log = &runnertest.SyncBuffer{}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		shared.browser, shared.err = chromium.StartBrowser(ctx, runnertest.Config(nil), runnertest.SlogTo(shared.log))
	})
	if shared.err != nil {
		t.Fatalf("starting the shared browser: %v", shared.err)
	}
	if err := shared.browser.Err(); err != nil {
		t.Fatalf("the shared browser crashed: %v", err)
	}
	return shared.browser
}

// Operations is a test double of operations.Interface: it does real, simple work on
// the page with chromedp, so that the server's dispatch, ordering,
// streaming and cancellation can be observed. Instructions:
//
//	click <css>   clicks the element, reporting progress
//	hold <name>   waits until release(name) or until ctx ends
//	hang          waits inside the browser for a promise that never settles
//	fail          returns an error
type Operations struct {
	mu      sync.Mutex
	events  []string
	holds   map[string]chan struct{}
	started chan string
	// Canceled receives the cause of each held operation that was cancelled.
	Canceled chan error
}

// NewOperations returns an Operations with no operation held.
func NewOperations() *Operations {
	return &Operations{
		holds:    map[string]chan struct{}{},
		started:  make(chan string, 16),
		Canceled: make(chan error, 16),
	}
}

func (e *Operations) record(ev string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
}

// History lists the starts and ends of the operations so far.
func (e *Operations) History() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

func (e *Operations) hold(name string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.holds[name] == nil {
		e.holds[name] = make(chan struct{})
	}
	return e.holds[name]
}

// Release ends the operation held under name.
func (e *Operations) Release(name string) { close(e.hold(name)) }

// WaitStarted waits for the operation name to start.
func (e *Operations) WaitStarted(t *testing.T, name string) {
	t.Helper()
	select {
	case got := <-e.started:
		if got != name {
			t.Fatalf("operation %q started, want %q", got, name)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("operation %q did not start", name)
	}
}

// Act performs the instruction's verb (see Operations).
func (e *Operations) Act(ctx context.Context, page *chromium.Tab, req rpc.ActRequest, progress operations.ProgressFunc) (*rpc.ActResult, rpc.Usage, *cache.Report, error) {
	usage := rpc.Usage{InputTokens: 100, OutputTokens: 7}
	instruction := req.Input.Instruction
	if a := req.Input.Action; a != nil {
		instruction = a.Method + " " + a.Selector
	}
	verb, arg, _ := strings.Cut(instruction, " ")
	switch verb {
	case "click":
		e.record("start click " + arg)
		e.started <- "click " + arg
		progress(rpc.LogLine{Category: "action", Message: "clicking " + arg, Level: rpc.LogLevelInfo})
		if err := chromedp.Run(page.Context(), chromedp.Click(arg, chromedp.ByQuery)); err != nil {
			return nil, usage, nil, fmt.Errorf("clicking %s: %w", arg, err)
		}
		progress(rpc.LogLine{Category: "action", Message: "clicked " + arg, Level: rpc.LogLevelInfo,
			Auxiliary: map[string]rpc.AuxiliaryValue{"selector": {Value: arg, Type: "string"}}})
		e.record("end click " + arg)
		return &rpc.ActResult{
			Success:           true,
			Message:           "clicked " + arg,
			ActionDescription: "click " + arg,
			Actions:           []rpc.Action{{Selector: arg, Description: "the element", Method: "click"}},
		}, usage, nil, nil
	case "hold":
		e.record("start hold " + arg)
		e.started <- "hold " + arg
		progress(rpc.LogLine{Category: "action", Message: "holding " + arg, Level: rpc.LogLevelInfo})
		select {
		case <-e.hold(arg):
			e.record("end hold " + arg)
			return &rpc.ActResult{Success: true, Message: "held " + arg}, usage, nil, nil
		case <-ctx.Done():
			e.record("canceled hold " + arg)
			e.Canceled <- context.Cause(ctx)
			return nil, usage, nil, ctx.Err()
		}
	case "hang":
		e.started <- "hang"
		err := chromedp.Run(ctx, chromedp.Evaluate(`new Promise(() => {})`, nil, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}))
		return nil, usage, nil, fmt.Errorf("waiting in the page: %w", err)
	case "fail":
		progress(rpc.LogLine{Category: "action", Message: "about to fail", Level: rpc.LogLevelError})
		return nil, usage, nil, fmt.Errorf("the element is not there")
	}
	return nil, usage, nil, rpc.Errorf(rpc.CodeBadRequest, "the test engine does not know %q", verb)
}

// Observe lists the page's buttons as clicks.
func (e *Operations) Observe(ctx context.Context, page *chromium.Tab, req rpc.ObserveRequest, progress operations.ProgressFunc) ([]rpc.Action, rpc.Usage, *cache.Report, error) {
	var actions []rpc.Action
	err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('button')].map(b => ({selector: '#' + b.id, description: b.textContent, method: 'click'}))`, &actions))
	return actions, rpc.Usage{InputTokens: 50}, nil, err
}

// Extract returns the page's title.
func (e *Operations) Extract(ctx context.Context, page *chromium.Tab, req rpc.ExtractRequest, progress operations.ProgressFunc) (json.RawMessage, rpc.Usage, *cache.Report, error) {
	var title string
	if err := chromedp.Run(ctx, chromedp.Title(&title)); err != nil {
		return nil, rpc.Usage{}, nil, err
	}
	out, err := json.Marshal(map[string]string{"extraction": title})
	return out, rpc.Usage{InputTokens: 20, OutputTokens: 5}, nil, err
}

// Navigate is the runner's navigate.
func (e *Operations) Navigate(ctx context.Context, page *chromium.Tab, req rpc.NavigateRequest, progress operations.ProgressFunc) (*rpc.NavigateResult, error) {
	return operations.NewAutomation(nil, nil).Navigate(ctx, page, req, progress)
}

// Agent runs the instruction's steps, separated by ";", each a verb of
// Act's ("click <css>", "hold <name>", "fail"), one agent step each, and
// reports each step as it ends.
func (e *Operations) Agent(ctx context.Context, page *chromium.Tab, req rpc.AgentTaskRequest, onStep operations.AgentStepFunc) (*rpc.AgentResult, rpc.Usage, error) {
	var usage rpc.Usage
	for i, instruction := range strings.Split(req.Instruction, ";") {
		instruction = strings.TrimSpace(instruction)
		start := time.Now()
		res, u, _, err := e.Act(ctx, page, Act(instruction), func(rpc.LogLine) {})
		usage = usage.Add(u)
		if err != nil {
			return nil, usage, err
		}
		if onStep != nil {
			onStep(i, rpc.AgentAction{Type: "act", Action: res.Message, Instruction: instruction, TimeMs: time.Since(start).Milliseconds()}, usage)
		}
	}
	return &rpc.AgentResult{Success: true, Completed: true, Message: "done"}, usage, nil
}

// Act is an act request for instruction.
func Act(instruction string) rpc.ActRequest {
	return rpc.ActRequest{Input: rpc.ActInput{Instruction: instruction}}
}
