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
	"net/http"
	"time"
)

// cloudRuntime runs an instance's operations in the session's runner: one
// /v1 call each, on the page the call names (its DevTools target id is the
// frameId: the runner attaches to a tab the caller opened through the
// session's cdpUrl).
type cloudRuntime struct {
	api       *cloudAPI
	sessionID string
	cfg       *instanceConfig
}

var _ runtime = (*cloudRuntime)(nil)

func (r *cloudRuntime) act(ctx context.Context, p *Page, call actCall) (*ActResult, error) {
	opts := r.options(call.opCall)
	// The instance's selfHeal governs its acts when it asks for it; the
	// session's holds otherwise.
	opts.SelfHeal = trueOrNil(r.cfg.selfHeal)
	body := actWire{Options: opts, FrameID: pageID(p)}
	if call.action != nil {
		body.Input = call.action
	} else {
		body.Input = call.instruction
	}
	var d opData[actResultWire]
	if err := r.api.do(ctx, http.MethodPost, sessionPath(r.sessionID, "act"), body, &d); err != nil {
		return nil, fmt.Errorf("act: %w", err)
	}
	actions := d.Result.Actions
	if actions == nil {
		actions = []Action{}
	}
	return &ActResult{
		Data: ActData{
			ActionDescription: d.Result.ActionDescription,
			Actions:           actions,
			Message:           d.Result.Message,
			Success:           d.Result.Success,
		},
		Metadata: d.Metadata.metadata(d.ActionID),
	}, nil
}

func (r *cloudRuntime) observe(ctx context.Context, p *Page, call observeCall) (*ObserveResult, error) {
	body := observeWire{Instruction: call.instruction, Options: r.options(call.opCall), FrameID: pageID(p)}
	var d opData[[]Action]
	if err := r.api.do(ctx, http.MethodPost, sessionPath(r.sessionID, "observe"), body, &d); err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	actions := d.Result
	if actions == nil {
		actions = []Action{}
	}
	return &ObserveResult{Data: actions, Metadata: d.Metadata.metadata(d.ActionID)}, nil
}

func (r *cloudRuntime) extract(ctx context.Context, p *Page, call extractCall) (json.RawMessage, Metadata, error) {
	opts := r.options(call.opCall)
	// Variables are not extract's on the wire.
	opts.Variables = nil
	opts.Screenshot = trueOrNil(call.screenshot)
	body := extractWire{Instruction: call.instruction, Schema: call.schema, Options: opts, FrameID: pageID(p)}
	var d opData[json.RawMessage]
	if err := r.api.do(ctx, http.MethodPost, sessionPath(r.sessionID, "extract"), body, &d); err != nil {
		return nil, Metadata{}, fmt.Errorf("extract: %w", err)
	}
	return d.Result, d.Metadata.metadata(d.ActionID), nil
}

// close releases nothing: the instance holds no connection of its own.
func (r *cloudRuntime) close(context.Context) error { return nil }

// options are the wire options of a call: its model, variables, timeout
// and scope, and the instance's settings the session was started without
// (systemPrompt, domSettleTimeoutMs) when the instance gives them.
func (r *cloudRuntime) options(call opCall) opOptionsWire {
	o := opOptionsWire{Selector: call.selector, IgnoreSelectors: call.ignore, Cache: cacheWire(call.cache)}
	if m := call.model; m != nil {
		o.Model = &modelWire{ModelName: m.ModelName, APIKey: m.APIKey, BaseURL: m.BaseURL, Headers: m.Headers}
	}
	if len(call.variables) > 0 {
		o.Variables = make(map[string]variableWire, len(call.variables))
		for name, v := range call.variables {
			o.Variables[name] = variableWire(v)
		}
	}
	if call.timeout > 0 {
		ms := float64(call.timeout) / float64(time.Millisecond)
		o.Timeout = &ms
	}
	if r.cfg.systemPrompt != "" {
		sp := r.cfg.systemPrompt
		o.SystemPrompt = &sp
	}
	if d := r.cfg.domSettleTimeout; d > 0 {
		ms := int((d + time.Millisecond - 1) / time.Millisecond)
		o.DOMSettleTimeoutMs = &ms
	}
	return o
}

// pageID is the frameId of an operation on p: the page's target id, which
// is its main frame's id; "" (the session's own tab) for none.
func pageID(p *Page) string {
	if p == nil {
		return ""
	}
	return p.ID()
}
