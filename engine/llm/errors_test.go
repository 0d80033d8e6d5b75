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
	"errors"
	"testing"
)

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"HTTP status and message", &Error{Provider: "openai", Model: "gpt-4.1-mini", StatusCode: 429, Message: "Rate limit reached", Attempts: 3},
			"openai/gpt-4.1-mini: HTTP 429 Too Many Requests: Rate limit reached (after 3 attempts)"},
		{"HTTP status alone", &Error{Provider: "google", Model: "gemini-2.5-flash", StatusCode: 503, Attempts: 1},
			"google/gemini-2.5-flash: HTTP 503 Service Unavailable"},
		{"nonstandard status", &Error{Provider: "anthropic", Model: "claude-sonnet-4-5", StatusCode: 529, Message: "overloaded_error: Overloaded"},
			"anthropic/claude-sonnet-4-5: HTTP 529: overloaded_error: Overloaded"},
		{"no answer", &Error{Provider: "openai", Model: "gpt-4.1-mini", Message: "timed out after 1m0s", Attempts: 1, Err: context.DeadlineExceeded},
			"openai/gpt-4.1-mini: timed out after 1m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
			if tc.err.Err != nil && !errors.Is(tc.err, tc.err.Err) {
				t.Errorf("errors.Is(err, err.Err) = false")
			}
		})
	}
}

func TestRedact(t *testing.T) {
	cfg := Config{
		APIKey: "sk-live-123456",
		Headers: map[string]string{
			"Authorization":   "Bearer gw-token-abcdef",
			"X-Proxy-Api-Key": "proxy-987654",
			"X-Tenant":        "acme-corp",
		},
	}
	in := "key sk-live-123456, auth Bearer gw-token-abcdef, bare gw-token-abcdef, proxy proxy-987654, tenant acme-corp"
	want := "key [REDACTED], auth [REDACTED], bare [REDACTED], proxy [REDACTED], tenant acme-corp"
	if got := redact(in, secretsOf(cfg)); got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
	// A key too short to be a secret would garble every message.
	if got := redact("a bad answer", secretsOf(Config{APIKey: "a"})); got != "a bad answer" {
		t.Errorf("redact with a one-letter key = %q", got)
	}
}

func TestParseModel(t *testing.T) {
	tests := []struct {
		model, provider      string
		wantProvider, wantID string
		wantErr              error
	}{
		{"openai/gpt-4.1-mini", "", "openai", "gpt-4.1-mini", nil},
		{"Anthropic/claude-sonnet-4-5", "", "anthropic", "claude-sonnet-4-5", nil},
		{"openai/Qwen/Qwen2.5-7B-Instruct", "", "openai", "Qwen/Qwen2.5-7B-Instruct", nil},
		{"Qwen/Qwen2.5-7B-Instruct", "openai", "openai", "Qwen/Qwen2.5-7B-Instruct", nil},
		{"google/gemini-2.5-flash", "google", "google", "gemini-2.5-flash", nil},
		{"gemini-2.5-flash", "", "", "", ErrInvalidModel},
		{"", "openai", "", "", ErrInvalidModel},
		{"openai/", "", "", "", ErrInvalidModel},
		{"openai/", "openai", "", "", ErrInvalidModel},
		{"xai/grok-4", "", "", "", ErrUnknownProvider},
		{"gpt-4.1", "azure", "", "", ErrUnknownProvider},
	}
	for _, tc := range tests {
		p, id, err := ParseModel(tc.model, tc.provider)
		if !errors.Is(err, tc.wantErr) || p != tc.wantProvider || id != tc.wantID {
			t.Errorf("ParseModel(%q, %q) = %q, %q, %v; want %q, %q, %v", tc.model, tc.provider, p, id, err, tc.wantProvider, tc.wantID, tc.wantErr)
		}
	}
}
