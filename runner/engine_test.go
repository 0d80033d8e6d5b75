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

package runner

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

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// One browser serves the RPC tests that do not need a browser of their own
// (crash and shutdown tests start theirs): it is started on first use and
// closed when the package's tests end.
var shared struct {
	once    sync.Once
	browser *Browser
	log     *syncBuffer
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.browser != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := shared.browser.Close(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared browser:", err)
			code = 1
		}
		cancel()
	}
	os.Exit(code)
}

func sharedBrowser(t testing.TB) *Browser {
	t.Helper()
	shared.once.Do(func() {
		shared.log = &syncBuffer{}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		shared.browser, shared.err = StartBrowser(ctx, testConfig(nil), slogTo(shared.log))
	})
	if shared.err != nil {
		t.Fatalf("starting the shared browser: %v", shared.err)
	}
	if err := shared.browser.Err(); err != nil {
		t.Fatalf("the shared browser crashed: %v", err)
	}
	return shared.browser
}

// testEngine is a test double of the engine: it does real, simple work on
// the page with chromedp, so that the server's dispatch, ordering,
// streaming and cancellation can be observed. Instructions:
//
//	click <css>   clicks the element, reporting progress
//	hold <name>   waits until release(name) or until ctx ends
//	hang          waits inside the browser for a promise that never settles
//	fail          returns an error
type testEngine struct {
	mu       sync.Mutex
	events   []string
	holds    map[string]chan struct{}
	started  chan string
	canceled chan error
}

func newTestEngine() *testEngine {
	return &testEngine{
		holds:    map[string]chan struct{}{},
		started:  make(chan string, 16),
		canceled: make(chan error, 16),
	}
}

func (e *testEngine) record(ev string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
}

func (e *testEngine) history() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

func (e *testEngine) hold(name string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.holds[name] == nil {
		e.holds[name] = make(chan struct{})
	}
	return e.holds[name]
}

func (e *testEngine) release(name string) { close(e.hold(name)) }

// waitStarted waits for the operation name to start.
func (e *testEngine) waitStarted(t *testing.T, name string) {
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

func (e *testEngine) Act(ctx context.Context, page *Page, req rpc.ActRequest, progress ProgressFunc) (*rpc.ActResult, rpc.Usage, error) {
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
			return nil, usage, fmt.Errorf("clicking %s: %w", arg, err)
		}
		progress(rpc.LogLine{Category: "action", Message: "clicked " + arg, Level: rpc.LogLevelInfo,
			Auxiliary: map[string]rpc.AuxiliaryValue{"selector": {Value: arg, Type: "string"}}})
		e.record("end click " + arg)
		return &rpc.ActResult{
			Success:           true,
			Message:           "clicked " + arg,
			ActionDescription: "click " + arg,
			Actions:           []rpc.Action{{Selector: arg, Description: "the element", Method: "click"}},
		}, usage, nil
	case "hold":
		e.record("start hold " + arg)
		e.started <- "hold " + arg
		progress(rpc.LogLine{Category: "action", Message: "holding " + arg, Level: rpc.LogLevelInfo})
		select {
		case <-e.hold(arg):
			e.record("end hold " + arg)
			return &rpc.ActResult{Success: true, Message: "held " + arg}, usage, nil
		case <-ctx.Done():
			e.record("canceled hold " + arg)
			e.canceled <- context.Cause(ctx)
			return nil, usage, ctx.Err()
		}
	case "hang":
		e.started <- "hang"
		err := chromedp.Run(ctx, chromedp.Evaluate(`new Promise(() => {})`, nil, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}))
		return nil, usage, fmt.Errorf("waiting in the page: %w", err)
	case "fail":
		progress(rpc.LogLine{Category: "action", Message: "about to fail", Level: rpc.LogLevelError})
		return nil, usage, fmt.Errorf("the element is not there")
	}
	return nil, usage, rpc.Errorf(rpc.CodeBadRequest, "the test engine does not know %q", verb)
}

func (e *testEngine) Observe(ctx context.Context, page *Page, req rpc.ObserveRequest, progress ProgressFunc) ([]rpc.Action, rpc.Usage, error) {
	var actions []rpc.Action
	err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('button')].map(b => ({selector: '#' + b.id, description: b.textContent, method: 'click'}))`, &actions))
	return actions, rpc.Usage{InputTokens: 50}, err
}

func (e *testEngine) Extract(ctx context.Context, page *Page, req rpc.ExtractRequest, progress ProgressFunc) (json.RawMessage, rpc.Usage, error) {
	var title string
	if err := chromedp.Run(ctx, chromedp.Title(&title)); err != nil {
		return nil, rpc.Usage{}, err
	}
	out, err := json.Marshal(map[string]string{"extraction": title})
	return out, rpc.Usage{InputTokens: 20, OutputTokens: 5}, err
}

func (e *testEngine) Navigate(ctx context.Context, page *Page, req rpc.NavigateRequest, progress ProgressFunc) (*rpc.NavigateResult, error) {
	return Navigate(ctx, page, req, progress)
}
