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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// anthropicDefaultMaxTokens is sent when a Request sets no cap, since the
// Messages API requires one; every Claude model can produce this many.
const anthropicDefaultMaxTokens = 4096

// anthropicBackend calls the Messages API.
//
// Structured output goes through a forced tool call whose input schema is
// the caller's schema, rather than output_config.format: the tool works on
// every Claude model and Anthropic-compatible gateway, while the native
// format is refused by models that predate it.
type anthropicBackend struct {
	client anthropic.Client
	model  string
}

func newAnthropic(cfg Config, model string, hc *http.Client) *anthropicBackend {
	return &anthropicBackend{client: anthropic.NewClient(anthropicOptions(cfg, hc)...), model: model}
}

// anthropicOptions returns the SDK options of every Anthropic client.
func anthropicOptions(cfg Config, hc *http.Client) []option.RequestOption {
	opts := []option.RequestOption{
		// No ANTHROPIC_* variable, profile file or federation may add
		// credentials to a request bound for a caller's BaseURL.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(hc),
		// Retries belong to retryTransport.
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return opts
}

func (b *anthropicBackend) generate(ctx context.Context, req *Request) (*Response, error) {
	params := anthropic.MessageNewParams{
		Model:     b.model,
		MaxTokens: anthropicDefaultMaxTokens,
	}
	if req.MaxOutputTokens > 0 {
		params.MaxTokens = int64(req.MaxOutputTokens)
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, m := range req.Messages {
		params.Messages = append(params.Messages, anthropicMessage(m))
	}
	if req.Temperature != nil {
		params.Temperature = anthropic.Float(*req.Temperature)
	}
	var out *structuredOutput
	if req.Schema != nil {
		var err error
		// Strict is OpenAI's; the tool takes the schema as given.
		out, err = newStructuredOutput(req.Schema, schemaOptions{objectRoot: true})
		if err != nil {
			return nil, fmt.Errorf("%w: schema: %w", ErrInvalidRequest, err)
		}
		description := out.description
		if description == "" {
			description = "Give your answer as this tool's input."
		}
		params.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name:        out.name,
			Description: anthropic.String(description),
			InputSchema: anthropicInputSchema(out.wire),
		}}}
		params.ToolChoice = anthropic.ToolChoiceParamOfTool(out.name)
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if schema == nil {
			// Anthropic requires an input schema, even of no arguments.
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		tool := &anthropic.ToolParam{Name: t.Name, InputSchema: anthropicInputSchema(schema)}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: tool})
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case ToolChoiceRequired:
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
		case ToolChoiceNone:
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
		case ToolChoiceAuto:
			params.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
		}
	}

	msg, err := b.client.Messages.New(ctx, params)
	if err != nil {
		return nil, err
	}
	var texts []string
	var toolInput json.RawMessage
	var calls []ToolCall
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			texts = append(texts, block.Text)
		case "tool_use":
			switch {
			case out != nil && block.Name == out.name:
				toolInput = block.Input
			case out == nil:
				calls = append(calls, ToolCall{ID: block.ID, Name: block.Name, Arguments: arguments(string(block.Input))})
			}
		}
	}
	text := strings.Join(texts, "")
	if msg.StopReason == anthropic.StopReasonRefusal {
		return nil, fmt.Errorf("%w: the model refused: %s", ErrInvalidOutput, text)
	}
	if out != nil {
		if toolInput == nil {
			return nil, fmt.Errorf("%w: the model did not answer through the %q tool (stop reason %q)", ErrInvalidOutput, out.name, msg.StopReason)
		}
		if text, err = out.decode(string(toolInput)); err != nil {
			return nil, fmt.Errorf("%w (stop reason %q)", err, msg.StopReason)
		}
	}
	u := msg.Usage
	return &Response{
		Text:         text,
		ToolCalls:    calls,
		FinishReason: string(msg.StopReason),
		Usage: Usage{
			// Anthropic counts cache reads and writes apart from
			// input_tokens; InputTokens counts every prompt token.
			InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
			OutputTokens:      u.OutputTokens,
			ReasoningTokens:   u.OutputTokensDetails.ThinkingTokens,
			CachedInputTokens: u.CacheReadInputTokens,
		},
	}, nil
}

// anthropicInputSchema splits an object schema into the SDK's tool input
// schema, whose properties and required have fields of their own.
func anthropicInputSchema(s map[string]any) anthropic.ToolInputSchemaParam {
	in := anthropic.ToolInputSchemaParam{Properties: s["properties"]}
	for _, r := range asSlice(s["required"]) {
		if name, ok := r.(string); ok {
			in.Required = append(in.Required, name)
		}
	}
	for k, v := range s {
		switch k {
		case "type", "properties", "required", "$schema":
		default:
			if in.ExtraFields == nil {
				in.ExtraFields = map[string]any{}
			}
			in.ExtraFields[k] = v
		}
	}
	return in
}

// anthropicMessage converts a message. Tool results come first in a user
// message, as Anthropic requires, each with its image inside.
func anthropicMessage(m Message) anthropic.MessageParam {
	blocks := make([]anthropic.ContentBlockParamUnion, 0, len(m.Parts))
	for _, p := range m.Parts {
		if r := p.ToolResult; r != nil {
			blocks = append(blocks, anthropicToolResult(r))
		}
	}
	for _, p := range m.Parts {
		switch {
		case p.ToolResult != nil:
		case p.ToolCall != nil:
			blocks = append(blocks, anthropic.NewToolUseBlock(p.ToolCall.ID, argumentsObject(p.ToolCall.Arguments), p.ToolCall.Name))
		case len(p.Image) > 0:
			blocks = append(blocks, anthropic.NewImageBlockBase64(p.MIMEType, base64.StdEncoding.EncodeToString(p.Image)))
		default:
			blocks = append(blocks, anthropic.NewTextBlock(p.Text))
		}
	}
	if m.Role == RoleAssistant {
		return anthropic.NewAssistantMessage(blocks...)
	}
	return anthropic.NewUserMessage(blocks...)
}

func anthropicToolResult(r *ToolResult) anthropic.ContentBlockParamUnion {
	block := anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
	if r.IsError {
		block.IsError = anthropic.Bool(true)
	}
	if r.Text != "" {
		block.Content = append(block.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: r.Text}})
	}
	if len(r.Image) > 0 {
		block.Content = append(block.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
			Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
				Data:      base64.StdEncoding.EncodeToString(r.Image),
				MediaType: anthropic.Base64ImageSourceMediaTypeImagePNG,
			}},
		}})
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &block}
}

func (b *anthropicBackend) apiError(err error) (int, string, bool) {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return 0, "", false
	}
	// The SDK's Error() quotes the request URL and the raw body; only the
	// provider's message is kept.
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal([]byte(apiErr.RawJSON()), &body) == nil {
		msg = body.Error.Message
		if body.Error.Type != "" && msg != "" {
			msg = body.Error.Type + ": " + msg
		}
	}
	if msg == "" {
		// Not Anthropic's error shape, as from a proxy: a little of the
		// body says more than nothing.
		msg = truncate(strings.TrimSpace(apiErr.RawJSON()), 200)
	}
	return apiErr.StatusCode, msg, true
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
