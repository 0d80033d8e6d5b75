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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine/llm"
)

// recorder is a Generate callback that records its requests and answers
// each with the next of its answers.
type recorder struct {
	mu      sync.Mutex
	reqs    []GenerateRequest
	answers []GenerateResult
	err     error
}

func (r *recorder) generate(_ context.Context, req GenerateRequest) (GenerateResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	if r.err != nil {
		return GenerateResult{}, r.err
	}
	a := r.answers[0]
	r.answers = r.answers[1:]
	return a, nil
}

func TestGenerateCallbackAnswersTheModelCalls(t *testing.T) {
	ctx := testCtx(t)
	p := openPage(t, nil, "/list")
	rec := &recorder{answers: []GenerateResult{
		{Text: `{"names":["Item 1"]}`, Usage: Usage{InputTokens: 200, OutputTokens: 10, ReasoningTokens: 3, CachedInputTokens: 50, InferenceTimeMs: 42}},
		{Text: `{"elements":[]}`, Usage: Usage{InputTokens: 1, OutputTokens: 1, InferenceTimeMs: 1}},
	}}
	c := newInstance(t, CreateOptions{Generate: rec.generate, SystemPrompt: "Answer in English."})
	type names struct {
		Names []string `json:"names"`
	}
	res, err := Extract[names](ctx, c, "the item names", &ExtractOptions{Page: p, Screenshot: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(names{Names: []string{"Item 1"}}, res.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Usage{InputTokens: 200, OutputTokens: 10, ReasoningTokens: 3, CachedInputTokens: 50, InferenceTimeMs: 42}, res.Metadata.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if _, err := c.Observe(ctx, nil, &ObserveOptions{Page: p, Model: &ModelConfig{ModelName: "my/own-model"}}); err != nil {
		t.Fatal(err)
	}

	req := rec.reqs[0]
	if req.Model != "" || rec.reqs[1].Model != "my/own-model" {
		t.Errorf("models %q and %q, want none and the call's", req.Model, rec.reqs[1].Model)
	}
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		t.Fatalf("messages %+v, want the system instructions then the user's", req.Messages)
	}
	if !strings.Contains(req.Messages[0].Text, "Answer in English.") {
		t.Error("the system message lacks CreateOptions.SystemPrompt")
	}
	if !strings.Contains(req.Messages[1].Text, "the item names") || !strings.Contains(req.Messages[1].Text, "button: Buy 1") {
		t.Errorf("the user message lacks the instruction or the page:\n%s", req.Messages[1].Text)
	}
	if imgs := req.Messages[1].Images; len(imgs) != 1 || imgs[0].MIMEType != "image/png" || !bytes.HasPrefix(imgs[0].Data, []byte("\x89PNG")) {
		t.Errorf("with Screenshot the user message has %d images, want one PNG", len(imgs))
	}
	if len(rec.reqs[1].Messages[1].Images) != 0 {
		t.Error("observe sent an image")
	}
	var schema map[string]any
	if err := json.Unmarshal(req.Schema, &schema); err != nil || schema["type"] != "object" || req.SchemaName == "" {
		t.Errorf("schema %s named %q", req.Schema, req.SchemaName)
	}
	if m, _ := c.Metrics(ctx); m.ExtractPromptTokens != 200 || m.ExtractInferenceTimeMs != 42 || m.ObservePromptTokens != 1 {
		t.Errorf("metrics %+v", m)
	}
}

func TestGenerateCallbackFailures(t *testing.T) {
	ctx := testCtx(t)
	p := openPage(t, nil, "/list")
	type anything struct {
		A string `json:"a"`
	}
	t.Run("an answer that is not JSON", func(t *testing.T) {
		c := newInstance(t, CreateOptions{Generate: answer(`Sure! Here it is: {"a":"x"}`)})
		_, err := Extract[anything](ctx, c, "a", &ExtractOptions{Page: p})
		if err == nil || !strings.Contains(err.Error(), "GenerateResult.Text must be a JSON document") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("the callback's error", func(t *testing.T) {
		quota := errors.New("over quota")
		rec := &recorder{err: quota}
		c := newInstance(t, CreateOptions{Generate: rec.generate})
		_, err := Extract[anything](ctx, c, "a", &ExtractOptions{Page: p})
		if !errors.Is(err, quota) {
			t.Errorf("err = %v, want the callback's", err)
		}
	})
	t.Run("tool calls are refused", func(t *testing.T) {
		g := &generateModel{fn: answer(`{}`)}
		_, err := g.Generate(ctx, llm.Request{
			Messages: []llm.Message{llm.UserMessage(llm.TextPart("hi"))},
			Tools:    []llm.Tool{{Name: "search"}},
		})
		if err == nil || !strings.Contains(err.Error(), "tool calls") {
			t.Errorf("err = %v", err)
		}
	})
}
