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

package engine

import (
	"context"
	"time"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
)

// ObserveOptions say what to look for.
type ObserveOptions struct {
	// Instruction is what to look for; empty looks for everything
	// actionable.
	Instruction string
	// Selector scopes the snapshot to one element's subtree.
	Selector string
	// IgnoreSelectors leave these elements out of the snapshot.
	IgnoreSelectors []string
	// Variables may appear as %name% in proposed arguments.
	Variables map[string]Variable
	Model     llm.Client
	Timeout   time.Duration
	Progress  func(Log)
}

// ObserveResult lists candidate actions, best first.
type ObserveResult struct {
	Actions []Action
	Usage   llm.Usage
}

// Observe proposes actions on the page that match an instruction.
func (e *Engine) Observe(ctx context.Context, opts ObserveOptions) (*ObserveResult, error) {
	ctx, cancel := withTimeout(ctx, opts.Timeout)
	defer cancel()
	call := callOptions{Model: opts.Model, Progress: opts.Progress}
	if err := checkScope(opts.Selector, opts.IgnoreSelectors); err != nil {
		return nil, err
	}
	model, err := e.model(call)
	if err != nil {
		return nil, err
	}
	snap, err := e.snapshot(ctx, page.SnapshotOptions{Selector: opts.Selector, IgnoreSelectors: opts.IgnoreSelectors})
	if err != nil {
		return nil, err
	}
	instruction := opts.Instruction
	if instruction == "" {
		instruction = defaultObserveInstruction
	}
	call.progress("observation", "asking %s for candidate actions", model.Model())
	var ans observeAnswer
	usage, err := e.ask(ctx, model, observeSystem, userPrompt(instruction, snap.Tree, describeVariables(opts.Variables)), "observe", observeAnswerSchema(), &ans)
	if err != nil {
		return nil, err
	}
	res := &ObserveResult{Actions: []Action{}, Usage: usage}
	for _, el := range ans.Elements {
		id := normaliseID(el.ElementID)
		xp, ok := snap.XPaths[id]
		if !ok {
			// The model named an element that is not on the page; leave it
			// out rather than hand out a selector that finds nothing.
			e.log.Debug("observe answer names an unknown element", "element", id)
			continue
		}
		res.Actions = append(res.Actions, Action{
			Selector:      xp,
			Description:   el.Description,
			Method:        el.Method,
			Arguments:     el.Arguments,
			BackendNodeID: backendNodeID(id),
		})
	}
	return res, nil
}
