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

// Package gateway is the model gateway of the API: runners and the client
// library call a model by name, and the API forwards the call to the
// provider with the operator's key, which never leaves the API pod. It
// counts each project's tokens, and refuses a project's calls past its
// budget (BUDGET_EXCEEDED) before they reach a provider.
//
// The wire is one POST of a GenerateRequest (the model and an llm.Request
// as JSON) answered by a GenerateResponse (the llm.Response with its
// usage), or by an ErrorBody with a non-200 status. Runners post it to
// RunnerPathGenerate on the API's runner listener with their session's
// token; the client library to PathGenerate with the project key.
package gateway

import (
	"encoding/json"

	"github.com/browserfleet/browserfleet/engine/llm"
)

// Paths of the gateway on the API.
const (
	// PathGenerate is the gateway for /v1 callers (the client library),
	// authenticated by the project key.
	PathGenerate = "/v1/models/generate"
	// RunnerPathGenerate is the gateway on the runner listener,
	// authenticated by a session's runner token.
	RunnerPathGenerate = "/runner/v1/models/generate"
)

// ModelAuto names the gateway's default model.
const ModelAuto = "auto"

// Bounds of the wire.
const (
	// MaxRequestBytes bounds a GenerateRequest as JSON: images travel in
	// it as base64, and an agent's history holds a few screenshots.
	MaxRequestBytes = 16 << 20
	// MaxResponseBytes bounds a GenerateResponse as JSON.
	MaxResponseBytes = 4 << 20
	// MaxModelLength bounds GenerateRequest.Model.
	MaxModelLength = 256
)

// GenerateRequest is the body of a call to the gateway.
type GenerateRequest struct {
	// Model is "provider/model", one the operator allows, or ModelAuto
	// (or empty) for the gateway's default model.
	Model string `json:"model,omitempty"`
	// Request is what to send the model.
	Request Request `json:"request"`
}

// GenerateResponse is the gateway's answer.
type GenerateResponse struct {
	// Model is the "provider/model" that answered: the default model's
	// name for ModelAuto.
	Model string `json:"model"`
	// Response is the model's answer with its usage.
	Response Response `json:"response"`
}

// ErrorBody is the body of every non-200 answer, the API's error envelope.
type ErrorBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Code    string `json:"code"`
}

// Request is llm.Request as JSON.
type Request struct {
	System          string    `json:"system,omitempty"`
	Messages        []Message `json:"messages"`
	Schema          *Schema   `json:"schema,omitempty"`
	MaxOutputTokens int       `json:"maxOutputTokens,omitempty"`
	Temperature     *float64  `json:"temperature,omitempty"`
	Tools           []Tool    `json:"tools,omitempty"`
	ToolChoice      string    `json:"toolChoice,omitempty"`
}

// Message is llm.Message as JSON.
type Message struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is llm.Part as JSON; Image is base64.
type Part struct {
	Text       string      `json:"text,omitempty"`
	Image      []byte      `json:"image,omitempty"`
	MIMEType   string      `json:"mimeType,omitempty"`
	ToolCall   *ToolCall   `json:"toolCall,omitempty"`
	ToolResult *ToolResult `json:"toolResult,omitempty"`
}

// Schema is llm.Schema as JSON.
type Schema struct {
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	JSON        map[string]any `json:"json"`
	Strict      bool           `json:"strict,omitempty"`
}

// Tool is llm.Tool as JSON.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

// ToolCall is llm.ToolCall as JSON; Signature is base64.
type ToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Signature []byte          `json:"signature,omitempty"`
}

// ToolResult is llm.ToolResult as JSON; Image is base64.
type ToolResult struct {
	CallID  string `json:"callId,omitempty"`
	Name    string `json:"name,omitempty"`
	Text    string `json:"text,omitempty"`
	Image   []byte `json:"image,omitempty"`
	IsError bool   `json:"isError,omitempty"`
}

// Response is llm.Response as JSON.
type Response struct {
	Text         string     `json:"text"`
	ToolCalls    []ToolCall `json:"toolCalls,omitempty"`
	FinishReason string     `json:"finishReason,omitempty"`
	Usage        Usage      `json:"usage"`
}

// Usage is llm.Usage as JSON.
type Usage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	ReasoningTokens   int64 `json:"reasoningTokens,omitempty"`
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
	InferenceTimeMs   int64 `json:"inferenceTimeMs,omitempty"`
}

// WireRequest is req on the wire.
func WireRequest(req llm.Request) Request {
	out := Request{
		System:          req.System,
		MaxOutputTokens: req.MaxOutputTokens,
		Temperature:     req.Temperature,
		ToolChoice:      string(req.ToolChoice),
		Messages:        make([]Message, 0, len(req.Messages)),
	}
	for _, m := range req.Messages {
		wm := Message{Role: string(m.Role), Parts: make([]Part, 0, len(m.Parts))}
		for _, p := range m.Parts {
			wp := Part{Text: p.Text, Image: p.Image, MIMEType: p.MIMEType}
			if c := p.ToolCall; c != nil {
				wc := wireCall(*c)
				wp.ToolCall = &wc
			}
			if r := p.ToolResult; r != nil {
				wp.ToolResult = &ToolResult{CallID: r.CallID, Name: r.Name, Text: r.Text, Image: r.Image, IsError: r.IsError}
			}
			wm.Parts = append(wm.Parts, wp)
		}
		out.Messages = append(out.Messages, wm)
	}
	if s := req.Schema; s != nil {
		out.Schema = &Schema{Name: s.Name, Description: s.Description, JSON: s.JSON, Strict: s.Strict}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}

// LLM is r as an llm.Request.
func (r Request) LLM() llm.Request {
	out := llm.Request{
		System:          r.System,
		MaxOutputTokens: r.MaxOutputTokens,
		Temperature:     r.Temperature,
		ToolChoice:      llm.ToolChoice(r.ToolChoice),
		Messages:        make([]llm.Message, 0, len(r.Messages)),
	}
	for _, m := range r.Messages {
		lm := llm.Message{Role: llm.Role(m.Role), Parts: make([]llm.Part, 0, len(m.Parts))}
		for _, p := range m.Parts {
			lp := llm.Part{Text: p.Text, Image: p.Image, MIMEType: p.MIMEType}
			if c := p.ToolCall; c != nil {
				lc := c.LLM()
				lp.ToolCall = &lc
			}
			if t := p.ToolResult; t != nil {
				lp.ToolResult = &llm.ToolResult{CallID: t.CallID, Name: t.Name, Text: t.Text, Image: t.Image, IsError: t.IsError}
			}
			lm.Parts = append(lm.Parts, lp)
		}
		out.Messages = append(out.Messages, lm)
	}
	if s := r.Schema; s != nil {
		out.Schema = &llm.Schema{Name: s.Name, Description: s.Description, JSON: s.JSON, Strict: s.Strict}
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}

// WireResponse is resp on the wire.
func WireResponse(resp llm.Response) Response {
	out := Response{Text: resp.Text, FinishReason: resp.FinishReason, Usage: Usage(resp.Usage)}
	for _, c := range resp.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, wireCall(c))
	}
	return out
}

// LLM is r as an llm.Response.
func (r Response) LLM() llm.Response {
	out := llm.Response{Text: r.Text, FinishReason: r.FinishReason, Usage: llm.Usage(r.Usage)}
	for _, c := range r.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, c.LLM())
	}
	return out
}

func wireCall(c llm.ToolCall) ToolCall {
	return ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Signature: c.Signature}
}

// LLM is c as an llm.ToolCall.
func (c ToolCall) LLM() llm.ToolCall {
	return llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Signature: c.Signature}
}
