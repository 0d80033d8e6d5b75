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

package chromium

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Tab is the operations' handle on the session's tab for one call; the
// Browser makes one per call (TabFor).
type Tab struct {
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
// chromedp.Run(tab.Context(), ...) acts on the page, and stops when the
// call ends. A call's actions run on it.
func (t *Tab) Context() context.Context { return t.ctx }

// TabContext is the tab's long-lived chromedp context, which lives as long
// as the browser: for state that outlasts one call (event listeners). A
// call's actions run on Context().
func (t *Tab) TabContext() context.Context { return t.tabCtx }

// TargetID is the DevTools target id of the page's tab; its main frame has
// the same id.
func (t *Tab) TargetID() target.ID { return t.targetID }

// DOMSettleTimeout is how long the session wants operations to wait for the
// DOM to settle (spec.domSettleTimeoutMs), 0 when it did not say.
func (t *Tab) DOMSettleTimeout() time.Duration { return t.settle }

// Automation returns engine/page's handle on the tab: attached once, with
// TabContext, when the browser started, so that its network tracking (which
// Settle reads) has seen every request of the tab, including those started
// before this call.
func (t *Tab) Automation() (*page.Page, error) {
	if t.tab == nil {
		return nil, rpc.Errorf(rpc.CodeInternal, "the page is not attached to the automation engine")
	}
	return t.tab, nil
}

// Egress is the browser's egress proxy, nil when attached: what it refused
// tells a failed navigation's cause.
func (t *Tab) Egress() *egress.Proxy { return t.egress }
