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
	"net/http"
	"time"
)

// Defaults applied by New to a zero Config field.
const (
	// DefaultTimeout bounds one Generate call, retries included.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxRetries is how many times a call is repeated after a 429 or
	// a 5xx answer.
	DefaultMaxRetries = 2
)

// Config says which model to call and how to reach it.
type Config struct {
	// Model is "provider/model", for example "openai/gpt-4.1-mini",
	// "anthropic/claude-sonnet-4-5" or "google/gemini-2.5-flash". Everything
	// after the first slash is the provider's model id, so
	// "openai/meta-llama/Llama-3.1-8B-Instruct" names a vLLM model.
	Model string
	// Provider, when set, names the provider instead of Model's prefix. Model
	// is then the provider's model id as is, or with this provider as its
	// prefix, which is stripped.
	Provider string
	// APIKey is the provider's key. It is sent only in the provider's own
	// header (Authorization: Bearer for OpenAI, x-api-key for Anthropic,
	// x-goog-api-key for Google) and is redacted from every error. OpenAI
	// and Anthropic requests go without credentials when it is empty, which
	// suits local OpenAI-compatible servers; Google requires it.
	APIKey string
	// BaseURL overrides the provider's endpoint. For OpenAI it includes the
	// version path ("https://api.openai.com/v1", "http://ollama:11434/v1");
	// for Anthropic and Google it is the host root
	// ("https://api.anthropic.com", "https://generativelanguage.googleapis.com").
	BaseURL string
	// Headers are added to every request, retries included.
	Headers map[string]string
	// Timeout bounds one Generate call, retries and their waits included.
	// Zero means DefaultTimeout; a negative value leaves only the caller's
	// context in charge.
	Timeout time.Duration
	// MaxRetries is how many times a call is repeated after a 429 or a 5xx
	// answer, with exponential backoff or the wait the provider asked for in
	// Retry-After. Zero means DefaultMaxRetries; a negative value disables
	// retries.
	MaxRetries int
	// HTTPClient, when set, is the client whose transport, timeout and
	// cookie jar requests go through. It is copied, not modified.
	HTTPClient *http.Client
}

// Client calls one model.
type Client interface {
	// Generate sends req to the model and returns its answer. Errors are
	// *Error values naming the provider and model.
	Generate(ctx context.Context, req Request) (*Response, error)
	// Model returns the canonical "provider/model" name of the model.
	Model() string
}

// Role is the author of a message.
type Role string

const (
	// RoleUser marks what the caller says to the model.
	RoleUser Role = "user"
	// RoleAssistant marks an earlier answer of the model.
	RoleAssistant Role = "assistant"
)

// Request is one call to a model.
type Request struct {
	// System is the system prompt; empty sends none.
	System string
	// Messages is the conversation, oldest first. It must not be empty.
	Messages []Message
	// Schema, when set, asks for a JSON document valid against it.
	Schema *Schema
	// MaxOutputTokens caps the answer, reasoning included; zero leaves the
	// provider's default (4096 for Anthropic, which requires a cap). OpenAI
	// gets it as max_completion_tokens, other OpenAI-compatible servers as
	// max_tokens.
	MaxOutputTokens int
	// Temperature, when set, is sent as the sampling temperature.
	Temperature *float64
	// Tools are the functions the model may call; it cannot be set with
	// Schema.
	Tools []Tool
	// ToolChoice says whether the model must call one of Tools; empty is
	// ToolChoiceAuto.
	ToolChoice ToolChoice
}

// Message is one turn of the conversation.
type Message struct {
	Role  Role
	Parts []Part
}

// Part is a piece of a message: text, an image when Image is set, a tool
// call the model made (assistant messages) or a tool's result (user
// messages).
type Part struct {
	// Text is the text of a text part.
	Text string
	// Image holds the encoded bytes of an image part. Only user messages
	// may carry images.
	Image []byte
	// MIMEType is the type of Image; empty means "image/png".
	MIMEType string
	// ToolCall, when set, makes the part a call of the model's.
	ToolCall *ToolCall
	// ToolResult, when set, makes the part a tool's result.
	ToolResult *ToolResult
}

// UserMessage returns a user message made of parts.
func UserMessage(parts ...Part) Message { return Message{Role: RoleUser, Parts: parts} }

// AssistantMessage returns an earlier answer of the model. An answer with
// tool calls is sent back as Message{Role: RoleAssistant, Parts: ...} with a
// TextPart (when it had text) and a ToolCallPart per call.
func AssistantMessage(text string) Message {
	return Message{Role: RoleAssistant, Parts: []Part{TextPart(text)}}
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Text: text} }

// ImagePart returns a PNG image part, such as a screenshot.
func ImagePart(png []byte) Part { return Part{Image: png, MIMEType: "image/png"} }

// Schema asks for structured output.
type Schema struct {
	// Name identifies the schema to the provider (OpenAI's json_schema name,
	// Anthropic's tool name). Characters outside [a-zA-Z0-9_-] are replaced
	// and it is cut to 64; empty means "response".
	Name string
	// Description tells the model what the document is for.
	Description string
	// JSON is the JSON Schema of the answer. Its root may be of any type:
	// providers that need an object root get the schema wrapped and the
	// answer unwrapped.
	JSON map[string]any
	// Strict asks OpenAI for strict structured output, which guarantees the
	// schema is followed. The schema is first adapted with
	// AdaptSchemaForStrict and the answer mapped back, so that it is valid
	// against JSON as given. Anthropic's forced tool call and Google's
	// response schema are used the same way whatever Strict says.
	Strict bool
}

// Response is the model's answer.
type Response struct {
	// Text is the answer; with a Schema, it is the JSON document.
	Text string
	// ToolCalls are the tools the model called, in order; empty when it
	// answered with text only.
	ToolCalls []ToolCall
	// FinishReason is the provider's own reason for stopping, such as
	// "stop", "end_turn", "tool_use" or "STOP"; useful in logs.
	FinishReason string
	// Usage is what the call cost.
	Usage Usage
}

// Usage counts the tokens of one call, normalised across providers.
type Usage struct {
	// InputTokens counts every prompt token, cached ones included.
	InputTokens int64
	// OutputTokens counts every generated token, reasoning included.
	OutputTokens int64
	// ReasoningTokens is the part of OutputTokens spent on reasoning.
	ReasoningTokens int64
	// CachedInputTokens is the part of InputTokens read from the provider's
	// prompt cache.
	CachedInputTokens int64
	// InferenceTimeMs is the wall time of the Generate call in milliseconds,
	// retries included.
	InferenceTimeMs int64
}

// Add returns the sum of two usages, for callers that total several calls.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + o.InputTokens,
		OutputTokens:      u.OutputTokens + o.OutputTokens,
		ReasoningTokens:   u.ReasoningTokens + o.ReasoningTokens,
		CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		InferenceTimeMs:   u.InferenceTimeMs + o.InferenceTimeMs,
	}
}
