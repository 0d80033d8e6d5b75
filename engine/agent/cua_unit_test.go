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

package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine"
)

func TestCUASystemPromptNamesVariablesNotValues(t *testing.T) {
	vars := map[string]engine.Variable{
		"password": {Value: "correct horse", Description: "the account's password"},
		"user":     {Value: "ada"},
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	p := cuaSystemPrompt(vars, 7, "http://127.0.0.1/login", "Answer in French.", now)
	for _, want := range []string{
		"- %password%: the account's password", "- %user%\n", "Wednesday 4 March 2026", "http://127.0.0.1/login",
		"at most 7 actions", "no address bar", "answer with text only", "Additional instructions:\nAnswer in French.",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "correct horse") || strings.Contains(p, "ada\n") {
		t.Errorf("the prompt shows a value:\n%s", p)
	}
	if p := cuaSystemPrompt(nil, 20, "about:blank", "", now); strings.Contains(p, "Variables") || strings.Contains(p, "Additional") {
		t.Errorf("a prompt without variables or extra instructions mentions them:\n%s", p)
	}
}

func TestKeyChord(t *testing.T) {
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{[]string{"Enter"}, "Enter"},
		{[]string{"Control", "a"}, "Control+a"},
		{[]string{"Control", "Shift", "ArrowLeft"}, "Control+Shift+ArrowLeft"},
		{[]string{"+"}, "+"},
		{[]string{"Control", "+"}, "Control++"},
	} {
		if diff := cmp.Diff(tc.want, keyChord(tc.keys)); diff != "" {
			t.Errorf("keyChord(%q) (-want +got):\n%s", tc.keys, diff)
		}
	}
}

func TestJoinNonEmpty(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"", " "}, ""},
		{[]string{" thinking ", ""}, "thinking"},
		{[]string{"thinking", "I click Sign in."}, "thinking\nI click Sign in."},
	} {
		if diff := cmp.Diff(tc.want, joinNonEmpty(tc.in...)); diff != "" {
			t.Errorf("joinNonEmpty(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}
