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
	m := newModels(session, nil, slog.New(slog.DiscardHandler))
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
	m := newModels(rpc.ModelConfig{ModelName: "nobody/model"}, nil, slog.New(slog.DiscardHandler))
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
