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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// answer builds the success body of reply in provider's format. Usage is
// split the provider's way: Anthropic counts cache reads apart from
// input_tokens, Gemini counts thoughts apart from candidates.
func answer(provider, model string, n int, reply Reply, req map[string]any) (any, error) {
	u := reply.usage
	if reply.kind == computerReply && provider == OpenAI {
		return nil, fmt.Errorf("a Computer reply for a Chat Completions request: OpenAI's computer use speaks the Responses API")
	}
	calls, err := scriptedCalls(provider, n, reply)
	if err != nil {
		return nil, err
	}
	switch provider {
	case OpenAI:
		message := map[string]any{"role": "assistant", "content": reply.body, "refusal": nil}
		finish := "stop"
		if reply.kind == toolCallsReply {
			finish = "tool_calls"
			if reply.body == "" {
				message["content"] = nil
			}
			wire := make([]any, len(calls))
			for i, c := range calls {
				wire[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
			}
			message["tool_calls"] = wire
		}
		return map[string]any{
			"id":      fmt.Sprintf("chatcmpl-llmtest-%d", n),
			"object":  "chat.completion",
			"created": time.Now().Unix(),
			"model":   model,
			"choices": []any{map[string]any{
				"index":         0,
				"message":       message,
				"finish_reason": finish,
				"logprobs":      nil,
			}},
			"usage": map[string]any{
				"prompt_tokens":             u.Input,
				"completion_tokens":         u.Output,
				"total_tokens":              u.Input + u.Output,
				"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedInput},
				"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
			},
		}, nil

	case Anthropic:
		content := []any{map[string]any{"type": "text", "text": reply.body}}
		stop := "end_turn"
		if tool := forcedTool(req); reply.kind == jsonReply && tool != "" {
			if !json.Valid([]byte(reply.body)) {
				return nil, fmt.Errorf("JSON reply %q is not valid JSON, which a tool_use input must be", reply.body)
			}
			content = []any{map[string]any{
				"type":  "tool_use",
				"id":    fmt.Sprintf("toolu_llmtest_%d", n),
				"name":  tool,
				"input": json.RawMessage(reply.body),
			}}
			stop = "tool_use"
		}
		if reply.kind == computerReply {
			parts, err := computerParts(provider, n, reply)
			if err != nil {
				return nil, err
			}
			content, stop = parts, "tool_use"
		}
		if reply.kind == toolCallsReply {
			content = nil
			if reply.body != "" {
				content = append(content, map[string]any{"type": "text", "text": reply.body})
			}
			for _, c := range calls {
				content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Arguments)})
			}
			stop = "tool_use"
		}
		return map[string]any{
			"id":            fmt.Sprintf("msg_llmtest_%d", n),
			"type":          "message",
			"role":          "assistant",
			"model":         model,
			"content":       content,
			"stop_reason":   stop,
			"stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens":                u.Input - u.CachedInput,
				"cache_read_input_tokens":     u.CachedInput,
				"cache_creation_input_tokens": 0,
				"output_tokens":               u.Output,
				"output_tokens_details":       map[string]any{"thinking_tokens": u.Reasoning},
			},
		}, nil

	case Google:
		parts := []any{map[string]any{"text": reply.body}}
		if reply.kind == computerReply {
			var err error
			if parts, err = computerParts(provider, n, reply); err != nil {
				return nil, err
			}
		}
		if reply.kind == toolCallsReply {
			parts = nil
			if reply.body != "" {
				parts = append(parts, map[string]any{"text": reply.body})
			}
			for _, c := range calls {
				fc := map[string]any{"name": c.Name, "args": json.RawMessage(c.Arguments)}
				if c.ID != "" {
					fc["id"] = c.ID
				}
				part := map[string]any{"functionCall": fc}
				if c.Signature != nil {
					part["thoughtSignature"] = c.Signature
				}
				parts = append(parts, part)
			}
		}
		return map[string]any{
			"candidates": []any{map[string]any{
				"content":      map[string]any{"role": "model", "parts": parts},
				"finishReason": "STOP",
				"index":        0,
			}},
			"usageMetadata": map[string]any{
				"promptTokenCount":        u.Input,
				"cachedContentTokenCount": u.CachedInput,
				"candidatesTokenCount":    u.Output - u.Reasoning,
				"thoughtsTokenCount":      u.Reasoning,
				"totalTokenCount":         u.Input + u.Output,
			},
			"modelVersion": model,
			"responseId":   fmt.Sprintf("llmtest-%d", n),
		}, nil
	}
	return nil, fmt.Errorf("unknown provider %q", provider)
}

// scriptedCalls returns the calls of a ToolCalls reply with their ids and
// arguments filled in. Anthropic and Google take only JSON objects as
// arguments; OpenAI's are free text, so that a test can send a model's
// malformed arguments.
func scriptedCalls(provider string, n int, reply Reply) ([]ToolCall, error) {
	if reply.kind != toolCallsReply {
		return nil, nil
	}
	if len(reply.calls) == 0 {
		return nil, fmt.Errorf("ToolCalls reply without calls")
	}
	calls := make([]ToolCall, len(reply.calls))
	for i, c := range reply.calls {
		if c.Arguments == "" {
			c.Arguments = "{}"
		}
		if provider != OpenAI {
			var obj map[string]any
			if err := json.Unmarshal([]byte(c.Arguments), &obj); err != nil || obj == nil {
				return nil, fmt.Errorf("arguments %q of the call of %s are not a JSON object, which %s requires", c.Arguments, c.Name, provider)
			}
		}
		if c.ID == "" {
			switch provider {
			case OpenAI:
				c.ID = fmt.Sprintf("call_llmtest_%d_%d", n, i)
			case Anthropic:
				c.ID = fmt.Sprintf("toolu_llmtest_%d_%d", n, i)
			}
		}
		calls[i] = c
	}
	return calls, nil
}

// forcedTool returns the tool an Anthropic request forces, if any.
func forcedTool(req map[string]any) string {
	choice, _ := req["tool_choice"].(map[string]any)
	if choice["type"] != "tool" {
		return ""
	}
	name, _ := choice["name"].(string)
	return name
}

// writeError writes a Status reply in provider's error format.
func writeError(w http.ResponseWriter, provider string, reply Reply) {
	if reply.retryAfter != nil {
		secs := int64(math.Ceil(reply.retryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	msg := reply.errorMessage()
	var body any
	switch provider {
	case OpenAI:
		typ, code := "invalid_request_error", any(nil)
		switch {
		case reply.status == http.StatusUnauthorized:
			code = "invalid_api_key"
		case reply.status == http.StatusTooManyRequests:
			typ, code = "requests", "rate_limit_exceeded"
		case reply.status >= 500:
			typ = "server_error"
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
	case Anthropic:
		body = map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(reply.status), "message": msg}}
	default:
		body = map[string]any{"error": map[string]any{"code": reply.status, "message": msg, "status": googleStatus(reply.status)}}
	}
	writeJSON(w, reply.status, body)
}

func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func googleStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "UNKNOWN"
}

// inspect reads what a request shows the model: its text and images,
// the tools it offers and its tool choice, and the tool results it sends.
func inspect(provider string, req map[string]any) *Request {
	rec := &Request{}
	var texts []string
	addImage := func(b64 string) {
		if b, err := base64.StdEncoding.DecodeString(b64); err == nil {
			rec.Images = append(rec.Images, b)
		}
	}
	addCall := func(name string, args any) {
		s, ok := args.(string)
		if !ok {
			b, _ := json.Marshal(args)
			s = string(b)
		}
		texts = append(texts, name+" "+s)
	}
	// names are the tools called so far, by call id, to name the results
	// of protocols that give only the id.
	names := map[string]string{}
	// blocks reads OpenAI's and Anthropic's content: a string or a list of
	// typed parts. It returns the text it read.
	var blocks func(content any) []string
	blocks = func(content any) []string {
		if s, ok := content.(string); ok {
			texts = append(texts, s)
			return []string{s}
		}
		var read []string
		for _, p := range list(content) {
			part, _ := p.(map[string]any)
			switch part["type"] {
			case "text":
				if s, ok := part["text"].(string); ok {
					texts = append(texts, s)
					read = append(read, s)
				}
			case "image_url": // OpenAI: a data URL
				url, _ := part["image_url"].(map[string]any)
				if s, ok := url["url"].(string); ok {
					if _, data, ok := strings.Cut(s, ";base64,"); ok {
						addImage(data)
					}
				}
			case "image": // Anthropic: a base64 source
				src, _ := part["source"].(map[string]any)
				if s, ok := src["data"].(string); ok {
					addImage(s)
				}
			case "tool_use": // Anthropic
				id, _ := part["id"].(string)
				name, _ := part["name"].(string)
				names[id] = name
				addCall(name, part["input"])
			case "tool_result": // Anthropic
				id, _ := part["tool_use_id"].(string)
				isErr, _ := part["is_error"].(bool)
				text := strings.Join(blocks(part["content"]), "\n")
				rec.ToolResults = append(rec.ToolResults, ToolResult{CallID: id, Name: names[id], Text: text, IsError: isErr})
			}
		}
		return read
	}
	switch {
	case provider == OpenAI && req["input"] != nil:
		inspectResponses(req, rec, &texts, func(url string) {
			if _, data, ok := strings.Cut(url, ";base64,"); ok {
				addImage(data)
			}
		})
	case provider == OpenAI:
		for _, m := range list(req["messages"]) {
			msg, _ := m.(map[string]any)
			if msg["content"] != nil {
				if msg["role"] == "tool" {
					id, _ := msg["tool_call_id"].(string)
					text := strings.Join(blocks(msg["content"]), "\n")
					// The wire has no error flag: package llm starts the
					// text of a failed tool with "Error".
					rec.ToolResults = append(rec.ToolResults, ToolResult{CallID: id, Name: names[id], Text: text, IsError: strings.HasPrefix(text, "Error")})
				} else {
					blocks(msg["content"])
				}
			}
			for _, c := range list(msg["tool_calls"]) {
				call, _ := c.(map[string]any)
				fn, _ := call["function"].(map[string]any)
				id, _ := call["id"].(string)
				name, _ := fn["name"].(string)
				names[id] = name
				addCall(name, fn["arguments"])
			}
		}
		for _, t := range list(req["tools"]) {
			tool, _ := t.(map[string]any)
			fn, _ := tool["function"].(map[string]any)
			if name, ok := fn["name"].(string); ok {
				rec.Tools = append(rec.Tools, name)
			}
		}
		switch c := req["tool_choice"].(type) {
		case string:
			rec.ToolChoice = c
		case map[string]any:
			fn, _ := c["function"].(map[string]any)
			name, _ := fn["name"].(string)
			rec.ToolChoice = "tool:" + name
		}
	case provider == Anthropic:
		if sys, ok := req["system"]; ok {
			blocks(sys)
		}
		for _, m := range list(req["messages"]) {
			msg, _ := m.(map[string]any)
			blocks(msg["content"])
		}
		for _, t := range list(req["tools"]) {
			tool, _ := t.(map[string]any)
			if name, ok := tool["name"].(string); ok {
				rec.Tools = append(rec.Tools, name)
			}
		}
		if c, ok := req["tool_choice"].(map[string]any); ok {
			switch c["type"] {
			case "any":
				rec.ToolChoice = "required"
			case "tool":
				name, _ := c["name"].(string)
				rec.ToolChoice = "tool:" + name
			default:
				rec.ToolChoice, _ = c["type"].(string)
			}
		}
	case provider == Google:
		parts := func(c any) {
			content, _ := c.(map[string]any)
			for _, p := range list(content["parts"]) {
				part, _ := p.(map[string]any)
				if s, ok := part["text"].(string); ok {
					texts = append(texts, s)
				}
				if blob, ok := part["inlineData"].(map[string]any); ok {
					if s, ok := blob["data"].(string); ok {
						addImage(s)
					}
				}
				if fc, ok := part["functionCall"].(map[string]any); ok {
					name, _ := fc["name"].(string)
					args := fc["args"]
					if args == nil {
						args = map[string]any{}
					}
					addCall(name, args)
				}
				if fr, ok := part["functionResponse"].(map[string]any); ok {
					r := ToolResult{}
					r.CallID, _ = fr["id"].(string)
					r.Name, _ = fr["name"].(string)
					resp, _ := fr["response"].(map[string]any)
					out, isErr := resp["error"]
					if !isErr {
						var ok bool
						if out, ok = resp["output"]; !ok && len(resp) > 0 {
							// Not a function's result but, say, computer
							// use's {"url": ...}: all of it.
							out = resp
						}
					}
					if s, ok := out.(string); ok {
						r.Text = s
					} else if out != nil {
						b, _ := json.Marshal(out)
						r.Text = string(b)
					}
					r.IsError = isErr
					texts = append(texts, r.Text)
					rec.ToolResults = append(rec.ToolResults, r)
					for _, p := range list(fr["parts"]) {
						frp, _ := p.(map[string]any)
						if blob, ok := frp["inlineData"].(map[string]any); ok {
							if s, ok := blob["data"].(string); ok {
								addImage(s)
							}
						}
					}
				}
			}
		}
		parts(req["systemInstruction"])
		for _, c := range list(req["contents"]) {
			parts(c)
		}
		for _, t := range list(req["tools"]) {
			tool, _ := t.(map[string]any)
			if _, ok := tool["computerUse"]; ok {
				rec.Tools = append(rec.Tools, "computer_use")
			}
			for _, d := range list(tool["functionDeclarations"]) {
				decl, _ := d.(map[string]any)
				if name, ok := decl["name"].(string); ok {
					rec.Tools = append(rec.Tools, name)
				}
			}
		}
		if mode, ok := path(req, "toolConfig", "functionCallingConfig", "mode").(string); ok {
			rec.ToolChoice = map[string]string{"AUTO": "auto", "ANY": "required", "NONE": "none"}[mode]
			if rec.ToolChoice == "" {
				rec.ToolChoice = mode
			}
		}
	}
	rec.Text = strings.Join(texts, "\n")
	return rec
}

// path returns the value at a path of keys in decoded JSON.
func path(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}
