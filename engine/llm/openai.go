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
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// openAIBaseURL is OpenAI's endpoint, version path included.
const openAIBaseURL = "https://api.openai.com/v1/"

// openAIBackend calls the Chat Completions API, which OpenAI-compatible
// servers (vLLM, Ollama, LiteLLM) speak too, unlike the Responses API.
type openAIBackend struct {
	completions openai.ChatCompletionService
	model       string
	// compatible is set for an endpoint other than OpenAI's: such servers
	// know max_tokens better than OpenAI's max_completion_tokens, which
	// OpenAI's reasoning models require.
	compatible bool
}

func newOpenAI(cfg Config, model string, hc *http.Client) *openAIBackend {
	opts, base := openAIOptions(cfg, hc)
	// The service is built without openai.NewClient, whose defaults read
	// OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_CUSTOM_HEADERS and more from
	// the environment: an ambient key must never reach a caller's BaseURL.
	return &openAIBackend{
		completions: openai.NewChatCompletionService(opts...),
		model:       model,
		compatible:  !isOpenAIHost(base),
	}
}

// openAIOptions returns the SDK options of every OpenAI service and the
// endpoint they reach.
func openAIOptions(cfg Config, hc *http.Client) ([]option.RequestOption, string) {
	base := cfg.BaseURL
	if base == "" {
		base = openAIBaseURL
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithBaseURL(base),
		// An empty key sends no Authorization header, as local servers want.
		option.WithAPIKey(cfg.APIKey),
		// Retries belong to retryTransport.
		option.WithMaxRetries(0),
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return opts, base
}

func (b *openAIBackend) generate(ctx context.Context, req *Request) (*Response, error) {
	params := openai.ChatCompletionNewParams{Model: b.model}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		params.Messages = append(params.Messages, openAIMessages(m)...)
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{
			Name: t.Name,
			// Strict would require the schema adapted and every property
			// required; tools take the caller's schema as given.
			Strict: openai.Bool(false),
		}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		if t.Parameters != nil {
			fn.Parameters = shared.FunctionParameters(t.Parameters)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if len(req.Tools) > 0 && req.ToolChoice != "" {
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(string(req.ToolChoice))}
	}
	if req.MaxOutputTokens > 0 {
		if b.compatible {
			params.MaxTokens = openai.Int(int64(req.MaxOutputTokens))
		} else {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxOutputTokens))
		}
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	var out *structuredOutput
	if req.Schema != nil {
		var err error
		out, err = newStructuredOutput(req.Schema, schemaOptions{objectRoot: true, strict: req.Schema.Strict})
		if err != nil {
			return nil, fmt.Errorf("%w: schema: %w", ErrInvalidRequest, err)
		}
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{
			Name:   out.name,
			Schema: out.wire,
			Strict: openai.Bool(req.Schema.Strict),
		}
		if out.description != "" {
			js.Description = openai.String(out.description)
		}
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js},
		}
	}

	completion, err := b.completions.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(completion.Choices) == 0 {
		return nil, fmt.Errorf("%w: the answer has no choices", ErrInvalidOutput)
	}
	choice := completion.Choices[0]
	if choice.Message.Refusal != "" {
		return nil, fmt.Errorf("%w: the model refused: %s", ErrInvalidOutput, choice.Message.Refusal)
	}
	text := choice.Message.Content
	if out != nil {
		if text, err = out.decode(text); err != nil {
			return nil, fmt.Errorf("%w (finish reason %q)", err, choice.FinishReason)
		}
	}
	var calls []ToolCall
	for _, tc := range choice.Message.ToolCalls {
		if tc.Type != "function" {
			return nil, fmt.Errorf("%w: the model called a %q tool, which was not offered", ErrInvalidOutput, tc.Type)
		}
		calls = append(calls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: arguments(tc.Function.Arguments)})
	}
	u := completion.Usage
	return &Response{
		Text:         text,
		ToolCalls:    calls,
		FinishReason: choice.FinishReason,
		Usage: Usage{
			InputTokens:       u.PromptTokens,
			OutputTokens:      u.CompletionTokens,
			ReasoningTokens:   u.CompletionTokensDetails.ReasoningTokens,
			CachedInputTokens: u.PromptTokensDetails.CachedTokens,
		},
	}, nil
}

// openAIMessages converts a message. Text-only content goes as a plain
// string, which every OpenAI-compatible server understands; content parts
// only when an image needs them. Tool results become role "tool" messages,
// which take text only: their images follow in a user message.
func openAIMessages(m Message) []openai.ChatCompletionMessageParamUnion {
	if m.Role == RoleAssistant {
		msg := openai.ChatCompletionAssistantMessageParam{}
		if text := joinText(m.Parts); text != "" {
			msg.Content.OfString = openai.String(text)
		}
		for _, p := range m.Parts {
			if c := p.ToolCall; c != nil {
				msg.ToolCalls = append(msg.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(arguments(string(c.Arguments)))},
					},
				})
			}
		}
		return []openai.ChatCompletionMessageParamUnion{{OfAssistant: &msg}}
	}
	var out []openai.ChatCompletionMessageParamUnion
	// rest is the user message after the tool messages: the images of the
	// tool results, each with a caption naming its call, then the message's
	// own parts.
	var rest, own []Part
	for _, p := range m.Parts {
		r := p.ToolResult
		if r == nil {
			own = append(own, p)
			continue
		}
		out = append(out, openai.ToolMessage(toolResultText(r), r.CallID))
		if len(r.Image) > 0 {
			rest = append(rest, TextPart(toolImageCaption(r)), ImagePart(r.Image))
		}
	}
	rest = append(rest, own...)
	if len(rest) == 0 {
		return out
	}
	if !hasImage(rest) {
		return append(out, openai.UserMessage(joinText(rest)))
	}
	parts := make([]openai.ChatCompletionContentPartUnionParam, 0, len(rest))
	for _, p := range rest {
		if len(p.Image) > 0 {
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
				URL: "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Image),
			}))
			continue
		}
		parts = append(parts, openai.TextContentPart(p.Text))
	}
	return append(out, openai.UserMessage(parts))
}

func (b *openAIBackend) apiError(err error) (int, string, bool) {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return 0, "", false
	}
	// Message is the provider's own field; the SDK's Error() holds only the
	// status, and its dumps hold the request's Authorization header.
	return apiErr.StatusCode, apiErr.Message, true
}

// joinText returns the text parts of a message, one after another.
func joinText(parts []Part) string {
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

func hasImage(parts []Part) bool {
	for _, p := range parts {
		if len(p.Image) > 0 {
			return true
		}
	}
	return false
}

// isOpenAIHost reports whether base is OpenAI's own API.
func isOpenAIHost(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Hostname() == "api.openai.com"
}
