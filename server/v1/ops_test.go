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

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// issueCase is one refused body and the issues it must get.
type issueCase struct {
	name string
	body string
	want []Issue
}

// runIssueCases checks that decode refuses each body with exactly its issues.
func runIssueCases[T any](t *testing.T, decode func([]byte) (*T, *ValidationError), tests []issueCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verr := decode([]byte(tt.body))
			if verr == nil {
				t.Fatalf("accepted the body: %+v", got)
			}
			if got != nil {
				t.Errorf("returned a body with issues: %+v", got)
			}
			if diff := cmp.Diff(tt.want, verr.Issues); diff != "" {
				t.Errorf("issues (-want +got):\n%s", diff)
			}
		})
	}
}

// commonIssueCases are the refusals every operation decoder shares:
// nothing, not JSON, not an object, duplicate names.
func commonIssueCases(valid string) []issueCase {
	return []issueCase{
		{"empty body", ``, []Issue{{"", "request body is empty; want a JSON object"}}},
		{"blank body", " \n\t", []Issue{{"", "request body is empty; want a JSON object"}}},
		{"not JSON", `{"input":`, []Issue{{"", "request body is not valid JSON: unexpected EOF"}}},
		{"not an object", `["x"]`, []Issue{{"", "must be an object; got an array"}}},
		{"duplicate names", dupFrameID(valid),
			[]Issue{{"", `request body is not acceptable JSON: jsontext: duplicate object member name "frameId"`}}},
		{"trailing data", valid + ` {}`, []Issue{{"", "request body is not valid JSON: invalid character after top-level value"}}},
	}
}

// dupFrameID adds frameId twice to the object valid.
func dupFrameID(valid string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(valid, "{"), "}")
	if inner != "" {
		inner = "," + inner
	}
	return `{"frameId":"a","frameId":"b"` + inner + "}"
}

// manyVariables is a variables object with n entries.
func manyVariables(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"v%d":"x"`, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// stringList is a JSON array of n copies of s.
func stringList(n int, s string) string {
	return "[" + strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%q,", s), n), ",") + "]"
}

var (
	modelPrefixMessage = "must be provider-prefixed, <provider>/<model>, for example openai/gpt-4.1-mini, or auto (the model gateway's default model)"
	nameMessage        = "invalid name: must be letters, digits, '-', '_' and '.', not starting with '.'"
)

func TestDecodeActIssues(t *testing.T) {
	tests := append(commonIssueCases(`{"input":"x"}`), []issueCase{
		{"input required", `{}`, []Issue{{"input", "is required"}}},
		{"names are case-sensitive", `{"Input":"click"}`, []Issue{{"input", "is required"}}},
		{"input of the wrong type", `{"input":5}`, []Issue{{"input", "must be a string or an object; got a number"}}},
		{"input null", `{"input":null}`, []Issue{{"input", "must be a string or an object; got null"}}},
		{"empty instruction", `{"input":""}`, []Issue{{"input", "must not be empty"}}},
		{"instruction too long", `{"input":"` + strings.Repeat("a", 65537) + `"}`, []Issue{{"input", "must be at most 65536 characters long"}}},
		{"action without selector and method", `{"input":{"description":"x"}}`,
			[]Issue{{"input.method", "is required"}, {"input.selector", "is required"}}},
		{"action with an empty selector and an unknown method", `{"input":{"selector":"","method":"zap"}}`,
			[]Issue{
				{"input.method", `must be one of click, doubleClick, hover, fill, type, press, scrollTo, scrollIntoView, nextChunk, prevChunk, selectOptionFromDropdown, dragAndDrop; got "zap"`},
				{"input.selector", "must not be empty"},
			}},
		{"action fields of the wrong types", `{"input":{"selector":"#a","method":"click","backendNodeId":1.5,"arguments":"x","description":7}}`,
			[]Issue{
				{"input.arguments", "must be an array; got a string"},
				{"input.backendNodeId", "must be a whole number"},
				{"input.description", "must be a string; got a number"},
			}},
		{"action arguments of the wrong type", `{"input":{"selector":"#a","method":"fill","arguments":["a",1]}}`,
			[]Issue{{"input.arguments[1]", "must be a string; got a number"}}},
		{"options null", `{"input":"x","options":null}`, []Issue{{"options", "must be an object; got null"}}},
		{"model of the wrong type", `{"input":"x","options":{"model":5}}`, []Issue{{"options.model", "must be a string or an object; got a number"}}},
		{"model name without provider", `{"input":"x","options":{"model":"gpt-4o"}}`, []Issue{{"options.model", modelPrefixMessage}}},
		{"model object", `{"input":"x","options":{"model":{"modelName":"gpt-4o","provider":"bedrock","apiKey":5,
			"baseURL":"ftp://x","headers":{"a b":"x","ok":1},"auth":{"credentials":{"k":1}},"providerOptions":{"a":{},"b":{}}}}}`,
			[]Issue{
				{"options.model.apiKey", "must be a string; got a number"},
				{"options.model.auth.credentials.k", "must be a string; got a number"},
				{"options.model.baseURL", "must be an http:// or https:// URL"},
				{"options.model.headers.a b", nameMessage},
				{"options.model.headers.ok", "must be a string; got a number"},
				{"options.model.modelName", modelPrefixMessage},
				{"options.model.provider", `must be one of "openai", "anthropic", "google"; got "bedrock"`},
				{"options.model.providerOptions", "must have at most 1 entry"},
			}},
		{"variables", `{"input":"x","options":{"variables":{"a":null,"b":[1],"c":{"description":"d"},"d":{"value":"x","extra":1},"e":{"value":{}},"":"x"}}}`,
			[]Issue{
				{"options.variables.", "invalid name: must not be empty"},
				{"options.variables.a", "must be a boolean or a number or a string or an object; got null"},
				{"options.variables.b", "must be a boolean or a number or a string or an object; got an array"},
				{"options.variables.c.value", "is required"},
				{"options.variables.d.extra", "unknown field"},
				{"options.variables.e.value", "must be a boolean or a number or a string; got an object"},
			}},
		{"too many variables", `{"input":"x","options":{"variables":` + manyVariables(65) + `}}`,
			[]Issue{{"options.variables", "must have at most 64 entries"}}},
		{"timeout zero", `{"input":"x","options":{"timeout":0}}`, []Issue{{"options.timeout", "must be greater than 0"}}},
		{"timeout over ten minutes", `{"input":"x","options":{"timeout":600001}}`, []Issue{{"options.timeout", "must be at most 600000"}}},
		{"timeout as a string", `{"input":"x","options":{"timeout":"30s"}}`, []Issue{{"options.timeout", "must be a number; got a string"}}},
		{"frameId of the wrong type", `{"input":"x","frameId":3}`, []Issue{{"frameId", "must be null or a string; got a number"}}},
		{"frameId too long", `{"input":"x","frameId":"` + strings.Repeat("f", 257) + `"}`, []Issue{{"frameId", "must be at most 256 characters long"}}},
		{"streamResponse as a string", `{"input":"x","streamResponse":"true"}`, []Issue{{"streamResponse", "must be a boolean; got a string"}}},
		{"scope", `{"input":"x","options":{"selector":5,"ignoreSelectors":["",".ads"]}}`,
			[]Issue{{"options.ignoreSelectors[0]", "must not be empty"}, {"options.selector", "must be a string; got a number"}}},
		{"too many ignoreSelectors", `{"input":"x","options":{"ignoreSelectors":` + stringList(65, "nav") + `}}`,
			[]Issue{{"options.ignoreSelectors", "must have at most 64 items"}}},
		{"settings of the wrong types", `{"input":"x","options":{"selfHeal":"yes","systemPrompt":1,"domSettleTimeoutMs":"2s"}}`,
			[]Issue{
				{"options.domSettleTimeoutMs", "must be an integer; got a string"},
				{"options.selfHeal", "must be a boolean; got a string"},
				{"options.systemPrompt", "must be a string; got a number"},
			}},
		{"settings out of the session's bounds", `{"input":"x","options":{"systemPrompt":"` + strings.Repeat("s", 32769) + `","domSettleTimeoutMs":600001}}`,
			[]Issue{{"options.domSettleTimeoutMs", "must be at most 600000"}, {"options.systemPrompt", "must be at most 32768 characters long"}}},
		{"negative settle timeout", `{"input":"x","options":{"domSettleTimeoutMs":-1}}`,
			[]Issue{{"options.domSettleTimeoutMs", "must be at least 0"}}},
		{"fractional settle timeout", `{"input":"x","options":{"domSettleTimeoutMs":1.5}}`,
			[]Issue{{"options.domSettleTimeoutMs", "must be a whole number"}}},
	}...)
	runIssueCases(t, DecodeAct, tests)
}

func TestDecodeActAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *ActBody
	}{
		{"instruction", `{"input":"Click the login button"}`,
			&ActBody{Request: rpc.ActRequest{Input: rpc.ActInput{Instruction: "Click the login button"}}}},
		{"unknown fields ignored, null frameId, stream", `{"input":"x","sdkVersion":"3.1.0","frameId":null,"streamResponse":true,
			"options":{"screenshot":5,"extra":{},"model":"anthropic/claude-sonnet-4-5","timeout":1500.5}}`,
			&ActBody{
				Request: rpc.ActRequest{
					Input:   rpc.ActInput{Instruction: "x"},
					Options: rpc.ActOptions{Model: &rpc.ModelConfig{ModelName: "anthropic/claude-sonnet-4-5"}, Timeout: ptr(1500.5)},
				},
				StreamResponse: ptr(true),
			}},
		{"action, method alias in any case", `{"input":{"selector":"xpath=/html/body/button","description":"Login","method":"DblClick",
			"backendNodeId":12.0,"arguments":[],"extra":true},"frameId":"F1","streamResponse":false}`,
			&ActBody{
				Request: rpc.ActRequest{
					Input: rpc.ActInput{Action: &rpc.Action{Selector: "xpath=/html/body/button", Description: "Login", Method: "DblClick",
						BackendNodeID: ptr(int64(12)), Arguments: []string{}}},
					FrameID: "F1",
				},
				StreamResponse: ptr(false),
			}},
		{"model object", `{"input":"x","options":{"model":{"modelName":"google/gemini-2.5-flash","provider":"google","apiKey":"k-1",
			"baseURL":"https://llm.example.com/v1","headers":{"X-Team":"qa"},"extra":1,
			"auth":{"type":"service_account","credentials":{"client_email":"a@b"},"scopes":"s","projectId":"p","universeDomain":"u"},
			"providerOptions":{"vertex":{"project":"p","location":"us-central1","baseURL":"https://v.example.com","headers":{"X-V":"1"}}}}}}`,
			&ActBody{Request: rpc.ActRequest{
				Input: rpc.ActInput{Instruction: "x"},
				Options: rpc.ActOptions{Model: &rpc.ModelConfig{
					ModelName: "google/gemini-2.5-flash", Provider: "google", APIKey: "k-1", BaseURL: "https://llm.example.com/v1",
					Headers: map[string]string{"X-Team": "qa"},
					Auth: &rpc.ModelAuth{Type: "service_account", Credentials: map[string]string{"client_email": "a@b"},
						Scopes: "s", ProjectID: "p", UniverseDomain: "u"},
					ProviderOptions: map[string]rpc.ProviderOptions{"vertex": {Project: "p", Location: "us-central1",
						BaseURL: "https://v.example.com", Headers: map[string]string{"X-V": "1"}}},
				}},
			}}},
		{"model object without a name takes the session's", `{"input":"x","options":{"model":{"apiKey":"k"}}}`,
			&ActBody{Request: rpc.ActRequest{Input: rpc.ActInput{Instruction: "x"}, Options: rpc.ActOptions{Model: &rpc.ModelConfig{APIKey: "k"}}}}},
		{"variables of every form", `{"input":"type %a%","options":{"variables":{"s":"text","i":42,"f":1.0,"big":1e21,"small":1.5e-7,"neg":-0,
			"t":true,"n":false,"o":{"value":"pw","description":"the password"},"on":{"value":2.5}}}}`,
			&ActBody{Request: rpc.ActRequest{
				Input: rpc.ActInput{Instruction: "type %a%"},
				Options: rpc.ActOptions{Variables: rpc.Variables{
					"s": {Value: "text"}, "i": {Value: "42"}, "f": {Value: "1"}, "big": {Value: "1e+21"}, "small": {Value: "1.5e-7"},
					"neg": {Value: "0"}, "t": {Value: "true"}, "n": {Value: "false"},
					"o": {Value: "pw", Description: "the password"}, "on": {Value: "2.5"},
				}},
			}}},
		{"empty variables are none", `{"input":"x","options":{"variables":{}}}`,
			&ActBody{Request: rpc.ActRequest{Input: rpc.ActInput{Instruction: "x"}}}},
		{"scope and the session's settings for this call", `{"input":"click the first result","options":{"selector":"#results",
			"ignoreSelectors":[".ads","xpath=/html/body/aside"],"selfHeal":false,"systemPrompt":"","domSettleTimeoutMs":2000.0}}`,
			&ActBody{Request: rpc.ActRequest{
				Input: rpc.ActInput{Instruction: "click the first result"},
				Options: rpc.ActOptions{Selector: "#results", IgnoreSelectors: []string{".ads", "xpath=/html/body/aside"},
					SelfHeal: ptr(false), CallSettings: rpc.CallSettings{SystemPrompt: ptr(""), DOMSettleTimeoutMs: ptr(2000.0)}},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verr := DecodeAct([]byte(tt.body))
			if verr != nil {
				t.Fatalf("refused the body: %v", verr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeObserveIssues(t *testing.T) {
	tests := append(commonIssueCases(`{}`), []issueCase{
		{"instruction of the wrong type", `{"instruction":["a"]}`, []Issue{{"instruction", "must be a string; got an array"}}},
		{"options", `{"options":{"model":"nope","variables":{"a":[]},"timeout":-1,"selector":5,"ignoreSelectors":"nav"}}`,
			[]Issue{
				{"options.ignoreSelectors", "must be an array; got a string"},
				{"options.model", modelPrefixMessage},
				{"options.selector", "must be a string; got a number"},
				{"options.timeout", "must be greater than 0"},
				{"options.variables.a", "must be a boolean or a number or a string or an object; got an array"},
			}},
		{"too many ignoreSelectors", `{"options":{"ignoreSelectors":` + stringList(65, "nav") + `}}`,
			[]Issue{{"options.ignoreSelectors", "must have at most 64 items"}}},
		{"ignoreSelectors items", `{"options":{"ignoreSelectors":["",1,"nav"]}}`,
			[]Issue{{"options.ignoreSelectors[0]", "must not be empty"}, {"options.ignoreSelectors[1]", "must be a string; got a number"}}},
		{"selector too long", `{"options":{"selector":"` + strings.Repeat("a", 4097) + `"}}`,
			[]Issue{{"options.selector", "must be at most 4096 characters long"}}},
		{"frameId and streamResponse", `{"frameId":{},"streamResponse":1}`,
			[]Issue{{"frameId", "must be null or a string; got an object"}, {"streamResponse", "must be a boolean; got a number"}}},
		{"settings out of the session's bounds", `{"options":{"systemPrompt":"` + strings.Repeat("s", 32769) + `","domSettleTimeoutMs":-1}}`,
			[]Issue{{"options.domSettleTimeoutMs", "must be at least 0"}, {"options.systemPrompt", "must be at most 32768 characters long"}}},
	}...)
	runIssueCases(t, DecodeObserve, tests)
}

func TestDecodeObserveAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *ObserveBody
	}{
		{"empty object: observe everything", `{}`, &ObserveBody{}},
		{"everything", `{"instruction":"find the links","frameId":"F","streamResponse":true,"unknown":[],
			"options":{"model":{"modelName":"openai/gpt-4.1-mini"},"variables":{"user":"u"},"timeout":5000,"selector":"nav",
			"ignoreSelectors":[".ads"],"screenshot":"ignored","selfHeal":"act's only","systemPrompt":"be brief","domSettleTimeoutMs":0}}`,
			&ObserveBody{
				Request: rpc.ObserveRequest{
					Instruction: "find the links",
					Options: rpc.ObserveOptions{
						Model: &rpc.ModelConfig{ModelName: "openai/gpt-4.1-mini"}, Variables: rpc.Variables{"user": {Value: "u"}},
						Timeout: ptr(5000.0), Selector: "nav", IgnoreSelectors: []string{".ads"},
						CallSettings: rpc.CallSettings{SystemPrompt: ptr("be brief"), DOMSettleTimeoutMs: ptr(0.0)},
					},
					FrameID: "F",
				},
				StreamResponse: ptr(true),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verr := DecodeObserve([]byte(tt.body))
			if verr != nil {
				t.Fatalf("refused the body: %v", verr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeExtractIssues(t *testing.T) {
	const notValid = "is not a valid JSON Schema: "
	tests := append(commonIssueCases(`{}`), []issueCase{
		{"schema without instruction", `{"schema":{"type":"object"}}`, []Issue{{"schema", "requires an instruction"}}},
		{"schema with an empty instruction", `{"instruction":"","schema":{"type":"object"}}`, []Issue{{"schema", "requires an instruction"}}},
		{"schema not an object", `{"instruction":"x","schema":true}`, []Issue{{"schema", "must be an object; got a boolean"}}},
		{"schema null", `{"instruction":"x","schema":null}`, []Issue{{"schema", "must be an object; got null"}}},
		{"schema with an unknown type", `{"instruction":"x","schema":{"type":"strin"}}`, []Issue{{"schema", notValid +
			`at /type: must be one of "array", "boolean", "integer", "null", "number", "object", "string"; got "strin"; at /type: must be an array; got a string`}}},
		{"schema with a bad bound", `{"instruction":"x","schema":{"type":"object","properties":{"a":{"minLength":-1}}}}`,
			[]Issue{{"schema", notValid + "at /properties/a/minLength: must be at least 0"}}},
		{"schema with a bad pattern", `{"instruction":"x","schema":{"pattern":"("}}`,
			[]Issue{{"schema", notValid + "at /pattern: must be a valid regex: error parsing regexp: missing closing ): `(`"}}},
		{"schema with a file reference", `{"instruction":"x","schema":{"$ref":"file:///etc/passwd"}}`,
			[]Issue{{"schema", notValid + "references file:///etc/passwd; only references within the schema (#...) are supported"}}},
		{"schema with a remote reference", `{"instruction":"x","schema":{"properties":{"a":{"$ref":"https://example.com/s.json"}}}}`,
			[]Issue{{"schema", notValid + "references https://example.com/s.json; only references within the schema (#...) are supported"}}},
		{"schema with a dangling reference", `{"instruction":"x","schema":{"$ref":"#/$defs/missing"}}`,
			[]Issue{{"schema", notValid + `json-pointer in "#/$defs/missing" not found`}}},
		{"schema without instruction and not compiling", `{"schema":{"required":"a"}}`,
			[]Issue{{"schema", notValid + "at /required: must be an array; got a string"}, {"schema", "requires an instruction"}}},
		{"options", `{"options":{"model":{"modelName":5},"timeout":700000,"screenshot":"yes","ignoreSelectors":[5]}}`,
			[]Issue{
				{"options.ignoreSelectors[0]", "must be a string; got a number"},
				{"options.model.modelName", "must be a string; got a number"},
				{"options.screenshot", "must be a boolean; got a string"},
				{"options.timeout", "must be at most 600000"},
			}},
		{"settings of the wrong types", `{"options":{"systemPrompt":null,"domSettleTimeoutMs":true}}`,
			[]Issue{{"options.domSettleTimeoutMs", "must be an integer; got a boolean"}, {"options.systemPrompt", "must be a string; got null"}}},
	}...)
	runIssueCases(t, DecodeExtract, tests)
}

func TestDecodeExtractAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *ExtractBody
	}{
		{"nothing: the page text", `{}`, &ExtractBody{}},
		{"instruction only", `{"instruction":"the headline"}`, &ExtractBody{Request: rpc.ExtractRequest{Instruction: "the headline"}}},
		{"schema, compacted; variables are not extract's and are ignored", `{"instruction":"prices","schema": { "type" : "object",
			"properties": {"p": {"type": "number", "format": "float"}}, "$defs": {"x": {}}, "required": ["p"] },
			"options":{"variables":5,"screenshot":true,"selector":"main","timeout":1,"systemPrompt":"numbers only","domSettleTimeoutMs":500},
			"frameId":null,"streamResponse":true}`,
			&ExtractBody{
				Request: rpc.ExtractRequest{
					Instruction: "prices",
					Schema:      json.RawMessage(`{"type":"object","properties":{"p":{"type":"number","format":"float"}},"$defs":{"x":{}},"required":["p"]}`),
					Options: rpc.ExtractOptions{Screenshot: ptr(true), Selector: "main", Timeout: ptr(1.0),
						CallSettings: rpc.CallSettings{SystemPrompt: ptr("numbers only"), DOMSettleTimeoutMs: ptr(500.0)}},
				},
				StreamResponse: ptr(true),
			}},
		{"draft-07 schema with local references", `{"instruction":"x","schema":{"$schema":"http://json-schema.org/draft-07/schema#",
			"definitions":{"n":{"type":"string"}},"type":"object","properties":{"name":{"$ref":"#/definitions/n"}}}}`,
			&ExtractBody{Request: rpc.ExtractRequest{Instruction: "x", Schema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#",` +
				`"definitions":{"n":{"type":"string"}},"type":"object","properties":{"name":{"$ref":"#/definitions/n"}}}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verr := DecodeExtract([]byte(tt.body))
			if verr != nil {
				t.Fatalf("refused the body: %v", verr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Transformer("raw", func(r json.RawMessage) string { return string(r) })); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeNavigateIssues(t *testing.T) {
	const (
		scheme = "must be an http, https or data URL, or about:blank"
		own    = "it opens the browser's own pages"
	)
	tests := append(commonIssueCases(`{"url":"https://example.com"}`), []issueCase{
		{"url required", `{"options":{}}`, []Issue{{"url", "is required"}}},
		{"url empty", `{"url":""}`, []Issue{{"url", "must not be empty"}}},
		{"url of the wrong type", `{"url":["https://example.com"]}`, []Issue{{"url", "must be a string; got an array"}}},
		{"javascript url", `{"url":"javascript:alert(1)"}`, []Issue{{"url", scheme}}},
		{"file url", `{"url":"file:///etc/passwd"}`, []Issue{{"url", "must not be a file: URL: it would read the runner's files"}}},
		{"chrome url", `{"url":"chrome://settings"}`, []Issue{{"url", "must not be a chrome: URL: " + own}}},
		{"chrome-extension url", `{"url":"chrome-extension://abcdefghijklmnop/x.html"}`, []Issue{{"url", "must not be a chrome-extension: URL: " + own}}},
		{"devtools url", `{"url":"devtools://devtools/bundled/inspector.html"}`, []Issue{{"url", "must not be a devtools: URL: " + own}}},
		{"view-source url", `{"url":"view-source:https://example.com/"}`, []Issue{{"url", "must not be a view-source: URL: " + own}}},
		{"about:version", `{"url":"about:version"}`, []Issue{{"url", "may be about:blank only: the other about: pages are the browser's own"}}},
		{"relative url", `{"url":"example.com/a"}`, []Issue{{"url", scheme}}},
		{"no host", `{"url":"https:///path"}`, []Issue{{"url", "has no host"}}},
		{"not a URL", `{"url":"http://[::1"}`, []Issue{{"url", "is not a URL"}}},
		{"options", `{"url":"https://example.com","options":{"waitUntil":"idle","referer":1,"timeout":true}}`,
			[]Issue{
				{"options.referer", "must be a string; got a number"},
				{"options.timeout", "must be a number; got a boolean"},
				{"options.waitUntil", `must be one of "load", "domcontentloaded", "networkidle"; got "idle"`},
			}},
		{"waitUntil is case-sensitive", `{"url":"https://example.com","options":{"waitUntil":"Load"}}`,
			[]Issue{{"options.waitUntil", `must be one of "load", "domcontentloaded", "networkidle"; got "Load"`}}},
	}...)
	runIssueCases(t, DecodeNavigate, tests)
}

func TestDecodeNavigateAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *NavigateBody
	}{
		{"https with options", `{"url":"https://example.com/a?b=c","options":{"referer":"https://ref.example","timeout":30000,
			"waitUntil":"networkidle","extra":1},"frameId":"MAIN","streamResponse":true}`,
			&NavigateBody{
				Request: rpc.NavigateRequest{URL: "https://example.com/a?b=c", FrameID: "MAIN", Options: rpc.NavigateOptions{
					Referer: "https://ref.example", Timeout: ptr(30000.0), WaitUntil: rpc.WaitUntilNetworkIdle}},
				StreamResponse: ptr(true),
			}},
		{"upper-case scheme", `{"url":"HTTP://EXAMPLE.COM"}`, &NavigateBody{Request: rpc.NavigateRequest{URL: "HTTP://EXAMPLE.COM"}}},
		{"about:blank", `{"url":"about:blank","frameId":null}`, &NavigateBody{Request: rpc.NavigateRequest{URL: "about:blank"}}},
		{"data url", `{"url":"data:text/html,<h1>hi</h1>"}`, &NavigateBody{Request: rpc.NavigateRequest{URL: "data:text/html,<h1>hi</h1>"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verr := DecodeNavigate([]byte(tt.body))
			if verr != nil {
				t.Fatalf("refused the body: %v", verr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJSNumber(t *testing.T) {
	tests := map[float64]string{
		0: "0", 1: "1", -3: "-3", 1.5: "1.5", 0.1: "0.1", 123456789012: "123456789012",
		1e20: "100000000000000000000", 1e21: "1e+21", 1.25e22: "1.25e+22", 1e-6: "0.000001", 1e-7: "1e-7", -2.5e-9: "-2.5e-9",
	}
	for in, want := range tests {
		if got := jsNumber(in); got != want {
			t.Errorf("jsNumber(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestCallSettingsBoundsAreTheSessions holds an operation's overrides of
// the session's settings to the session's own bounds, which the runner
// checks too (rpc.CallSettings.Problem).
func TestCallSettingsBoundsAreTheSessions(t *testing.T) {
	doc := parsedDocument(t)
	const s = "/components/schemas/"
	tests := []struct {
		override, session, bound string
		want                     float64
	}{
		{s + "SystemPromptOverride", s + "SessionStartRequest/properties/systemPrompt", "maxLength", rpc.MaxSystemPromptLength},
		{s + "DOMSettleTimeoutOverride", s + "SessionStartRequest/properties/domSettleTimeoutMs", "maximum", rpc.MaxDOMSettleTimeoutMs},
		{s + "DOMSettleTimeoutOverride", s + "SessionStartRequest/properties/domSettleTimeoutMs", "minimum", 0},
	}
	for _, tt := range tests {
		for _, ptr := range []string{tt.override, tt.session} {
			got, ok := lookup(doc, ptr+"/"+tt.bound)
			if !ok || got != tt.want {
				t.Errorf("%s: %s %v, want %v", ptr, tt.bound, got, tt.want)
			}
		}
	}
	for _, opts := range []string{"ActOptions", "ObserveOptions", "ExtractOptions"} {
		for prop, ref := range map[string]string{"systemPrompt": "SystemPromptOverride", "domSettleTimeoutMs": "DOMSettleTimeoutOverride"} {
			got, _ := lookup(doc, s+opts+"/properties/"+prop+"/$ref")
			if got != "#"+s+ref {
				t.Errorf("%s.%s refers to %v, want %s", opts, prop, got, ref)
			}
		}
	}
}

func TestCallSettingsProblem(t *testing.T) {
	tests := []struct {
		name string
		set  rpc.CallSettings
		want string
	}{
		{"none", rpc.CallSettings{}, ""},
		{"at the bounds", rpc.CallSettings{SystemPrompt: ptr(strings.Repeat("é", rpc.MaxSystemPromptLength)), DOMSettleTimeoutMs: ptr(600000.0)}, ""},
		{"empty prompt and zero", rpc.CallSettings{SystemPrompt: ptr(""), DOMSettleTimeoutMs: ptr(0.0)}, ""},
		{"long prompt", rpc.CallSettings{SystemPrompt: ptr(strings.Repeat("a", rpc.MaxSystemPromptLength+1))},
			"options.systemPrompt must be at most 32768 characters long"},
		{"negative", rpc.CallSettings{DOMSettleTimeoutMs: ptr(-1.0)},
			"options.domSettleTimeoutMs must be a whole number of milliseconds from 0 to 600000"},
		{"fraction", rpc.CallSettings{DOMSettleTimeoutMs: ptr(0.5)},
			"options.domSettleTimeoutMs must be a whole number of milliseconds from 0 to 600000"},
		{"too long", rpc.CallSettings{DOMSettleTimeoutMs: ptr(600001.0)},
			"options.domSettleTimeoutMs must be a whole number of milliseconds from 0 to 600000"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.set.Problem()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
