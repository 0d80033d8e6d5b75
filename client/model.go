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

package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/engine/llm"
)

// newModelClient makes the provider client of a ModelConfig. It makes no
// request; the key goes only to the provider.
func newModelClient(field string, m *ModelConfig) (llm.Client, error) {
	c, err := llm.New(llm.Config{Model: m.ModelName, APIKey: m.APIKey, BaseURL: m.BaseURL, Headers: m.Headers})
	if err != nil {
		// llm's errors name the model and never the key.
		return nil, invalid(field, "%s", err.Error())
	}
	return c, nil
}

// generateModel is an llm.Client that a GenerateFunc answers: the caller's
// own model. name is the model the operation asked for, if any.
type generateModel struct {
	name string
	fn   GenerateFunc
}

// Model implements llm.Client.
func (g *generateModel) Model() string {
	if g.name == "" {
		return "generate"
	}
	return g.name
}

// Generate implements llm.Client: the engine's request becomes a
// GenerateRequest, the callback's answer its response.
func (g *generateModel) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if len(req.Tools) > 0 {
		// Only act, observe and extract run on a Generate callback, and
		// they ask for JSON, never for tool calls.
		return nil, errors.New("the engine asked for tool calls, which a Generate callback does not answer")
	}
	greq := GenerateRequest{Model: g.name}
	if req.System != "" {
		greq.Messages = append(greq.Messages, GenerateMessage{Role: "system", Text: req.System})
	}
	for i, m := range req.Messages {
		msg := GenerateMessage{Role: string(m.Role)}
		var texts []string
		for _, p := range m.Parts {
			switch {
			case p.ToolCall != nil || p.ToolResult != nil:
				return nil, fmt.Errorf("message %d holds a tool call or result, which a Generate callback does not answer", i)
			case len(p.Image) > 0:
				mime := p.MIMEType
				if mime == "" {
					mime = "image/png"
				}
				msg.Images = append(msg.Images, GenerateImage{MIMEType: mime, Data: p.Image})
			default:
				texts = append(texts, p.Text)
			}
		}
		msg.Text = strings.Join(texts, "\n")
		greq.Messages = append(greq.Messages, msg)
	}
	if req.Schema != nil {
		schema, err := json.Marshal(req.Schema.JSON)
		if err != nil {
			return nil, fmt.Errorf("encoding the answer's schema: %w", err)
		}
		greq.Schema, greq.SchemaName = schema, req.Schema.Name
	}
	start := time.Now()
	res, err := g.fn(ctx, greq)
	elapsed := time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("the Generate callback: %w", err)
	}
	if req.Schema != nil && !json.Valid([]byte(res.Text)) {
		return nil, errors.New("the Generate callback's answer is not JSON; GenerateResult.Text must be a JSON document valid against the request's Schema")
	}
	u := res.Usage
	if u.InferenceTimeMs == 0 {
		u.InferenceTimeMs = float64(elapsed.Milliseconds())
	}
	return &llm.Response{
		Text: res.Text,
		Usage: llm.Usage{
			InputTokens:       int64(u.InputTokens),
			OutputTokens:      int64(u.OutputTokens),
			ReasoningTokens:   int64(u.ReasoningTokens),
			CachedInputTokens: int64(u.CachedInputTokens),
			InferenceTimeMs:   int64(u.InferenceTimeMs),
		},
	}, nil
}

// usageOf is the client's Usage of the engine's.
func usageOf(u llm.Usage) Usage {
	return Usage{
		InputTokens:       float64(u.InputTokens),
		OutputTokens:      float64(u.OutputTokens),
		ReasoningTokens:   float64(u.ReasoningTokens),
		CachedInputTokens: float64(u.CachedInputTokens),
		InferenceTimeMs:   float64(u.InferenceTimeMs),
	}
}
