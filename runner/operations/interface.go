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

package operations

import (
	"context"
	"encoding/json"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// ProgressFunc reports one progress line of an operation. A streaming
// caller receives it at once; otherwise it goes to the runner's debug log.
// It is safe to call from any goroutine, and does nothing once the
// operation has returned.
type ProgressFunc func(rpc.LogLine)

// Interface performs the session's operations on its page. The runner calls one
// method at a time, in the order the calls arrived, so an implementation needs no
// locking of its own for the page. ctx is done when the caller goes away
// (for Agent: when the task is cancelled or passes its deadline), the
// call's timeout passes, the runner stops or the browser dies; it is
// also the page's chromedp context (Tab.Context returns the same), so
// chromedp.Run(ctx, ...) acts on the page. An error that is an *rpc.Error
// keeps its code; any other becomes ENGINE_ERROR, or TIMEOUT,
// BROWSER_CRASHED, ... when ctx says why it ended.
//
// Act, Observe and Extract return what the server-side cache did for the
// call (req.Options.Cache), which the runner answers in rpc.Result's
// Cache; nil is DISABLED.
type Interface interface {
	Act(ctx context.Context, tab *chromium.Tab, req rpc.ActRequest, progress ProgressFunc) (*rpc.ActResult, rpc.Usage, *cache.Report, error)
	Observe(ctx context.Context, tab *chromium.Tab, req rpc.ObserveRequest, progress ProgressFunc) ([]rpc.Action, rpc.Usage, *cache.Report, error)
	// Extract returns the extracted value: valid against req.Schema when
	// there is one, else {"extraction": ...} or {"pageText": ...}.
	Extract(ctx context.Context, tab *chromium.Tab, req rpc.ExtractRequest, progress ProgressFunc) (json.RawMessage, rpc.Usage, *cache.Report, error)
	Navigate(ctx context.Context, tab *chromium.Tab, req rpc.NavigateRequest, progress ProgressFunc) (*rpc.NavigateResult, error)
	// Agent runs an agent task on the page until the agent finishes or
	// ctx ends, calling onStep (when set) after each step with its index
	// (from 0), the step and the usage so far; the run waits for onStep.
	// The usage is what the run's model calls took, returned with an
	// error too. req holds secrets (model keys, variable values) that
	// must not reach a log or an error.
	Agent(ctx context.Context, tab *chromium.Tab, req rpc.AgentTaskRequest, onStep AgentStepFunc) (*rpc.AgentResult, rpc.Usage, error)
}

// AgentStepFunc receives an agent's step: its index (from 0), the step, and
// the usage of the run's model calls so far.
type AgentStepFunc func(index int, step rpc.AgentAction, usage rpc.Usage)
