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
	switch provider {
	case OpenAI:
		return map[string]any{
			"id":      fmt.Sprintf("chatcmpl-llmtest-%d", n),
			"object":  "chat.completion",
			"created": time.Now().Unix(),
			"model":   model,
			"choices": []any{map[string]any{
				"index":         0,
				"message":       map[string]any{"role": "assistant", "content": reply.body, "refusal": nil},
				"finish_reason": "stop",
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
		return map[string]any{
			"candidates": []any{map[string]any{
				"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": reply.body}}},
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

// prompt returns the text and the images a request shows the model.
func prompt(provider string, req map[string]any) (string, [][]byte) {
	var texts []string
	var images [][]byte
	addImage := func(b64 string) {
		if b, err := base64.StdEncoding.DecodeString(b64); err == nil {
			images = append(images, b)
		}
	}
	// blocks reads OpenAI's and Anthropic's content: a string or a list of
	// typed parts.
	blocks := func(content any) {
		if s, ok := content.(string); ok {
			texts = append(texts, s)
			return
		}
		for _, p := range list(content) {
			part, _ := p.(map[string]any)
			switch part["type"] {
			case "text":
				if s, ok := part["text"].(string); ok {
					texts = append(texts, s)
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
			}
		}
	}
	switch provider {
	case OpenAI:
		for _, m := range list(req["messages"]) {
			msg, _ := m.(map[string]any)
			blocks(msg["content"])
		}
	case Anthropic:
		if sys, ok := req["system"]; ok {
			blocks(sys)
		}
		for _, m := range list(req["messages"]) {
			msg, _ := m.(map[string]any)
			blocks(msg["content"])
		}
	case Google:
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
			}
		}
		parts(req["systemInstruction"])
		for _, c := range list(req["contents"]) {
			parts(c)
		}
	}
	return strings.Join(texts, "\n"), images
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}
