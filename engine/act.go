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
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
)

// ActOptions say what to do: an instruction for the model, or an Action to
// perform as is.
type ActOptions struct {
	// Instruction is what to do, in natural language.
	Instruction string
	// Action, when set, is performed directly, with no model call.
	Action *Action
	// Selector scopes what the model sees to one element's subtree (the
	// element included); the action is chosen within it.
	Selector string
	// IgnoreSelectors leave these elements out of what the model sees.
	IgnoreSelectors []string
	// Variables are values the model uses by name only.
	Variables map[string]Variable
	// Model overrides the engine's model for this call.
	Model llm.Client
	// Timeout bounds the call; zero leaves only ctx.
	Timeout time.Duration
	// Progress receives progress lines; nil drops them.
	Progress func(Log)
}

// ActResult is the outcome of an act. Success false with a Message is an
// action that could not be done (no element fits, the element refused the
// input); errors are reserved for calls that could not run at all.
type ActResult struct {
	Success           bool
	Message           string
	ActionDescription string
	// Actions are the actions performed, with variables still as %name%.
	Actions []Action
	Usage   llm.Usage
	// Replayable reports that Actions, each performed as an Action by an
	// engine with this one's frame scope, redo this act: every element
	// was in the engine's own document (not in an iframe inside it,
	// whose xpath would be looked up in the wrong document) and no
	// argument named an element by its snapshot id (dragAndDrop's
	// target). The server-side cache stores only such acts.
	Replayable bool

	// foreign marks an action whose replay would not redo it.
	foreign bool
}

// Act carries out one action on the page.
func (e *Engine) Act(ctx context.Context, opts ActOptions) (*ActResult, error) {
	ctx, cancel := withTimeout(ctx, opts.Timeout)
	defer cancel()
	call := callOptions{Model: opts.Model, Progress: opts.Progress,
		scope: page.SnapshotOptions{Selector: opts.Selector, IgnoreSelectors: opts.IgnoreSelectors}}
	if err := checkScope(opts.Selector, opts.IgnoreSelectors); err != nil {
		return nil, err
	}
	if opts.Action != nil {
		return e.actDirect(ctx, call, *opts.Action, opts.Variables)
	}
	if strings.TrimSpace(opts.Instruction) == "" {
		return nil, fmt.Errorf("%w: act needs an instruction or an action", ErrInvalidArgument)
	}
	model, err := e.model(call)
	if err != nil {
		return nil, err
	}
	res := &ActResult{}
	snap, err := e.snapshot(ctx, call.scope)
	if err != nil {
		return nil, err
	}
	ans, err := e.inferAct(ctx, model, call, opts.Instruction, snap.Tree, "", opts.Variables, res)
	if err != nil {
		return nil, err
	}
	if ans.ElementID == "" {
		res.Message = "no element on the page matches the instruction: " + ans.Description
		res.ActionDescription = ans.Description
		return res, nil
	}
	act, err := e.performAnswer(ctx, call, snap, ans, opts.Variables, res)
	if err != nil && e.opts.SelfHeal && ctx.Err() == nil {
		act, err = e.heal(ctx, model, call, opts.Instruction, ans, opts.Variables, res, err)
	}
	if err != nil {
		return e.failed(ctx, res, ans.Description, err, opts.Variables)
	}
	res.Actions = append(res.Actions, act)

	if ans.TwoStep {
		second, err := e.secondStep(ctx, model, call, opts.Instruction, snap, ans, opts.Variables, res)
		if err != nil {
			return e.failed(ctx, res, ans.Description, err, opts.Variables)
		}
		if second != nil {
			res.Actions = append(res.Actions, *second)
		}
	}
	res.Success = true
	res.Replayable = !res.foreign
	res.ActionDescription = ans.Description
	last := res.Actions[len(res.Actions)-1]
	res.Message = fmt.Sprintf("Action [%s] performed successfully on selector: %s", last.Method, last.Selector)
	return res, nil
}

// failed turns an action error into an unsuccessful result, or returns it
// when the call itself is over (timeout, cancel, browser gone) or cannot
// go on (the engine's frame is not in the page).
func (e *Engine) failed(ctx context.Context, res *ActResult, desc string, err error, vars map[string]Variable) (*ActResult, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if errors.Is(err, page.ErrNoFrame) {
		return nil, err
	}
	res.Success = false
	res.ActionDescription = desc
	res.Message = redact("action failed: "+err.Error(), vars)
	return res, nil
}

// inferAct asks the model for one action over tree. note, when set, tells
// the model what happened before (the second step of a two-step action).
func (e *Engine) inferAct(ctx context.Context, model llm.Client, call callOptions, instruction, tree, note string, vars map[string]Variable, res *ActResult) (*actAnswer, error) {
	call.progress("action", "asking %s which element to act on", model.Model())
	var ans actAnswer
	usage, err := e.ask(ctx, model, actSystem, userPrompt(instruction, tree, note, describeVariables(vars)), "act", actAnswerSchema(), &ans)
	res.Usage = res.Usage.Add(usage)
	if err != nil {
		return nil, err
	}
	ans.ElementID = normaliseID(ans.ElementID)
	e.log.Debug("model chose an action", "element", ans.ElementID, "method", ans.Method, "twoStep", ans.TwoStep)
	return &ans, nil
}

// performAnswer resolves the model's element in the snapshot and performs
// the action, substituting variables only now. It marks res foreign when
// the action as reported would not redo this one (see Replayable).
func (e *Engine) performAnswer(ctx context.Context, call callOptions, snap *page.Snapshot, ans *actAnswer, vars map[string]Variable, res *ActResult) (Action, error) {
	act := Action{
		Selector:      snap.XPaths[ans.ElementID],
		Description:   ans.Description,
		Method:        ans.Method,
		Arguments:     ans.Arguments,
		BackendNodeID: backendNodeID(ans.ElementID),
	}
	if act.Selector == "" {
		return act, fmt.Errorf("the model chose element %s, which is not on the page", ans.ElementID)
	}
	el, err := snap.Resolve(ctx, ans.ElementID)
	if err != nil {
		return act, fmt.Errorf("resolving element %s: %w", ans.ElementID, err)
	}
	if el.Frame == nil || !e.ownFrame(el.Frame) || ans.Method == "dragAndDrop" {
		res.foreign = true
	}
	args, err := e.resolveArgs(ctx, snap, ans.Method, substitute(ans.Arguments, vars))
	if err != nil {
		return act, err
	}
	call.progress("action", "performing %s on %s", ans.Method, act.Selector)
	if err := e.page.Perform(ctx, el, ans.Method, args); err != nil {
		return act, fmt.Errorf("%s on %s: %w", ans.Method, act.Selector, err)
	}
	return act, nil
}

// resolveArgs turns dragAndDrop's target id into its selector, which Perform
// takes.
func (e *Engine) resolveArgs(ctx context.Context, snap *page.Snapshot, method string, args []string) ([]string, error) {
	if method != "dragAndDrop" || len(args) == 0 {
		return args, nil
	}
	id := normaliseID(args[0])
	if xp, ok := snap.XPaths[id]; ok {
		return append([]string{xp}, args[1:]...), nil
	}
	return args, nil
}

// heal re-snapshots the page and asks the model again, keeping the method
// and arguments it chose first: the page changed under the action, not the
// user's intent.
func (e *Engine) heal(ctx context.Context, model llm.Client, call callOptions, instruction string, first *actAnswer, vars map[string]Variable, res *ActResult, cause error) (Action, error) {
	call.progress("action", "self-healing after: %s", redact(cause.Error(), vars))
	e.log.Info("self-healing an action", "method", first.Method, "cause", redact(cause.Error(), vars))
	snap, err := e.snapshot(ctx, call.scope)
	if err != nil {
		return Action{}, err
	}
	ans, err := e.inferAct(ctx, model, call, instruction, snap.Tree, "", vars, res)
	if err != nil {
		return Action{}, err
	}
	if ans.ElementID == "" {
		return Action{}, fmt.Errorf("after the page changed, no element matches: %w", cause)
	}
	ans.Method, ans.Arguments = first.Method, first.Arguments
	return e.performAnswer(ctx, call, snap, ans, vars, res)
}

// secondStep finishes an action that only opened something (a custom
// dropdown, a menu): the model sees what appeared and picks the next action.
// Its snapshot is the whole page (in the engine's frame) whatever the act's
// scope: what opened may be drawn outside the scoped element.
func (e *Engine) secondStep(ctx context.Context, model llm.Client, call callOptions, instruction string, before *page.Snapshot, first *actAnswer, vars map[string]Variable, res *ActResult) (*Action, error) {
	after, err := e.snapshot(ctx, page.SnapshotOptions{})
	if err != nil {
		return nil, err
	}
	tree := newLines(before.Tree, after.Tree)
	if tree == "" {
		tree = after.Tree
	}
	note := fmt.Sprintf("A first action (%s) was performed and changed the page. Below is what changed; choose the action that completes the instruction.", first.Description)
	ans, err := e.inferAct(ctx, model, call, instruction, tree, note, vars, res)
	if err != nil {
		return nil, err
	}
	if ans.ElementID == "" {
		return nil, nil
	}
	act, err := e.performAnswer(ctx, call, after, ans, vars, res)
	if err != nil {
		return nil, err
	}
	return &act, nil
}

// newLines keeps the lines of after that before did not have: the part of
// the page an action changed.
func newLines(before, after string) string {
	seen := make(map[string]int)
	for _, l := range strings.Split(before, "\n") {
		seen[strings.TrimSpace(l)]++
	}
	var out []string
	for _, l := range strings.Split(after, "\n") {
		k := strings.TrimSpace(l)
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// actDirect performs a given action with no model call, unless it fails and
// self-healing asks the model to find the element again.
func (e *Engine) actDirect(ctx context.Context, call callOptions, a Action, vars map[string]Variable) (*ActResult, error) {
	if a.Selector == "" || a.Method == "" {
		return nil, fmt.Errorf("%w: an action needs a selector and a method", ErrInvalidArgument)
	}
	if err := checkSelector(a.Selector); err != nil {
		return nil, err
	}
	res := &ActResult{ActionDescription: a.Description}
	if err := e.settle(ctx); err != nil {
		return nil, err
	}
	err := e.performSelector(ctx, call, a, vars)
	if err != nil && e.opts.SelfHeal && ctx.Err() == nil && !errors.Is(err, page.ErrNoFrame) {
		model, merr := e.model(call)
		if merr == nil {
			instruction := a.Description
			if instruction == "" {
				instruction = fmt.Sprintf("%s the element %s", a.Method, a.Selector)
			}
			first := &actAnswer{Method: a.Method, Arguments: a.Arguments, Description: a.Description}
			var healed Action
			healed, err = e.heal(ctx, model, call, instruction, first, vars, res, err)
			if err == nil {
				a = healed
			}
		}
	}
	if err != nil {
		return e.failed(ctx, res, a.Description, err, vars)
	}
	res.Success = true
	res.Replayable = !res.foreign
	res.Actions = []Action{a}
	res.Message = fmt.Sprintf("Action [%s] performed successfully on selector: %s", a.Method, a.Selector)
	return res, nil
}

// ownFrame reports whether a snapshot's frame is the document the
// engine's selector lookups run in: the main frame (ordinal 0) for a
// whole-page engine.
func (e *Engine) ownFrame(f *page.Frame) bool {
	if e.frame == "" {
		return f.Ordinal == 0
	}
	return f.ID == e.frame
}

// performSelector finds the element of a selector (CSS, or xpath=) in the
// engine's frame (the main frame for the whole page) and performs the
// action on it.
func (e *Engine) performSelector(ctx context.Context, call callOptions, a Action, vars map[string]Variable) error {
	f := e.page.MainFrame()
	if e.frame != "" {
		var err error
		if f, err = e.page.Frame(ctx, e.frame); err != nil {
			return fmt.Errorf("finding %s: %w", a.Selector, err)
		}
	}
	el, err := f.Query(ctx, a.Selector)
	if err != nil {
		return fmt.Errorf("finding %s: %w", a.Selector, err)
	}
	call.progress("action", "performing %s on %s", a.Method, a.Selector)
	if err := e.page.Perform(ctx, el, a.Method, substitute(a.Arguments, vars)); err != nil {
		return fmt.Errorf("%s on %s: %w", a.Method, a.Selector, err)
	}
	return nil
}
