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
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/agent"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// agentOp names an agent run in errors and logs, as the /v1 API does.
const agentOp = "agentExecute"

// Agent runs an agent task with engine/agent on the tab's engine. Its
// models are req.Model (the loop's) and req.ExecutionModel (the act,
// extract and fillForm tools'), each merged with the session's as an
// operation's options.model is: the session's key goes only to the
// session's provider at its endpoint. Its system prompt is the session's
// systemPrompt followed by req.SystemPrompt. req.UseSearch offers the
// search tool, through the API's relay; a runner started without one
// (rpc.FlagSearchURL) refuses it with BAD_REQUEST, as it does with mode
// cua, which runs the provider's loop and its tools only. req.FrameID
// scopes the engine to a frame (see CheckAgent): one the page does not
// have is a BAD_REQUEST before the run starts.
func (a *Automation) Agent(ctx context.Context, p *chromium.Tab, req rpc.AgentTaskRequest, onStep AgentStepFunc) (*rpc.AgentResult, rpc.Usage, error) {
	opts, err := a.agentOptions(p, req)
	if err != nil {
		return nil, rpc.Usage{}, err
	}
	e, err := a.engineFor(p, rpc.CallSettings{}, nil)
	if err != nil {
		return nil, rpc.Usage{}, err
	}
	if e, err = inFrame(ctx, e, req.FrameID); err != nil {
		return nil, rpc.Usage{}, a.agentError(err)
	}
	// The usage so far, for a run that fails after some steps: the
	// tokens were spent all the same.
	var (
		mu       sync.Mutex
		reported int
		usage    rpc.Usage
	)
	opts.OnStep = func(index int, step agent.Step, u llm.Usage) {
		mu.Lock()
		reported, usage = index+1, rpcUsage(u)
		mu.Unlock()
		if onStep != nil {
			onStep(index, rpcAgentAction(step), rpcUsage(u))
		}
	}
	res, err := agent.Run(ctx, e, opts)
	mu.Lock()
	defer mu.Unlock()
	if res != nil {
		usage = rpcUsage(res.Usage)
	}
	if err != nil {
		return nil, usage, a.agentError(err)
	}
	if res == nil {
		return nil, usage, rpc.Errorf(rpc.CodeEngineError, "the agent ended without a result")
	}
	// Steps the agent did not report as it went are reported now, so
	// that the task's steps are the result's.
	for i := reported; i < len(res.Actions) && onStep != nil; i++ {
		onStep(i, rpcAgentAction(res.Actions[i]), usage)
	}
	out := &rpc.AgentResult{
		Success:   res.Success,
		Message:   res.Message,
		Completed: res.Completed,
		Metadata:  res.Metadata,
		Output:    res.Output,
	}
	if c := res.CacheEntry; c != nil {
		out.CacheEntry = &rpc.AgentCacheEntry{CacheKey: c.Key, Entry: c.Entry}
	}
	return out, usage, nil
}

// agentError gives a failed run its RPC code, as callError does an
// operation's, but for a model that did not answer in its client's own
// time limit: for an agent task TIMEOUT says the task's deadline passed
// (the server reports it from the run's context), so the model's silence
// is a MODEL_ERROR.
func (a *Automation) agentError(err error) error {
	if errors.Is(err, engine.ErrNoModel) {
		return a.models.noModelError(agentOp, "agentConfig.model")
	}
	err = a.callError(agentOp, err)
	var e *rpc.Error
	if errors.As(err, &e) && e.Code == rpc.CodeTimeout {
		return rpc.Errorf(rpc.CodeModelError, "%s", e.Message)
	}
	return err
}

// agentOptions checks req and turns it into the agent's options, OnStep
// aside.
func (a *Automation) agentOptions(p *chromium.Tab, req rpc.AgentTaskRequest) (agent.Options, error) {
	mode, err := agentMode(req.Mode)
	if err != nil {
		return agent.Options{}, err
	}
	switch {
	case strings.TrimSpace(req.Instruction) == "":
		return agent.Options{}, rpc.Errorf(rpc.CodeBadRequest, "instruction is required")
	case req.UseSearch && a.search == nil:
		return agent.Options{}, rpc.Errorf(rpc.CodeBadRequest, "useSearch: this deployment has no search provider configured, so the agent has no search tool")
	case req.UseSearch && mode == agent.ModeCUA:
		return agent.Options{}, rpc.Errorf(rpc.CodeBadRequest, "useSearch: mode cua runs the provider's computer-use loop, which has no search tool")
	case req.FrameID != "" && req.FrameID != string(p.TargetID()) && mode == agent.ModeCUA:
		return agent.Options{}, errFrameInCUA()
	case req.MaxSteps < 0:
		return agent.Options{}, rpc.Errorf(rpc.CodeBadRequest, "maxSteps must not be negative")
	case req.ToolTimeoutMs < 0:
		return agent.Options{}, rpc.Errorf(rpc.CodeBadRequest, "toolTimeoutMs must not be negative")
	}
	model, err := a.models.forField("agentConfig.model", req.Model)
	if err != nil {
		return agent.Options{}, err
	}
	if model == nil {
		if a.models.client == nil {
			return agent.Options{}, a.models.noModelError(agentOp, "agentConfig.model")
		}
		model = a.models.client
	}
	exec, err := a.models.forField("agentConfig.executionModel", req.ExecutionModel)
	if err != nil {
		return agent.Options{}, err
	}
	opts := agent.Options{
		Instruction:     req.Instruction,
		Mode:            mode,
		Model:           model,
		SystemPrompt:    joinPrompts(a.system, req.SystemPrompt),
		MaxSteps:        req.MaxSteps,
		ToolTimeout:     time.Duration(req.ToolTimeoutMs) * time.Millisecond,
		HighlightCursor: req.HighlightCursor,
		ShouldCache:     req.ShouldCache,
		// Names the task, never its request: that holds secrets.
		Logger: a.log.With("component", "agent", "task", req.UID),
	}
	if exec != nil {
		opts.ExecutionModel = exec
	}
	if req.UseSearch {
		opts.Search = a.search
	}
	if mode == agent.ModeCUA {
		// The provider's computer-use loop keeps its own conversation: it
		// takes the loop model's config, with the session's credentials
		// merged as for any call's model.
		mc := a.models.cuaModel(req.Model)
		if a.models.viaGateway(mc) {
			return agent.Options{}, errCUAGateway("agentConfig.model")
		}
		cfg := a.models.llmConfig(mc)
		opts.ComputerUse = func(o llm.ComputerUseOptions) (llm.ComputerUse, error) { return llm.NewComputerUse(cfg, o) }
	}
	if len(req.Variables) > 0 {
		opts.Variables = make(map[string]engine.Variable, len(req.Variables))
		for name, value := range req.Variables {
			opts.Variables[name] = engine.Variable{Value: value, Description: req.VariableDescriptions[name]}
		}
	}
	return opts, nil
}

// cuaModel is the model of a cua run: the task's, merged with the
// session's, or the session's.
func (m *models) cuaModel(task *rpc.ModelConfig) rpc.ModelConfig {
	if task != nil && !isZeroModel(*task) {
		return m.merge(*task)
	}
	return m.def
}

// agentMode maps the RPC's mode to the agent's; empty is dom.
func agentMode(m string) (agent.Mode, error) {
	switch m {
	case "", rpc.AgentModeDOM:
		return agent.ModeDOM, nil
	case rpc.AgentModeHybrid:
		return agent.ModeHybrid, nil
	case rpc.AgentModeCUA:
		return agent.ModeCUA, nil
	}
	return "", rpc.Errorf(rpc.CodeBadRequest, "mode must be dom, hybrid or cua")
}

// joinPrompts is the session's system prompt and the task's, in that order.
func joinPrompts(session, task string) string {
	session, task = strings.TrimSpace(session), strings.TrimSpace(task)
	switch {
	case session == "":
		return task
	case task == "":
		return session
	}
	return session + "\n\n" + task
}

func rpcAgentAction(s agent.Step) rpc.AgentAction {
	return rpc.AgentAction{
		Type:          s.Type,
		Reasoning:     s.Reasoning,
		TaskCompleted: s.TaskCompleted,
		Action:        s.Action,
		TimeMs:        s.TimeMs,
		PageText:      s.PageText,
		PageURL:       s.PageURL,
		Instruction:   s.Instruction,
	}
}
