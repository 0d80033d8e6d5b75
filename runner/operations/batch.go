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
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/engine/batch"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// The runner's side of a batch (rpc.BatchPath): the requests of the
// operations a script makes, as the RPC's, so that they run through the
// same Interface as the RPC's own calls; their results as the script sees
// them; and the session's pages, by target id.

// BatchActRequest is the act request of a script's batch.act on page,
// with the batch's defaults (its model, for options that name none, and
// its per-call settings).
func BatchActRequest(b *rpc.BatchRequest, page string, in batch.ActInput, opts batch.Options) rpc.ActRequest {
	req := rpc.ActRequest{
		Options: rpc.ActOptions{
			Model:           batchModel(opts.Model, b.Model),
			Variables:       batchVariables(opts.Variables),
			Timeout:         batchTimeout(opts.Timeout),
			Selector:        opts.Selector,
			IgnoreSelectors: opts.IgnoreSelectors,
			SelfHeal:        b.SelfHeal,
			CallSettings:    b.CallSettings,
		},
		FrameID: page,
	}
	if a := in.Action; a != nil {
		req.Input.Action = &rpc.Action{Selector: a.Selector, Description: a.Description, Method: a.Method, Arguments: a.Arguments}
	} else {
		req.Input.Instruction = in.Instruction
	}
	return req
}

// BatchObserveRequest is the observe request of a script's batch.observe.
func BatchObserveRequest(b *rpc.BatchRequest, page, instruction string, opts batch.Options) rpc.ObserveRequest {
	return rpc.ObserveRequest{
		Instruction: instruction,
		Options: rpc.ObserveOptions{
			Model:           batchModel(opts.Model, b.Model),
			Variables:       batchVariables(opts.Variables),
			Timeout:         batchTimeout(opts.Timeout),
			Selector:        opts.Selector,
			IgnoreSelectors: opts.IgnoreSelectors,
			CallSettings:    b.CallSettings,
		},
		FrameID: page,
	}
}

// BatchExtractRequest is the extract request of a script's batch.extract.
func BatchExtractRequest(b *rpc.BatchRequest, page, instruction string, schema json.RawMessage, opts batch.Options) rpc.ExtractRequest {
	req := rpc.ExtractRequest{
		Instruction: instruction,
		Schema:      schema,
		Options: rpc.ExtractOptions{
			Model:           batchModel(opts.Model, b.Model),
			Timeout:         batchTimeout(opts.Timeout),
			Selector:        opts.Selector,
			IgnoreSelectors: opts.IgnoreSelectors,
			CallSettings:    b.CallSettings,
		},
		FrameID: page,
	}
	if opts.Screenshot {
		req.Options.Screenshot = &opts.Screenshot
	}
	return req
}

// batchModel is the model of a script's call: its own, else the batch's
// default (nil: the session's).
func batchModel(m *batch.Model, def *rpc.ModelConfig) *rpc.ModelConfig {
	if m == nil {
		return def
	}
	return &rpc.ModelConfig{ModelName: m.ModelName, APIKey: m.APIKey, BaseURL: m.BaseURL, Headers: m.Headers}
}

func batchVariables(vars map[string]batch.Variable) rpc.Variables {
	if len(vars) == 0 {
		return nil
	}
	out := make(rpc.Variables, len(vars))
	for name, v := range vars {
		out[name] = rpc.Variable{Value: v.Value, Description: v.Description}
	}
	return out
}

// batchTimeout is a timeout as the RPC's options.timeout: milliseconds,
// nil for none.
func batchTimeout(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	ms := float64(d) / float64(time.Millisecond)
	return &ms
}

// BatchMetadata is the metadata of a script's operation: its action id in
// the session's history and its usage. The runner has no cache lookup yet:
// the status is DISABLED.
func BatchMetadata(actionID string, u rpc.Usage) batch.Metadata {
	return batch.Metadata{
		Cache:    batch.CacheMetadata{Status: "DISABLED"},
		ActionID: actionID,
		Usage:    BatchUsage(u),
	}
}

// BatchUsage is an RPC usage as a batch's.
func BatchUsage(u rpc.Usage) batch.Usage {
	return batch.Usage{
		InputTokens:       float64(u.InputTokens),
		OutputTokens:      float64(u.OutputTokens),
		ReasoningTokens:   float64(u.ReasoningTokens),
		CachedInputTokens: float64(u.CachedInputTokens),
		InferenceTimeMs:   float64(u.InferenceTimeMs),
	}
}

// RPCUsage is a batch's usage as the RPC's.
func RPCUsage(u batch.Usage) rpc.Usage {
	return rpc.Usage{
		InputTokens:       int64(u.InputTokens),
		OutputTokens:      int64(u.OutputTokens),
		ReasoningTokens:   int64(u.ReasoningTokens),
		CachedInputTokens: int64(u.CachedInputTokens),
		InferenceTimeMs:   int64(u.InferenceTimeMs),
	}
}

// BatchActions are actions as a script sees them.
func BatchActions(actions []rpc.Action) []batch.Action {
	out := make([]batch.Action, 0, len(actions))
	for _, a := range actions {
		out = append(out, batch.Action{Selector: a.Selector, Description: a.Description, Method: a.Method, Arguments: a.Arguments})
	}
	return out
}

// BatchPages keeps the order of a session's pages (tabs) for one batch:
// DevTools lists targets in no particular order, and a script's
// context.pages() should answer the same way each time. The order is the
// caller's (the pages it knows, oldest first), then the pages the batch
// opened, then any other in the order the batch first saw it.
type BatchPages struct {
	mu    sync.Mutex
	order []string
}

// NewBatchPages starts the order with the caller's pages, oldest first.
func NewBatchPages(known []string) *BatchPages {
	return &BatchPages{order: slices.Clone(known)}
}

// Pages lists the browser's pages: the page targets of the browser ctx's
// chromedp context belongs to, by id and in the batch's order.
func (p *BatchPages) Pages(ctx context.Context) ([]target.Info, error) {
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the pages: %w", err)
	}
	byID := map[string]target.Info{}
	for _, in := range infos {
		if isTab(in) {
			byID[string(in.TargetID)] = *in
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, in := range infos {
		if id := string(in.TargetID); isTab(in) && !slices.Contains(p.order, id) {
			p.order = append(p.order, id)
		}
	}
	out := make([]target.Info, 0, len(byID))
	for _, id := range p.order {
		if in, ok := byID[id]; ok {
			out = append(out, in)
		}
	}
	return out, nil
}

// Page is one page's target info; an error when no page has id.
func (p *BatchPages) Page(ctx context.Context, id string) (target.Info, error) {
	pages, err := p.Pages(ctx)
	if err != nil {
		return target.Info{}, err
	}
	for _, in := range pages {
		if string(in.TargetID) == id {
			return in, nil
		}
	}
	return target.Info{}, rpc.Errorf(rpc.CodeBadRequest, "no page %s: it is not one of the session's pages, or it has closed", id)
}

// Open opens a blank page (tab) in the browser of ctx's chromedp context
// and returns its id, last in the order. The caller loads what the script
// asked for through navigate, whose URL rules and egress gate apply.
func (p *BatchPages) Open(ctx context.Context) (string, error) {
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil {
		return "", rpc.Errorf(rpc.CodeInternal, "opening a page: no browser in the context")
	}
	id, err := target.CreateTarget("about:blank").Do(cdp.WithExecutor(ctx, c.Browser))
	if err != nil {
		return "", fmt.Errorf("opening a page: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.order = append(p.order, string(id))
	return string(id), nil
}

// isTab reports whether a target is a tab: a page, not a prerender or
// other kind of page target.
func isTab(in *target.Info) bool { return in.Type == "page" && in.Subtype == "" }

// Close closes a page the batch opened, best effort: a page that is gone
// is what the caller wanted.
func (p *BatchPages) Close(ctx context.Context, id string) {
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = target.CloseTarget(target.ID(id)).Do(cdp.WithExecutor(cctx, c.Browser))
}
