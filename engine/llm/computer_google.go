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

package llm

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"google.golang.org/genai"
)

const (
	// googleSpace is the side of Gemini's normalised coordinate space:
	// coordinates run from 0 to 999.
	googleSpace = 1000
	// googleScroll is how far Gemini's scroll_at scrolls when it names no
	// magnitude, in its normalised units.
	googleScroll = 800
	// googleWait is how long wait_5_seconds waits.
	googleWait = 5 * time.Second
	// googleSearchURL is where Gemini's search function goes: the model
	// expects a search engine's start page.
	googleSearchURL = "https://www.google.com/"
)

// googleAliases are the names later Gemini models give to the predefined
// functions of gemini-2.5-computer-use.
var googleAliases = map[string]string{
	"click": "click_at", "left_click": "click_at",
	"type": "type_text_at", "type_text": "type_text_at",
	"hover": "hover_at", "scroll": "scroll_at", "drag": "drag_and_drop",
	"key": "key_combination", "keys": "key_combination", "key_press": "key_combination",
	"press_key": "key_combination", "press_keys": "key_combination", "hotkey": "key_combination",
	"screenshot": "take_screenshot", "wait": "wait_5_seconds",
}

// googleComputer runs Gemini's computer use tool. The client keeps the
// conversation, the latest screenshots verbatim; the model's contents are
// kept as they came, thought signatures included.
type googleComputer struct {
	models *genai.Models
	model  string
	opts   ComputerUseOptions

	contents []*genai.Content
}

func newGoogleComputer(cfg Config, model string, hc *http.Client, opts ComputerUseOptions) (*googleComputer, error) {
	b, err := newGoogle(cfg, model, hc)
	if err != nil {
		return nil, err
	}
	return &googleComputer{models: b.models, model: model, opts: opts}, nil
}

func (b *googleComputer) space() Size { return Size{googleSpace, googleSpace} }

func (b *googleComputer) apiError(err error) (int, string, bool) {
	return (&googleBackend{}).apiError(err)
}

func (b *googleComputer) step(ctx context.Context, turn *ComputerTurn, calls []computerCall) (*ComputerStep, []computerCall, error) {
	user := &genai.Content{Role: genai.RoleUser}
	for i, c := range calls {
		resp := map[string]any{"url": turn.URL}
		if out := c.outcome(turn); out != "" {
			resp["error"] = out
		}
		if len(c.checks) > 0 {
			// validateTurn made sure every check was acknowledged.
			resp["safety_acknowledgement"] = "true"
		}
		fr := &genai.FunctionResponse{Name: c.name, Response: resp}
		if !isGoogleCallID(c.id) {
			fr.ID = c.id
		}
		// The screen after all the actions goes with the last call.
		if i == len(calls)-1 {
			fr.Parts = []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: turn.Screenshot}}}
		}
		user.Parts = append(user.Parts, &genai.Part{FunctionResponse: fr})
	}
	if turn.Text != "" {
		user.Parts = append(user.Parts, &genai.Part{Text: turn.Text})
	}
	if len(calls) == 0 && len(turn.Screenshot) > 0 {
		user.Parts = append(user.Parts, &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: turn.Screenshot}})
		if turn.URL != "" {
			user.Parts = append(user.Parts, &genai.Part{Text: "Current URL: " + turn.URL})
		}
	}
	contents := keepLatestGoogleScreenshots(append(slices.Clone(b.contents), user), b.opts.KeepScreenshots)

	cfg := &genai.GenerateContentConfig{
		Tools: []*genai.Tool{{ComputerUse: &genai.ComputerUse{Environment: genai.EnvironmentBrowser}}},
	}
	if b.opts.System != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: b.opts.System}}}
	}
	if b.opts.MaxOutputTokens > 0 {
		cfg.MaxOutputTokens = int32(min(b.opts.MaxOutputTokens, math.MaxInt32))
	}
	resp, err := b.models.GenerateContent(ctx, b.model, contents, cfg)
	if err != nil {
		return nil, nil, err
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		if fb := resp.PromptFeedback; fb != nil && fb.BlockReason != "" {
			return nil, nil, fmt.Errorf("%w: the prompt was blocked: %s %s", ErrInvalidOutput, fb.BlockReason, fb.BlockReasonMessage)
		}
		reason := ""
		if len(resp.Candidates) > 0 {
			reason = string(resp.Candidates[0].FinishReason)
		}
		return nil, nil, fmt.Errorf("%w: the answer has no content (finish reason %q)", ErrInvalidOutput, reason)
	}
	cand := resp.Candidates[0]
	step := &ComputerStep{FinishReason: string(cand.FinishReason)}
	var texts, reasoning []string
	var next []computerCall
	// Made-up ids number the calls of the conversation.
	n := 0
	for _, c := range contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				n++
			}
		}
	}
	for _, p := range cand.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			call := computerCall{id: fc.ID, name: fc.Name, first: len(step.Actions)}
			if call.id == "" {
				call.id = googleCallID(n)
			}
			n++
			if sd, ok := fc.Args["safety_decision"].(map[string]any); ok && sd["decision"] == "require_confirmation" {
				msg, _ := sd["explanation"].(string)
				call.checks = []SafetyCheck{{ID: "safety_" + call.id, Code: "require_confirmation", Message: msg}}
			}
			actions, err := googleComputerActions(fc.Name, fc.Args)
			if err != nil {
				call.unsupported = err.Error()
			}
			call.n = len(actions)
			step.Actions = append(step.Actions, actions...)
			next = append(next, call)
		case p.Thought:
			reasoning = append(reasoning, p.Text)
		case p.Text != "":
			texts = append(texts, p.Text)
		}
	}
	step.Text = strings.Join(texts, "")
	step.Reasoning = strings.Join(reasoning, "")
	if u := resp.UsageMetadata; u != nil {
		step.Usage = Usage{
			InputTokens:       int64(u.PromptTokenCount),
			OutputTokens:      int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			ReasoningTokens:   int64(u.ThoughtsTokenCount),
			CachedInputTokens: int64(u.CachedContentTokenCount),
		}
	}
	if cand.Content.Role == "" {
		cand.Content.Role = genai.RoleModel
	}
	b.contents = append(contents, cand.Content)
	return step, next, nil
}

// googleArgs reads the arguments of a predefined function.
type googleArgs map[string]any

// point returns the normalised coordinate at keys x and y, clamped to the
// space.
func (a googleArgs) point(x, y string) (Point, error) {
	px, okx := a[x].(float64)
	py, oky := a[y].(float64)
	if !okx || !oky || math.IsNaN(px) || math.IsNaN(py) {
		return Point{}, fmt.Errorf("the arguments %s and %s must be numbers", x, y)
	}
	return Point{clamp(int(px), 0, googleSpace-1), clamp(int(py), 0, googleSpace-1)}, nil
}

func (a googleArgs) str(k string) string {
	s, _ := a[k].(string)
	return s
}

func (a googleArgs) flag(k string, def bool) bool {
	if b, ok := a[k].(bool); ok {
		return b
	}
	return def
}

// googleComputerActions maps a call of one of Gemini's predefined
// functions to the actions that do it.
func googleComputerActions(name string, raw map[string]any) ([]ComputerAction, error) {
	a := googleArgs(raw)
	if alias, ok := googleAliases[name]; ok {
		name = alias
	}
	switch name {
	case "open_web_browser", "take_screenshot":
		return []ComputerAction{{Type: ActionScreenshot}}, nil
	case "wait_5_seconds":
		return []ComputerAction{{Type: ActionWait, Duration: googleWait}}, nil
	case "go_back":
		return []ComputerAction{{Type: ActionBack}}, nil
	case "go_forward":
		return []ComputerAction{{Type: ActionForward}}, nil
	case "search":
		return []ComputerAction{{Type: ActionNavigate, URL: googleSearchURL}}, nil
	case "navigate":
		u := a.str("url")
		if u == "" {
			return nil, fmt.Errorf("navigate needs a url")
		}
		return []ComputerAction{{Type: ActionNavigate, URL: u}}, nil
	case "click_at", "hover_at", "double_click", "triple_click", "right_click", "middle_click", "move":
		p, err := a.point("x", "y")
		if err != nil {
			return nil, err
		}
		action := ComputerAction{Type: ActionClick, X: p.X, Y: p.Y, Button: "left"}
		switch name {
		case "hover_at", "move":
			action = ComputerAction{Type: ActionMove, X: p.X, Y: p.Y}
		case "double_click":
			action.Type, action.Button = ActionDoubleClick, ""
		case "triple_click":
			action.Type, action.Button = ActionTripleClick, ""
		case "right_click", "middle_click":
			action.Button = strings.TrimSuffix(name, "_click")
		}
		return []ComputerAction{action}, nil
	case "type_text_at":
		text, ok := a["text"].(string)
		if !ok {
			return nil, fmt.Errorf("type_text_at needs a text")
		}
		var actions []ComputerAction
		// Later models type where the focus is, without coordinates.
		if _, hasX := a["x"]; hasX {
			p, err := a.point("x", "y")
			if err != nil {
				return nil, err
			}
			actions = append(actions, ComputerAction{Type: ActionClick, X: p.X, Y: p.Y, Button: "left"})
		}
		if a.flag("clear_before_typing", true) {
			actions = append(actions,
				ComputerAction{Type: ActionKeypress, Keys: []string{"Control", "a"}},
				ComputerAction{Type: ActionKeypress, Keys: []string{"Backspace"}})
		}
		actions = append(actions, ComputerAction{Type: ActionType, Text: text})
		if a.flag("press_enter", false) {
			actions = append(actions, ComputerAction{Type: ActionKeypress, Keys: []string{"Enter"}})
		}
		return actions, nil
	case "key_combination":
		var keys []string
		switch k := a["keys"].(type) {
		case string:
			keys = splitChord(k)
		case []any:
			for _, v := range k {
				if s, ok := v.(string); ok {
					keys = append(keys, s)
				}
			}
		default:
			keys = splitChord(a.str("key"))
		}
		keys = domKeys(keys)
		if len(keys) == 0 {
			return nil, fmt.Errorf("key_combination needs keys")
		}
		return []ComputerAction{{Type: ActionKeypress, Keys: keys}}, nil
	case "scroll_document":
		// The whole page scrolls by a screen, as the keyboard would.
		key := map[string]string{"up": "PageUp", "down": "PageDown", "left": "ArrowLeft", "right": "ArrowRight"}[strings.ToLower(a.str("direction"))]
		if key == "" {
			return nil, fmt.Errorf("scroll_document needs a direction: up, down, left or right")
		}
		return []ComputerAction{{Type: ActionKeypress, Keys: []string{key}}}, nil
	case "scroll_at":
		p, err := a.point("x", "y")
		if err != nil {
			return nil, err
		}
		d := googleScroll
		for _, k := range []string{"magnitude", "magnitude_in_pixels"} {
			if m, ok := a[k].(float64); ok && m >= 0 {
				d = int(m)
				break
			}
		}
		action := ComputerAction{Type: ActionScroll, X: p.X, Y: p.Y}
		switch strings.ToLower(a.str("direction")) {
		case "up":
			action.ScrollY = -d
		case "down", "":
			action.ScrollY = d
		case "left":
			action.ScrollX = -d
		case "right":
			action.ScrollX = d
		default:
			return nil, fmt.Errorf("scroll_at needs a direction: up, down, left or right")
		}
		return []ComputerAction{action}, nil
	case "drag_and_drop":
		from, err := a.point("x", "y")
		if err != nil {
			if from, err = a.point("start_x", "start_y"); err != nil {
				return nil, err
			}
		}
		to, err := a.point("destination_x", "destination_y")
		if err != nil {
			if to, err = a.point("end_x", "end_y"); err != nil {
				return nil, err
			}
		}
		return []ComputerAction{{Type: ActionDrag, Path: []Point{from, to}}}, nil
	}
	return nil, fmt.Errorf("unsupported function %q", name)
}

// keepLatestGoogleScreenshots returns contents with the images of all but
// the latest keep user contents that carry any dropped (function
// responses) or replaced by a note.
func keepLatestGoogleScreenshots(contents []*genai.Content, keep int) []*genai.Content {
	seen := 0
	for i := len(contents) - 1; i >= 0; i-- {
		c := contents[i]
		if c.Role != genai.RoleUser || !googleHasImage(c) {
			continue
		}
		seen++
		if seen <= keep {
			continue
		}
		out := &genai.Content{Role: c.Role}
		for _, p := range c.Parts {
			switch {
			case p.InlineData != nil:
				p = &genai.Part{Text: omittedScreenshot}
			case p.FunctionResponse != nil && len(p.FunctionResponse.Parts) > 0:
				fr := *p.FunctionResponse
				fr.Parts = nil
				p = &genai.Part{FunctionResponse: &fr}
			}
			out.Parts = append(out.Parts, p)
		}
		contents[i] = out
	}
	return contents
}

func googleHasImage(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p.InlineData != nil || p.FunctionResponse != nil && len(p.FunctionResponse.Parts) > 0 {
			return true
		}
	}
	return false
}
