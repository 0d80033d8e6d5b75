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

package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ComputerAction is a scripted action of a computer-use model, answered in
// the shape of the provider a request speaks: an action of OpenAI's
// computer tool, an input of Anthropic's computer tool, a call of one of
// Gemini's predefined functions. Coordinates are in the provider's space
// (the screen's pixels for OpenAI and Anthropic, 0..999 for Google). An
// action a provider has no word for fails the test that scripts it there.
type ComputerAction struct {
	// native renders the action for a provider: OpenAI's action object,
	// Anthropic's input, or Google's function name and arguments.
	native func(provider string) (name string, args map[string]any, err error)
}

func action(f func(provider string) (string, map[string]any, error)) ComputerAction {
	return ComputerAction{native: f}
}

// lacks is the error of an action a provider does not have.
func lacks(provider, what string) (string, map[string]any, error) {
	return "", nil, fmt.Errorf("%s's computer use has no %s action", provider, what)
}

// Click is a left click at x, y.
func Click(x, y int) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		switch p {
		case OpenAI:
			return "", map[string]any{"type": "click", "button": "left", "x": x, "y": y}, nil
		case Anthropic:
			return "", map[string]any{"action": "left_click", "coordinate": []int{x, y}}, nil
		}
		return "click_at", map[string]any{"x": x, "y": y}, nil
	})
}

// DoubleClick is a double click at x, y.
func DoubleClick(x, y int) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		switch p {
		case OpenAI:
			return "", map[string]any{"type": "double_click", "x": x, "y": y}, nil
		case Anthropic:
			return "", map[string]any{"action": "double_click", "coordinate": []int{x, y}}, nil
		}
		return "double_click", map[string]any{"x": x, "y": y}, nil
	})
}

// Move moves the mouse to x, y (Google's hover_at).
func Move(x, y int) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		switch p {
		case OpenAI:
			return "", map[string]any{"type": "move", "x": x, "y": y}, nil
		case Anthropic:
			return "", map[string]any{"action": "mouse_move", "coordinate": []int{x, y}}, nil
		}
		return "hover_at", map[string]any{"x": x, "y": y}, nil
	})
}

// TypeText types text where the focus is. Google gets type_text_at
// without coordinates, as later Gemini models send it, and without
// clearing the field first.
func TypeText(text string) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		switch p {
		case OpenAI:
			return "", map[string]any{"type": "type", "text": text}, nil
		case Anthropic:
			return "", map[string]any{"action": "type", "text": text}, nil
		}
		return "type_text_at", map[string]any{"text": text, "clear_before_typing": false}, nil
	})
}

// TypeTextAt is Google's type_text_at: click at x, y, clear the field,
// type text and, with enter, press Enter.
func TypeTextAt(x, y int, text string, enter bool) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		if p != Google {
			return lacks(p, "type_text_at")
		}
		return "type_text_at", map[string]any{"x": x, "y": y, "text": text, "press_enter": enter}, nil
	})
}

// Keypress presses keys together, written the way each provider writes
// them: OpenAI's list (["CTRL", "A"]), Anthropic's and Google's chord
// ("CTRL+A").
func Keypress(keys ...string) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		switch p {
		case OpenAI:
			return "", map[string]any{"type": "keypress", "keys": keys}, nil
		case Anthropic:
			return "", map[string]any{"action": "key", "text": strings.Join(keys, "+")}, nil
		}
		return "key_combination", map[string]any{"keys": strings.Join(keys, "+")}, nil
	})
}

// Scroll scrolls down by dy (up when negative) with the mouse at x, y:
// OpenAI's scroll_y, Anthropic's scroll_amount in clicks of 100 pixels,
// Google's scroll_at magnitude.
func Scroll(x, y, dy int) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		dir, amount := "down", dy
		if dy < 0 {
			dir, amount = "up", -dy
		}
		switch p {
		case OpenAI:
			return "", map[string]any{"type": "scroll", "x": x, "y": y, "scroll_x": 0, "scroll_y": dy}, nil
		case Anthropic:
			return "", map[string]any{"action": "scroll", "coordinate": []int{x, y}, "scroll_direction": dir, "scroll_amount": amount / 100}, nil
		}
		return "scroll_at", map[string]any{"x": x, "y": y, "direction": dir, "magnitude": amount}, nil
	})
}

// Drag drags from x1, y1 to x2, y2.
func Drag(x1, y1, x2, y2 int) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		switch p {
		case OpenAI:
			return "", map[string]any{"type": "drag", "path": []any{map[string]int{"x": x1, "y": y1}, map[string]int{"x": x2, "y": y2}}}, nil
		case Anthropic:
			return "", map[string]any{"action": "left_click_drag", "start_coordinate": []int{x1, y1}, "coordinate": []int{x2, y2}}, nil
		}
		return "drag_and_drop", map[string]any{"x": x1, "y": y1, "destination_x": x2, "destination_y": y2}, nil
	})
}

// Wait waits: OpenAI's wait, Anthropic's wait of d, Google's
// wait_5_seconds.
func Wait(d time.Duration) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		switch p {
		case OpenAI:
			return "", map[string]any{"type": "wait"}, nil
		case Anthropic:
			return "", map[string]any{"action": "wait", "duration": d.Seconds()}, nil
		}
		return "wait_5_seconds", map[string]any{}, nil
	})
}

// Screenshot asks for a screenshot.
func Screenshot() ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		switch p {
		case OpenAI:
			return "", map[string]any{"type": "screenshot"}, nil
		case Anthropic:
			return "", map[string]any{"action": "screenshot"}, nil
		}
		return "take_screenshot", map[string]any{}, nil
	})
}

// Navigate is Google's navigate to url.
func Navigate(url string) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		if p != Google {
			return lacks(p, "navigate")
		}
		return "navigate", map[string]any{"url": url}, nil
	})
}

// Back is Google's go_back.
func Back() ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		if p != Google {
			return lacks(p, "go_back")
		}
		return "go_back", map[string]any{}, nil
	})
}

// NativeAction is an action written in one provider's own terms, for
// shapes the helpers above do not make: for OpenAI the action object, for
// Anthropic the computer tool's input (both JSON objects in args, name
// empty); for Google a function name and its JSON arguments.
func NativeAction(provider, name, args string) ComputerAction {
	return action(func(p string) (string, map[string]any, error) {
		if p != provider {
			return "", nil, fmt.Errorf("a native action of %s scripted for a %s request", provider, p)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(args), &m); err != nil || m == nil {
			return "", nil, fmt.Errorf("native action arguments %q are not a JSON object", args)
		}
		return name, m, nil
	})
}

// Computer answers a computer-use request with actions: for OpenAI's
// Responses API computer_call items (one per action for
// computer_use_preview, one with the actions batched for the computer
// tool), for Anthropic tool_use blocks of the computer tool, for Google
// functionCall parts. WithText adds the model's text, WithReasoning its
// reasoning, WithSafetyCheck a check the user must acknowledge. A Text
// reply is the model's final answer.
func Computer(actions ...ComputerAction) Reply {
	return Reply{kind: computerReply, actions: actions}
}

// WithReasoning adds the model's reasoning to a reply: an OpenAI
// Responses reasoning summary, an Anthropic thinking block, a Gemini
// thought.
func (r Reply) WithReasoning(text string) Reply {
	r.reasoning = text
	return r
}

// WithSafetyCheck adds to a Computer reply a safety check on its first
// action: OpenAI's pending_safety_checks (id "sc_llmtest_<request>"),
// Gemini's safety_decision (explanation message). Anthropic has none.
func (r Reply) WithSafetyCheck(code, message string) Reply {
	r.safetyCode, r.safetyMessage = code, message
	return r
}

// computerParts renders a Computer reply for a Chat-less provider:
// Anthropic's content blocks or Google's parts.
func computerParts(provider string, n int, reply Reply) ([]any, error) {
	if reply.safetyCode != "" && provider == Anthropic {
		return nil, fmt.Errorf("anthropic's computer use has no safety checks")
	}
	var out []any
	if reply.reasoning != "" {
		if provider == Anthropic {
			out = append(out, map[string]any{"type": "thinking", "thinking": reply.reasoning, "signature": "llmtest"})
		} else {
			out = append(out, map[string]any{"text": reply.reasoning, "thought": true})
		}
	}
	if reply.body != "" {
		if provider == Anthropic {
			out = append(out, map[string]any{"type": "text", "text": reply.body})
		} else {
			out = append(out, map[string]any{"text": reply.body})
		}
	}
	for i, a := range reply.actions {
		name, args, err := a.native(provider)
		if err != nil {
			return nil, err
		}
		if provider == Anthropic {
			out = append(out, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_llmtest_%d_%d", n, i), "name": "computer", "input": args})
			continue
		}
		if i == 0 && reply.safetyCode != "" {
			args["safety_decision"] = map[string]any{"decision": "require_confirmation", "explanation": reply.safetyMessage}
		}
		out = append(out, map[string]any{"functionCall": map[string]any{"name": name, "args": args}})
	}
	return out, nil
}

// responsesAnswer builds an answer of OpenAI's Responses API.
func responsesAnswer(model string, n int, reply Reply, req map[string]any) (any, error) {
	var output []any
	if reply.reasoning != "" {
		output = append(output, map[string]any{
			"type": "reasoning", "id": fmt.Sprintf("rs_llmtest_%d", n),
			"summary": []any{map[string]any{"type": "summary_text", "text": reply.reasoning}},
		})
	}
	if reply.body != "" {
		output = append(output, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_llmtest_%d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": reply.body, "annotations": []any{}}},
		})
	}
	switch reply.kind {
	case textReply, jsonReply:
	case computerReply:
		var actions []any
		for _, a := range reply.actions {
			_, args, err := a.native(OpenAI)
			if err != nil {
				return nil, err
			}
			actions = append(actions, args)
		}
		checks := []any{}
		if reply.safetyCode != "" {
			checks = append(checks, map[string]any{"id": fmt.Sprintf("sc_llmtest_%d", n), "code": reply.safetyCode, "message": reply.safetyMessage})
		}
		call := func(i int) map[string]any {
			return map[string]any{
				"type": "computer_call", "id": fmt.Sprintf("cu_llmtest_%d_%d", n, i), "call_id": fmt.Sprintf("call_llmtest_%d_%d", n, i),
				"status": "completed", "pending_safety_checks": checks,
			}
		}
		if batched(req) {
			c := call(0)
			c["actions"] = actions
			output = append(output, c)
			break
		}
		for i, a := range actions {
			c := call(i)
			c["action"] = a
			if i > 0 {
				c["pending_safety_checks"] = []any{}
			}
			output = append(output, c)
		}
	default:
		return nil, fmt.Errorf("this reply kind has no shape on OpenAI's Responses API")
	}
	u := reply.usage
	return map[string]any{
		"id":                  fmt.Sprintf("resp_llmtest_%d", n),
		"object":              "response",
		"created_at":          time.Now().Unix(),
		"status":              "completed",
		"model":               model,
		"output":              output,
		"error":               nil,
		"incomplete_details":  nil,
		"parallel_tool_calls": true,
		"tool_choice":         "auto",
		"tools":               []any{},
		"usage": map[string]any{
			"input_tokens":          u.Input,
			"input_tokens_details":  map[string]any{"cached_tokens": u.CachedInput},
			"output_tokens":         u.Output,
			"output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
			"total_tokens":          u.Input + u.Output,
		},
	}, nil
}

// batched reports whether a Responses request offers the computer tool of
// the GPT-5 models, whose calls batch their actions.
func batched(req map[string]any) bool {
	for _, t := range list(req["tools"]) {
		if tool, _ := t.(map[string]any); tool["type"] == "computer" {
			return true
		}
	}
	return false
}

// inspectResponses reads a request of OpenAI's Responses API into rec.
func inspectResponses(req map[string]any, rec *Request, texts *[]string, addImage func(dataURL string)) {
	if s, ok := req["instructions"].(string); ok {
		*texts = append(*texts, s)
	}
	content := func(c any) {
		if s, ok := c.(string); ok {
			*texts = append(*texts, s)
			return
		}
		for _, p := range list(c) {
			part, _ := p.(map[string]any)
			switch part["type"] {
			case "input_text", "output_text":
				if s, ok := part["text"].(string); ok {
					*texts = append(*texts, s)
				}
			case "input_image":
				if s, ok := part["image_url"].(string); ok {
					addImage(s)
				}
			}
		}
	}
	switch in := req["input"].(type) {
	case string:
		*texts = append(*texts, in)
	case []any:
		for _, it := range in {
			item, _ := it.(map[string]any)
			switch item["type"] {
			case "message", nil:
				content(item["content"])
			case "computer_call_output":
				out, _ := item["output"].(map[string]any)
				if s, ok := out["image_url"].(string); ok {
					addImage(s)
				}
				id, _ := item["call_id"].(string)
				url, _ := out["current_url"].(string)
				rec.ToolResults = append(rec.ToolResults, ToolResult{CallID: id, Name: "computer", Text: url})
			}
		}
	}
	for _, t := range list(req["tools"]) {
		tool, _ := t.(map[string]any)
		if name, ok := tool["name"].(string); ok {
			rec.Tools = append(rec.Tools, name)
		} else if typ, ok := tool["type"].(string); ok {
			rec.Tools = append(rec.Tools, typ)
		}
	}
	if c, ok := req["tool_choice"].(string); ok {
		rec.ToolChoice = c
	}
}
