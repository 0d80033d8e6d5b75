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
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/agent"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestAgentErrorCodes(t *testing.T) {
	a := NewAutomation(nil, slog.New(slog.DiscardHandler))
	other := errors.New("the snapshot failed")
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"no model", engine.ErrNoModel, rpc.Errorf(rpc.CodeBadRequest, "agentExecute needs a model: the session has none and the call gave no agentConfig.model")},
		{"invalid argument", fmt.Errorf("%w: variable name %q", agent.ErrInvalidArgument, "a b"), rpc.Errorf(rpc.CodeBadRequest, `variable name "a b"`)},
		{"model error", &llm.Error{Provider: "openai", Model: "gpt-4.1", StatusCode: 500, Message: "upstream failed"}, rpc.Errorf(rpc.CodeModelError, "openai/gpt-4.1: HTTP 500 Internal Server Error: upstream failed")},
		// TIMEOUT is the task's deadline; the model's own limit is the
		// model's failure.
		{"model timeout", &llm.Error{Provider: "openai", Model: "gpt-4.1", Message: "timed out after 1m0s", Err: context.DeadlineExceeded}, rpc.Errorf(rpc.CodeModelError, "openai/gpt-4.1: timed out after 1m0s")},
		{"anything else", other, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := a.agentError(tt.err)
			if diff := cmp.Diff(tt.want.Error(), got.Error()); diff != "" {
				t.Errorf("agentError (-want +got):\n%s", diff)
			}
			if rpc.CodeOf(got) != rpc.CodeOf(tt.want) {
				t.Errorf("code %q, want %q", rpc.CodeOf(got), rpc.CodeOf(tt.want))
			}
		})
	}
}

func TestAgentModes(t *testing.T) {
	tests := []struct {
		mode    string
		want    agent.Mode
		wantErr bool
	}{
		{"", agent.ModeDOM, false},
		{rpc.AgentModeDOM, agent.ModeDOM, false},
		{rpc.AgentModeHybrid, agent.ModeHybrid, false},
		{rpc.AgentModeCUA, agent.ModeCUA, false},
		{"psychic", "", true},
	}
	for _, tt := range tests {
		got, err := agentMode(tt.mode)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("agentMode(%q) = %q, %v; want %q, error %v", tt.mode, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestJoinPrompts(t *testing.T) {
	tests := []struct{ session, task, want string }{
		{"", "", ""},
		{"Be polite.", "", "Be polite."},
		{"", " Be quick. ", "Be quick."},
		{"Be polite.\n", "Be quick.", "Be polite.\n\nBe quick."},
	}
	for _, tt := range tests {
		if got := joinPrompts(tt.session, tt.task); got != tt.want {
			t.Errorf("joinPrompts(%q, %q) = %q, want %q", tt.session, tt.task, got, tt.want)
		}
	}
}
