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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/genai"
)

// googleBaseURL is the Gemini API's endpoint.
const googleBaseURL = "https://generativelanguage.googleapis.com/"

// googleBackend calls generateContent of the Gemini API.
type googleBackend struct {
	models *genai.Models
	model  string
}

func newGoogle(cfg Config, model string, hc *http.Client) (*googleBackend, error) {
	// genai falls back to GOOGLE_API_KEY, GEMINI_API_KEY and
	// GOOGLE_GEMINI_BASE_URL for what is left empty, and to Vertex AI when
	// GOOGLE_GENAI_USE_VERTEXAI is set: every one of them is set here so
	// that the environment has no say.
	if cfg.APIKey == "" {
		return nil, errors.New("the Gemini API requires an API key")
	}
	base := cfg.BaseURL
	if base == "" {
		base = googleBaseURL
	}
	cc := &genai.ClientConfig{
		APIKey:     cfg.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{
			BaseURL: base,
			Headers: headerOf(cfg.Headers),
			// RetryOptions stays nil: genai then makes one attempt, and
			// retries belong to retryTransport.
		},
	}
	// NewClient makes no request; the context only matters for Vertex AI
	// credentials, which are not used.
	c, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		// genai's errors print the whole ClientConfig, key included; New
		// redacts them.
		return nil, err
	}
	return &googleBackend{models: c.Models, model: model}, nil
}

func (b *googleBackend) generate(ctx context.Context, req *Request) (*Response, error) {
	cfg := &genai.GenerateContentConfig{}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.MaxOutputTokens > 0 {
		cfg.MaxOutputTokens = int32(min(req.MaxOutputTokens, 1<<31-1))
	}
	if req.Temperature != nil {
		cfg.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	var out *structuredOutput
	if req.Schema != nil {
		var err error
		// Gemini takes any root and its own subset of JSON Schema.
		out, err = newStructuredOutput(req.Schema, schemaOptions{adapt: adaptSchemaForGemini})
		if err != nil {
			return nil, fmt.Errorf("%w: schema: %w", ErrInvalidRequest, err)
		}
		cfg.ResponseMIMEType = "application/json"
		cfg.ResponseJsonSchema = out.wire
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if t.Parameters != nil {
				params, err := adaptSchemaForGemini(t.Parameters)
				if err != nil {
					return nil, fmt.Errorf("%w: tool %s: parameters: %w", ErrInvalidRequest, t.Name, err)
				}
				d.ParametersJsonSchema = params
			}
			decls = append(decls, d)
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		mode := map[ToolChoice]genai.FunctionCallingConfigMode{
			ToolChoiceAuto:     genai.FunctionCallingConfigModeAuto,
			ToolChoiceRequired: genai.FunctionCallingConfigModeAny,
			ToolChoiceNone:     genai.FunctionCallingConfigModeNone,
		}[req.ToolChoice]
		if mode != "" {
			cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: mode}}
		}
	}
	contents := make([]*genai.Content, 0, len(req.Messages))
	var prev *Message
	for i, m := range req.Messages {
		contents = append(contents, googleContent(m, prev))
		prev = &req.Messages[i]
	}

	resp, err := b.models.GenerateContent(ctx, b.model, contents, cfg)
	if err != nil {
		return nil, err
	}
	if len(resp.Candidates) == 0 {
		if fb := resp.PromptFeedback; fb != nil && fb.BlockReason != "" {
			return nil, fmt.Errorf("%w: the prompt was blocked: %s %s", ErrInvalidOutput, fb.BlockReason, fb.BlockReasonMessage)
		}
		return nil, fmt.Errorf("%w: the answer has no candidates", ErrInvalidOutput)
	}
	cand := resp.Candidates[0]
	var texts []string
	var calls []ToolCall
	next := nextGoogleCallNumber(req.Messages)
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if fc := p.FunctionCall; fc != nil {
				call := ToolCall{ID: fc.ID, Name: fc.Name, Signature: p.ThoughtSignature}
				if call.ID == "" {
					call.ID = googleCallID(next)
					next++
				}
				args := fc.Args
				if args == nil {
					args = map[string]any{}
				}
				if call.Arguments, err = json.Marshal(args); err != nil {
					return nil, fmt.Errorf("%w: the arguments of a call of %s: %w", ErrInvalidOutput, fc.Name, err)
				}
				calls = append(calls, call)
				continue
			}
			// Thought summaries are not the answer.
			if p.Text != "" && !p.Thought {
				texts = append(texts, p.Text)
			}
		}
	}
	text := strings.Join(texts, "")
	if out != nil {
		if text, err = out.decode(text); err != nil {
			return nil, fmt.Errorf("%w (finish reason %q)", err, cand.FinishReason)
		}
	}
	r := &Response{Text: text, ToolCalls: calls, FinishReason: string(cand.FinishReason)}
	if u := resp.UsageMetadata; u != nil {
		r.Usage = Usage{
			InputTokens: int64(u.PromptTokenCount),
			// Gemini counts thoughts apart from candidates; OutputTokens
			// counts every generated token.
			OutputTokens:      int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			ReasoningTokens:   int64(u.ThoughtsTokenCount),
			CachedInputTokens: int64(u.CachedContentTokenCount),
		}
	}
	return r, nil
}

// googleContent converts a message; prev is the message before it, whose
// calls its tool results answer.
func googleContent(m Message, prev *Message) *genai.Content {
	c := &genai.Content{Role: genai.RoleUser}
	if m.Role == RoleAssistant {
		c.Role = genai.RoleModel
	}
	// Gemini matches function responses to calls by name and order: they
	// go in the order of the calls, then their images, then the message's
	// own parts.
	var results []*ToolResult
	for _, p := range m.Parts {
		if p.ToolResult != nil {
			results = append(results, p.ToolResult)
		}
	}
	if len(results) > 0 && prev != nil {
		order := map[string]int{}
		for _, p := range prev.Parts {
			if p.ToolCall != nil {
				order[p.ToolCall.ID] = len(order)
			}
		}
		slices.SortStableFunc(results, func(a, b *ToolResult) int { return order[a.CallID] - order[b.CallID] })
	}
	for _, r := range results {
		resp := map[string]any{"output": r.Text}
		if r.IsError {
			// Gemini's documented keys: "output" for a result, "error" for
			// a failure.
			resp = map[string]any{"error": r.Text}
		}
		fr := &genai.FunctionResponse{Name: r.Name, Response: resp}
		if !isGoogleCallID(r.CallID) {
			fr.ID = r.CallID
		}
		c.Parts = append(c.Parts, &genai.Part{FunctionResponse: fr})
	}
	for _, r := range results {
		if len(r.Image) > 0 {
			c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: r.Image}})
		}
	}
	for _, p := range m.Parts {
		switch {
		case p.ToolResult != nil:
		case p.ToolCall != nil:
			fc := &genai.FunctionCall{Name: p.ToolCall.Name}
			if !isGoogleCallID(p.ToolCall.ID) {
				fc.ID = p.ToolCall.ID
			}
			if err := json.Unmarshal(argumentsObject(p.ToolCall.Arguments), &fc.Args); err != nil {
				fc.Args = map[string]any{}
			}
			c.Parts = append(c.Parts, &genai.Part{FunctionCall: fc, ThoughtSignature: p.ToolCall.Signature})
		case len(p.Image) > 0:
			c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{MIMEType: p.MIMEType, Data: p.Image}})
		default:
			c.Parts = append(c.Parts, &genai.Part{Text: p.Text})
		}
	}
	return c
}

// googleCallPrefix starts the ids made up for Gemini's calls, which come
// without one.
const googleCallPrefix = "call_"

// googleCallID is the id of the n-th call of a conversation, counting from
// zero.
func googleCallID(n int) string { return googleCallPrefix + strconv.Itoa(n) }

// isGoogleCallID reports whether id was made up by googleCallID, and so
// is not sent to Gemini.
func isGoogleCallID(id string) bool {
	n, ok := strings.CutPrefix(id, googleCallPrefix)
	if !ok || n == "" {
		return false
	}
	for _, r := range n {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// nextGoogleCallNumber returns the number of the next made-up call id of a
// conversation: past every call in it and every made-up id, so that ids
// stay unique and the same conversation always gets the same ids, even
// when the caller dropped earlier turns.
func nextGoogleCallNumber(msgs []Message) int {
	next := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.ToolCall == nil {
				continue
			}
			next++
			if n, ok := strings.CutPrefix(p.ToolCall.ID, googleCallPrefix); ok && isGoogleCallID(p.ToolCall.ID) {
				if k, err := strconv.Atoi(n); err == nil && k >= next {
					next = k + 1
				}
			}
		}
	}
	return next
}

func (b *googleBackend) apiError(err error) (int, string, bool) {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code, apiErr.Message, true
	}
	var apiErrPtr *genai.APIError
	if errors.As(err, &apiErrPtr) && apiErrPtr != nil {
		return apiErrPtr.Code, apiErrPtr.Message, true
	}
	return 0, "", false
}

// geminiKeywords are the JSON Schema keywords Gemini's responseJsonSchema
// documents; it may refuse others.
var geminiKeywords = map[string]bool{
	"$id": true, "$defs": true, "$ref": true, "$anchor": true,
	"type": true, "format": true, "title": true, "description": true, "enum": true,
	"items": true, "prefixItems": true, "minItems": true, "maxItems": true,
	"minimum": true, "maximum": true, "anyOf": true, "oneOf": true,
	"properties": true, "additionalProperties": true, "required": true,
	"propertyOrdering": true,
}

// adaptSchemaForGemini returns a copy of schema within what Gemini
// documents: allOf merged, const as a one-value enum, other keywords dropped
// and noted in the description. Unlike strict mode, optional stays optional.
func adaptSchemaForGemini(schema map[string]any) (map[string]any, error) {
	root, _ := deepCopy(schema).(map[string]any)
	var walk func(v any, path string, depth int) (any, error)
	walk = func(v any, path string, depth int) (any, error) {
		if depth > maxSchemaDepth {
			return nil, fmt.Errorf("%s: schema nested deeper than %d", path, maxSchemaDepth)
		}
		s, ok := v.(map[string]any)
		if !ok {
			// true, false: Gemini has no word for them; leave them be.
			return v, nil
		}
		s, err := mergeAllOf(s, root, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out := map[string]any{}
		dropped := map[string]any{}
		_, isRef := s["$ref"]
		for k, val := range s {
			switch {
			case isRef && !strings.HasPrefix(k, "$"):
				// Gemini allows nothing but $-keywords beside a $ref, not
				// even a description to hold a note.
			case k == "const":
				if _, hasEnum := s["enum"]; !hasEnum {
					out["enum"] = []any{val}
				}
			case k == "definitions":
				// Kept under its own name so that references still resolve.
				out[k] = val
			case geminiKeywords[k]:
				out[k] = val
			case metaKeywords[k]:
			default:
				dropped[k] = val
			}
		}
		for _, k := range []string{"properties", "$defs", "definitions"} {
			m, ok := out[k].(map[string]any)
			if !ok {
				continue
			}
			adapted := make(map[string]any, len(m))
			for name, sub := range m {
				if adapted[name], err = walk(sub, path+"/"+k+"/"+name, depth+1); err != nil {
					return nil, err
				}
			}
			out[k] = adapted
		}
		for _, k := range []string{"anyOf", "oneOf", "prefixItems"} {
			list := asSlice(out[k])
			if list == nil {
				continue
			}
			adapted := make([]any, len(list))
			for i, sub := range list {
				if adapted[i], err = walk(sub, fmt.Sprintf("%s/%s/%d", path, k, i), depth+1); err != nil {
					return nil, err
				}
			}
			out[k] = adapted
		}
		for _, k := range []string{"items", "additionalProperties"} {
			if sub, ok := out[k].(map[string]any); ok {
				if out[k], err = walk(sub, path+"/"+k, depth+1); err != nil {
					return nil, err
				}
			}
		}
		annotate(out, dropped)
		return out, nil
	}
	out, err := walk(root, "#", 0)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// headerOf returns h as an http.Header.
func headerOf(h map[string]string) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		out.Set(k, v)
	}
	return out
}
