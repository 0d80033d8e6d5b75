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

package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// testKey is the API key every test client uses; no error may contain it.
const testKey = "sk-test-7f3a9c1e5b2d4086"

// models are the providers under test, each with a model of its own.
var models = []struct {
	provider, model string
	// path is where the provider's SDK posts a generation.
	path string
}{
	{llmtest.OpenAI, "gpt-4.1-mini", "/v1/chat/completions"},
	{llmtest.Anthropic, "claude-sonnet-4-5", "/v1/messages"},
	{llmtest.Google, "gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:generateContent"},
}

// forEachProvider runs f in a parallel subtest per provider, each with a
// server of its own and a client of the provider's model pointed at it.
func forEachProvider(t *testing.T, edit func(*llm.Config), f func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string)) {
	t.Helper()
	for _, m := range models {
		t.Run(m.provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			cfg := llm.Config{
				Model:   m.provider + "/" + m.model,
				APIKey:  testKey,
				BaseURL: srv.BaseURL(m.provider),
				Timeout: 10 * time.Second,
			}
			if edit != nil {
				edit(&cfg)
			}
			c, err := llm.New(cfg)
			if err != nil {
				t.Fatalf("New(%q): %v", cfg.Model, err)
			}
			f(t, srv, c, m.provider, m.model)
		})
	}
}

// ask is a one-message request.
func ask(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{llm.UserMessage(llm.TextPart(text))}}
}

// asLLMError returns err as an *llm.Error, failing the test if it is not one.
func asLLMError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return e
}

// normalize round-trips v through JSON, so that Go values and decoded
// bodies compare alike.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out
}

// path returns the value at a path of keys and indexes in decoded JSON.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestGenerateText(t *testing.T) {
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.Text("Hello there."))
		req := llm.Request{
			System: "You are terse.",
			Messages: []llm.Message{
				llm.UserMessage(llm.TextPart("Say hello.")),
				llm.AssistantMessage("Hello?"),
				llm.UserMessage(llm.TextPart("Once more.")),
			},
			MaxOutputTokens: 64,
			Temperature:     new(0.2),
		}
		resp, err := c.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if resp.Text != "Hello there." {
			t.Errorf("Text = %q, want %q", resp.Text, "Hello there.")
		}
		if resp.FinishReason == "" {
			t.Error("FinishReason is empty")
		}
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("server got %d requests, want 1", len(reqs))
		}
		got := reqs[0]
		for _, m := range models {
			if m.provider == provider && got.Path != m.path {
				t.Errorf("path = %q, want %q", got.Path, m.path)
			}
		}
		if got.Model != model {
			t.Errorf("model on the wire = %q, want %q", got.Model, model)
		}
		if want := "You are terse.\nSay hello.\nHello?\nOnce more."; got.Text != want {
			t.Errorf("prompt on the wire = %q, want %q", got.Text, want)
		}
		if c.Model() != provider+"/"+model {
			t.Errorf("Model() = %q, want %q", c.Model(), provider+"/"+model)
		}
		// Where each provider takes the output cap and the temperature; an
		// OpenAI-compatible server gets max_tokens.
		knobs := map[string][2][]any{
			llmtest.OpenAI:    {{"max_tokens"}, {"temperature"}},
			llmtest.Anthropic: {{"max_tokens"}, {"temperature"}},
			llmtest.Google:    {{"generationConfig", "maxOutputTokens"}, {"generationConfig", "temperature"}},
		}[provider]
		if got := path(got.JSON, knobs[0]...); got != 64.0 {
			t.Errorf("output cap %v = %v, want 64", knobs[0], got)
		}
		// float32 for Gemini: compare loosely.
		if got, _ := path(got.JSON, knobs[1]...).(float64); got < 0.199 || got > 0.201 {
			t.Errorf("temperature %v = %v, want 0.2", knobs[1], got)
		}
	})
}

// redirect sends every request to a scripted server, recording the host
// it was meant for.
type redirect struct {
	to    string
	hosts chan string
}

func (r *redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	r.hosts <- req.URL.Host
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = "http", strings.TrimPrefix(r.to, "http://")
	return http.DefaultTransport.RoundTrip(req)
}

func TestGenerateDefaultEndpoints(t *testing.T) {
	hosts := map[string]string{
		llmtest.OpenAI:    "api.openai.com",
		llmtest.Anthropic: "api.anthropic.com",
		llmtest.Google:    "generativelanguage.googleapis.com",
	}
	for _, m := range models {
		t.Run(m.provider, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			rt := &redirect{to: srv.URL(), hosts: make(chan string, 1)}
			// No BaseURL: the provider's own endpoint, reached through the
			// caller's HTTP client.
			c, err := llm.New(llm.Config{
				Model:      m.provider + "/" + m.model,
				APIKey:     testKey,
				HTTPClient: &http.Client{Transport: rt},
			})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			srv.Enqueue(llmtest.Text("ok"))
			req := ask("Hi.")
			req.MaxOutputTokens = 32
			if _, err := c.Generate(context.Background(), req); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if got := <-rt.hosts; got != hosts[m.provider] {
				t.Errorf("request went to %q, want %q", got, hosts[m.provider])
			}
			got := srv.Requests()[0]
			if got.Path != m.path {
				t.Errorf("path = %q, want %q", got.Path, m.path)
			}
			if m.provider == llmtest.OpenAI {
				// OpenAI's reasoning models require max_completion_tokens.
				if v := path(got.JSON, "max_completion_tokens"); v != 32.0 {
					t.Errorf("max_completion_tokens = %v, want 32", v)
				}
			}
		})
	}
}

// actionSchema is a schema like the engine's act schema, with an optional
// property strict mode must make nullable.
func actionSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"elementId": map[string]any{"type": "string", "description": "The id of the element, as in [0-12]."},
			"method":    map[string]any{"type": "string", "enum": []any{"click", "fill"}},
			"arguments": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"note":      map[string]any{"type": "string", "minLength": 1},
		},
		"required": []any{"elementId", "method", "arguments"},
	}
}

func TestGenerateStructured(t *testing.T) {
	strict, err := llm.AdaptSchemaForStrict(actionSchema())
	if err != nil {
		t.Fatalf("AdaptSchemaForStrict: %v", err)
	}
	// wireChecks asserts that the schema reached the wire in each
	// provider's own format.
	wireChecks := map[string]func(t *testing.T, body map[string]any){
		llmtest.OpenAI: func(t *testing.T, body map[string]any) {
			want := map[string]any{
				"type": "json_schema",
				"json_schema": map[string]any{
					"name":        "action",
					"description": "The next browser action.",
					"strict":      true,
					"schema":      strict,
				},
			}
			if diff := cmp.Diff(normalize(t, want), body["response_format"]); diff != "" {
				t.Errorf("response_format (-want +got):\n%s", diff)
			}
		},
		llmtest.Anthropic: func(t *testing.T, body map[string]any) {
			want := []any{map[string]any{
				"name":         "action",
				"description":  "The next browser action.",
				"input_schema": actionSchema(),
			}}
			if diff := cmp.Diff(normalize(t, want), body["tools"]); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(normalize(t, map[string]any{"type": "tool", "name": "action"}), body["tool_choice"]); diff != "" {
				t.Errorf("tool_choice (-want +got):\n%s", diff)
			}
		},
		llmtest.Google: func(t *testing.T, body map[string]any) {
			if got := path(body, "generationConfig", "responseMimeType"); got != "application/json" {
				t.Errorf("generationConfig.responseMimeType = %v, want application/json", got)
			}
			// Gemini documents no minLength: it moves to the description.
			want := actionSchema()
			want["properties"].(map[string]any)["note"] = map[string]any{"type": "string", "description": "Constraints: minLength: 1."}
			if diff := cmp.Diff(normalize(t, want), path(body, "generationConfig", "responseJsonSchema")); diff != "" {
				t.Errorf("generationConfig.responseJsonSchema (-want +got):\n%s", diff)
			}
		},
	}
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		answer := `{"elementId":"0-12","method":"click","arguments":[]}`
		if provider == llmtest.OpenAI {
			// Strict mode made note required and nullable: the model sends
			// null, which Generate drops since the caller's schema has it
			// optional and not nullable.
			answer = `{"elementId":"0-12","method":"click","arguments":[],"note":null}`
		}
		srv.Enqueue(llmtest.JSON(answer))
		req := ask("Click the first link.")
		req.Schema = &llm.Schema{Name: "action", Description: "The next browser action.", JSON: actionSchema(), Strict: true}
		resp, err := c.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		want := map[string]any{"elementId": "0-12", "method": "click", "arguments": []any{}}
		var got any
		if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
			t.Fatalf("Text %q is not JSON: %v", resp.Text, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("server got %d requests, want 1", len(reqs))
		}
		wireChecks[provider](t, reqs[0].JSON)
	})
}

func TestGenerateStructuredNonObjectRoot(t *testing.T) {
	list := map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		// OpenAI and Anthropic need an object root: the schema is wrapped
		// in {"value": ...} and the answer unwrapped. Gemini takes arrays.
		answer := `{"value":["a","b"]}`
		if provider == llmtest.Google {
			answer = `["a","b"]`
		}
		srv.Enqueue(llmtest.JSON(answer))
		req := ask("List two letters.")
		req.Schema = &llm.Schema{JSON: list, Strict: true}
		resp, err := c.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if resp.Text != `["a","b"]` {
			t.Errorf("Text = %s, want [\"a\",\"b\"]", resp.Text)
		}
	})
}

func TestGenerateUsage(t *testing.T) {
	const delay = 30 * time.Millisecond
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.Text("ok").WithUsage(120, 15).WithReasoningTokens(5).WithCachedInputTokens(100).WithDelay(delay))
		resp, err := c.Generate(context.Background(), ask("Hi."))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		want := llm.Usage{InputTokens: 120, OutputTokens: 15, ReasoningTokens: 5, CachedInputTokens: 100}
		if diff := cmp.Diff(want, resp.Usage, cmpopts.IgnoreFields(llm.Usage{}, "InferenceTimeMs")); diff != "" {
			t.Errorf("Usage (-want +got):\n%s", diff)
		}
		// A lower bound only: the call cannot take less than the delay.
		if resp.Usage.InferenceTimeMs < delay.Milliseconds() {
			t.Errorf("InferenceTimeMs = %d, want at least %d", resp.Usage.InferenceTimeMs, delay.Milliseconds())
		}
	})
}

func TestGenerateImage(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nnot really a png")
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.Text("A login form."))
		req := llm.Request{Messages: []llm.Message{llm.UserMessage(llm.TextPart("What is on screen?"), llm.ImagePart(png))}}
		if _, err := c.Generate(context.Background(), req); err != nil {
			t.Fatalf("Generate: %v", err)
		}
		got := srv.Requests()[0]
		if diff := cmp.Diff([][]byte{png}, got.Images); diff != "" {
			t.Errorf("images on the wire (-want +got):\n%s", diff)
		}
		if got.Text != "What is on screen?" {
			t.Errorf("prompt on the wire = %q", got.Text)
		}
	})
}

func TestGenerateRetriesRateLimit(t *testing.T) {
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.Status(http.StatusTooManyRequests).WithRetryAfter(0), llmtest.Text("ok"))
		resp, err := c.Generate(context.Background(), ask("Hi."))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if resp.Text != "ok" {
			t.Errorf("Text = %q, want ok", resp.Text)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("server got %d requests, want 2 (one 429, one retry)", n)
		}
	})
}

func TestGenerateRetryAfterTooLong(t *testing.T) {
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		// A provider asking for minutes is not retried: the caller learns
		// at once instead of waiting out its timeout.
		srv.Enqueue(llmtest.Status(http.StatusTooManyRequests).WithRetryAfter(5 * time.Minute).WithMessage("quota exhausted"))
		_, err := c.Generate(context.Background(), ask("Hi."))
		if err == nil {
			t.Fatal("Generate succeeded, want a 429 error")
		}
		e := asLLMError(t, err)
		if e.StatusCode != http.StatusTooManyRequests || e.Attempts != 1 {
			t.Errorf("StatusCode, Attempts = %d, %d; want 429, 1", e.StatusCode, e.Attempts)
		}
		if !strings.Contains(err.Error(), "quota exhausted") {
			t.Errorf("error %q lacks the provider's message", err)
		}
	})
}

func TestGenerateServerErrorExhaustsRetries(t *testing.T) {
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		fail := llmtest.Status(http.StatusInternalServerError).WithRetryAfter(0).WithMessage("upstream exploded")
		srv.Enqueue(fail, fail, fail)
		_, err := c.Generate(context.Background(), ask("Hi."))
		if err == nil {
			t.Fatal("Generate succeeded, want an error")
		}
		if n := len(srv.Requests()); n != 1+llm.DefaultMaxRetries {
			t.Errorf("server got %d requests, want %d", n, 1+llm.DefaultMaxRetries)
		}
		e := asLLMError(t, err)
		want := &llm.Error{Provider: provider, Model: model, StatusCode: 500, Message: e.Message, Attempts: 3}
		if diff := cmp.Diff(want, e, cmpopts.IgnoreFields(llm.Error{}, "Err")); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
		msg := err.Error()
		for _, s := range []string{provider + "/" + model, "HTTP 500", "upstream exploded", "3 attempts"} {
			if !strings.Contains(msg, s) {
				t.Errorf("error %q lacks %q", msg, s)
			}
		}
		if strings.Contains(msg, testKey) {
			t.Errorf("error %q contains the API key", msg)
		}
	})
}

func TestGenerateClientErrorIsNotRetried(t *testing.T) {
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.Status(http.StatusBadRequest).WithMessage("bad request body"))
		_, err := c.Generate(context.Background(), ask("Hi."))
		if e := asLLMError(t, err); e.StatusCode != http.StatusBadRequest {
			t.Errorf("StatusCode = %d, want 400", e.StatusCode)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("server got %d requests, want 1", n)
		}
	})
}

func TestGenerateRejectedKeyIsRedacted(t *testing.T) {
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		// Providers echo (parts of) a rejected key; this one echoes it all.
		srv.Enqueue(llmtest.Status(http.StatusUnauthorized).WithMessage("Incorrect API key provided: " + testKey))
		_, err := c.Generate(context.Background(), ask("Hi."))
		if err == nil {
			t.Fatal("Generate succeeded, want a 401 error")
		}
		e := asLLMError(t, err)
		if e.StatusCode != http.StatusUnauthorized {
			t.Errorf("StatusCode = %d, want 401", e.StatusCode)
		}
		for _, s := range []string{err.Error(), e.Message} {
			if strings.Contains(s, testKey) {
				t.Errorf("error %q contains the API key", s)
			}
			if !strings.Contains(s, "Incorrect API key provided") {
				t.Errorf("error %q lacks the provider's message", s)
			}
		}
	})
}

func TestGenerateSendsKeyAndHeaders(t *testing.T) {
	// authHeader is where each provider's key belongs; the others must
	// stay empty.
	authHeader := map[string]struct{ name, value string }{
		llmtest.OpenAI:    {"Authorization", "Bearer " + testKey},
		llmtest.Anthropic: {"X-Api-Key", testKey},
		llmtest.Google:    {"X-Goog-Api-Key", testKey},
	}
	headers := map[string]string{"X-Tenant": "acme", "X-Request-Source": "browserfleet"}
	edit := func(c *llm.Config) { c.Headers = headers }
	forEachProvider(t, edit, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.Status(http.StatusServiceUnavailable).WithRetryAfter(0), llmtest.Text("ok"))
		if _, err := c.Generate(context.Background(), ask("Hi.")); err != nil {
			t.Fatalf("Generate: %v", err)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("server got %d requests, want 2", len(reqs))
		}
		for i, r := range reqs {
			for k, v := range headers {
				if got := r.Header.Get(k); got != v {
					t.Errorf("request %d: header %s = %q, want %q", i, k, got, v)
				}
			}
			for p, h := range authHeader {
				got := r.Header.Get(h.name)
				switch {
				case p == provider && got != h.value:
					t.Errorf("request %d: header %s = %q, want %q", i, h.name, got, h.value)
				case p != provider && got != "":
					t.Errorf("request %d: header %s = %q, want none", i, h.name, got)
				}
			}
		}
	})
}

func TestGenerateWithoutKeySendsNoCredentials(t *testing.T) {
	// Local OpenAI-compatible servers (Ollama, vLLM) take no key, and none
	// must come from the environment.
	t.Setenv("OPENAI_API_KEY", "sk-ambient-must-not-leak")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-ambient-must-not-leak")
	for _, provider := range []string{llmtest.OpenAI, llmtest.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Enqueue(llmtest.Text("ok"))
			c, err := llm.New(llm.Config{Model: provider + "/local-model", BaseURL: srv.BaseURL(provider)})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if _, err := c.Generate(context.Background(), ask("Hi.")); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			h := srv.Requests()[0].Header
			for _, name := range []string{"Authorization", "X-Api-Key"} {
				if got := h.Get(name); got != "" {
					t.Errorf("header %s = %q, want none", name, got)
				}
			}
		})
	}
}

func TestGenerateTimeout(t *testing.T) {
	edit := func(c *llm.Config) { c.Timeout = 200 * time.Millisecond }
	forEachProvider(t, edit, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.Text("too late").WithDelay(time.Minute))
		_, err := c.Generate(context.Background(), ask("Hi."))
		if err == nil {
			t.Fatal("Generate succeeded, want a timeout")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v is not context.DeadlineExceeded", err)
		}
		e := asLLMError(t, err)
		if e.StatusCode != 0 || e.Provider != provider || e.Model != model {
			t.Errorf("error = %+v", e)
		}
		if !strings.Contains(err.Error(), "timed out after 200ms") {
			t.Errorf("error %q does not say it timed out", err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("server got %d requests, want 1: a timeout is not retried", n)
		}
	})
}

func TestGenerateCallerCancels(t *testing.T) {
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.Text("too late").WithDelay(time.Minute))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := c.Generate(ctx, ask("Hi."))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v is not context.Canceled", err)
		}
	})
}

func TestGenerateUnusableOutput(t *testing.T) {
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		// Prose where a schema asked for JSON; for Anthropic, no call of
		// the forced tool.
		srv.Enqueue(llmtest.Text("Sorry, I cannot help with that."))
		req := ask("Extract the price.")
		req.Schema = &llm.Schema{JSON: map[string]any{"type": "object", "properties": map[string]any{"price": map[string]any{"type": "number"}}}}
		_, err := c.Generate(context.Background(), req)
		if !errors.Is(err, llm.ErrInvalidOutput) {
			t.Errorf("error %v is not ErrInvalidOutput", err)
		}
	})
}

func TestGenerateInvalidRequest(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
	}{
		{"no messages", llm.Request{}},
		{"unknown role", llm.Request{Messages: []llm.Message{{Role: "system", Parts: []llm.Part{llm.TextPart("x")}}}}},
		{"no parts", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser}}}},
		{"empty part", llm.Request{Messages: []llm.Message{llm.UserMessage(llm.Part{})}}},
		{"assistant image", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ImagePart([]byte("png"))}}}}},
		{"image type", llm.Request{Messages: []llm.Message{llm.UserMessage(llm.Part{Image: []byte("x"), MIMEType: "image/tiff"})}}},
		{"schema without JSON", llm.Request{Messages: ask("x").Messages, Schema: &llm.Schema{Name: "s"}}},
		{"negative max tokens", llm.Request{Messages: ask("x").Messages, MaxOutputTokens: -1}},
	}
	srv := llmtest.NewServer(t)
	c, err := llm.New(llm.Config{Model: "openai/gpt-4.1-mini", APIKey: testKey, BaseURL: srv.BaseURL(llmtest.OpenAI)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Generate(context.Background(), tc.req)
			if !errors.Is(err, llm.ErrInvalidRequest) {
				t.Errorf("error %v is not ErrInvalidRequest", err)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

func TestNewAcceptsModels(t *testing.T) {
	tests := []struct {
		name string
		cfg  llm.Config
		want string
	}{
		{"openai", llm.Config{Model: "openai/gpt-4.1-mini"}, "openai/gpt-4.1-mini"},
		{"anthropic", llm.Config{Model: "anthropic/claude-sonnet-4-5"}, "anthropic/claude-sonnet-4-5"},
		{"google", llm.Config{Model: "google/gemini-2.5-flash", APIKey: testKey}, "google/gemini-2.5-flash"},
		{"provider case", llm.Config{Model: "OpenAI/gpt-4o"}, "openai/gpt-4o"},
		{"slash in id", llm.Config{Model: "openai/meta-llama/Llama-3.1-8B-Instruct", BaseURL: "http://vllm:8000/v1"}, "openai/meta-llama/Llama-3.1-8B-Instruct"},
		{"provider override", llm.Config{Model: "meta-llama/Llama-3.1-8B-Instruct", Provider: "openai"}, "openai/meta-llama/Llama-3.1-8B-Instruct"},
		{"provider override with prefix", llm.Config{Model: "anthropic/claude-sonnet-4-5", Provider: "anthropic"}, "anthropic/claude-sonnet-4-5"},
		{"provider override bare", llm.Config{Model: "gemini-2.5-flash", Provider: "Google", APIKey: testKey}, "google/gemini-2.5-flash"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := llm.New(tc.cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := c.Model(); got != tc.want {
				t.Errorf("Model() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		cfg  llm.Config
		// is is the error New must wrap, when it has a sentinel.
		is error
		// mentions are what the message must say.
		mentions []string
	}{
		{"empty model", llm.Config{}, llm.ErrInvalidModel, []string{"provider/model"}},
		{"no provider", llm.Config{Model: "gpt-4.1-mini"}, llm.ErrInvalidModel, []string{`"gpt-4.1-mini"`, "provider/model"}},
		{"empty provider", llm.Config{Model: "/gpt-4.1-mini"}, llm.ErrInvalidModel, []string{"empty provider"}},
		{"empty id", llm.Config{Model: "openai/"}, llm.ErrInvalidModel, []string{"empty model id"}},
		{"white space", llm.Config{Model: "openai/gpt 4"}, llm.ErrInvalidModel, []string{"white space"}},
		{"unknown provider", llm.Config{Model: "mistral/mistral-large"}, llm.ErrUnknownProvider, []string{`"mistral"`, "anthropic, google, openai"}},
		{"unknown provider override", llm.Config{Model: "command-r", Provider: "cohere"}, llm.ErrUnknownProvider, []string{`"cohere"`}},
		{"google without key", llm.Config{Model: "google/gemini-2.5-flash"}, nil, []string{"google/gemini-2.5-flash", "API key"}},
		{"base URL scheme", llm.Config{Model: "openai/gpt-4.1-mini", BaseURL: "ftp://example.com"}, nil, []string{"openai/gpt-4.1-mini", "BaseURL"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := llm.New(tc.cfg)
			if err == nil {
				t.Fatalf("New returned %s, want an error", c.Model())
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			for _, s := range tc.mentions {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}
