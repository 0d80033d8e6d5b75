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

package v1

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// agentBody wraps executeOptions fields and agentConfig fields into an
// agentExecute body.
func agentBody(config, options string) string {
	return `{"agentConfig":{` + config + `},"executeOptions":{"instruction":"go"` + options + `}}`
}

func TestDecodeAgentExecuteIssues(t *testing.T) {
	tests := append(commonIssueCases(agentBody("", "")), []issueCase{
		{"agentConfig and executeOptions required", `{}`,
			[]Issue{{"agentConfig", "is required"}, {"executeOptions", "is required"}}},
		{"instruction required", `{"agentConfig":{},"executeOptions":{}}`, []Issue{{"executeOptions.instruction", "is required"}}},
		{"instruction empty", `{"agentConfig":{},"executeOptions":{"instruction":""}}`, []Issue{{"executeOptions.instruction", "must not be empty"}}},
		{"agentConfig of the wrong type", `{"agentConfig":"openai/gpt-4o","executeOptions":{"instruction":"go"}}`,
			[]Issue{{"agentConfig", "must be an object; got a string"}}},
		{"integer bounds", agentBody("", `,"maxSteps":0,"toolTimeout":3600001`),
			[]Issue{{"executeOptions.maxSteps", "must be at least 1"}, {"executeOptions.toolTimeout", "must be at most 3600000"}}},
		{"integers must be whole", agentBody("", `,"maxSteps":2.5,"toolTimeout":-1`),
			[]Issue{{"executeOptions.maxSteps", "must be a whole number"}, {"executeOptions.toolTimeout", "must be at least 0"}}},
		{"too many steps", agentBody("", `,"maxSteps":1001`), []Issue{{"executeOptions.maxSteps", "must be at most 1000"}}},
		{"booleans", agentBody(`"cua":"yes"`, `,"highlightCursor":1,"useSearch":null`),
			[]Issue{
				{"agentConfig.cua", "must be a boolean; got a string"},
				{"executeOptions.highlightCursor", "must be a boolean; got a number"},
				{"executeOptions.useSearch", "must be a boolean; got null"},
			}},
		{"enums", agentBody(`"mode":"vision","provider":"bedrock"`, ""),
			[]Issue{
				{"agentConfig.mode", `must be one of "dom", "hybrid", "cua"; got "vision"`},
				{"agentConfig.provider", `must be one of "openai", "anthropic", "google"; got "bedrock"`},
			}},
		{"models must be named", agentBody(`"model":{"apiKey":"sk-x"},"executionModel":"gpt-4o-mini"`, ""),
			[]Issue{{"agentConfig.executionModel", modelPrefixMessage}, {"agentConfig.model.modelName", "is required"}}},
		{"model headers", agentBody(`"model":{"modelName":"openai/gpt-4o","headers":{"X Y":"1",".h":"2"}}`, ""),
			[]Issue{{"agentConfig.model.headers..h", nameMessage}, {"agentConfig.model.headers.X Y", nameMessage}}},
		{"variable names are Secret keys", agentBody("", `,"variables":{"user name":"u",".pw":"p","`+strings.Repeat("v", 254)+`":"x"}`),
			[]Issue{
				{"executeOptions.variables..pw", nameMessage},
				{"executeOptions.variables.user name", nameMessage},
				{"executeOptions.variables." + strings.Repeat("v", 254), "invalid name: must be at most 253 characters long"},
			}},
		{"variable values", agentBody("", `,"variables":{"a":null,"b":{"value":"x","description":"d","extra":1}}`),
			[]Issue{
				{"executeOptions.variables.a", "must be a boolean or a number or a string or an object; got null"},
				{"executeOptions.variables.b.extra", "unknown field"},
			}},
		{"too many variables", agentBody("", `,"variables":`+manyVariables(65)),
			[]Issue{{"executeOptions.variables", "must have at most 64 entries"}}},
		{"CRD string bounds", `{"agentConfig":{"systemPrompt":"` + strings.Repeat("s", 32769) + `"},"executeOptions":{"instruction":"` +
			strings.Repeat("i", 65537) + `"},"frameId":"` + strings.Repeat("f", 257) + `"}`,
			[]Issue{
				{"agentConfig.systemPrompt", "must be at most 32768 characters long"},
				{"executeOptions.instruction", "must be at most 65536 characters long"},
				{"frameId", "must be at most 256 characters long"},
			}},
		{"flags", `{"agentConfig":{},"executeOptions":{"instruction":"go"},"shouldCache":"no","streamResponse":0,"frameId":false}`,
			[]Issue{
				{"frameId", "must be null or a string; got a boolean"},
				{"shouldCache", "must be a boolean; got a string"},
				{"streamResponse", "must be a boolean; got a number"},
			}},
	}...)
	runIssueCases(t, DecodeAgentExecute, tests)
}

func TestDecodeAgentExecuteSecretTooLarge(t *testing.T) {
	// 64 variables of 16384 four-byte characters: 4 MiB, over a Secret's
	// 1 MiB though every value is within its bound.
	value := strings.Repeat("😀", 16384)
	vars := make([]string, 64)
	for i := range vars {
		vars[i] = fmt.Sprintf("%q:%q", fmt.Sprintf("v%d", i), value)
	}
	body := agentBody("", `,"variables":{`+strings.Join(vars, ",")+"}")
	_, verr := DecodeAgentExecute([]byte(body))
	if verr == nil {
		t.Fatal("accepted variables that do not fit in a Secret")
	}
	if len(verr.Issues) != 1 || verr.Issues[0].Path != "executeOptions.variables" || !strings.HasPrefix(verr.Issues[0].Message, "too large") {
		t.Errorf("issues = %+v, want one too-large issue at executeOptions.variables", verr.Issues)
	}
}

func TestDecodeAgentExecuteAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *AgentBody
	}{
		{"minimal", agentBody("", ""), &AgentBody{ExecuteOptions: AgentExecuteOptions{Instruction: "go"}}},
		{"cua true is mode cua", agentBody(`"cua":true`, ""),
			&AgentBody{AgentConfig: AgentConfig{Mode: v1alpha1.AgentModeCUA}, ExecuteOptions: AgentExecuteOptions{Instruction: "go"}}},
		{"mode wins over cua", agentBody(`"cua":true,"mode":"hybrid"`, ""),
			&AgentBody{AgentConfig: AgentConfig{Mode: v1alpha1.AgentModeHybrid}, ExecuteOptions: AgentExecuteOptions{Instruction: "go"}}},
		{"cua false is no mode", agentBody(`"cua":false`, ""), &AgentBody{ExecuteOptions: AgentExecuteOptions{Instruction: "go"}}},
		{"everything; variables become text; unknown fields ignored",
			`{"agentConfig":{"provider":"anthropic","model":{"modelName":"anthropic/claude-sonnet-4-5","apiKey":"sk-ant"},
			"executionModel":"openai/gpt-4.1-mini","systemPrompt":"be careful","mode":"dom","extra":1},
			"executeOptions":{"instruction":"log in","maxSteps":20.0,"highlightCursor":true,"useSearch":false,"toolTimeout":30000,
			"variables":{"user":"demo","pin":1234,"remember":true,"pw":{"value":"hunter2","description":"the password"}},"extra":[]},
			"frameId":null,"streamResponse":true,"shouldCache":true,"sdkVersion":"3"}`,
			&AgentBody{
				AgentConfig: AgentConfig{
					Provider:       "anthropic",
					Model:          &rpc.ModelConfig{ModelName: "anthropic/claude-sonnet-4-5", APIKey: "sk-ant"},
					SystemPrompt:   "be careful",
					Mode:           v1alpha1.AgentModeDOM,
					ExecutionModel: &rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini"},
				},
				ExecuteOptions: AgentExecuteOptions{
					Instruction: "log in", MaxSteps: ptr(int32(20)), HighlightCursor: ptr(true), UseSearch: ptr(false),
					ToolTimeout: ptr(int32(30000)),
					Variables:   map[string]string{"user": "demo", "pin": "1234", "remember": "true", "pw": "hunter2"},
					// The description goes to the model; the value does not.
					VariableDescriptions: map[string]string{"pw": "the password"},
				},
				StreamResponse: ptr(true),
				ShouldCache:    ptr(true),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verr := DecodeAgentExecute([]byte(tt.body))
			if verr != nil {
				t.Fatalf("refused the body: %v", verr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

const taskName = "7d3f0c1e-2b4a-4f7e-9c8d-1a2b3c4d5e6f"

func TestToAgentTask(t *testing.T) {
	secretValues := []string{"sk-agent-model-key", "sk-exec-model-key", "hdr-bearer-token", "vertex-hdr-secret",
		"-----BEGIN PRIVATE KEY-----abc", "variable-password-hunter2", "variable-user-demo"}
	body := `{"agentConfig":{"provider":"google","systemPrompt":"be careful","mode":"hybrid",
		"model":{"modelName":"google/gemini-2.5-pro","apiKey":"sk-agent-model-key","baseURL":"https://llm.example.com",
			"headers":{"Authorization":"hdr-bearer-token","X-Shared":"model-wins"},
			"auth":{"type":"service_account","credentials":{"private_key":"-----BEGIN PRIVATE KEY-----abc","client_email":"a@b"},"scopes":"s","projectId":"p","universeDomain":"u"},
			"providerOptions":{"vertex":{"project":"vp","location":"us-central1","baseURL":"https://vertex.example.com",
				"headers":{"X-Vertex":"vertex-hdr-secret","X-Shared":"variant-loses"}}}},
		"executionModel":{"modelName":"openai/gpt-4.1-mini","apiKey":"sk-exec-model-key"}},
		"executeOptions":{"instruction":"log in","maxSteps":10,"toolTimeout":5000,"highlightCursor":true,"useSearch":true,
			"variables":{"password":"variable-password-hunter2","user":{"value":"variable-user-demo","description":"login"}}},
		"frameId":"F1","shouldCache":true}`
	b, verr := DecodeAgentExecute([]byte(body))
	if verr != nil {
		t.Fatalf("DecodeAgentExecute: %v", verr)
	}
	task, secrets, err := b.ToAgentTask(taskName, "project-a", sessionName)
	if err != nil {
		t.Fatalf("ToAgentTask: %v", err)
	}

	request, variables, headers, execHeaders := taskName+"-request-secrets", taskName+"-variables", taskName+"-model-headers", taskName+"-execution-model-headers"
	wantTask := &v1alpha1.AgentTask{
		TypeMeta: metav1.TypeMeta{APIVersion: "browserfleet.io/v1alpha1", Kind: "AgentTask"},
		ObjectMeta: metav1.ObjectMeta{Name: taskName, Namespace: "project-a",
			Labels: map[string]string{v1alpha1.LabelSession: sessionName}},
		Spec: v1alpha1.AgentTaskSpec{
			SessionRef: v1alpha1.SessionReference{Name: sessionName},
			AgentConfig: v1alpha1.AgentConfig{
				Provider: "google", SystemPrompt: "be careful", Mode: v1alpha1.AgentModeHybrid,
				Model: &v1alpha1.ModelSpec{
					Name: "google/gemini-2.5-pro", BaseURL: "https://llm.example.com",
					APIKeySecretRef:  &v1alpha1.SecretKeyReference{Name: request, Key: "model-api-key"},
					HeadersSecretRef: &v1alpha1.SecretReference{Name: headers},
					Auth: &v1alpha1.ModelAuth{Type: "service_account", Scopes: "s", ProjectID: "p", UniverseDomain: "u",
						CredentialsSecretRef: &v1alpha1.SecretKeyReference{Name: request, Key: "model-credentials"}},
					ProviderOptions: &v1alpha1.ProviderOptions{Variant: "vertex", Project: "vp", Location: "us-central1",
						BaseURL: "https://vertex.example.com"},
				},
				ExecutionModel: &v1alpha1.ModelSpec{
					Name:            "openai/gpt-4.1-mini",
					APIKeySecretRef: &v1alpha1.SecretKeyReference{Name: request, Key: "execution-model-api-key"},
				},
			},
			ExecuteOptions: v1alpha1.ExecuteOptions{
				Instruction: "log in", MaxSteps: 10, ToolTimeoutMs: ptr(int32(5000)),
				HighlightCursor: ptr(true), UseSearch: ptr(true),
				VariablesSecretRef:   &v1alpha1.SecretReference{Name: variables},
				VariableDescriptions: map[string]string{"user": "login"},
			},
			FrameID:     "F1",
			ShouldCache: ptr(true),
		},
	}
	if diff := cmp.Diff(wantTask, task); diff != "" {
		t.Errorf("task (-want +got):\n%s", diff)
	}

	// No secret value anywhere in the task.
	raw, err := json.Marshal(task)
	if err != nil {
		t.Fatalf("marshalling the task: %v", err)
	}
	for _, v := range append(secretValues, "PRIVATE KEY", "hunter2") {
		if strings.Contains(string(raw), v) {
			t.Errorf("the task holds the secret %q: %s", v, raw)
		}
	}

	labels := map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedBy, v1alpha1.LabelSession: sessionName, v1alpha1.LabelSessionSecret: taskName}
	secret := func(name string, data map[string]string) *corev1.Secret {
		d := map[string][]byte{}
		for k, v := range data {
			d[k] = []byte(v)
		}
		return &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "project-a", Labels: labels},
			Type:       corev1.SecretTypeOpaque, Immutable: ptr(true), Data: d,
		}
	}
	wantSecrets := []*corev1.Secret{
		secret(request, map[string]string{
			"model-api-key":           "sk-agent-model-key",
			"model-credentials":       `{"client_email":"a@b","private_key":"-----BEGIN PRIVATE KEY-----abc"}`,
			"execution-model-api-key": "sk-exec-model-key",
		}),
		secret(variables, map[string]string{"password": "variable-password-hunter2", "user": "variable-user-demo"}),
		secret(headers, map[string]string{"Authorization": "hdr-bearer-token", "X-Vertex": "vertex-hdr-secret", "X-Shared": "model-wins"}),
	}
	if diff := cmp.Diff(wantSecrets, secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	for _, s := range secrets {
		if s.Name == execHeaders {
			t.Errorf("a headers Secret for an execution model without headers: %v", s.Name)
		}
	}
}

func TestToAgentTaskMinimal(t *testing.T) {
	b, verr := DecodeAgentExecute([]byte(agentBody(`"model":"openai/gpt-4o"`, "")))
	if verr != nil {
		t.Fatalf("DecodeAgentExecute: %v", verr)
	}
	task, secrets, err := b.ToAgentTask(taskName, "ns", sessionName)
	if err != nil {
		t.Fatalf("ToAgentTask: %v", err)
	}
	if secrets != nil {
		t.Errorf("secrets = %v, want none", secrets)
	}
	want := v1alpha1.AgentTaskSpec{
		SessionRef:     v1alpha1.SessionReference{Name: sessionName},
		AgentConfig:    v1alpha1.AgentConfig{Model: &v1alpha1.ModelSpec{Name: "openai/gpt-4o"}},
		ExecuteOptions: v1alpha1.ExecuteOptions{Instruction: "go"},
	}
	if diff := cmp.Diff(want, task.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

func TestToAgentTaskNames(t *testing.T) {
	b := &AgentBody{ExecuteOptions: AgentExecuteOptions{Instruction: "go"}}
	tests := []struct{ name, task, session string }{
		{"task name not a DNS name", "Task_1", sessionName},
		{"no room for the Secrets' names", strings.Repeat("a", 230), sessionName},
		{"session not a DNS label", taskName, "Session.1"},
		{"empty session", taskName, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := b.ToAgentTask(tt.task, "ns", tt.session); err == nil {
				t.Errorf("ToAgentTask(%q, %q) succeeded", tt.task, tt.session)
			}
		})
	}
	if _, _, err := b.ToAgentTask(strings.Repeat("a", 229), "ns", sessionName); err != nil {
		t.Errorf("the longest task name that fits: %v", err)
	}
}
