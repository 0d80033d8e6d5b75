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
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/agent"
	"github.com/browserfleet/browserfleet/engine/cached"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/search"
)

// Automation is the runner's Engine: act, observe and extract by
// engine, navigate by Navigate. It turns the RPC's requests into the
// engine's options and the engine's results and errors into the RPC's.
type Automation struct {
	log      *slog.Logger
	models   *models
	system   string
	selfHeal bool
	// search is the operator's web search, for the agent's search tool;
	// nil: none.
	search search.Searcher
	// cache is the server-side cache, through the API; nil: every call
	// is DISABLED.
	cache cache.Store
}

var _ Interface = (*Automation)(nil)

// NewAutomation returns the engine of the session cfg describes: its model
// (with the secrets cfg holds), systemPrompt and selfHeal. A nil cfg gives
// an engine without a default model: calls must bring options.model, and
// those that need no model (actions, navigate, pageText) work as usual.
func NewAutomation(cfg *config.Config, log *slog.Logger) *Automation {
	if log == nil {
		log = slog.Default()
	}
	a := &Automation{log: log}
	var def rpc.ModelConfig
	dialer := &egress.Dialer{}
	if cfg != nil {
		def = cfg.DefaultModel()
		a.system = cfg.Spec.SystemPrompt
		a.selfHeal = ptr.Deref(cfg.Spec.SelfHeal, false)
		dialer.Policy, dialer.Resolver = cfg.Egress, cfg.Resolver
		a.search = cfg.Search
		a.cache = cfg.Cache
	}
	var gw *gateway.Endpoint
	if cfg != nil {
		gw = cfg.Gateway
	}
	a.models = newModels(def, dialer, gw, log)
	return a
}

// engineFor returns an engine on the tab's engine/page handle, which the
// browser attached once for the tab's life, with the session's settings
// as the call's settings override them. An engine holds no state of its
// own beyond its options, so one per call costs nothing and lets a call
// bring its own systemPrompt, selfHeal and domSettleTimeoutMs.
func (a *Automation) engineFor(p *chromium.Tab, set rpc.CallSettings, selfHeal *bool) (*engine.Engine, error) {
	tab, err := p.Automation()
	if err != nil {
		return nil, err
	}
	var model llm.Client
	if a.models.client != nil {
		model = a.models.client
	}
	opts := engine.Options{
		Model:            model,
		SystemPrompt:     a.system,
		SelfHeal:         ptr.Deref(selfHeal, a.selfHeal),
		DOMSettleTimeout: p.DOMSettleTimeout(),
		Logger:           a.log.With("component", "engine"),
	}
	if set.SystemPrompt != nil {
		opts.SystemPrompt = *set.SystemPrompt
	}
	if ms := set.DOMSettleTimeoutMs; ms != nil {
		// 0 is the engine's default, as the session's own 0 is.
		opts.DOMSettleTimeout = time.Duration(*ms * float64(time.Millisecond))
	}
	return engine.New(tab, opts), nil
}

// prepare checks what every engine call shares and returns the tab's
// engine, with the call's settings, scoped to the frame frameID names (the
// whole page for none or the tab's main frame's id), and the call's model
// (nil: the session's). The engine checks the frame with its first
// snapshot or selector lookup, before it asks a model or acts: a frame the
// page does not have is a BAD_REQUEST (see callError).
func (a *Automation) prepare(p *chromium.Tab, frameID string, model *rpc.ModelConfig, set rpc.CallSettings, selfHeal *bool) (*engine.Engine, llm.Client, error) {
	e, err := a.engineFor(p, set, selfHeal)
	if err != nil {
		return nil, nil, err
	}
	client, err := a.models.forCall(model)
	if err != nil {
		return nil, nil, err
	}
	return e.InFrame(frameID), client, nil
}

// inFrame returns e scoped to the frame frameID names, once the page is
// seen to have it: an error wrapping page.ErrNoFrame when it has not. An
// agent run checks its frame before it starts, as its tools would each
// fail on it otherwise.
func inFrame(ctx context.Context, e *engine.Engine, frameID string) (*engine.Engine, error) {
	scoped := e.InFrame(frameID)
	if scoped.Frame() == "" {
		return scoped, nil
	}
	if _, err := e.Page().Frame(ctx, cdp.FrameID(frameID)); err != nil {
		return nil, err
	}
	return scoped, nil
}

// errFrameInCUA refuses a frame scope in cua mode, whose model sees
// screenshots of the whole tab and acts at its coordinates: there is
// nothing a frame could scope.
func errFrameInCUA() error {
	return rpc.Errorf(rpc.CodeBadRequest, "frameId: the cua mode works on screenshots of the whole tab, which a frame cannot scope; leave frameId out, give the main frame's id, or use the dom or hybrid mode")
}

// CheckAgent checks an agent task before its run starts, on the page as
// it is now, so that the start answers BAD_REQUEST for a frameId that
// names no frame of the page (or any frame but the main one in cua mode).
// A check that cannot be made (the page too busy to answer in ctx's time)
// is left to the run, which checks again when its turn comes: operations
// queued before it may change the page.
func (a *Automation) CheckAgent(ctx context.Context, p *chromium.Tab, req rpc.AgentTaskRequest) error {
	if mode, _ := agentMode(req.Mode); mode == agent.ModeCUA && a.models.viaGateway(a.models.cuaModel(req.Model)) {
		return errCUAGateway("agentConfig.model")
	}
	if req.FrameID == "" || req.FrameID == string(p.TargetID()) {
		return nil
	}
	if mode, _ := agentMode(req.Mode); mode == agent.ModeCUA {
		return errFrameInCUA()
	}
	e, err := a.engineFor(p, rpc.CallSettings{}, nil)
	if err == nil {
		_, err = inFrame(ctx, e, req.FrameID)
	}
	if errors.Is(err, page.ErrNoFrame) {
		return a.callError(agentOp, err)
	}
	// Any other failure of the check (no page handle, a page too busy)
	// is the run's to meet and report.
	return nil
}

// Act performs req.Input: an instruction through the model, or an Action as
// given. An instruction goes through the server-side cache when the call
// has a setting (req.Options.Cache) and the runner a cache.
func (a *Automation) Act(ctx context.Context, p *chromium.Tab, req rpc.ActRequest, progress ProgressFunc) (*rpc.ActResult, rpc.Usage, *cache.Report, error) {
	e, model, err := a.prepare(p, req.FrameID, req.Options.Model, req.Options.CallSettings, req.Options.SelfHeal)
	if err != nil {
		return nil, rpc.Usage{}, nil, err
	}
	opts := engine.ActOptions{
		Instruction:     req.Input.Instruction,
		Selector:        req.Options.Selector,
		IgnoreSelectors: req.Options.IgnoreSelectors,
		Variables:       engineVariables(req.Options.Variables),
		Model:           model,
		Progress:        engineProgress(progress),
	}
	if in := req.Input.Action; in != nil {
		opts.Action = &engine.Action{
			Selector:    in.Selector,
			Description: in.Description,
			Method:      in.Method,
			Arguments:   in.Arguments,
		}
		if in.BackendNodeID != nil {
			opts.Action.BackendNodeID = *in.BackendNodeID
		}
	}
	res, report, err := cached.Act(ctx, e, a.cache, req.Options.Cache, opts)
	if err != nil {
		return nil, rpc.Usage{}, nil, a.callError("act", err)
	}
	return &rpc.ActResult{
		Success:           res.Success,
		Message:           res.Message,
		ActionDescription: res.ActionDescription,
		Actions:           rpcActions(res.Actions),
	}, rpcUsage(res.Usage), cacheReport(report), nil
}

// Observe lists the actions the page offers for req.Instruction, through
// the server-side cache as Act.
func (a *Automation) Observe(ctx context.Context, p *chromium.Tab, req rpc.ObserveRequest, progress ProgressFunc) ([]rpc.Action, rpc.Usage, *cache.Report, error) {
	e, model, err := a.prepare(p, req.FrameID, req.Options.Model, req.Options.CallSettings, nil)
	if err != nil {
		return nil, rpc.Usage{}, nil, err
	}
	res, report, err := cached.Observe(ctx, e, a.cache, req.Options.Cache, engine.ObserveOptions{
		Instruction:     req.Instruction,
		Selector:        req.Options.Selector,
		IgnoreSelectors: req.Options.IgnoreSelectors,
		Variables:       engineVariables(req.Options.Variables),
		Model:           model,
		Progress:        engineProgress(progress),
	})
	if err != nil {
		return nil, rpc.Usage{}, nil, a.callError("observe", err)
	}
	return rpcActions(res.Actions), rpcUsage(res.Usage), cacheReport(report), nil
}

// Extract reads data off the page: against req.Schema, as {"extraction"}
// with only an instruction, or {"pageText"} with neither; through the
// server-side cache as Act.
func (a *Automation) Extract(ctx context.Context, p *chromium.Tab, req rpc.ExtractRequest, progress ProgressFunc) (json.RawMessage, rpc.Usage, *cache.Report, error) {
	e, model, err := a.prepare(p, req.FrameID, req.Options.Model, req.Options.CallSettings, nil)
	if err != nil {
		return nil, rpc.Usage{}, nil, err
	}
	schema := req.Schema
	if string(schema) == "null" {
		schema = nil
	}
	if s := req.Options.Screenshot; s != nil && *s && progress != nil {
		progress(rpc.LogLine{Category: "extraction", Message: "options.screenshot is not supported; extracting from the page snapshot", Level: rpc.LogLevelInfo, Timestamp: time.Now()})
	}
	res, report, err := cached.Extract(ctx, e, a.cache, req.Options.Cache, engine.ExtractOptions{
		Instruction:     req.Instruction,
		Schema:          schema,
		Selector:        req.Options.Selector,
		IgnoreSelectors: req.Options.IgnoreSelectors,
		Model:           model,
		Progress:        engineProgress(progress),
	})
	if err != nil {
		return nil, rpc.Usage{}, nil, a.callError("extract", err)
	}
	return res.Data, rpcUsage(res.Usage), cacheReport(report), nil
}

// cacheReport is the RPC's report: nil for DISABLED, which leaves the
// result as it was before the cache.
func cacheReport(r cache.Report) *cache.Report {
	if r.Status == cache.StatusDisabled || r.Status == "" {
		return nil
	}
	return &r
}

// Navigate is the runner's Navigate.
func (a *Automation) Navigate(ctx context.Context, p *chromium.Tab, req rpc.NavigateRequest, progress ProgressFunc) (*rpc.NavigateResult, error) {
	return navigate(ctx, p, req, progress)
}

// callError gives an engine error its RPC code. Errors it does not know
// are returned as they are: the server makes them TIMEOUT, CANCELED,
// BROWSER_CRASHED, ... when the call's context says why it ended, and
// ENGINE_ERROR otherwise.
func (a *Automation) callError(op string, err error) error {
	var (
		modelErr *llm.Error
		noFrame  *page.NoFrameError
		refused  *gateway.Error
	)
	switch {
	case errors.As(err, &noFrame):
		// Also a frame that went away during the call (removed, or its
		// parent navigated): the frameId no longer names a frame.
		return rpc.Errorf(rpc.CodeBadRequest, "frameId: no frame %s in the page: it is not one of the page's frames, or it has gone (removed, or its page navigated); leave frameId out to work on the whole page", noFrame.Frame)
	case errors.Is(err, engine.ErrNoModel):
		return a.models.noModelError(op, "options.model")
	case errors.As(err, &refused) && refused.Code == gateway.CodeBudgetExceeded:
		return rpc.Errorf(rpc.CodeBudgetExceeded, "%s", refused.Message)
	case errors.As(err, &refused):
		// The gateway refused the call itself: a model it does not
		// offer, a request it cannot take, no gateway in the API.
		if refused.Status == http.StatusNotFound {
			// The operator's configuration, not the caller's request:
			// runners were told of a gateway the API does not serve.
			return rpc.Errorf(rpc.CodeModelError, "the model gateway is not served by this deployment's API (runner.modelGateway is on, but the API has no --gateway-* provider): %s", refused.Message)
		}
		code := rpc.CodeModelError
		if refused.Status == http.StatusBadRequest {
			code = rpc.CodeBadRequest
		}
		return rpc.Errorf(code, "the model gateway: %s", refused.Message)
	case errors.Is(err, engine.ErrInvalidArgument):
		msg := strings.TrimPrefix(err.Error(), engine.ErrInvalidArgument.Error()+": ")
		return rpc.Errorf(rpc.CodeBadRequest, "%s", msg)
	case errors.Is(err, engine.ErrSchemaViolation):
		return rpc.Errorf(rpc.CodeSchemaViolation, "%s", err.Error())
	case errors.As(err, &modelErr) && egress.Denied(modelErr.Err) != nil:
		// The model's endpoint is not the browser's to reach, nor the
		// runner's: its host and kind of address, nothing more.
		return rpc.Errorf(rpc.CodeEgressDenied, "the model %s: %s", modelErr.Provider+"/"+modelErr.Model, egress.Denied(modelErr.Err).Error())
	case errors.As(err, &modelErr):
		// Error() is redacted; Err may hold the provider's raw
		// diagnostics and is left out.
		if modelErr.StatusCode == 0 && errors.Is(modelErr.Err, context.DeadlineExceeded) {
			// The provider did not answer within the client's own
			// limit (the call's timeout, when it ends first, is
			// reported by the server).
			return rpc.Errorf(rpc.CodeTimeout, "%s", modelErr.Error())
		}
		return rpc.Errorf(rpc.CodeModelError, "%s", modelErr.Error())
	}
	return err
}

// engineProgress passes the engine's progress lines on as the RPC's.
func engineProgress(progress ProgressFunc) func(engine.Log) {
	if progress == nil {
		return nil
	}
	return func(l engine.Log) {
		progress(rpc.LogLine{Category: l.Category, Message: l.Message, Level: rpc.LogLevel(l.Level), Timestamp: time.Now()})
	}
}

func engineVariables(vars rpc.Variables) map[string]engine.Variable {
	if len(vars) == 0 {
		return nil
	}
	out := make(map[string]engine.Variable, len(vars))
	for name, v := range vars {
		out[name] = engine.Variable{Value: v.Value, Description: v.Description}
	}
	return out
}

func rpcActions(actions []engine.Action) []rpc.Action {
	out := make([]rpc.Action, 0, len(actions))
	for _, a := range actions {
		ra := rpc.Action{
			Selector:    a.Selector,
			Description: a.Description,
			Method:      a.Method,
			Arguments:   a.Arguments,
		}
		if a.BackendNodeID != 0 {
			id := a.BackendNodeID
			ra.BackendNodeID = &id
		}
		out = append(out, ra)
	}
	return out
}

func rpcUsage(u llm.Usage) rpc.Usage {
	return rpc.Usage{
		InputTokens:       u.InputTokens,
		OutputTokens:      u.OutputTokens,
		ReasoningTokens:   u.ReasoningTokens,
		CachedInputTokens: u.CachedInputTokens,
		InferenceTimeMs:   u.InferenceTimeMs,
	}
}
