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

package controllers

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"ascii", "abcdef", 3, "abc"},
		{"before a two-byte rune", "abé", 3, "ab"},
		{"after a two-byte rune", "aébc", 3, "aé"},
		{"inside a four-byte rune", "a😀b", 4, "a"},
		{"after a four-byte rune", "a😀b", 5, "a😀"},
		{"zero", "abc", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := truncate(tc.in, tc.n)
			if got != tc.want {
				t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("truncate(%q, %d) = %q is not UTF-8", tc.in, tc.n, got)
			}
		})
	}
}

func TestStatusActions(t *testing.T) {
	long := strings.Repeat("é", maxActionText) // twice the bound in bytes
	step := func(i int) rpc.AgentAction {
		return rpc.AgentAction{Type: "act", Action: fmt.Sprintf("step %d", i), TimeMs: int64(i)}
	}
	var many []rpc.AgentAction
	for i := range 25 {
		many = append(many, step(i))
	}
	for _, tc := range []struct {
		name string
		in   []rpc.AgentAction
		want []v1alpha1.AgentAction
	}{
		{"none", nil, nil},
		{
			"every field, texts cut to 1024 bytes on a rune boundary",
			[]rpc.AgentAction{{
				Type: "extract", Reasoning: long, TaskCompleted: true, Action: "read the price", TimeMs: 1200,
				PageText: long, PageURL: "https://shop.test/item/1", Instruction: "what does it cost?",
			}},
			[]v1alpha1.AgentAction{{
				Type: "extract", Reasoning: strings.Repeat("é", maxActionText/2), TaskCompleted: ptr.To(true), Action: "read the price", TimeMs: 1200,
				PageText: strings.Repeat("é", maxActionText/2), PageURL: "https://shop.test/item/1", Instruction: "what does it cost?",
			}},
		},
		{
			"a type past the CRD's bound, and none",
			[]rpc.AgentAction{{Type: strings.Repeat("t", 70)}, {}},
			[]v1alpha1.AgentAction{{Type: strings.Repeat("t", maxActionType), TaskCompleted: ptr.To(false)}, {Type: "unknown", TaskCompleted: ptr.To(false)}},
		},
		{
			"the latest 20 of 25",
			many,
			func() []v1alpha1.AgentAction {
				var out []v1alpha1.AgentAction
				for i := 5; i < 25; i++ {
					out = append(out, v1alpha1.AgentAction{Type: "act", Action: fmt.Sprintf("step %d", i), TimeMs: int64(i), TaskCompleted: ptr.To(false)})
				}
				return out
			}(),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, statusActions(tc.in)); diff != "" {
				t.Errorf("statusActions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusResultAndUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *rpc.AgentResult
		want *v1alpha1.AgentResult
	}{
		{"none", nil, nil},
		{
			"with output",
			&rpc.AgentResult{Success: true, Completed: true, Message: "the price is 42", Output: json.RawMessage(`{"price":42}`)},
			&v1alpha1.AgentResult{Success: ptr.To(true), Completed: ptr.To(true), Message: "the price is 42", Output: `{"price":42}`},
		},
		{
			"null output, long output",
			&rpc.AgentResult{Message: strings.Repeat("m", maxResultMessage+5), Output: json.RawMessage("null")},
			&v1alpha1.AgentResult{Success: ptr.To(false), Completed: ptr.To(false), Message: strings.Repeat("m", maxResultMessage)},
		},
		{
			"output cut to its bound",
			&rpc.AgentResult{Output: json.RawMessage(`"` + strings.Repeat("o", maxResultOutput) + `"`)},
			&v1alpha1.AgentResult{Success: ptr.To(false), Completed: ptr.To(false), Output: `"` + strings.Repeat("o", maxResultOutput-1)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, statusResult(tc.in)); diff != "" {
				t.Errorf("statusResult (-want +got):\n%s", diff)
			}
		})
	}
	if u := statusUsage(rpc.Usage{}); u != nil {
		t.Errorf("statusUsage of no usage = %+v, want nil", u)
	}
	want := &v1alpha1.Usage{InputTokens: 10, OutputTokens: 5, ReasoningTokens: 1, CachedInputTokens: 2, InferenceTimeMs: 300}
	got := statusUsage(rpc.Usage{InputTokens: 10, OutputTokens: 5, ReasoningTokens: 1, CachedInputTokens: 2, InferenceTimeMs: 300})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statusUsage (-want +got):\n%s", diff)
	}
}

// TestOnlyProgress: the changes a running task's status writes are
// throttled for, and those written at once.
func TestOnlyProgress(t *testing.T) {
	base := v1alpha1.AgentTaskStatus{Phase: v1alpha1.AgentTaskRunning, Steps: 2, Message: "the agent runs"}
	for _, tc := range []struct {
		name   string
		change func(*v1alpha1.AgentTaskStatus)
		want   bool
	}{
		{"nothing", func(*v1alpha1.AgentTaskStatus) {}, true},
		{"a step", func(s *v1alpha1.AgentTaskStatus) {
			s.Steps = 3
			s.Actions = []v1alpha1.AgentAction{{Type: "act"}}
		}, true},
		{"usage", func(s *v1alpha1.AgentTaskStatus) { s.Usage = &v1alpha1.Usage{InputTokens: 3} }, true},
		{"the phase", func(s *v1alpha1.AgentTaskStatus) { s.Phase = v1alpha1.AgentTaskSucceeded }, false},
		{"the message", func(s *v1alpha1.AgentTaskStatus) { s.Message = "other" }, false},
		{"a result", func(s *v1alpha1.AgentTaskStatus) { s.Result = &v1alpha1.AgentResult{Success: ptr.To(true)} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base.DeepCopy()
			tc.change(b)
			if got := onlyProgress(&base, b); got != tc.want {
				t.Errorf("onlyProgress = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTaskView: steps followed after a state, a repeated step, a final
// state.
func TestTaskView(t *testing.T) {
	started := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	step := func(i int) rpc.AgentAction { return rpc.AgentAction{Type: "act", Action: fmt.Sprint(i)} }
	var v taskView
	v.take(&rpc.AgentTaskState{Phase: rpc.AgentTaskRunning, Steps: 1, Actions: []rpc.AgentAction{step(0)}, StartedAt: started})
	v.addStep(0, step(0)) // again, from a follow that started before the state
	v.addStep(1, step(1))
	v.addStep(1, step(1))
	for i := 2; i < 23; i++ {
		v.addStep(i, step(i))
	}
	if v.Steps != 23 || len(v.Actions) != v1alpha1.MaxStatusActions || v.Actions[0].Action != "3" || v.Actions[19].Action != "22" {
		t.Fatalf("after 23 steps: %d steps, actions %v", v.Steps, v.Actions)
	}
	if v.Final != nil {
		t.Fatalf("final state before the end: %+v", v.Final)
	}
	v.take(&rpc.AgentTaskState{Phase: rpc.AgentTaskSucceeded, Steps: 23, Actions: make([]rpc.AgentAction, 23), Usage: rpc.Usage{InputTokens: 9},
		Result: &rpc.AgentResult{Success: true}, StartedAt: started, FinishedAt: started.Add(time.Minute)})
	want := &rpc.AgentTaskState{Phase: rpc.AgentTaskSucceeded, Steps: 23, Usage: rpc.Usage{InputTokens: 9},
		Result: &rpc.AgentResult{Success: true}, StartedAt: started, FinishedAt: started.Add(time.Minute)}
	if diff := cmp.Diff(want, v.Final); diff != "" {
		t.Errorf("final state (-want +got):\n%s", diff)
	}
	if !v.StartedAt.Equal(started) || v.Usage.InputTokens != 9 || len(v.Actions) != v1alpha1.MaxStatusActions {
		t.Errorf("view after the end: %+v", v)
	}
}

func TestBackoffDelay(t *testing.T) {
	d := &Dispatcher{cfg: TaskConfig{RetryBackoff: time.Second, MaxRetryBackoff: 15 * time.Second}}
	var got []time.Duration
	for attempt := 1; attempt <= 6; attempt++ {
		got = append(got, d.backoffDelay(attempt))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second, 15 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff delays (-want +got):\n%s", diff)
	}
}

func TestRunsBefore(t *testing.T) {
	at := func(name string, sec int) *v1alpha1.AgentTask {
		return &v1alpha1.AgentTask{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Unix(int64(sec), 0)}}
	}
	for _, tc := range []struct {
		a, b *v1alpha1.AgentTask
		want bool
	}{
		{at("z", 1), at("a", 2), true},
		{at("a", 2), at("z", 1), false},
		{at("a", 1), at("b", 1), true},
		{at("b", 1), at("a", 1), false},
	} {
		if got := runsBefore(tc.a, tc.b); got != tc.want {
			t.Errorf("runsBefore(%s@%v, %s@%v) = %v, want %v", tc.a.Name, tc.a.CreationTimestamp, tc.b.Name, tc.b.CreationTimestamp, got, tc.want)
		}
	}
}

// TestModelConfig: a task's model with its Secrets' values, as the runner
// makes the session's.
func TestModelConfig(t *testing.T) {
	secrets := map[string]*corev1.Secret{
		"keys": {Data: map[string][]byte{"openai": []byte("sk-task\n"), "creds": []byte(`{"client_email":"a@b","private_key":"pk","n":3}`), "bad": []byte("not json")}},
		"hdrs": {Data: map[string][]byte{"Authorization": []byte("Bearer t"), "X-Shared": []byte("secret-wins")}},
	}
	for _, tc := range []struct {
		name    string
		in      *v1alpha1.ModelSpec
		want    *rpc.ModelConfig
		wantErr string
	}{
		{name: "none", in: nil, want: nil},
		{
			name: "name and endpoint only",
			in:   &v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini", BaseURL: "http://llm.test/v1"},
			want: &rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini", BaseURL: "http://llm.test/v1"},
		},
		{
			name: "every Secret",
			in: &v1alpha1.ModelSpec{
				Name: "google/gemini-2.5-pro", Provider: "vertex",
				APIKeySecretRef:  &v1alpha1.SecretKeyReference{Name: "keys", Key: "openai"},
				Headers:          map[string]string{"X-Plain": "p", "X-Shared": "plain-loses"},
				HeadersSecretRef: &v1alpha1.SecretReference{Name: "hdrs"},
				Auth:             &v1alpha1.ModelAuth{Type: "service_account", Scopes: "s", CredentialsSecretRef: &v1alpha1.SecretKeyReference{Name: "keys", Key: "creds"}},
				ProviderOptions:  &v1alpha1.ProviderOptions{Variant: "vertex", Project: "p", Location: "l", Headers: map[string]string{"X-V": "v"}},
			},
			want: &rpc.ModelConfig{
				ModelName: "google/gemini-2.5-pro", Provider: "vertex", APIKey: "sk-task",
				Headers:         map[string]string{"X-Plain": "p", "X-Shared": "secret-wins", "Authorization": "Bearer t"},
				Auth:            &rpc.ModelAuth{Type: "service_account", Scopes: "s", Credentials: map[string]string{"client_email": "a@b", "private_key": "pk"}},
				ProviderOptions: map[string]rpc.ProviderOptions{"vertex": {Project: "p", Location: "l", Headers: map[string]string{"X-V": "v"}}},
			},
		},
		{
			name:    "credentials that are not JSON, quoted by no message",
			in:      &v1alpha1.ModelSpec{Name: "google/g", Auth: &v1alpha1.ModelAuth{CredentialsSecretRef: &v1alpha1.SecretKeyReference{Name: "keys", Key: "bad"}}},
			wantErr: `spec.agentConfig.model.auth.credentialsSecretRef: the value of Secret "keys" key "bad" is not a JSON object`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := modelConfig("spec.agentConfig.model", tc.in, secrets)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("modelConfig (-want +got):\n%s", diff)
			}
		})
	}
}
