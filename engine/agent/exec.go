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

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/search"
)

// toolOutput is what a tool answers the model.
type toolOutput struct {
	// text is the answer, usually a JSON object.
	text string
	// image is a screenshot to go with it.
	image []byte
	// failed marks a tool that did not do what was asked.
	failed bool
	// fin, set by done, ends the run.
	fin *outcome
}

// jsonOutput encodes v as a tool's answer.
func jsonOutput(v any, failed bool) toolOutput {
	b, err := json.Marshal(v)
	if err != nil {
		return toolOutput{text: fmt.Sprintf(`{"success":false,"error":%q}`, err.Error()), failed: true}
	}
	return toolOutput{text: string(b), failed: failed}
}

func failure(msg string) toolOutput {
	return jsonOutput(map[string]any{"success": false, "error": msg}, true)
}

// errInvalidArguments marks arguments that do not fit the tool's
// parameters: the model is told, and may call again.
var errInvalidArguments = errors.New("invalid arguments")

func decode(args json.RawMessage, into any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, into); err != nil {
		return fmt.Errorf("%w: %w", errInvalidArguments, err)
	}
	return nil
}

// timeoutHints tell the model what to try after a tool timed out.
var timeoutHints = map[string]string{
	toolAct:      "Try again with a different description of the action.",
	toolAriaTree: "The page may be too large or still loading; try extract or a screenshot.",
	toolExtract:  "Try a smaller schema or a narrower instruction.",
	toolFillForm: "Try fewer fields at once, or act on them one by one.",
	toolGoto:     "The site may be slow or unreachable; check it with a screenshot before trying again.",
	toolSearch:   "The search provider is slow; try again once, or open a URL you know with goto.",
}

// handler runs one tool; st is its Step, filled in as the tool learns what
// it did. An error is a tool that could not run (told to the model), or
// one that must end the run (see execute).
type handler func(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error)

func (r *run) handler(name string) handler {
	switch name {
	case toolAct:
		return r.act
	case toolAriaTree:
		return r.ariaTree
	case toolExtract:
		return r.extract
	case toolFillForm:
		return r.fillForm
	case toolGoto:
		return r.gotoURL
	case toolKeys:
		return r.keys
	case toolNavBack:
		return r.navBack
	case toolScroll:
		return r.scroll
	case toolWait:
		return r.wait
	case toolThink:
		return r.think
	case toolScreenshot:
		return r.screenshotTool
	case toolClick:
		return r.click
	case toolType:
		return r.typeAt
	case toolDragAndDrop:
		return r.dragAndDrop
	case toolClickAndHold:
		return r.clickAndHold
	case toolFillFormVision:
		return r.fillFormVision
	case toolSearch:
		if r.opts.Search != nil {
			return r.search
		}
	case toolDone:
		return r.done
	}
	return nil
}

// step runs one tool call, reports its Step, and returns the result for
// the model. fin is set when the call ends the run.
func (r *run) step(ctx context.Context, call llm.ToolCall, text string) (llm.ToolResult, *outcome, error) {
	index := len(r.steps)
	started := r.now()
	pageURL, err := r.p.URL(ctx)
	if err != nil && ctx.Err() != nil {
		return llm.ToolResult{}, nil, fmt.Errorf("agent: step %d (%s): %w", index, call.Name, ctx.Err())
	}
	st := Step{Type: call.Name, Reasoning: strings.TrimSpace(text), PageURL: pageURL}
	out, err := r.execute(ctx, call, &st)
	if err != nil {
		return llm.ToolResult{}, nil, fmt.Errorf("agent: step %d (%s): %w", index, call.Name, err)
	}
	st.TimeMs = r.now().Sub(started).Milliseconds()

	if out.failed {
		key := call.Name + " " + canonical(call.Arguments)
		r.failures[key]++
		if n := r.failures[key]; n >= RepeatedFailureWarning {
			out.text += fmt.Sprintf("\nWarning: this exact call has now failed %d times. Do not repeat it: "+
				"describe the element differently, use another tool, or read the page again (ariaTree or screenshot) to see what changed.", n)
		}
	}
	st.Reasoning = r.redact(st.Reasoning)
	st.Action = r.redact(st.Action)
	st.Instruction = r.redact(st.Instruction)
	st.PageText = r.redact(st.PageText)
	r.steps = append(r.steps, st)
	r.log.Info("agent step", "index", index, "tool", call.Name, "failed", out.failed, "timeMs", st.TimeMs)
	if r.opts.OnStep != nil {
		r.opts.OnStep(index, st, r.usage)
	}
	if out.fin != nil {
		return llm.ToolResult{}, out.fin, nil
	}
	return llm.ToolResult{
		CallID:  call.ID,
		Name:    call.Name,
		Text:    r.redact(out.text),
		Image:   out.image,
		IsError: out.failed,
	}, nil, nil
}

// execute runs a call's tool under ToolTimeout (but think, wait and done).
// A tool that fails or times out is an output for the model; the error
// return is for what ends the run: ctx ending, or a model that cannot be
// called.
func (r *run) execute(ctx context.Context, call llm.ToolCall, st *Step) (toolOutput, error) {
	h := r.handler(call.Name)
	if h == nil || !r.known[call.Name] {
		names := make([]string, len(r.tools))
		for i, t := range r.tools {
			names[i] = t.Name
		}
		st.Action = "unknown tool " + call.Name
		return failure(fmt.Sprintf("there is no tool %q; the tools are %s", call.Name, strings.Join(names, ", "))), nil
	}
	tctx, cancel := ctx, context.CancelFunc(func() {})
	if !timeless[call.Name] {
		tctx, cancel = context.WithTimeout(ctx, r.opts.ToolTimeout)
	}
	defer cancel()
	out, err := h(tctx, call.Arguments, st)
	if err == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return toolOutput{}, ctx.Err()
	}
	if errors.Is(tctx.Err(), context.DeadlineExceeded) {
		r.log.Info("agent tool timed out", "tool", call.Name, "timeout", r.opts.ToolTimeout)
		if st.Action == "" {
			st.Action = "timed out"
		}
		msg := fmt.Sprintf("TimeoutError: %s did not finish within %s and was stopped.", call.Name, r.opts.ToolTimeout)
		if h := timeoutHints[call.Name]; h != "" {
			msg += " " + h
		}
		return failure(msg), nil
	}
	var le *llm.Error
	if errors.As(err, &le) && !errors.Is(err, llm.ErrInvalidOutput) && !errors.Is(err, context.DeadlineExceeded) {
		return toolOutput{}, fmt.Errorf("calling the execution model: %w", r.redactErr(err))
	}
	msg := r.redact(err.Error())
	if st.Action == "" {
		st.Action = "failed: " + msg
	}
	return failure(msg), nil
}

// canonical re-encodes JSON arguments with sorted keys, so that the same
// call written twice compares equal.
func canonical(args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return string(args)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// act performs one action through the engine, on the execution model.
func (r *run) act(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Action string `json:"action"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	if strings.TrimSpace(a.Action) == "" {
		return toolOutput{}, fmt.Errorf("%w: action is empty", errInvalidArguments)
	}
	st.Instruction = a.Action
	res, err := r.e.Act(ctx, engine.ActOptions{Instruction: a.Action, Variables: r.opts.Variables, Model: r.exec})
	if err != nil {
		return toolOutput{}, err
	}
	r.usage = r.usage.Add(res.Usage)
	// Let what the action started (a navigation, requests) finish, so that
	// the next step starts on the page the action led to.
	r.settle(ctx)
	st.Action = res.Message
	actions := replayable(res.Actions)
	switch {
	case res.Success && res.Replayable:
		r.record(cacheStep{Type: toolAct, Instruction: a.Action, Actions: actions})
	case res.Success:
		// Its element was in an iframe inside the engine's document, or
		// a drop target named by snapshot id: the actions as reported
		// would not redo it.
		r.unreplayable(fmt.Sprintf("step %d (act) acted where its selector cannot find it again", len(r.steps)))
	}
	out := map[string]any{"success": res.Success, "description": res.ActionDescription, "message": res.Message}
	if len(actions) > 0 {
		out["actions"] = actions
	}
	return jsonOutput(out, !res.Success), nil
}

// replayable strips from actions what only holds for this page load.
func replayable(actions []engine.Action) []engine.Action {
	out := make([]engine.Action, len(actions))
	for i, a := range actions {
		a.BackendNodeID = 0
		out[i] = a
	}
	return out
}

// record adds a deterministic step to the cache entry. Its texts come from
// the model, which never got a variable's value, and the engine, which
// reports placeholders; they are redacted anyway, should the model have
// read a value off a screenshot.
func (r *run) record(s cacheStep) {
	if !r.opts.ShouldCache {
		return
	}
	s.Instruction, s.URL, s.Text, s.Keys, s.Selector = r.redact(s.Instruction), r.redact(s.URL), r.redact(s.Text), r.redact(s.Keys), r.redact(s.Selector)
	for i := range s.Fields {
		s.Fields[i] = r.redact(s.Fields[i])
	}
	actions := make([]engine.Action, len(s.Actions))
	for i, a := range s.Actions {
		a.Selector, a.Description = r.redact(a.Selector), r.redact(a.Description)
		args := make([]string, len(a.Arguments))
		for j, arg := range a.Arguments {
			args[j] = r.redact(arg)
		}
		if a.Arguments == nil {
			args = nil
		}
		a.Arguments = args
		actions[i] = a
	}
	if s.Actions != nil {
		s.Actions = actions
	}
	r.cached = append(r.cached, s)
}

// ariaTree reads the page outline act sees, bounded by MaxAriaTreeChars.
func (r *run) ariaTree(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	res, err := r.e.Extract(ctx, engine.ExtractOptions{})
	if err != nil {
		return toolOutput{}, err
	}
	var pt struct {
		PageText string `json:"pageText"`
	}
	if err := json.Unmarshal(res.Data, &pt); err != nil {
		return toolOutput{}, fmt.Errorf("reading the page outline: %w", err)
	}
	tree := truncate(r.redact(pt.PageText), MaxAriaTreeChars, "outline")
	st.Action = fmt.Sprintf("read the page outline (%d lines)", strings.Count(pt.PageText, "\n")+1)
	st.PageText = truncate(tree, MaxStepPageText, "outline")
	u, _ := r.p.URL(ctx)
	return toolOutput{text: "Accessibility tree of " + u + ":\n" + tree}, nil
}

// extract reads data off the page through the engine.
func (r *run) extract(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Instruction string          `json:"instruction"`
		Schema      json.RawMessage `json:"schema"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	if strings.TrimSpace(a.Instruction) == "" {
		return toolOutput{}, fmt.Errorf("%w: instruction is empty", errInvalidArguments)
	}
	st.Instruction = a.Instruction
	schema := a.Schema
	if t := bytes.TrimSpace(schema); len(t) == 0 || string(t) == "null" || string(t) == "{}" {
		schema = nil
	}
	res, err := r.e.Extract(ctx, engine.ExtractOptions{Instruction: a.Instruction, Schema: schema, Model: r.exec})
	if err != nil {
		return toolOutput{}, err
	}
	r.usage = r.usage.Add(res.Usage)
	data := string(r.redactJSON(res.Data))
	st.Action = "extracted " + a.Instruction
	st.PageText = truncate(data, MaxStepPageText, "extraction")
	return toolOutput{text: `{"success":true,"result":` + data + `}`}, nil
}

// fillForm finds every field with one observe call, then fills each with
// a deterministic act, as the reference does.
func (r *run) fillForm(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Fields []struct {
			Action string `json:"action"`
		} `json:"fields"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	if len(a.Fields) == 0 {
		return toolOutput{}, fmt.Errorf("%w: fields is empty", errInvalidArguments)
	}
	wanted := make([]string, len(a.Fields))
	for i, f := range a.Fields {
		wanted[i] = f.Action
	}
	st.Instruction = strings.Join(wanted, "; ")
	obs, err := r.e.Observe(ctx, engine.ObserveOptions{
		Instruction: "Return one action for each of the following, in this order: " + strings.Join(wanted, "; "),
		Variables:   r.opts.Variables,
		Model:       r.exec,
	})
	if err != nil {
		return toolOutput{}, err
	}
	r.usage = r.usage.Add(obs.Usage)
	if len(obs.Actions) == 0 {
		st.Action = "no field matched"
		return failure("no field on the page matches these actions; read the page with ariaTree and name the fields as it shows them"), nil
	}
	var done []engine.Action
	var results []map[string]any
	ok := true
	for _, action := range obs.Actions {
		res, err := r.e.Act(ctx, engine.ActOptions{Action: &action, Variables: r.opts.Variables, Model: r.exec})
		if err != nil {
			return toolOutput{}, err
		}
		r.usage = r.usage.Add(res.Usage)
		results = append(results, map[string]any{"success": res.Success, "message": res.Message})
		if !res.Success {
			ok = false
			continue
		}
		if !res.Replayable {
			r.unreplayable(fmt.Sprintf("step %d (fillForm) acted where its selector cannot find it again", len(r.steps)))
		}
		done = append(done, replayable(res.Actions)...)
	}
	r.settle(ctx)
	st.Action = fmt.Sprintf("filled %d of %d fields", len(done), len(obs.Actions))
	if len(done) > 0 {
		r.record(cacheStep{Type: toolFillForm, Fields: wanted, Actions: done})
	}
	return jsonOutput(map[string]any{"success": ok, "results": results, "actions": done}, !ok), nil
}

// gotoURL opens a URL; only http and https are allowed here (the runner
// checks hosts against its egress policy at the network level).
func (r *run) gotoURL(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		URL string `json:"url"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	st.Action = "goto " + a.URL
	u, perr := url.Parse(strings.TrimSpace(a.URL))
	if ok := perr == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https"); !ok {
		// Told to the model, which may correct it: not an error of the run.
		return failure(fmt.Sprintf("goto takes an absolute http or https URL, not %q", a.URL)), nil
	}
	if err := r.p.Navigate(ctx, u.String(), page.NavigateOptions{WaitUntil: page.WaitLoad}); err != nil {
		// A navigation left pending holds Chromium's layout metrics, and
		// so the next screenshot, until it ends: stop it.
		_ = r.p.StopLoading(ctx)
		return toolOutput{}, err
	}
	r.record(cacheStep{Type: toolGoto, URL: u.String(), WaitUntil: string(page.WaitLoad)})
	now, _ := r.p.URL(ctx)
	return jsonOutput(map[string]any{"success": true, "url": now}, false), nil
}

// keys types text or presses keys on the focused element; text is the
// only place besides act where a variable's value is filled in.
func (r *run) keys(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Method string   `json:"method"`
		Value  string   `json:"value"`
		Repeat *float64 `json:"repeat"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	times := 1
	if a.Repeat != nil {
		times = int(math.Round(*a.Repeat))
	}
	if times < 1 || times > MaxKeyRepeat {
		return toolOutput{}, fmt.Errorf("%w: repeat %d is not between 1 and %d", errInvalidArguments, times, MaxKeyRepeat)
	}
	switch a.Method {
	case "type":
		st.Action = fmt.Sprintf("type %q", a.Value)
		text := engine.SubstituteVariables(a.Value, r.opts.Variables)
		for range times {
			if err := r.p.TypeText(ctx, text); err != nil {
				return toolOutput{}, err
			}
		}
		r.record(cacheStep{Type: toolKeys, Method: "type", Text: a.Value, Times: times})
	case "press":
		st.Action = "press " + a.Value
		for range times {
			if err := r.p.PressKey(ctx, a.Value); err != nil {
				return toolOutput{}, err
			}
		}
		r.record(cacheStep{Type: toolKeys, Method: "press", Keys: a.Value, Times: times})
	default:
		return toolOutput{}, fmt.Errorf("%w: method %q is not press or type", errInvalidArguments, a.Method)
	}
	if times > 1 {
		st.Action += fmt.Sprintf(" (%d times)", times)
	}
	r.settle(ctx)
	return r.withScreenshot(ctx, toolKeys, map[string]any{"success": true, "method": a.Method, "value": a.Value, "times": times})
}

// navBack goes back one page.
func (r *run) navBack(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		ReasoningText string `json:"reasoningText"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	if st.Reasoning == "" {
		st.Reasoning = a.ReasoningText
	}
	st.Action = "go back"
	if err := r.p.GoBack(ctx, page.NavigateOptions{}); err != nil {
		_ = r.p.StopLoading(ctx) // as for goto
		return toolOutput{}, err
	}
	r.record(cacheStep{Type: toolNavBack})
	now, _ := r.p.URL(ctx)
	return jsonOutput(map[string]any{"success": true, "url": now}, false), nil
}

// scroll turns the wheel at the viewport's centre, or at a point of the
// latest screenshot in hybrid mode.
func (r *run) scroll(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Direction   string          `json:"direction"`
		Percentage  *float64        `json:"percentage"`
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	if a.Direction != "up" && a.Direction != "down" {
		return toolOutput{}, fmt.Errorf("%w: direction %q is not up or down", errInvalidArguments, a.Direction)
	}
	pct := float64(DefaultScrollPercentage)
	if a.Percentage != nil {
		pct = math.Max(1, math.Min(200, *a.Percentage))
	}
	vp, err := r.p.Viewport(ctx)
	if err != nil {
		return toolOutput{}, err
	}
	x, y := math.Floor(vp.Width/2), math.Floor(vp.Height/2)
	if len(bytes.TrimSpace(a.Coordinates)) > 0 && string(bytes.TrimSpace(a.Coordinates)) != "null" && r.opts.Mode == ModeHybrid {
		if x, y, err = r.point(ctx, a.Coordinates); err != nil {
			return toolOutput{}, err
		}
	}
	dy := math.Round(vp.Height * pct / 100)
	if a.Direction == "up" {
		dy = -dy
	}
	r.cursor(ctx, x, y)
	if err := r.p.ScrollAt(ctx, x, y, 0, dy); err != nil {
		return toolOutput{}, err
	}
	zero := 0.0
	r.record(cacheStep{Type: toolScroll, DeltaX: &zero, DeltaY: &dy, Anchor: &point{X: x, Y: y}})
	msg := fmt.Sprintf("scrolled %g%% %s (%gpx)", pct, a.Direction, math.Abs(dy))
	st.Action = msg
	return r.withScreenshot(ctx, toolScroll, map[string]any{"success": true, "message": msg, "scrolledPixels": math.Abs(dy)})
}

// wait sleeps up to MaxWait; ToolTimeout does not apply.
func (r *run) wait(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		TimeMs float64 `json:"timeMs"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	ms := int64(math.Max(0, math.Min(MaxWait, math.Round(a.TimeMs))))
	st.Action = fmt.Sprintf("waited %d ms", ms)
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return toolOutput{}, ctx.Err()
	}
	if ms > 0 {
		r.record(cacheStep{Type: toolWait, TimeMs: &ms})
	}
	out := map[string]any{"success": true, "waited": ms}
	if a.TimeMs > MaxWait {
		out["note"] = fmt.Sprintf("waits are capped at %d ms", MaxWait)
	}
	return r.withScreenshot(ctx, toolWait, out)
}

// think records the model's reasoning; it does nothing on the page.
func (r *run) think(_ context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Reasoning string `json:"reasoning"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	if st.Reasoning == "" {
		st.Reasoning = a.Reasoning
	}
	st.Action = "thought"
	return toolOutput{text: `{"acknowledged":true}`}, nil
}

// search asks the operator's search provider. The query may be anything
// the model wrote, so it is redacted as any step text is; results are
// what the provider found, bounded by the search package.
func (r *run) search(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Query string `json:"query"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	if err := search.CheckQuery(a.Query); err != nil {
		return toolOutput{}, fmt.Errorf("%w: query: %w", errInvalidArguments, err)
	}
	st.Instruction = r.redact(a.Query)
	hits, err := r.opts.Search.Search(ctx, a.Query)
	if err != nil {
		st.Action = "web search failed"
		return jsonOutput(map[string]any{"success": false, "error": r.redact(err.Error())}, true), nil
	}
	st.Action = "searched the web: 1 result"
	if len(hits) != 1 {
		st.Action = fmt.Sprintf("searched the web: %d results", len(hits))
	}
	for i := range hits {
		hits[i].Title, hits[i].URL, hits[i].Description = r.redact(hits[i].Title), r.redact(hits[i].URL), r.redact(hits[i].Description)
	}
	return jsonOutput(map[string]any{"success": true, "results": hits}, false), nil
}

// done ends the run.
func (r *run) done(_ context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Reasoning    string          `json:"reasoning"`
		TaskComplete bool            `json:"taskComplete"`
		Output       json.RawMessage `json:"output"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	if st.Reasoning == "" {
		st.Reasoning = a.Reasoning
	}
	st.TaskCompleted = a.TaskComplete
	st.Action = "done"
	msg := strings.TrimSpace(a.Reasoning)
	if msg == "" {
		if a.TaskComplete {
			msg = "the task is complete"
		} else {
			msg = "the task could not be completed"
		}
	}
	var output json.RawMessage
	if t := bytes.TrimSpace(a.Output); len(t) > 0 && string(t) != "null" {
		output = json.RawMessage(r.redactJSON(t))
	}
	return toolOutput{fin: &outcome{reason: toolDone, success: a.TaskComplete, completed: true, message: r.redact(msg), output: output}}, nil
}
