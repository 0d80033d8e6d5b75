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

	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/engine/page"
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
	tabCtx   context.Context
	tab      *page.Page
	targetID target.ID
	// egress is the browser's egress proxy, nil when attached: what it
	// refused tells a failed navigation's cause.
	egress *egress.Proxy
	settle time.Duration
}

// Context is a chromedp context bound to the page tab for this call:
// chromedp.Run(page.Context(), ...) acts on the page, and stops when the
// call ends. A call's actions run on it.
func (p *Page) Context() context.Context { return p.ctx }

// TabContext is the tab's long-lived chromedp context, which lives as long
// as the browser: for state that outlasts one call (event listeners). A
// call's actions run on Context().
func (p *Page) TabContext() context.Context { return p.tabCtx }

// TargetID is the DevTools target id of the page's tab; its main frame has
// the same id.
func (p *Page) TargetID() target.ID { return p.targetID }

// DOMSettleTimeout is how long the session wants operations to wait for the
// DOM to settle (spec.domSettleTimeoutMs), 0 when it did not say.
func (p *Page) DOMSettleTimeout() time.Duration { return p.settle }

// automation returns engine/page's handle on the tab: attached once, with
// TabContext, when the browser started, so that its network tracking (which
// Settle reads) has seen every request of the tab, including those started
// before this call.
func (p *Page) automation() (*page.Page, error) {
	if p.tab == nil {
		return nil, rpc.Errorf(rpc.CodeInternal, "the page is not attached to the automation engine")
	}
	return p.tab, nil
}
