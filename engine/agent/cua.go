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
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
)

// The cua mode runs the provider's own computer-use loop (engine/llm's
// ComputerUse): each turn sends a screenshot of the viewport and the URL,
// the model answers with actions in its coordinate space, and the agent
// runs them as real CDP input, scaled to the viewport. maxSteps counts the
// actions run; an answer with nothing to run counts as one.

// Step types of the cua mode besides the model's action types.
const (
	// cuaDone is the step of the model's final answer.
	cuaDone = "done"
	// cuaNothing is the step of an answer whose actions the provider's
	// layer could not map (the model is told so by it).
	cuaNothing = "none"
	// cuaSafetyCheck is the step of a safety check acknowledged.
	cuaSafetyCheck = "safetyCheck"
)

// cuaRun is one run of the cua mode.
type cuaRun struct {
	*run
	cu llm.ComputerUse
	// space is the model's coordinate space.
	space llm.Size
	// actions counts the actions run, and the answers without one.
	actions int
}

// runCUA runs the cua mode. Its options have been checked and defaulted as
// the other modes' are.
func runCUA(ctx context.Context, r *run) (*Result, error) {
	opts := r.opts
	// Replayed steps count as the actions they were.
	c := &cuaRun{run: r, actions: r.replayed}
	shot, err := c.screenshot(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("agent: %w", ctx.Err())
		}
		return nil, fmt.Errorf("agent: the first screenshot: %w", err)
	}
	at, note := r.takeOver(ctx)
	cu, err := opts.ComputerUse(llm.ComputerUseOptions{
		Screen: llm.Size{Width: shot.Width, Height: shot.Height},
		System: cuaSystemPrompt(opts.Variables, opts.MaxSteps, r.redact(at), opts.SystemPrompt, r.now()),
	})
	if err != nil {
		return nil, fmt.Errorf("agent: opening the computer-use conversation: %w", err)
	}
	c.cu, c.space = cu, cu.Space()
	c.signature.Model = cu.Model()
	c.log.Info("agent started", "maxSteps", opts.MaxSteps, "model", cu.Model(),
		"screen", fmt.Sprintf("%dx%d", shot.Width, shot.Height), "space", fmt.Sprintf("%dx%d", c.space.Width, c.space.Height))
	return c.loop(ctx, shot, note)
}

// screenshot captures the viewport within the bounds; the latest one is
// what the model sees, so its viewport is where actions land. A page
// between documents cannot be captured for a moment: the capture is tried
// again once it settles.
func (c *cuaRun) screenshot(ctx context.Context) (*page.Screenshot, error) {
	var err error
	for range 3 {
		var s *page.Screenshot
		if s, err = c.run.screenshot(ctx); err == nil {
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.settle(ctx)
	}
	return nil, err
}

func (c *cuaRun) loop(ctx context.Context, shot *page.Screenshot, note string) (*Result, error) {
	start := c.now()
	u, _ := c.p.URL(ctx)
	text := c.opts.Instruction
	if note != "" {
		text += "\n\n" + note
	}
	turn := llm.ComputerTurn{Text: text, Screenshot: shot.PNG, URL: c.redact(u)}
	for {
		step, err := c.cu.Step(ctx, turn)
		if err != nil {
			if ctx.Err() != nil {
				return c.partial(), fmt.Errorf("agent: step %d: %w", len(c.steps), ctx.Err())
			}
			// The model never gets a variable's value, so its errors hold none.
			return c.partial(), fmt.Errorf("agent: step %d: calling the model: %w", len(c.steps), err)
		}
		c.usage = c.usage.Add(step.Usage)
		reasoning := c.redact(joinNonEmpty(step.Reasoning, step.Text))
		if step.Done {
			return c.finish(ctx, c.done(ctx, step), start)
		}
		acks, fin := c.safetyChecks(ctx, step.SafetyChecks, reasoning)
		if fin != nil {
			return c.finish(ctx, fin, start)
		}
		executed, failure, fin, err := c.actAll(ctx, step, reasoning)
		if err != nil {
			return c.partial(), err
		}
		if fin != nil {
			return c.finish(ctx, fin, start)
		}
		if shot, err = c.screenshot(ctx); err != nil {
			if ctx.Err() != nil {
				return c.partial(), fmt.Errorf("agent: step %d: %w", len(c.steps), ctx.Err())
			}
			return c.partial(), fmt.Errorf("agent: step %d: the screenshot for the model: %w", len(c.steps), err)
		}
		u, _ := c.p.URL(ctx)
		turn = llm.ComputerTurn{
			Screenshot:               shot.PNG,
			URL:                      c.redact(u),
			Executed:                 executed,
			Error:                    failure,
			AcknowledgedSafetyChecks: acks,
		}
	}
}

// done ends the run on the model's final answer.
func (c *cuaRun) done(ctx context.Context, step *llm.ComputerStep) *outcome {
	msg := c.redact(strings.TrimSpace(step.Text))
	if msg == "" {
		msg = "the model finished without a message"
	}
	u, _ := c.p.URL(ctx)
	c.report(Step{Type: cuaDone, Action: "done", Reasoning: c.redact(strings.TrimSpace(step.Reasoning)), TaskCompleted: true, PageURL: c.redact(u)})
	return &outcome{reason: cuaDone, success: true, completed: true, message: msg}
}

// safetyChecks asks Options.AcknowledgeSafetyCheck about each check; the
// run goes on only when every one is acknowledged. A stop is an outcome.
func (c *cuaRun) safetyChecks(ctx context.Context, checks []llm.SafetyCheck, reasoning string) ([]string, *outcome) {
	if len(checks) == 0 {
		return nil, nil
	}
	u, _ := c.p.URL(ctx)
	var ids []string
	for _, sc := range checks {
		what := c.redact(strings.TrimSpace(sc.Code + ": " + sc.Message))
		if c.opts.AcknowledgeSafetyCheck == nil || !c.opts.AcknowledgeSafetyCheck(sc) {
			c.log.Info("agent stopped on a safety check", "code", sc.Code)
			return nil, &outcome{
				reason: "safetyCheck",
				message: fmt.Sprintf("the model asked for confirmation before its next actions (safety check %s); "+
					"the run stopped: cua runs do not confirm safety checks on their own", what),
			}
		}
		c.log.Info("agent acknowledged a safety check", "code", sc.Code)
		c.report(Step{Type: cuaSafetyCheck, Action: "acknowledged safety check " + what, Reasoning: reasoning, PageURL: c.redact(u)})
		ids = append(ids, sc.ID)
	}
	return ids, nil
}

// actAll runs a step's actions in order until one fails, and returns how
// many ran and the failure to tell the model. fin ends the run (maxSteps);
// an error ends it on ctx or a page that is gone.
func (c *cuaRun) actAll(ctx context.Context, step *llm.ComputerStep, reasoning string) (executed int, failure string, fin *outcome, err error) {
	if len(step.Actions) == 0 {
		// Every call of the answer was unsupported; the provider's layer
		// tells the model. It counts, so that such answers cannot go on
		// for ever.
		if fin := c.maxSteps(); fin != nil {
			return 0, "", fin, nil
		}
		c.actions++
		u, _ := c.p.URL(ctx)
		c.report(Step{Type: cuaNothing, Action: "the model's answer had no action this agent can run; the model was told", Reasoning: reasoning, PageURL: c.redact(u)})
		return 0, "", nil, nil
	}
	for i, a := range step.Actions {
		if fin := c.maxSteps(); fin != nil {
			return i, "", fin, nil
		}
		failed, err := c.act(ctx, a, reasoning)
		if err != nil {
			return i, "", nil, err
		}
		if failed != "" {
			return i, failed, nil, nil
		}
	}
	return len(step.Actions), "", nil, nil
}

// maxSteps ends the run when the actions have reached Options.MaxSteps.
func (c *cuaRun) maxSteps() *outcome {
	if c.actions < c.opts.MaxSteps {
		return nil
	}
	return &outcome{
		reason: "maxSteps",
		message: fmt.Sprintf("the agent stopped after %d actions without finishing: it reached maxSteps (%d)",
			c.actions, c.opts.MaxSteps),
	}
}

// cuaTimeless are the actions ToolTimeout does not bound: they are
// bounded by their own duration.
var cuaTimeless = map[llm.ComputerActionType]bool{llm.ActionWait: true, llm.ActionHoldKey: true, llm.ActionScreenshot: true}

// act runs one action and reports its step. A failure is returned as the
// text for the model; an error ends the run (ctx ended).
func (c *cuaRun) act(ctx context.Context, a llm.ComputerAction, reasoning string) (string, error) {
	index := len(c.steps)
	started := c.now()
	pageURL, err := c.p.URL(ctx)
	if err != nil && ctx.Err() != nil {
		return "", fmt.Errorf("agent: step %d (%s): %w", index, a.Type, ctx.Err())
	}
	st := Step{Type: string(a.Type), Reasoning: reasoning, PageURL: pageURL}
	tctx, cancel := ctx, context.CancelFunc(func() {})
	if !cuaTimeless[a.Type] {
		tctx, cancel = context.WithTimeout(ctx, c.opts.ToolTimeout)
	}
	err = c.do(tctx, a, &st)
	if err == nil && !cuaTimeless[a.Type] {
		// Let what the action started (a navigation, requests) finish
		// before the next action or the screenshot.
		c.settle(ctx)
	}
	cancel()
	c.actions++
	failure := ""
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("agent: step %d (%s): %w", index, a.Type, ctx.Err())
		}
		if errors.Is(tctx.Err(), context.DeadlineExceeded) {
			failure = fmt.Sprintf("TimeoutError: the %s action did not finish within %s and was stopped.", a.Type, c.opts.ToolTimeout)
			if st.Action == "" {
				st.Action = "timed out"
			} else {
				st.Action += ": timed out"
			}
		} else {
			failure = c.redact(err.Error())
			if st.Action == "" {
				st.Action = "failed: " + failure
			} else {
				st.Action += ": failed: " + failure
			}
		}
		// A failed action may have changed the page all the same.
		c.uncache(index, a.Type)
		if a.Type == llm.ActionNavigate || a.Type == llm.ActionBack || a.Type == llm.ActionForward ||
			a.Type == llm.ActionClick && (a.Button == "back" || a.Button == "forward") {
			// A navigation left pending would hold the screenshot.
			if err := c.p.StopLoading(ctx); err != nil {
				c.log.Debug("stopping a navigation failed", "error", err)
			}
		}
	}
	st.TimeMs = c.now().Sub(started).Milliseconds()
	st.Reasoning, st.Action, st.PageURL = c.redact(st.Reasoning), c.redact(st.Action), c.redact(st.PageURL)
	c.log.Info("agent step", "index", index, "action", string(a.Type), "failed", failure != "", "timeMs", st.TimeMs)
	c.report(st)
	return failure, nil
}

// uncache notes that the step at index cannot be replayed, which leaves
// the run without a cache entry. The first reason is kept.
func (c *cuaRun) uncache(index int, t llm.ComputerActionType) {
	if c.opts.ShouldCache && c.uncacheable == "" {
		c.uncacheable = fmt.Sprintf("step %d (%s) cannot be replayed", index, t)
	}
}

// viewportSize is the viewport of the latest screenshot, in whole CSS
// pixels.
func (c *cuaRun) viewportSize() llm.Size {
	vp := c.shot.Viewport
	return llm.Size{Width: int(math.Round(vp.Width)), Height: int(math.Round(vp.Height))}
}

// do runs an action on the page, its coordinates scaled from the model's
// space to the viewport the latest screenshot showed.
func (c *cuaRun) do(ctx context.Context, a llm.ComputerAction, st *Step) error {
	a = a.Scale(c.space, c.viewportSize())
	x, y := float64(a.X), float64(a.Y)
	index := len(c.steps)
	if len(a.Keys) > 0 && (a.Type == llm.ActionClick || a.Type == llm.ActionDoubleClick || a.Type == llm.ActionTripleClick || a.Type == llm.ActionScroll) {
		st.Action = fmt.Sprintf("%s at (%g, %g) holding %s", a.Type, x, y, strings.Join(a.Keys, "+"))
		return fmt.Errorf("holding keys (%s) during a %s is not supported: do it without them, or another way", strings.Join(a.Keys, "+"), a.Type)
	}
	switch a.Type {
	case llm.ActionClick:
		switch a.Button {
		case "back":
			st.Action = "go back (mouse back button)"
			return c.history(ctx, -1)
		case "forward":
			st.Action = "go forward (mouse forward button)"
			return c.history(ctx, 1)
		}
		button := page.MouseButton(a.Button)
		if a.Button == "" {
			button = page.ButtonLeft
		}
		st.Action = fmt.Sprintf("click at (%g, %g)", x, y)
		if button != page.ButtonLeft {
			st.Action = fmt.Sprintf("%s click at (%g, %g)", button, x, y)
		}
		return c.click(ctx, x, y, button, 1, index, a.Type)
	case llm.ActionDoubleClick:
		st.Action = fmt.Sprintf("double click at (%g, %g)", x, y)
		return c.click(ctx, x, y, page.ButtonLeft, 2, index, a.Type)
	case llm.ActionTripleClick:
		st.Action = fmt.Sprintf("triple click at (%g, %g)", x, y)
		return c.click(ctx, x, y, page.ButtonLeft, 3, index, a.Type)
	case llm.ActionMove:
		st.Action = fmt.Sprintf("move the mouse to (%g, %g)", x, y)
		sel := c.selectorAt(ctx, x, y)
		c.cursor(ctx, x, y)
		if err := c.p.MoveTo(ctx, x, y); err != nil {
			return err
		}
		c.recordAt(index, a.Type, sel, "hover", st.Action)
	case llm.ActionMouseDown, llm.ActionMouseUp:
		down := a.Type == llm.ActionMouseDown
		st.Action = fmt.Sprintf("press the left button at (%g, %g)", x, y)
		if !down {
			st.Action = fmt.Sprintf("release the left button at (%g, %g)", x, y)
		}
		c.cursor(ctx, x, y)
		var err error
		if down {
			err = c.p.MouseDown(ctx, x, y, page.ButtonLeft)
		} else {
			err = c.p.MouseUp(ctx, x, y, page.ButtonLeft)
		}
		if err != nil {
			return err
		}
		c.uncache(index, a.Type)
	case llm.ActionDrag:
		if len(a.Path) < 2 {
			return fmt.Errorf("a drag needs a path of at least two points, got %d", len(a.Path))
		}
		path := make([]page.Point, len(a.Path))
		for i, p := range a.Path {
			path[i] = page.Point{X: float64(p.X), Y: float64(p.Y)}
		}
		from, to := path[0], path[len(path)-1]
		st.Action = fmt.Sprintf("drag from (%g, %g) to (%g, %g)", from.X, from.Y, to.X, to.Y)
		fromSel, toSel := c.selectorAt(ctx, from.X, from.Y), c.selectorAt(ctx, to.X, to.Y)
		c.cursor(ctx, from.X, from.Y)
		if err := c.p.DragAt(ctx, path); err != nil {
			return err
		}
		c.cursor(ctx, to.X, to.Y)
		if fromSel == "" || toSel == "" {
			c.uncache(index, a.Type)
		} else {
			c.record(cacheStep{Type: toolAct, Instruction: st.Action, Actions: []engine.Action{
				{Selector: fromSel, Description: st.Action, Method: "dragAndDrop", Arguments: []string{toSel}}}})
		}
	case llm.ActionScroll:
		dx, dy := float64(a.ScrollX), float64(a.ScrollY)
		st.Action = fmt.Sprintf("scroll by (%g, %g) at (%g, %g)", dx, dy, x, y)
		c.cursor(ctx, x, y)
		if err := c.p.ScrollAt(ctx, x, y, dx, dy); err != nil {
			return err
		}
		c.record(cacheStep{Type: toolScroll, DeltaX: &dx, DeltaY: &dy, Anchor: &point{X: x, Y: y}})
	case llm.ActionType:
		st.Action = fmt.Sprintf("type %q", a.Text)
		// The only place a variable's value is put in: the model wrote
		// %name%, the page gets the value.
		if err := c.p.TypeText(ctx, engine.SubstituteVariables(a.Text, c.opts.Variables)); err != nil {
			return err
		}
		c.record(cacheStep{Type: toolKeys, Method: "type", Text: a.Text, Times: 1})
	case llm.ActionKeypress:
		chord := keyChord(a.Keys)
		st.Action = "press " + chord
		if err := c.p.PressKey(ctx, chord); err != nil {
			return err
		}
		c.record(cacheStep{Type: toolKeys, Method: "press", Keys: chord, Times: 1})
	case llm.ActionHoldKey:
		chord := keyChord(a.Keys)
		d := min(max(a.Duration, 0), page.MaxHold)
		st.Action = fmt.Sprintf("hold %s for %d ms", chord, d.Milliseconds())
		if err := c.p.HoldKey(ctx, chord, d); err != nil {
			return err
		}
		c.uncache(index, a.Type)
	case llm.ActionWait:
		return c.wait(ctx, a.Duration, st)
	case llm.ActionScreenshot:
		// Every turn brings a fresh screenshot.
		st.Action = "screenshot"
		return nil
	case llm.ActionNavigate:
		st.Action = "navigate to " + a.URL
		u, perr := url.Parse(strings.TrimSpace(a.URL))
		if ok := perr == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https"); !ok {
			return fmt.Errorf("only absolute http and https URLs can be opened, not %q", a.URL)
		}
		if err := c.p.Navigate(ctx, u.String(), page.NavigateOptions{WaitUntil: page.WaitLoad}); err != nil {
			return err
		}
		c.record(cacheStep{Type: toolGoto, URL: u.String(), WaitUntil: string(page.WaitLoad)})
	case llm.ActionBack:
		st.Action = "go back"
		return c.history(ctx, -1)
	case llm.ActionForward:
		st.Action = "go forward"
		return c.history(ctx, 1)
	default:
		return fmt.Errorf("the action %q is not supported", a.Type)
	}
	return nil
}

// click clicks count times and records a left click or double click as
// the act it amounts to.
func (c *cuaRun) click(ctx context.Context, x, y float64, button page.MouseButton, count, index int, t llm.ComputerActionType) error {
	sel := c.selectorAt(ctx, x, y)
	c.cursor(ctx, x, y)
	if err := c.p.ClickAt(ctx, x, y, button, count); err != nil {
		return err
	}
	switch {
	case button == page.ButtonLeft && count == 1:
		c.recordAt(index, t, sel, "click", fmt.Sprintf("click at (%g, %g)", x, y))
	case button == page.ButtonLeft && count == 2:
		c.recordAt(index, t, sel, "doubleClick", fmt.Sprintf("double click at (%g, %g)", x, y))
	default:
		// The engine's acts have no triple, right or middle click.
		c.uncache(index, t)
	}
	return nil
}

// recordAt records a pointer action as an act on the element that was
// under the point, or notes that it cannot be replayed.
func (c *cuaRun) recordAt(index int, t llm.ComputerActionType, sel, method, describe string) {
	if sel == "" {
		c.uncache(index, t)
		return
	}
	c.record(cacheStep{Type: toolAct, Instruction: describe, Actions: []engine.Action{{Selector: sel, Description: describe, Method: method}}})
}

// history goes back (-1) or forward (1) and waits for the page.
func (c *cuaRun) history(ctx context.Context, delta int) error {
	if delta < 0 {
		if err := c.p.GoBack(ctx, page.NavigateOptions{}); err != nil {
			return err
		}
		c.record(cacheStep{Type: toolNavBack})
		return nil
	}
	if err := c.p.GoForward(ctx, page.NavigateOptions{}); err != nil {
		return err
	}
	c.record(cacheStep{Type: cacheNavForward})
	return nil
}

// wait sleeps d, at most MaxWait milliseconds.
func (c *cuaRun) wait(ctx context.Context, d time.Duration, st *Step) error {
	d = min(max(d, 0), time.Duration(MaxWait)*time.Millisecond)
	st.Action = fmt.Sprintf("waited %d ms", d.Milliseconds())
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	if ms := d.Milliseconds(); ms > 0 {
		c.record(cacheStep{Type: toolWait, TimeMs: &ms})
	}
	return nil
}

// keyChord writes DOM key names as a PressKey combination: "Control+a",
// "+" for the plus key.
func keyChord(keys []string) string {
	return strings.Join(keys, "+")
}

// joinNonEmpty joins the non-empty, trimmed texts with line breaks.
func joinNonEmpty(texts ...string) string {
	var out []string
	for _, t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}
