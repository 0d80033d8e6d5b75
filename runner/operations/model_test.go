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

package operations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestModelMerge(t *testing.T) {
	session := rpc.ModelConfig{
		ModelName: "openai/gpt-4.1-mini",
		APIKey:    "sk-session",
		BaseURL:   "https://gateway.example/v1",
		Headers:   map[string]string{"X-Team": "a", "Authorization-Extra": "secret"},
	}
	m := newModels(session, nil, nil, slog.New(slog.DiscardHandler))
	if m.err != nil || m.client == nil {
		t.Fatalf("the session's model: %v", m.err)
	}
	tests := []struct {
		name string
		call rpc.ModelConfig
		want rpc.ModelConfig
	}{
		{
			name: "another model of the session's provider, at its endpoint",
			call: rpc.ModelConfig{ModelName: "openai/gpt-4.1"},
			want: rpc.ModelConfig{ModelName: "openai/gpt-4.1", APIKey: "sk-session", BaseURL: "https://gateway.example/v1", Headers: session.Headers},
		},
		{
			name: "only headers: the session's model, headers merged",
			call: rpc.ModelConfig{Headers: map[string]string{"X-Team": "b", "X-Trace": "1"}},
			want: rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: "sk-session", BaseURL: "https://gateway.example/v1",
				Headers: map[string]string{"X-Team": "b", "X-Trace": "1", "Authorization-Extra": "secret"}},
		},
		{
			name: "the call's own key wins",
			call: rpc.ModelConfig{ModelName: "openai/gpt-4.1", APIKey: "sk-call"},
			want: rpc.ModelConfig{ModelName: "openai/gpt-4.1", APIKey: "sk-call", BaseURL: "https://gateway.example/v1", Headers: session.Headers},
		},
		{
			name: "another endpoint: no session credentials",
			call: rpc.ModelConfig{ModelName: "openai/gpt-4.1", BaseURL: "https://elsewhere.example/v1"},
			want: rpc.ModelConfig{ModelName: "openai/gpt-4.1", BaseURL: "https://elsewhere.example/v1"},
		},
		{
			name: "another provider: nothing of the session's",
			call: rpc.ModelConfig{ModelName: "anthropic/claude-sonnet-4-5"},
			want: rpc.ModelConfig{ModelName: "anthropic/claude-sonnet-4-5"},
		},
		{
			name: "provider given apart from the name",
			call: rpc.ModelConfig{ModelName: "gpt-4.1", Provider: "openai"},
			want: rpc.ModelConfig{ModelName: "gpt-4.1", Provider: "openai", APIKey: "sk-session", BaseURL: "https://gateway.example/v1", Headers: session.Headers},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, m.merge(tt.call)); diff != "" {
				t.Errorf("merge (-want +got):\n%s", diff)
			}
		})
	}

	// No options.model: the engine uses the session's client.
	for _, call := range []*rpc.ModelConfig{nil, {}} {
		if c, err := m.forCall(call); c != nil || err != nil {
			t.Errorf("forCall(%v) = %v, %v; want nil, nil", call, c, err)
		}
	}
	if _, err := m.forCall(&rpc.ModelConfig{ModelName: "gpt-4.1"}); rpc.CodeOf(err) != rpc.CodeBadRequest {
		t.Errorf("a model name without a provider: %v, want BAD_REQUEST", err)
	}
}

func TestSessionModelThatCannotBeUsed(t *testing.T) {
	m := newModels(rpc.ModelConfig{ModelName: "nobody/model"}, nil, nil, slog.New(slog.DiscardHandler))
	if m.client != nil || m.err == nil {
		t.Fatalf("client %v, err %v; want none and why", m.client, m.err)
	}
	e := m.noModelError("observe", "options.model")
	runnertest.Want(t, "code", e.Code, rpc.CodeBadRequest)
	runnertest.WantContains(t, "message", e.Message, "observe needs a model", "nobody", "options.model")
}

func TestCallErrorCodes(t *testing.T) {
	a := NewAutomation(nil, slog.New(slog.DiscardHandler))
	const raw = "raw provider diagnostics with sk-leaked"
	modelErr := &llm.Error{Provider: "openai", Model: "gpt-4.1", StatusCode: 500, Message: "upstream failed", Err: errors.New(raw)}
	other := errors.New("the snapshot failed")
	tests := []struct {
		name     string
		err      error
		wantCode rpc.ErrorCode
		wantMsg  string
	}{
		{"no model", engine.ErrNoModel, rpc.CodeBadRequest, "act needs a model: the session has none and the call gave no options.model"},
		{"invalid argument", fmt.Errorf("%w: act needs an instruction or an action", engine.ErrInvalidArgument), rpc.CodeBadRequest, "act needs an instruction or an action"},
		{"schema violation", fmt.Errorf("%w: at /count: must be >= 1", engine.ErrSchemaViolation), rpc.CodeSchemaViolation, "the extracted data does not match the schema: at /count: must be >= 1"},
		{"model error", fmt.Errorf("asking the model: %w", modelErr), rpc.CodeModelError, "openai/gpt-4.1: HTTP 500 Internal Server Error: upstream failed"},
		{"model timeout", &llm.Error{Provider: "openai", Model: "gpt-4.1", Message: "timed out after 1m0s", Err: context.DeadlineExceeded}, rpc.CodeTimeout, "openai/gpt-4.1: timed out after 1m0s"},
		{"anything else", other, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := a.callError("act", tt.err)
			if tt.wantCode == "" {
				if !errors.Is(got, tt.err) || got.Error() != tt.err.Error() {
					t.Errorf("callError = %v, want the error as it was", got)
				}
				return
			}
			var e *rpc.Error
			if !errors.As(got, &e) {
				t.Fatalf("callError = %v, not an *rpc.Error", got)
			}
			runnertest.Want(t, "code", e.Code, tt.wantCode)
			runnertest.Want(t, "message", e.Message, tt.wantMsg)
			if strings.Contains(e.Message, "sk-leaked") {
				t.Errorf("message %q carries the SDK's raw error", e.Message)
			}
		})
	}
}

// TestModelsViaGateway: with a gateway, a model with no key, headers or
// endpoint of its own, or named auto, is called through it; one with its
// own credentials is not. Without a gateway, auto is refused clearly.
func TestModelsViaGateway(t *testing.T) {
	gw, err := gateway.NewRunnerEndpoint("http://127.0.0.1:1", "ns/s", "token", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		gw        *gateway.Endpoint
		def       rpc.ModelConfig
		call      *rpc.ModelConfig
		wantModel string // the client's model; "" when it is not the gateway's
		wantErr   string
	}{
		{name: "session without a key", gw: gw, def: rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini"}, wantModel: "openai/gpt-4.1-mini"},
		{name: "session auto", gw: gw, def: rpc.ModelConfig{ModelName: "auto"}, wantModel: "auto"},
		{name: "provider given apart", gw: gw, def: rpc.ModelConfig{ModelName: "gpt-4.1", Provider: "OpenAI"}, wantModel: "openai/gpt-4.1"},
		{name: "session with a key", gw: gw, def: rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: "sk"}},
		{name: "session with an endpoint", gw: gw, def: rpc.ModelConfig{ModelName: "openai/llama3", BaseURL: "http://127.0.0.1:11434/v1"}},
		{name: "call auto over a session with a key", gw: gw, def: rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: "sk"}, call: &rpc.ModelConfig{ModelName: "auto"}, wantModel: "auto"},
		{name: "call of another provider without a key", gw: gw, def: rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: "sk"}, call: &rpc.ModelConfig{ModelName: "anthropic/claude-sonnet-4-5"}, wantModel: "anthropic/claude-sonnet-4-5"},
		{name: "call of the session's provider takes its key", gw: gw, def: rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: "sk"}, call: &rpc.ModelConfig{ModelName: "openai/gpt-4.1"}},
		{name: "no gateway: a keyless session calls its provider", def: rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini"}},
		{name: "no gateway: auto refused", def: rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: "sk"}, call: &rpc.ModelConfig{ModelName: "auto"}, wantErr: "this runner has no gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModels(tt.def, nil, tt.gw, slog.New(slog.DiscardHandler))
			c, err := m.client, m.err
			if tt.call != nil {
				c, err = m.forCall(tt.call)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if gc, ok := c.(*gateway.Client); ok {
				got = gc.Model()
			}
			if diff := cmp.Diff(tt.wantModel, got); diff != "" {
				t.Errorf("the gateway's model (-want +got; empty: not through the gateway):\n%s", diff)
			}
		})
	}
}

// TestCallErrorGateway: the gateway's refusals keep their meaning through
// the engine's wrapping: a spent budget is BUDGET_EXCEEDED (429).
func TestCallErrorGateway(t *testing.T) {
	a := &Automation{models: newModels(rpc.ModelConfig{}, nil, nil, slog.New(slog.DiscardHandler))}
	tests := []struct {
		err  error
		want rpc.ErrorCode
	}{
		{err: &gateway.Error{Status: 429, Code: gateway.CodeBudgetExceeded, Message: "spent"}, want: rpc.CodeBudgetExceeded},
		{err: &gateway.Error{Status: 400, Code: gateway.CodeModelNotAllowed, Message: "no"}, want: rpc.CodeBadRequest},
		{err: &gateway.Error{Status: 404, Code: gateway.CodeNotConfigured, Message: "none"}, want: rpc.CodeModelError},
		{err: &gateway.Error{Status: 500, Code: "INTERNAL", Message: "x"}, want: rpc.CodeModelError},
	}
	for _, tt := range tests {
		t.Run(string(tt.want), func(t *testing.T) {
			err := a.callError("act", fmt.Errorf("asking the model: %w", tt.err))
			if diff := cmp.Diff(tt.want, rpc.CodeOf(err)); diff != "" {
				t.Errorf("code (-want +got):\n%s", diff)
			}
		})
	}
	if got := rpc.HTTPStatus(rpc.CodeBudgetExceeded); got != 429 {
		t.Errorf("BUDGET_EXCEEDED answers %d, want 429", got)
	}
}
