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
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/page"
)

// The hybrid mode's coordinate tools. The model's coordinate space is the
// pixels of the latest screenshot it was sent (bounded by
// MaxScreenshotWidth and MaxScreenshotHeight); points are scaled back to
// the viewport's CSS pixels before the input goes out, so a viewport larger
// than the bound, or a device scale factor above 1, is transparent to the
// model.

// screenshot captures the viewport within the bounds and makes it the
// model's coordinate space.
func (r *run) screenshot(ctx context.Context) (*page.Screenshot, error) {
	s, err := r.p.Screenshot(ctx, page.ScreenshotOptions{MaxWidth: MaxScreenshotWidth, MaxHeight: MaxScreenshotHeight})
	if err != nil {
		return nil, err
	}
	r.shot = s
	return s, nil
}

// screenshotTool sends the model a screenshot.
func (r *run) screenshotTool(ctx context.Context, _ json.RawMessage, st *Step) (toolOutput, error) {
	s, err := r.screenshot(ctx)
	if err != nil {
		return toolOutput{}, err
	}
	st.Action = fmt.Sprintf("took a %dx%d screenshot", s.Width, s.Height)
	u, _ := r.p.URL(ctx)
	out := jsonOutput(map[string]any{"success": true, "width": s.Width, "height": s.Height, "url": u}, false)
	out.image = s.PNG
	return out, nil
}

// withScreenshot answers with v and, in hybrid mode for the tools that
// change what is visible, a screenshot of the page after them. A
// screenshot that fails (the page is navigating, say) leaves the answer
// without one rather than failing the action.
func (r *run) withScreenshot(ctx context.Context, tool string, v map[string]any) (toolOutput, error) {
	if r.opts.Mode != ModeHybrid || !visionTools[tool] {
		return jsonOutput(v, false), nil
	}
	s, err := r.screenshot(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return toolOutput{}, err
		}
		v["screenshot"] = "unavailable: " + err.Error()
		return jsonOutput(v, false), nil
	}
	out := jsonOutput(v, false)
	out.image = s.PNG
	return out, nil
}

// settle waits, within settleAfterAction, for what an action started
// (a navigation, requests) to finish. A page that never goes quiet is not
// an error.
func (r *run) settle(ctx context.Context) {
	if err := r.p.Settle(ctx, settleAfterAction); err != nil && !errors.Is(err, page.ErrNotSettled) {
		r.log.Debug("page did not settle after an action", "error", err)
	}
}

// cursor draws the visible cursor at a viewport point when asked to.
func (r *run) cursor(ctx context.Context, x, y float64) {
	if !r.opts.HighlightCursor {
		return
	}
	if err := r.p.ShowCursor(ctx, x, y); err != nil {
		r.log.Debug("drawing the cursor failed", "error", err)
	}
}

// parsePoint reads [x, y] (or {"x": x, "y": y}) from a tool's arguments.
func parsePoint(raw json.RawMessage) (float64, float64, error) {
	var xy []float64
	if err := json.Unmarshal(raw, &xy); err == nil {
		if len(xy) != 2 {
			return 0, 0, fmt.Errorf("%w: coordinates need two numbers [x, y], got %d", errInvalidArguments, len(xy))
		}
		return xy[0], xy[1], nil
	}
	var o struct {
		X *float64 `json:"x"`
		Y *float64 `json:"y"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || o.X == nil || o.Y == nil {
		return 0, 0, fmt.Errorf("%w: coordinates are not [x, y]: %s", errInvalidArguments, raw)
	}
	return *o.X, *o.Y, nil
}

// point converts a point of the model's screenshot into the viewport.
// Before any screenshot, the space is the one a screenshot would have.
func (r *run) point(ctx context.Context, raw json.RawMessage) (float64, float64, error) {
	x, y, err := parsePoint(raw)
	if err != nil {
		return 0, 0, err
	}
	if r.shot == nil {
		if _, err := r.screenshot(ctx); err != nil {
			return 0, 0, err
		}
	}
	if !r.shot.Contains(x, y) {
		return 0, 0, fmt.Errorf("%w: (%g, %g) is outside the screenshot, which is %dx%d pixels",
			errInvalidArguments, x, y, r.shot.Width, r.shot.Height)
	}
	vx, vy := r.shot.ToViewport(x, y)
	return vx, vy, nil
}

// selectorAt names the element at a viewport point for the cache entry;
// "" when not caching or when it cannot tell.
func (r *run) selectorAt(ctx context.Context, x, y float64) string {
	if !r.opts.ShouldCache {
		return ""
	}
	xp, err := r.p.XPathAt(ctx, x, y)
	if err != nil {
		r.log.Debug("no selector at a point", "error", err)
		return ""
	}
	return xp
}

// recordAct records a coordinate action as the act it amounts to.
func (r *run) recordAct(describe string, a engine.Action) {
	if a.Selector == "" {
		return
	}
	r.record(cacheStep{Type: toolAct, Instruction: describe, Actions: []engine.Action{a}})
}

func (r *run) click(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Describe    string          `json:"describe"`
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	x, y, err := r.point(ctx, a.Coordinates)
	if err != nil {
		return toolOutput{}, err
	}
	st.Instruction = a.Describe
	st.Action = fmt.Sprintf("click at (%g, %g): %s", x, y, a.Describe)
	sel := r.selectorAt(ctx, x, y)
	r.cursor(ctx, x, y)
	if err := r.p.ClickAt(ctx, x, y, page.ButtonLeft, 1); err != nil {
		return toolOutput{}, err
	}
	r.recordAct(a.Describe, engine.Action{Selector: sel, Description: a.Describe, Method: "click"})
	r.settle(ctx)
	return r.withScreenshot(ctx, toolClick, map[string]any{"success": true, "describe": a.Describe, "coordinates": []float64{x, y}})
}

func (r *run) typeAt(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Describe    string          `json:"describe"`
		Text        string          `json:"text"`
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	x, y, err := r.point(ctx, a.Coordinates)
	if err != nil {
		return toolOutput{}, err
	}
	st.Instruction = a.Describe
	st.Action = fmt.Sprintf("type %q at (%g, %g): %s", a.Text, x, y, a.Describe)
	sel := r.selectorAt(ctx, x, y)
	r.cursor(ctx, x, y)
	if err := r.p.ClickAt(ctx, x, y, page.ButtonLeft, 1); err != nil {
		return toolOutput{}, err
	}
	if err := r.p.TypeText(ctx, engine.SubstituteVariables(a.Text, r.opts.Variables)); err != nil {
		return toolOutput{}, err
	}
	r.recordAct(a.Describe, engine.Action{Selector: sel, Description: a.Describe, Method: "type", Arguments: []string{a.Text}})
	r.settle(ctx)
	return r.withScreenshot(ctx, toolType, map[string]any{"success": true, "describe": a.Describe, "text": a.Text})
}

func (r *run) dragAndDrop(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Describe         string          `json:"describe"`
		StartCoordinates json.RawMessage `json:"startCoordinates"`
		EndCoordinates   json.RawMessage `json:"endCoordinates"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	sx, sy, err := r.point(ctx, a.StartCoordinates)
	if err != nil {
		return toolOutput{}, err
	}
	ex, ey, err := r.point(ctx, a.EndCoordinates)
	if err != nil {
		return toolOutput{}, err
	}
	st.Instruction = a.Describe
	st.Action = fmt.Sprintf("drag from (%g, %g) to (%g, %g): %s", sx, sy, ex, ey, a.Describe)
	from, to := r.selectorAt(ctx, sx, sy), r.selectorAt(ctx, ex, ey)
	r.cursor(ctx, sx, sy)
	if err := r.p.DragAt(ctx, []page.Point{{X: sx, Y: sy}, {X: ex, Y: ey}}); err != nil {
		return toolOutput{}, err
	}
	r.cursor(ctx, ex, ey)
	if to != "" {
		r.recordAct(a.Describe, engine.Action{Selector: from, Description: a.Describe, Method: "dragAndDrop", Arguments: []string{to}})
	}
	r.settle(ctx)
	return r.withScreenshot(ctx, toolDragAndDrop, map[string]any{"success": true, "describe": a.Describe})
}

func (r *run) clickAndHold(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Describe    string          `json:"describe"`
		Duration    float64         `json:"duration"`
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	x, y, err := r.point(ctx, a.Coordinates)
	if err != nil {
		return toolOutput{}, err
	}
	ms := int64(math.Max(0, math.Min(float64(page.MaxHold.Milliseconds()), math.Round(a.Duration))))
	st.Instruction = a.Describe
	st.Action = fmt.Sprintf("hold at (%g, %g) for %d ms: %s", x, y, ms, a.Describe)
	sel := r.selectorAt(ctx, x, y)
	r.cursor(ctx, x, y)
	if err := r.p.MouseHold(ctx, x, y, time.Duration(ms)*time.Millisecond); err != nil {
		return toolOutput{}, err
	}
	if sel != "" {
		r.record(cacheStep{Type: toolClickAndHold, Instruction: a.Describe, Selector: sel, DurationMs: ms})
	}
	r.settle(ctx)
	return r.withScreenshot(ctx, toolClickAndHold, map[string]any{"success": true, "describe": a.Describe, "durationMs": ms})
}

// fillFormVision clicks each field, selects its content and types the
// value over it, so that each field ends up holding its value.
func (r *run) fillFormVision(ctx context.Context, args json.RawMessage, st *Step) (toolOutput, error) {
	var a struct {
		Fields []struct {
			Action      string          `json:"action"`
			Value       string          `json:"value"`
			Coordinates json.RawMessage `json:"coordinates"`
		} `json:"fields"`
	}
	if err := decode(args, &a); err != nil {
		return toolOutput{}, err
	}
	if len(a.Fields) == 0 {
		return toolOutput{}, fmt.Errorf("%w: fields is empty", errInvalidArguments)
	}
	type field struct {
		x, y          float64
		action, value string
	}
	fields := make([]field, len(a.Fields))
	for i, f := range a.Fields {
		x, y, err := r.point(ctx, f.Coordinates)
		if err != nil {
			return toolOutput{}, fmt.Errorf("field %d: %w", i+1, err)
		}
		fields[i] = field{x: x, y: y, action: f.Action, value: f.Value}
	}
	st.Instruction = "fill " + strconv.Itoa(len(fields)) + " fields"
	var actions []engine.Action
	for i, f := range fields {
		sel := r.selectorAt(ctx, f.x, f.y)
		r.cursor(ctx, f.x, f.y)
		if err := r.p.ClickAt(ctx, f.x, f.y, page.ButtonLeft, 1); err != nil {
			return toolOutput{}, fmt.Errorf("field %d: %w", i+1, err)
		}
		if err := r.p.PressKey(ctx, "Control+A"); err != nil {
			return toolOutput{}, fmt.Errorf("field %d: %w", i+1, err)
		}
		if err := r.p.TypeText(ctx, engine.SubstituteVariables(f.value, r.opts.Variables)); err != nil {
			return toolOutput{}, fmt.Errorf("field %d: %w", i+1, err)
		}
		if sel != "" {
			actions = append(actions, engine.Action{Selector: sel, Description: f.action, Method: "fill", Arguments: []string{f.value}})
		}
	}
	st.Action = fmt.Sprintf("filled %d fields", len(fields))
	if len(actions) == len(fields) {
		wanted := make([]string, len(fields))
		for i, f := range fields {
			wanted[i] = f.action
		}
		r.record(cacheStep{Type: toolFillForm, Fields: wanted, Actions: actions})
	}
	r.settle(ctx)
	return r.withScreenshot(ctx, toolFillFormVision, map[string]any{"success": true, "fieldsCount": len(fields)})
}
