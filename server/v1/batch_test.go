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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestDecodeBatch(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	yes, brief := true, "be brief"
	tests := []struct {
		name string
		body string
		want rpc.BatchRequest
	}{
		{"source only: input undefined", `{"source":"() => 1"}`, rpc.BatchRequest{Source: "() => 1"}},
		{"null input is null", `{"source":"() => 1","input":null}`, rpc.BatchRequest{Source: "() => 1", Input: json.RawMessage(`null`)}},
		{"input compacted", `{"source":"() => 1","input":{ "a" : [1, 2] }}`, rpc.BatchRequest{Source: "() => 1", Input: json.RawMessage(`{"a":[1,2]}`)}},
		{
			"everything",
			`{"source":"s","input":"x","pageId":"P","activePageId":"A","pageIds":["A","P"],"timeout":5000,"model":"openai/gpt-4.1-mini","metrics":{"actPromptTokens":3},"unknown":true}`,
			rpc.BatchRequest{Source: "s", Input: json.RawMessage(`"x"`), PageID: "P", ActivePageID: "A", PageIDs: []string{"A", "P"}, Timeout: ms(5000),
				Model: &rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini"}, Metrics: map[string]float64{"actPromptTokens": 3}},
		},
		{"the instance's settings", `{"source":"s","selfHeal":true,"systemPrompt":"be brief","domSettleTimeoutMs":2000}`,
			rpc.BatchRequest{Source: "s", SelfHeal: &yes, CallSettings: rpc.CallSettings{SystemPrompt: &brief, DOMSettleTimeoutMs: ms(2000)}}},
		{"model object with a key", `{"source":"s","model":{"modelName":"openai/x","apiKey":"k"}}`,
			rpc.BatchRequest{Source: "s", Model: &rpc.ModelConfig{ModelName: "openai/x", APIKey: "k"}}},
		{"null pages", `{"source":"s","pageId":null,"activePageId":null}`, rpc.BatchRequest{Source: "s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verr := DecodeBatch([]byte(tt.body))
			if verr != nil {
				t.Fatalf("refused: %v", verr)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeBatchIssues(t *testing.T) {
	tests := []issueCase{
		{"source required", `{}`, []Issue{{"source", "is required"}}},
		{"empty source", `{"source":""}`, []Issue{{"source", "must not be empty"}}},
		{"source of the wrong type", `{"source":5}`, []Issue{{"source", "must be a string; got a number"}}},
		{"source too large in bytes", `{"source":"` + strings.Repeat("é", 140000) + `"}`, []Issue{{"source", "must be at most 262144 bytes; got 280000"}}},
		{"input too large", `{"source":"s","input":"` + strings.Repeat("x", 512<<10) + `"}`, []Issue{{"input", "must be at most 524288 bytes of JSON; got 524290"}}},
		{"timeout too long", `{"source":"s","timeout":600001}`, []Issue{{"timeout", "must be at most 600000"}}},
		{"negative timeout", `{"source":"s","timeout":-1}`, []Issue{{"timeout", "must be at least 0"}}},
		{"unknown counter", `{"source":"s","metrics":{"bogus":1}}`, []Issue{{"metrics.bogus", "unknown field"}}},
		{"bad model", `{"source":"s","model":"gpt"}`, []Issue{{"model", modelPrefixMessage}}},
		{"settle timeout not whole", `{"source":"s","domSettleTimeoutMs":1.5}`, []Issue{{"domSettleTimeoutMs", "must be a whole number"}}},
		{"empty page id", `{"source":"s","pageIds":[""]}`, []Issue{{"pageIds[0]", "must not be empty"}}},
	}
	runIssueCases(t, DecodeBatch, tests)
}

// TestBatchResponses holds batch replies to the document.
func TestBatchResponses(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	const (
		path   = "/v1/sessions/{id}/batch"
		jsonCT = "application/json"
		usage  = `{"act":{"inputTokens":1,"outputTokens":2,"reasoningTokens":0,"cachedInputTokens":0,"inferenceTimeMs":3},` +
			`"observe":{"inputTokens":0,"outputTokens":0,"reasoningTokens":0,"cachedInputTokens":0,"inferenceTimeMs":0},` +
			`"extract":{"inputTokens":0,"outputTokens":0,"reasoningTokens":0,"cachedInputTokens":0,"inferenceTimeMs":0}}`
		id = "0b8e6f2c-5d1a-4c1e-9a43-3b2f8d7e6a12"
	)
	tests := []struct {
		name   string
		status int
		body   string
		ok     bool
	}{
		{"result", 200, `{"success":true,"data":{"result":{"a":[1]},"activePageId":"P","usage":` + usage + `,"actionId":"` + id + `"}}`, true},
		{"null result", 200, `{"success":true,"data":{"result":null,"activePageId":"P","usage":` + usage + `,"actionId":"` + id + `"}}`, true},
		{"without the active page", 200, `{"success":true,"data":{"result":1,"usage":` + usage + `,"actionId":"` + id + `"}}`, false},
		{"script error with its stack", 422, `{"success":false,"error":"Error: boom","code":"BATCH_SCRIPT_ERROR","stack":"Error: boom\n\tat batch.js:2:9(3)"}`, true},
		{"deadline", 504, `{"success":false,"error":"the batch passed its deadline of 30s","code":"BATCH_DEADLINE"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.ValidateResponse("POST", path, tt.status, jsonCT, []byte(tt.body))
			if (err == nil) != tt.ok {
				t.Errorf("valid = %v, want %v: %v", err == nil, tt.ok, err)
			}
		})
	}
	if err := v.ValidateRequest("POST", path, []byte(`{"source":"async (batch) => 1","input":null}`)); err != nil {
		t.Errorf("a batch body: %v", err)
	}
}
