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
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// ProgressFunc reports one progress line of an operation. A streaming
// caller receives it at once; otherwise it goes to the runner's debug log.
// It is safe to call from any goroutine, and does nothing once the
// operation has returned.
type ProgressFunc func(rpc.LogLine)

// Engine performs the session's operations on its page. The runner calls one
// method at a time, in the order the calls arrived, so an engine needs no
// locking of its own for the page. ctx is done when the caller goes away,
// the call's timeout passes, the runner stops or the browser dies; it is
// also the page's chromedp context (page.Context returns the same), so
// chromedp.Run(ctx, ...) acts on the page. An error that is an *rpc.Error
// keeps its code; any other becomes ENGINE_ERROR, or TIMEOUT,
// BROWSER_CRASHED, ... when ctx says why it ended.
type Engine interface {
	Act(ctx context.Context, page *Page, req rpc.ActRequest, progress ProgressFunc) (*rpc.ActResult, rpc.Usage, error)
	Observe(ctx context.Context, page *Page, req rpc.ObserveRequest, progress ProgressFunc) ([]rpc.Action, rpc.Usage, error)
	// Extract returns the extracted value: valid against req.Schema when
	// there is one, else {"extraction": ...} or {"pageText": ...}.
	Extract(ctx context.Context, page *Page, req rpc.ExtractRequest, progress ProgressFunc) (json.RawMessage, rpc.Usage, error)
	Navigate(ctx context.Context, page *Page, req rpc.NavigateRequest, progress ProgressFunc) (*rpc.NavigateResult, error)
}

// Page is an engine's handle on the session's page for one call.
type Page struct {
	ctx      context.Context
	targetID target.ID
	auth     *proxyAuth
	settle   time.Duration
}

// Context is a chromedp context bound to the page tab for this call:
// chromedp.Run(page.Context(), ...) acts on the page, and stops when the
// call ends.
func (p *Page) Context() context.Context { return p.ctx }

// TargetID is the DevTools target id of the page's tab; its main frame has
// the same id.
func (p *Page) TargetID() target.ID { return p.targetID }

// DOMSettleTimeout is how long the session wants operations to wait for the
// DOM to settle (spec.domSettleTimeoutMs), 0 when it did not say.
func (p *Page) DOMSettleTimeout() time.Duration { return p.settle }

// NoEngine is the engine of a runner built without one: it navigates (see
// Navigate) and answers act, observe and extract with ENGINE_UNAVAILABLE.
// It stands in until the engine packages (page snapshot, prompts, actions,
// model providers) are wired into cmd/runner; it never pretends to have
// done an operation it cannot do.
type NoEngine struct{}

var _ Engine = NoEngine{}

func engineUnavailable(op string) error {
	return rpc.Errorf(rpc.CodeEngineUnavailable, "%s needs the automation engine, which this runner build does not include yet", op)
}

// Act answers ENGINE_UNAVAILABLE.
func (NoEngine) Act(context.Context, *Page, rpc.ActRequest, ProgressFunc) (*rpc.ActResult, rpc.Usage, error) {
	return nil, rpc.Usage{}, engineUnavailable("act")
}

// Observe answers ENGINE_UNAVAILABLE.
func (NoEngine) Observe(context.Context, *Page, rpc.ObserveRequest, ProgressFunc) ([]rpc.Action, rpc.Usage, error) {
	return nil, rpc.Usage{}, engineUnavailable("observe")
}

// Extract answers ENGINE_UNAVAILABLE.
func (NoEngine) Extract(context.Context, *Page, rpc.ExtractRequest, ProgressFunc) (json.RawMessage, rpc.Usage, error) {
	return nil, rpc.Usage{}, engineUnavailable("extract")
}

// Navigate navigates with the runner's own Navigate.
func (NoEngine) Navigate(ctx context.Context, page *Page, req rpc.NavigateRequest, progress ProgressFunc) (*rpc.NavigateResult, error) {
	return Navigate(ctx, page, req, progress)
}
