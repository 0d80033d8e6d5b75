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

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/store"
)

const testKey = "sk-operator-secret-4242"

func TestWireRoundTrip(t *testing.T) {
	temp := 0.2
	tests := []struct {
		name string
		req  llm.Request
	}{
		{name: "text", req: llm.Request{System: "sys", Messages: []llm.Message{llm.UserMessage(llm.TextPart("hi"))}}},
		{name: "schema and image", req: llm.Request{
			Messages:        []llm.Message{llm.UserMessage(llm.TextPart("look"), llm.ImagePart([]byte{0x89, 'P', 'N', 'G', 0, 1, 2}))},
			Schema:          &llm.Schema{Name: "act", Description: "d", JSON: map[string]any{"type": "object"}, Strict: true},
			MaxOutputTokens: 300, Temperature: &temp,
		}},
		{name: "tools", req: llm.Request{
			Messages: []llm.Message{
				llm.UserMessage(llm.TextPart("go")),
				{Role: llm.RoleAssistant, Parts: []llm.Part{{ToolCall: &llm.ToolCall{ID: "c1", Name: "click", Arguments: json.RawMessage(`{"x":1}`), Signature: []byte("sig")}}}},
				llm.UserMessage(llm.Part{ToolResult: &llm.ToolResult{CallID: "c1", Name: "click", Text: "done", Image: []byte{1, 2}, IsError: true}}),
			},
			Tools:      []llm.Tool{{Name: "click", Description: "clicks", Parameters: map[string]any{"type": "object"}}},
			ToolChoice: llm.ToolChoiceRequired,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(WireRequest(tt.req))
			if err != nil {
				t.Fatal(err)
			}
			var back Request
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.req, back.LLM()); diff != "" {
				t.Errorf("request after the round trip (-want +got):\n%s", diff)
			}
		})
	}
	resp := llm.Response{Text: "t", FinishReason: "stop", ToolCalls: []llm.ToolCall{{ID: "a", Name: "n", Arguments: json.RawMessage(`{}`)}},
		Usage: llm.Usage{InputTokens: 1, OutputTokens: 2, ReasoningTokens: 3, CachedInputTokens: 4, InferenceTimeMs: 5}}
	b, _ := json.Marshal(WireResponse(resp))
	var back Response
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(resp, back.LLM()); diff != "" {
		t.Errorf("response after the round trip (-want +got):\n%s", diff)
	}
}

// newScriptedGateway is a gateway whose openai provider is the scripted
// model server.
func newScriptedGateway(t *testing.T, models []string, def string, budget Budget, st store.Store, now func() time.Time) (*Gateway, *llmtest.Server, *prometheus.Registry) {
	t.Helper()
	srv := llmtest.NewServer(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(Options{
		Providers:    []Provider{{Name: "openai", APIKeyFile: keyFile, BaseURL: srv.BaseURL(llmtest.OpenAI), Models: models}},
		DefaultModel: def, Budget: budget, Store: st, Metrics: m, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g, srv, reg
}

func ask(text string) GenerateRequest {
	return GenerateRequest{Request: WireRequest(llm.Request{Messages: []llm.Message{llm.UserMessage(llm.TextPart(text))}})}
}

func TestModelsScriptedAI(t *testing.T) {
	g, srv, _ := newScriptedGateway(t, []string{"gpt-4.1-mini", "openai/gpt-4.1"}, "openai/gpt-4.1-mini", Budget{}, nil, nil)
	tests := []struct {
		model     string
		wantModel string
		wantCode  string
	}{
		{model: "", wantModel: "openai/gpt-4.1-mini"},
		{model: "auto", wantModel: "openai/gpt-4.1-mini"},
		{model: "openai/gpt-4.1", wantModel: "openai/gpt-4.1"},
		{model: "openai/gpt-5", wantCode: CodeModelNotAllowed},
		{model: "anthropic/claude-sonnet-4-5", wantCode: CodeModelNotAllowed},
		{model: "nope", wantCode: CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			before := len(srv.Requests())
			if tt.wantCode == "" {
				srv.Enqueue(llmtest.Text("ok").WithUsage(10, 2))
			}
			req := ask("hello")
			req.Model = tt.model
			resp, err := g.Generate(context.Background(), "team-a", req)
			var gotCode, gotModel string
			var e *Error
			if errors.As(err, &e) {
				gotCode = e.Code
			} else if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp != nil {
				gotModel = resp.Model
				if diff := cmp.Diff(Usage{InputTokens: 10, OutputTokens: 2}, resp.Response.Usage, cmpIgnoreTime); diff != "" {
					t.Errorf("usage (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff([]string{tt.wantModel, tt.wantCode}, []string{gotModel, gotCode}); diff != "" {
				t.Errorf("model and code (-want +got):\n%s", diff)
			}
			reqs := srv.Requests()[before:]
			if tt.wantCode != "" {
				if len(reqs) != 0 {
					t.Errorf("a refused call reached the provider %d times", len(reqs))
				}
				return
			}
			if len(reqs) != 1 {
				t.Fatalf("the provider got %d requests, want 1", len(reqs))
			}
			if got, want := reqs[0].Header.Get("Authorization"), "Bearer "+testKey; got != want {
				t.Errorf("the provider got Authorization %q, want the operator's key", got)
			}
			if _, id, _ := strings.Cut(tt.wantModel, "/"); reqs[0].Model != id {
				t.Errorf("the provider was asked for %q, want %q", reqs[0].Model, id)
			}
		})
	}
}

var cmpIgnoreTime = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".InferenceTimeMs" }, cmp.Ignore())

func TestBudgetScriptedAI(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	st := store.NewMemory(store.MemoryOptions{Now: clock})
	g, srv, reg := newScriptedGateway(t, nil, "openai/gpt-4.1-mini", Budget{Tokens: 100, Window: time.Hour, Projects: map[string]int64{"big": 1000, "free": 0}}, st, clock)
	srv.Enqueue(llmtest.Text("a").WithUsage(90, 20)) // team-a: 110 of 100
	if _, err := g.Generate(context.Background(), "team-a", ask("one")); err != nil {
		t.Fatalf("first call: %v", err)
	}
	// Over budget: refused before the provider is called.
	_, err := g.Generate(context.Background(), "team-a", ask("two"))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrBudgetExceeded) || e.Status != http.StatusTooManyRequests {
		t.Fatalf("second call: got %v, want a 429 BUDGET_EXCEEDED", err)
	}
	for _, want := range []string{"team-a", "100 tokens", "110 spent"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the refusal %q does not say %q", e.Message, want)
		}
	}
	if got := len(srv.Requests()); got != 1 {
		t.Errorf("the provider got %d requests, want 1: the refused call must not reach it", got)
	}
	// Other projects have budgets of their own; 0 is none.
	srv.Enqueue(llmtest.Text("b").WithUsage(500, 1), llmtest.Text("c").WithUsage(5000, 1), llmtest.Text("c").WithUsage(5000, 1))
	for _, p := range []string{"big", "free", "free"} {
		if _, err := g.Generate(context.Background(), p, ask("x")); err != nil {
			t.Errorf("project %s: %v", p, err)
		}
	}
	// The next window starts afresh.
	now = now.Add(time.Hour)
	srv.Enqueue(llmtest.Text("d").WithUsage(1, 1))
	if _, err := g.Generate(context.Background(), "team-a", ask("three")); err != nil {
		t.Errorf("a call in the next window: %v", err)
	}
	if got := testutil.ToFloat64(g.opts.Metrics.requests.WithLabelValues("team-a", "openai/gpt-4.1-mini", CodeBudgetExceeded)); got != 1 {
		t.Errorf("budget refusals counted %v, want 1", got)
	}
	if got := testutil.ToFloat64(g.opts.Metrics.tokens.WithLabelValues("team-a", "openai/gpt-4.1-mini", "input")); got != 91 {
		t.Errorf("team-a's input tokens counted %v, want 91", got)
	}
	_ = reg
}

func TestMetricsModelLabelBounded(t *testing.T) {
	g, srv, _ := newScriptedGateway(t, nil, "openai/gpt-4.1-mini", Budget{}, nil, nil)
	srv.Enqueue(llmtest.Text("a").WithUsage(3, 1))
	req := ask("x")
	req.Model = "openai/some-model-nobody-listed"
	if _, err := g.Generate(context.Background(), "p", req); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(g.opts.Metrics.tokens.WithLabelValues("p", "openai/other", "input")); got != 3 {
		t.Errorf("tokens of an unlisted model under openai/other: %v, want 3", got)
	}
}

func TestKeyRedactedScriptedAI(t *testing.T) {
	g, srv, _ := newScriptedGateway(t, nil, "openai/gpt-4.1-mini", Budget{}, nil, nil)
	// A provider that echoes the key in its error message.
	srv.Enqueue(llmtest.Status(401).WithMessage("invalid key " + testKey))
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.Serve(w, r, "team-a") }))
	defer h.Close()
	ep, err := NewProjectEndpoint(h.URL, "project-key", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ep.Client(ModelAuto).Generate(context.Background(), llm.Request{Messages: []llm.Message{llm.UserMessage(llm.TextPart("x"))}})
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("got %v, want an *llm.Error", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("the error carries the provider key: %v", err)
	}
	if !strings.Contains(err.Error(), "401") {
		t.Errorf("the error %q does not say what the provider answered", err)
	}
}

func TestClientOverHTTPScriptedAI(t *testing.T) {
	st := store.NewMemory(store.MemoryOptions{})
	g, srv, _ := newScriptedGateway(t, nil, "openai/gpt-4.1-mini", Budget{Tokens: 10}, st, nil)
	var gotKey string
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey = r.Header.Get(HeaderAPIKey)
		g.Serve(w, r, "team-a")
	}))
	defer h.Close()
	ep, err := NewProjectEndpoint(h.URL+"/", "project-key", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := ep.Client("")
	srv.Enqueue(llmtest.JSON(`{"ok":true}`).WithUsage(8, 4))
	resp, err := c.Generate(context.Background(), llm.Request{
		Messages: []llm.Message{llm.UserMessage(llm.TextPart("x"), llm.ImagePart([]byte("png")))},
		Schema:   &llm.Schema{Name: "r", JSON: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(llm.Response{Text: `{"ok":true}`, FinishReason: resp.FinishReason, Usage: llm.Usage{InputTokens: 8, OutputTokens: 4}}, *resp, cmpIgnoreTime); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if gotKey != "project-key" {
		t.Errorf("the gateway got key %q", gotKey)
	}
	if imgs := srv.Requests()[0].Images; len(imgs) != 1 || string(imgs[0]) != "png" {
		t.Errorf("the provider got images %q, want the one sent", imgs)
	}
	_, err = c.Generate(context.Background(), llm.Request{Messages: []llm.Message{llm.UserMessage(llm.TextPart("x"))}})
	if !errors.Is(err, ErrBudgetExceeded) {
		t.Errorf("over budget: got %v, want ErrBudgetExceeded", err)
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{name: "no provider", opts: Options{}, want: "at least one provider"},
		{name: "unknown provider", opts: Options{Providers: []Provider{{Name: "acme", APIKey: "k"}}}, want: `unknown provider "acme"`},
		{name: "no key", opts: Options{Providers: []Provider{{Name: "openai"}}}, want: "no API key"},
		{name: "default not offered", opts: Options{Providers: []Provider{{Name: "openai", APIKey: "k", Models: []string{"gpt-4.1"}}}, DefaultModel: "openai/gpt-5"}, want: "default model"},
		{name: "default of another provider", opts: Options{Providers: []Provider{{Name: "openai", APIKey: "k"}}, DefaultModel: "google/gemini-2.5-flash"}, want: "offers no google model"},
		{name: "budget without store", opts: Options{Providers: []Provider{{Name: "openai", APIKey: "k"}}, Budget: Budget{Tokens: 5}}, want: "needs a Store"},
		{name: "short window", opts: Options{Providers: []Provider{{Name: "openai", APIKey: "k"}}, Budget: Budget{Window: time.Second}}, want: "at least 1m0s"},
		{name: "bad project", opts: Options{Providers: []Provider{{Name: "openai", APIKey: "k"}}, Budget: Budget{Projects: map[string]int64{"a/b": 1}}}, want: `project "a/b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: got %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
