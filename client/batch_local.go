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
	"fmt"

	"github.com/browserfleet/browserfleet/engine/batch"
)

// batch runs a batch in this process: engine/batch's runtime, whose
// operations go through the runtime's own act, observe and extract, as the
// instance's calls do, with the instance's settings, each with a span of
// its own under the batch's. The active page at the end becomes the
// handle's.
func (r *localRuntime) batch(ctx context.Context, call batchCall) (json.RawMessage, map[opGroup]Usage, error) {
	h := &localBatchHost{r: r}
	res, err := batch.Run(ctx, h, batch.Call{
		Source:  call.source,
		Input:   call.input,
		Page:    call.page.ID(),
		Active:  call.active.ID(),
		Timeout: call.timeout,
		Metrics: batch.Metrics(call.metrics),
	})
	if err != nil {
		return nil, nil, batchError(err, call.timeout)
	}
	if err := adoptActivePage(ctx, r.b, res.Active); err != nil {
		return nil, nil, err
	}
	return res.Value, groupUsage(res.Usage), nil
}

// adoptActivePage makes the page id the handle's active page.
func adoptActivePage(ctx context.Context, b *Browser, id string) error {
	p, err := pageByID(ctx, b, id)
	if err != nil {
		return fmt.Errorf("making the batch's active page the handle's: %w", err)
	}
	return b.Context().SetActivePage(ctx, p)
}

// pageByID is the handle's open page id.
func pageByID(ctx context.Context, b *Browser, id string) (*Page, error) {
	pages, err := b.Context().Pages(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range pages {
		if p.ID() == id {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no page %s: it is not one of the handle's pages, or it has closed", id)
}

// localBatchHost is engine/batch's Host for a local handle.
type localBatchHost struct{ r *localRuntime }

var _ batch.Host = (*localBatchHost)(nil)

func (h *localBatchHost) Pages(ctx context.Context) ([]string, error) {
	pages, err := h.r.b.Context().Pages(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(pages))
	for i, p := range pages {
		ids[i] = p.ID()
	}
	return ids, nil
}

func (h *localBatchHost) NewPage(ctx context.Context, url string) (string, error) {
	p, err := h.r.b.Context().NewPage(ctx, url)
	if err != nil {
		return "", err
	}
	return p.ID(), nil
}

func (h *localBatchHost) URL(ctx context.Context, id string) (string, error) {
	p, err := pageByID(ctx, h.r.b, id)
	if err != nil {
		return "", err
	}
	return p.URL(ctx)
}

func (h *localBatchHost) Title(ctx context.Context, id string) (string, error) {
	p, err := pageByID(ctx, h.r.b, id)
	if err != nil {
		return "", err
	}
	return p.Title(ctx)
}

func (h *localBatchHost) Goto(ctx context.Context, id, url string) error {
	p, err := pageByID(ctx, h.r.b, id)
	if err != nil {
		return err
	}
	return p.Goto(ctx, url)
}

func (h *localBatchHost) Act(ctx context.Context, id string, in batch.ActInput, opts batch.Options) (*batch.ActResult, error) {
	p, oc, err := h.prepare(ctx, "act", id, opts)
	if err != nil {
		return nil, err
	}
	call := actCall{opCall: oc, instruction: in.Instruction}
	if a := in.Action; a != nil {
		if err := checkSelector("act: the action's selector", a.Selector); err != nil {
			return nil, err
		}
		call.action = &Action{Selector: a.Selector, Description: a.Description, Method: a.Method, Arguments: a.Arguments}
	}
	ctx, span := startOperation(ctx, h.r.cfg, string(groupAct))
	res, err := h.r.act(ctx, p, call)
	endOperation(span, oc.modelName(), metadataOf(res), err)
	if err != nil {
		return nil, err
	}
	return &batch.ActResult{
		Data: batch.ActData{
			ActionDescription: res.Data.ActionDescription,
			Actions:           batchActions(res.Data.Actions),
			Message:           res.Data.Message,
			Success:           res.Data.Success,
		},
		Metadata: batchMetadata(res.Metadata),
	}, nil
}

func (h *localBatchHost) Observe(ctx context.Context, id, instruction string, opts batch.Options) (*batch.ObserveResult, error) {
	p, oc, err := h.prepare(ctx, "observe", id, opts)
	if err != nil {
		return nil, err
	}
	ctx, span := startOperation(ctx, h.r.cfg, string(groupObserve))
	res, err := h.r.observe(ctx, p, observeCall{opCall: oc, instruction: instruction})
	var md *Metadata
	if res != nil {
		md = &res.Metadata
	}
	endOperation(span, oc.modelName(), md, err)
	if err != nil {
		return nil, err
	}
	return &batch.ObserveResult{Data: batchActions(res.Data), Metadata: batchMetadata(res.Metadata)}, nil
}

func (h *localBatchHost) Extract(ctx context.Context, id, instruction string, schema json.RawMessage, opts batch.Options) (*batch.ExtractResult, error) {
	p, oc, err := h.prepare(ctx, "extract", id, opts)
	if err != nil {
		return nil, err
	}
	ctx, span := startOperation(ctx, h.r.cfg, string(groupExtract))
	data, md, err := h.r.extract(ctx, p, extractCall{opCall: oc, instruction: instruction, schema: schema, screenshot: opts.Screenshot})
	endOperation(span, oc.modelName(), &md, err)
	if err != nil {
		return nil, err
	}
	return &batch.ExtractResult{Data: data, Metadata: batchMetadata(md)}, nil
}

// prepare finds an operation's page and resolves its options against the
// instance as the instance's own calls do: the model and cache setting in
// effect, checked; a scoped call bypasses the cache.
func (h *localBatchHost) prepare(ctx context.Context, op, id string, o batch.Options) (*Page, opCall, error) {
	f := op + ": options."
	cfg := h.r.cfg
	oc := opCall{model: cfg.model, cache: cfg.cache, timeout: o.Timeout, selector: o.Selector, ignore: o.IgnoreSelectors}
	if m := o.Model; m != nil {
		oc.model = &ModelConfig{ModelName: m.ModelName, APIKey: m.APIKey, BaseURL: m.BaseURL, Headers: m.Headers}
		if err := checkModel(f+"model", oc.model, cfg.generate != nil); err != nil {
			return nil, oc, err
		}
	}
	if c := o.Cache; c != nil {
		oc.cache = CacheEnabled(c.Enabled)
		if c.Threshold > 0 {
			oc.cache = CacheWithThreshold(c.Threshold)
		}
	}
	if len(o.Variables) > 0 {
		oc.variables = Variables{}
		for name, v := range o.Variables {
			oc.variables[name] = Variable{Value: v.Value, Description: v.Description}
		}
		if err := checkVariables(f+"variables", oc.variables); err != nil {
			return nil, oc, err
		}
	}
	if oc.selector != "" {
		if err := checkSelector(f+"selector", oc.selector); err != nil {
			return nil, oc, err
		}
	}
	if len(oc.ignore) > maxIgnoreLocators {
		return nil, oc, invalid(f+"ignoreSelectors", "has %d selectors; at most %d", len(oc.ignore), maxIgnoreLocators)
	}
	for i, sel := range oc.ignore {
		if err := checkSelector(fmt.Sprintf("%signoreSelectors[%d]", f, i), sel); err != nil {
			return nil, oc, err
		}
	}
	if oc.selector != "" || len(oc.ignore) > 0 {
		oc.cache = CacheEnabled(false)
	}
	p, err := pageByID(ctx, h.r.b, id)
	if err != nil {
		return nil, oc, err
	}
	return p, oc, nil
}

// metadataOf is an act result's metadata, nil without a result.
func metadataOf(res *ActResult) *Metadata {
	if res == nil {
		return nil
	}
	return &res.Metadata
}

// batchActions are actions as a script sees them.
func batchActions(in []Action) []batch.Action {
	out := make([]batch.Action, len(in))
	for i, a := range in {
		out[i] = batch.Action{Selector: a.Selector, Description: a.Description, Method: a.Method, Arguments: a.Arguments}
	}
	return out
}

// batchMetadata is metadata as a script sees it.
func batchMetadata(md Metadata) batch.Metadata {
	out := batch.Metadata{
		Cache: batch.CacheMetadata{
			Status: string(md.Cache.Status), Count: md.Cache.Count, Threshold: md.Cache.Threshold, MissReason: md.Cache.MissReason,
		},
		ActionID: md.ActionID,
		Usage:    batch.Usage(md.Usage),
	}
	if t := md.Cache.TokensSaved; t != nil {
		out.Cache.TokensSaved = &batch.TokensSaved{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, TotalTokens: t.TotalTokens}
	}
	return out
}
