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
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/cached"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/gateway"
)

// localDriver is the driver of a local handle: the engine runs in this
// process, on the page's DevTools target.
type localDriver struct {
	b *Browser
	// proc is the launched browser; nil for a connected one.
	proc *process
}

func (d *localDriver) open(_ context.Context, cfg *instanceConfig) (runtime, error) {
	svc, err := localServices(cfg)
	if err != nil {
		return nil, err
	}
	r := &localRuntime{b: d.b, cfg: cfg, svc: svc, log: cfg.logger.With(logCategory, "engine")}
	switch {
	case cfg.model != nil:
		if r.model, err = r.newModel("CreateOptions.Model", cfg.model); err != nil {
			return nil, err
		}
	case cfg.generate == nil && svc.gateway != nil:
		// No model of the instance's own: the gateway's default serves,
		// as the spec has it for gateway sessions.
		r.model = svc.gateway.Client(gateway.ModelAuto)
	}
	return r, nil
}

// newModel is the client of m: through the service's gateway for the
// model auto, else the provider's own.
func (r *localRuntime) newModel(field string, m *ModelConfig) (llm.Client, error) {
	if m.ModelName == gateway.ModelAuto {
		if r.svc.gateway == nil {
			return nil, invalid(field+".ModelName", "auto names the service's model gateway, which needs CreateOptions.APIKey and APIURL (or $%s and $%s)", EnvAPIKey, EnvAPIURL)
		}
		return r.svc.gateway.Client(gateway.ModelAuto), nil
	}
	return newModelClient(field, m)
}

func (d *localDriver) close(ctx context.Context) error {
	if d.proc == nil {
		return nil
	}
	return d.proc.stop(ctx)
}

// localRuntime runs an instance's operations with the engine in-process.
// It holds nothing between calls but the default model's client: an
// engine is made for each call, on the page's attachment, which the
// handle keeps.
type localRuntime struct {
	b     *Browser
	cfg   *instanceConfig
	svc   *managedServices
	model llm.Client
	log   *slog.Logger
}

// modelFor is the model of a call whose ModelConfig in effect is m: the
// Generate callback when the instance has one, else the instance's
// default client or one made for the call's. nil when there is none.
func (r *localRuntime) modelFor(m *ModelConfig) (llm.Client, error) {
	switch {
	case r.cfg.generate != nil:
		g := &generateModel{fn: r.cfg.generate}
		if m != nil {
			g.name = m.ModelName
		}
		return g, nil
	case m == nil, m == r.cfg.model:
		// The instance's: its model's client, the gateway's default for
		// an instance without one, or none.
		return r.model, nil
	}
	return r.newModel("Model", m)
}

// engineFor is an engine on page p for a call.
func (r *localRuntime) engineFor(ctx context.Context, p *Page, oc opCall) (*engine.Engine, llm.Client, error) {
	model, err := r.modelFor(oc.model)
	if err != nil {
		return nil, nil, err
	}
	pg, err := p.attach(ctx)
	if err != nil {
		return nil, nil, err
	}
	e := engine.New(pg, engine.Options{
		Model:            model,
		SystemPrompt:     r.cfg.systemPrompt,
		SelfHeal:         r.cfg.selfHeal,
		DOMSettleTimeout: r.cfg.domSettleTimeout,
		Logger:           r.log,
	})
	return e, model, nil
}

// metadata is a local call's: what the service's cache did for it (see
// managedServices), its usage, and a new action id.
func metadata(u llm.Usage, rep cache.Report) Metadata {
	md := Metadata{Cache: CacheMetadata{
		Status:     CacheStatus(rep.Status),
		Count:      int(rep.Count),
		Threshold:  int(rep.Threshold),
		MissReason: rep.MissReason,
	}, ActionID: uuid.NewString(), Usage: usageOf(u)}
	if md.Cache.Status == "" {
		md.Cache.Status = CacheStatusDISABLED
	}
	if t := rep.TokensSaved; t != nil {
		md.Cache.TokensSaved = &TokensSaved{InputTokens: float64(t.InputTokens), OutputTokens: float64(t.OutputTokens), TotalTokens: float64(t.TotalTokens)}
	}
	return md
}

func (r *localRuntime) act(ctx context.Context, p *Page, call actCall) (*ActResult, error) {
	e, _, err := r.engineFor(ctx, p, call.opCall)
	if err != nil {
		return nil, err
	}
	opts := engine.ActOptions{
		Instruction:     call.instruction,
		Selector:        call.selector,
		IgnoreSelectors: call.ignore,
		Variables:       engineVariables(call.variables),
		Timeout:         call.timeout,
	}
	if a := call.action; a != nil {
		opts.Action = &engine.Action{Selector: a.Selector, Description: a.Description, Method: a.Method, Arguments: a.Arguments}
	}
	res, rep, err := cached.Act(ctx, e, r.svc.cache, r.svc.setting(call.cache), opts)
	if err != nil {
		return nil, localError("act", err)
	}
	return &ActResult{
		Data: ActData{
			ActionDescription: res.ActionDescription,
			Actions:           clientActions(res.Actions),
			Message:           res.Message,
			Success:           res.Success,
		},
		Metadata: metadata(res.Usage, rep),
	}, nil
}

func (r *localRuntime) observe(ctx context.Context, p *Page, call observeCall) (*ObserveResult, error) {
	e, _, err := r.engineFor(ctx, p, call.opCall)
	if err != nil {
		return nil, err
	}
	res, rep, err := cached.Observe(ctx, e, r.svc.cache, r.svc.setting(call.cache), engine.ObserveOptions{
		Instruction:     call.instruction,
		Selector:        call.selector,
		IgnoreSelectors: call.ignore,
		Variables:       engineVariables(call.variables),
		Timeout:         call.timeout,
	})
	if err != nil {
		return nil, localError("observe", err)
	}
	return &ObserveResult{Data: clientActions(res.Actions), Metadata: metadata(res.Usage, rep)}, nil
}

func (r *localRuntime) extract(ctx context.Context, p *Page, call extractCall) (json.RawMessage, Metadata, error) {
	e, _, err := r.engineFor(ctx, p, call.opCall)
	if err != nil {
		return nil, Metadata{}, err
	}
	res, rep, err := cached.Extract(ctx, e, r.svc.cache, r.svc.setting(call.cache), engine.ExtractOptions{
		Instruction:     call.instruction,
		Schema:          call.schema,
		Selector:        call.selector,
		IgnoreSelectors: call.ignore,
		Screenshot:      call.screenshot,
		Timeout:         call.timeout,
	})
	if err != nil {
		return nil, Metadata{}, localError("extract", err)
	}
	return res.Data, metadata(res.Usage, rep), nil
}

func (r *localRuntime) close(context.Context) error { return nil }

// localError gives an engine error the client's meaning.
func localError(op string, err error) error {
	switch {
	case errors.Is(err, engine.ErrNoModel):
		return fmt.Errorf("%w: %s needs a model: set CreateOptions.Model or CreateOptions.Generate, or the call's Model", ErrNoModel, op)
	case errors.Is(err, engine.ErrInvalidArgument):
		return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, op, strings.TrimPrefix(err.Error(), engine.ErrInvalidArgument.Error()+": "))
	case errors.Is(err, engine.ErrSchemaViolation):
		return fmt.Errorf("%w: %s", ErrSchemaViolation, strings.TrimPrefix(err.Error(), engine.ErrSchemaViolation.Error()+": "))
	}
	return fmt.Errorf("%s: %w", op, err)
}

// engineVariables are Variables as the engine takes them.
func engineVariables(vars Variables) map[string]engine.Variable {
	if len(vars) == 0 {
		return nil
	}
	out := make(map[string]engine.Variable, len(vars))
	for name, v := range vars {
		out[name] = engine.Variable{Value: v.Value, Description: v.Description}
	}
	return out
}

// clientActions are the engine's actions as the client's.
func clientActions(in []engine.Action) []Action {
	out := make([]Action, len(in))
	for i, a := range in {
		out[i] = Action{Selector: a.Selector, Description: a.Description, Method: a.Method, Arguments: a.Arguments}
	}
	return out
}
