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
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/browserfleet/browserfleet/engine/llm/provider"
)

// parsedDocument is the embedded document as plain JSON values.
func parsedDocument(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	return doc
}

// lookup follows a JSON pointer ("/components/schemas/X") in doc.
func lookup(doc any, ptr string) (any, bool) {
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func newTestValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatalf("NewValidator: %v", err)
	}
	return v
}

func TestOpenAPIDocument(t *testing.T) {
	doc := parsedDocument(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	info, _ := doc["info"].(map[string]any)
	if info["version"] != "3.1.0" {
		t.Errorf("info.version = %v, want 3.1.0", info["version"])
	}
	if doc["jsonSchemaDialect"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("jsonSchemaDialect = %v", doc["jsonSchemaDialect"])
	}
	// OpenAPI returns a copy: a caller cannot change the served document.
	b := OpenAPI()
	b[0] = 'x'
	if OpenAPI()[0] != '{' {
		t.Error("OpenAPI returned the embedded slice itself")
	}
}

func TestOpenAPIRefsResolve(t *testing.T) {
	doc := parsedDocument(t)
	refs := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				refs++
				ptr, local := strings.CutPrefix(ref, "#")
				if !local {
					t.Errorf("%s: $ref %q is not local", path, ref)
				} else if _, ok := lookup(doc, ptr); !ok {
					t.Errorf("%s: $ref %q does not resolve", path, ref)
				}
			}
			for k, c := range v {
				walk(path+"/"+k, c)
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s/%d", path, i), c)
			}
		}
	}
	walk("", doc)
	if refs < 100 {
		t.Errorf("found only %d references; is the walk broken?", refs)
	}
}

func TestOpenAPISchemasCompile(t *testing.T) {
	doc := parsedDocument(t)
	schemas, _ := lookup(doc, "/components/schemas")
	parsed, err := parseDocument()
	if err != nil {
		t.Fatal(err)
	}
	c, err := newDocumentCompiler(parsed)
	if err != nil {
		t.Fatal(err)
	}
	c.AssertFormat()
	for name := range schemas.(map[string]any) {
		if _, err := c.Compile(documentURL + "#/components/schemas/" + name); err != nil {
			t.Errorf("components/schemas/%s: %v", name, err)
		}
	}
	newTestValidator(t)
}

// TestOpenAPIExamples validates every example of the document: those of
// schemas (`examples`) and those of request and response media types.
func TestOpenAPIExamples(t *testing.T) {
	doc := parsedDocument(t)
	parsed, _ := parseDocument()
	c, err := newDocumentCompiler(parsed)
	if err != nil {
		t.Fatal(err)
	}
	c.AssertFormat()
	checked := 0
	schemas, _ := lookup(doc, "/components/schemas")
	for name, s := range schemas.(map[string]any) {
		examples, _ := s.(map[string]any)["examples"].([]any)
		if len(examples) == 0 {
			continue
		}
		sch, err := c.Compile(documentURL + "#/components/schemas/" + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, ex := range examples {
			raw, _ := json.Marshal(ex)
			if err := validateJSON(sch, raw); err != nil {
				t.Errorf("components/schemas/%s example %d: %v", name, i, err)
			}
			checked++
		}
	}

	v := newTestValidator(t)
	paths, _ := doc["paths"].(map[string]any)
	for pattern, item := range paths {
		for method, op := range item.(map[string]any) {
			opMap := op.(map[string]any)
			m := strings.ToUpper(method)
			if content, ok := lookup(opMap, "/requestBody/content/application~1json"); ok {
				exs, _ := content.(map[string]any)["examples"].(map[string]any)
				for name, ex := range exs {
					raw, _ := json.Marshal(ex.(map[string]any)["value"])
					if err := v.ValidateRequest(m, pattern, raw); err != nil {
						t.Errorf("%s %s request example %s: %v", m, pattern, name, err)
					}
					checked++
				}
			}
			responses, _ := opMap["responses"].(map[string]any)
			for status, r := range responses {
				content, _ := r.(map[string]any)["content"].(map[string]any)
				for mt, entry := range content {
					exs, _ := entry.(map[string]any)["examples"].(map[string]any)
					for name, ex := range exs {
						raw, _ := json.Marshal(ex.(map[string]any)["value"])
						code, err := strconv.Atoi(status)
						if err != nil {
							t.Errorf("%s %s: example %s of the non-numeric status %s", m, pattern, name, status)
							continue
						}
						if err := v.ValidateResponse(m, pattern, code, mt, raw); err != nil {
							t.Errorf("%s %s %s example %s: %v", m, pattern, status, name, err)
						}
						checked++
					}
				}
			}
		}
	}
	if checked < 25 {
		t.Errorf("checked only %d examples", checked)
	}
}

func TestRoutes(t *testing.T) {
	want := []Route{
		{"GET", "/healthz"},
		{"GET", "/readyz"},
		{"POST", "/v1/models/generate"},
		{"GET", "/v1/openapi.json"},
		{"GET", "/v1/sessions"},
		{"POST", "/v1/sessions/start"},
		{"GET", "/v1/sessions/{id}"},
		{"POST", "/v1/sessions/{id}/act"},
		{"POST", "/v1/sessions/{id}/agentExecute"},
		{"POST", "/v1/sessions/{id}/batch"},
		{"GET", "/v1/sessions/{id}/devtools/browser/{token}"},
		{"POST", "/v1/sessions/{id}/end"},
		{"POST", "/v1/sessions/{id}/extract"},
		{"POST", "/v1/sessions/{id}/navigate"},
		{"POST", "/v1/sessions/{id}/observe"},
		{"GET", "/v1/sessions/{id}/replay"},
	}
	if diff := cmp.Diff(want, Routes()); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
}

// TestOpenAPISecurity holds each operation to its authentication: the API
// key (the document's default) for /v1, the signed token for the DevTools
// WebSocket, nothing for the probes and the document.
func TestOpenAPISecurity(t *testing.T) {
	doc := parsedDocument(t)
	want := []any{map[string]any{"APIKey": []any{}}, map[string]any{"APIKey": []any{}, "ProjectID": []any{}}}
	if diff := cmp.Diff(want, doc["security"]); diff != "" {
		t.Errorf("document security (-want +got):\n%s", diff)
	}
	public := []string{"/healthz", "/readyz", "/v1/openapi.json"}
	for _, r := range Routes() {
		op, _ := lookup(doc, "/paths/"+pointerEscape(r.Pattern)+"/"+strings.ToLower(r.Method))
		sec, overridden := op.(map[string]any)["security"]
		switch {
		case slices.Contains(public, r.Pattern):
			if diff := cmp.Diff([]any{}, sec); diff != "" {
				t.Errorf("%s %s must need no authentication (-want +got):\n%s", r.Method, r.Pattern, diff)
			}
		case strings.HasSuffix(r.Pattern, "/devtools/browser/{token}"):
			// The token in the path authorizes it; OpenAPI has no
			// security scheme for a path parameter.
			if diff := cmp.Diff([]any{}, sec); diff != "" {
				t.Errorf("%s %s must need no API key (-want +got):\n%s", r.Method, r.Pattern, diff)
			}
		case overridden:
			t.Errorf("%s %s overrides the API key requirement: %v", r.Method, r.Pattern, sec)
		}
	}
}

// TestOpenAPIRequestBodies ties each operation's documented body to the
// schema its decoder enforces.
func TestOpenAPIRequestBodies(t *testing.T) {
	doc := parsedDocument(t)
	want := map[Route]string{
		{"POST", "/v1/sessions/start"}:             "SessionStartRequest",
		{"POST", "/v1/sessions/{id}/act"}:          "ActRequest",
		{"POST", "/v1/sessions/{id}/observe"}:      "ObserveRequest",
		{"POST", "/v1/sessions/{id}/extract"}:      "ExtractRequest",
		{"POST", "/v1/sessions/{id}/navigate"}:     "NavigateRequest",
		{"POST", "/v1/sessions/{id}/agentExecute"}: "AgentExecuteRequest",
		{"POST", "/v1/sessions/{id}/end"}:          "SessionEndRequest",
		{"POST", "/v1/sessions/{id}/batch"}:        "BatchRequest",
	}
	for _, r := range Routes() {
		ref, ok := lookup(doc, "/paths/"+pointerEscape(r.Pattern)+"/"+strings.ToLower(r.Method)+"/requestBody/content/application~1json/schema/$ref")
		got := ""
		if ok {
			got = strings.TrimPrefix(ref.(string), "#/components/schemas/")
		}
		if got != want[r] {
			t.Errorf("%s %s: request schema %q, want %q", r.Method, r.Pattern, got, want[r])
		}
	}
	// The decoders compile exactly these components.
	for name, s := range map[string]*jsonschema.Schema{
		"SessionStartRequest": startSchema, "ActRequest": actSchema, "ObserveRequest": observeSchema,
		"ExtractRequest": extractSchema, "NavigateRequest": navigateSchema, "AgentExecuteRequest": agentSchema,
		"BatchRequest": batchSchema,
	} {
		if want := documentURL + "#/components/schemas/" + name; s.Location != want {
			t.Errorf("the decoder of %s validates against %s", name, s.Location)
		}
	}
}

// TestOpenAPIBoundsMatchCRD holds the agentExecute schema to the AgentTask
// CRD: a body that decodes must never be refused on create.
func TestOpenAPIBoundsMatchCRD(t *testing.T) {
	raw, err := os.ReadFile("../../config/crd/bases/browserfleet.io_agenttasks.yaml")
	if err != nil {
		t.Fatalf("reading the AgentTask CRD: %v", err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatalf("parsing the AgentTask CRD: %v", err)
	}
	// versions is a list, which lookup does not walk.
	versions, _ := lookup(crd, "/spec/versions")
	list, _ := versions.([]any)
	if len(list) != 1 {
		t.Fatalf("the AgentTask CRD has %d versions, want 1", len(list))
	}
	spec, ok := lookup(list[0], "/schema/openAPIV3Schema/properties/spec")
	if !ok {
		t.Fatal("no spec schema in the AgentTask CRD")
	}
	doc := parsedDocument(t)
	crdAt := func(path string) map[string]any {
		cur := spec
		for _, p := range strings.Split(path, ".") {
			cur, _ = lookup(cur, "/properties/"+p)
		}
		m, _ := cur.(map[string]any)
		if m == nil {
			t.Fatalf("CRD has no %s", path)
		}
		return m
	}
	// crdRequired reports whether the CRD lists the field as required.
	crdRequired := func(path string) bool {
		parent, name := "", path
		if i := strings.LastIndex(path, "."); i >= 0 {
			parent, name = path[:i], path[i+1:]
		}
		m := spec
		if parent != "" {
			m = crdAt(parent)
		}
		req, _ := lookup(m, "/required")
		list, _ := req.([]any)
		return slices.Contains(list, any(name))
	}
	// ours resolves a document schema and the schemas it references.
	var ours func(ptr string) map[string]any
	ours = func(ptr string) map[string]any {
		v, ok := lookup(doc, ptr)
		if !ok {
			t.Fatalf("document has no %s", ptr)
		}
		m := map[string]any{}
		if ref, ok := v.(map[string]any)["$ref"].(string); ok {
			for k, x := range ours(strings.TrimPrefix(ref, "#")) {
				m[k] = x
			}
		}
		for k, x := range v.(map[string]any) {
			m[k] = x
		}
		return m
	}
	const s = "/components/schemas/"
	pairs := []struct{ ours, crd string }{
		{s + "AgentExecuteOptions/properties/instruction", "executeOptions.instruction"},
		{s + "AgentExecuteOptions/properties/maxSteps", "executeOptions.maxSteps"},
		{s + "AgentExecuteOptions/properties/toolTimeout", "executeOptions.toolTimeoutMs"},
		{s + "AgentVariables", "executeOptions.variables"},
		{s + "AgentConfig/properties/systemPrompt", "agentConfig.systemPrompt"},
		{s + "AgentConfig/properties/provider", "agentConfig.provider"},
		{s + "FrameId", "frameId"},
	}
	for _, model := range []string{"agentConfig.model", "agentConfig.executionModel"} {
		pairs = append(pairs, []struct{ ours, crd string }{
			{s + "ModelName", model + ".name"},
			{s + "ModelConfig/properties/provider", model + ".provider"},
			{s + "HTTPURL", model + ".baseURL"},
			{s + "ModelHeaders", model + ".headers"},
			{s + "ModelAuth/properties/type", model + ".auth.type"},
			{s + "ModelAuth/properties/scopes", model + ".auth.scopes"},
			{s + "ModelAuth/properties/projectId", model + ".auth.projectId"},
			{s + "ModelAuth/properties/universeDomain", model + ".auth.universeDomain"},
			{s + "ProviderOptions/propertyNames", model + ".providerOptions.variant"},
			{s + "ProviderOptions/additionalProperties/properties/project", model + ".providerOptions.project"},
			{s + "ProviderOptions/additionalProperties/properties/location", model + ".providerOptions.location"},
			{s + "ProviderOptions/additionalProperties/properties/baseURL", model + ".providerOptions.baseURL"},
		}...)
	}
	num := func(v any) float64 { f, _ := v.(float64); return f }
	for _, p := range pairs {
		o, c := ours(p.ours), crdAt(p.crd)
		if enum, ok := o["enum"].([]any); ok {
			// An enum is as strict as its values.
			for _, e := range enum {
				if maxLen, ok := c["maxLength"]; ok && len(e.(string)) > int(num(maxLen)) {
					t.Errorf("%s: enum value %q is longer than %s's maxLength %v", p.ours, e, p.crd, maxLen)
				}
			}
			continue
		}
		for _, k := range []string{"maxLength", "maxProperties", "maximum"} {
			if cv, ok := c[k]; ok {
				if ov, ok := o[k]; !ok || num(ov) > num(cv) {
					t.Errorf("%s: %s %v, want at most %s's %v", p.ours, k, o[k], p.crd, cv)
				}
			}
		}
		for _, k := range []string{"minLength", "minimum"} {
			if cv, ok := c[k]; ok {
				if k == "minLength" && num(cv) == 1 && !crdRequired(p.crd) {
					// The CRD's optional strings are omitempty: an empty
					// string from the wire is left out, never refused.
					continue
				}
				if ov, ok := o[k]; !ok || num(ov) < num(cv) {
					t.Errorf("%s: %s %v, want at least %s's %v", p.ours, k, o[k], p.crd, cv)
				}
			}
		}
		if cv, ok := c["pattern"]; ok && o["pattern"] != cv {
			t.Errorf("%s: pattern %v, want %s's %v", p.ours, o["pattern"], p.crd, cv)
		}
	}
}

func TestValidatorRequests(t *testing.T) {
	v := newTestValidator(t)
	tests := []struct {
		method, pattern, body string
		ok                    bool
	}{
		{"POST", "/v1/sessions/{id}/act", `{"input":"click"}`, true},
		{"POST", "/v1/sessions/{id}/act", `{}`, false},
		{"POST", "/v1/sessions/{id}/act", ``, false},
		{"POST", "/v1/sessions/{id}/act", `{"input":"x","options":{"timeout":0}}`, false},
		{"POST", "/v1/sessions/start", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"bogus":1}}}`, false},
		{"POST", "/v1/sessions/start", `{"modelName":"openai/gpt-4o","extra":1}`, true},
		{"POST", "/v1/sessions/{id}/end", ``, true},
		{"POST", "/v1/sessions/{id}/end", `{}`, true},
		{"POST", "/v1/sessions/{id}/end", `{"force":true}`, false},
		{"GET", "/v1/sessions/{id}", ``, true},
		{"GET", "/v1/sessions/{id}", `{}`, false},
		{"POST", "/v1/sessions/{id}/agentExecute", `{"agentConfig":{},"executeOptions":{"instruction":"go"}}`, true},
		{"POST", "/v1/sessions/{id}/agentExecute", `{"agentConfig":{"model":{"apiKey":"k"}},"executeOptions":{"instruction":"go"}}`, false},
		{"DELETE", "/v1/sessions/{id}", ``, false},
		{"POST", "/v1/sessions/{id}/click", `{}`, false},
	}
	for _, tt := range tests {
		err := v.ValidateRequest(tt.method, tt.pattern, []byte(tt.body))
		if (err == nil) != tt.ok {
			t.Errorf("ValidateRequest(%s %s, %s) = %v, want ok %v", tt.method, tt.pattern, tt.body, err, tt.ok)
		}
	}
}

// sse builds a stream from frames of event name and data JSON.
func sse(frames ...[2]string) string {
	var b strings.Builder
	for _, f := range frames {
		if f[0] == "" {
			b.WriteString(f[1] + "\n\n")
			continue
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", f[0], f[1])
	}
	return b.String()
}

const (
	eventID  = "0b8e6f2c-5d1a-4c1e-9a43-3b2f8d7e6a11"
	actionID = "0b8e6f2c-5d1a-4c1e-9a43-3b2f8d7e6a12"
)

func frame(status, typ, extra string) [2]string {
	data := `{"status":"` + status + `"` + extra + `}`
	return [2]string{status, `{"data":` + data + `,"type":"` + typ + `","id":"` + eventID + `"}`}
}

func TestValidatorResponses(t *testing.T) {
	v := newTestValidator(t)
	const (
		act       = "/v1/sessions/{id}/act"
		jsonCT    = "application/json"
		sseCT     = "text/event-stream"
		metadata  = `"metadata":{"cache":{"status":"DISABLED"},"usage":{"inputTokens":10,"outputTokens":2,"reasoningTokens":0,"cachedInputTokens":0,"inferenceTimeMs":31}}`
		actData   = `{"result":{"success":true,"message":"done","actionDescription":"d","actions":[{"selector":"xpath=/a","description":"a","method":"click","arguments":[],"backendNodeId":3}]},"actionId":"` + actionID + `",` + metadata + `}`
		view      = `{"sessionId":"s","phase":"Ready","message":"","createdAt":"2026-01-01T00:00:00Z","startedAt":null,"expiresAt":"2026-01-01T01:00:00Z","endedAt":null,"modelName":"openai/gpt-4o","userMetadata":{},"cdpUrl":null}`
		actResult = `,"result":{"success":true,"message":"m","actionDescription":"d","actions":[]},"actionId":"` + actionID + `",` + metadata
	)
	starting, connected := frame("starting", "system", ""), frame("connected", "system", "")
	running := frame("running", "log", `,"message":{"category":"action","message":"clicking","level":1,"timestamp":"2026-01-01T00:00:00.123Z","auxiliary":{"selector":{"value":"xpath=/a","type":"string"}}}`)
	tests := []struct {
		name, method, pattern string
		status                int
		ct, body              string
		ok                    bool
	}{
		{"act result", "POST", act, 200, jsonCT, `{"success":true,"data":` + actData + `}`, true},
		{"content type parameters", "POST", act, 200, "application/json; charset=utf-8", `{"success":true,"data":` + actData + `}`, true},
		{"act result with an extra field", "POST", act, 200, jsonCT, `{"success":true,"data":` + strings.Replace(actData, `"actionId"`, `"extra":1,"actionId"`, 1) + `}`, false},
		{"act result without actionId", "POST", act, 200, jsonCT, `{"success":true,"data":{"result":{"success":true,"message":"","actionDescription":"","actions":[]},` + metadata + `}}`, false},
		{"act result without metadata", "POST", act, 200, jsonCT, `{"success":true,"data":{"result":{"success":true,"message":"","actionDescription":"","actions":[]},"actionId":"` + actionID + `"}}`, false},
		{"cache hit with its optional fields", "POST", act, 200, jsonCT, `{"success":true,"data":` + strings.Replace(actData, `{"status":"DISABLED"}`,
			`{"status":"HIT","count":3,"threshold":2,"tokensSaved":{"inputTokens":10,"outputTokens":2,"totalTokens":12}}`, 1) + `}`, true},
		{"cache miss with its reason", "POST", act, 200, jsonCT, `{"success":true,"data":` + strings.Replace(actData, `{"status":"DISABLED"}`,
			`{"status":"MISS","count":1,"threshold":2,"missReason":"below the threshold"}`, 1) + `}`, true},
		{"unknown cache status", "POST", act, 200, jsonCT, `{"success":true,"data":` + strings.Replace(actData, "DISABLED", "OFF", 1) + `}`, false},
		{"usage without inferenceTimeMs", "POST", act, 200, jsonCT, `{"success":true,"data":` + strings.Replace(actData, `,"inferenceTimeMs":31`, "", 1) + `}`, false},
		{"act result with a bad actionId", "POST", act, 200, jsonCT, `{"success":true,"data":` + strings.Replace(actData, actionID, "nope", 1) + `}`, false},
		{"success false with 200", "POST", act, 200, jsonCT, `{"success":false,"data":` + actData + `}`, false},
		{"undocumented content type", "POST", act, 200, "text/plain", `ok`, false},
		{"error with issues", "POST", act, 400, jsonCT, `{"success":false,"error":"bad","code":"INVALID_REQUEST","issues":[{"path":"input","message":"is required"}]}`, true},
		{"error envelope with success true", "POST", act, 400, jsonCT, `{"success":true,"error":"bad","code":"INVALID_REQUEST"}`, false},
		{"error without code", "POST", act, 502, jsonCT, `{"success":false,"error":"bad"}`, false},
		{"undocumented error status falls to default", "POST", act, 418, jsonCT, `{"success":false,"error":"teapot","code":"X"}`, true},
		{"success body with another status", "POST", act, 201, jsonCT, `{"success":true,"data":` + actData + `}`, false},
		{"undocumented operation", "PUT", act, 200, jsonCT, `{}`, false},
		{"start", "POST", "/v1/sessions/start", 200, jsonCT, `{"success":true,"data":{"sessionId":"s","cdpUrl":null,"available":true}}`, true},
		{"start with an extra field", "POST", "/v1/sessions/start", 200, jsonCT, `{"success":true,"data":{"sessionId":"s","available":true,"region":"x"}}`, false},
		{"end", "POST", "/v1/sessions/{id}/end", 200, jsonCT, `{"success":true}`, true},
		{"end with data", "POST", "/v1/sessions/{id}/end", 200, jsonCT, `{"success":true,"data":{}}`, false},
		{"observe", "POST", "/v1/sessions/{id}/observe", 200, jsonCT, `{"success":true,"data":{"result":[],"actionId":"` + actionID + `",` + metadata + `}}`, true},
		{"observe action without selector", "POST", "/v1/sessions/{id}/observe", 200, jsonCT, `{"success":true,"data":{"result":[{"description":"x"}],"actionId":"` + actionID + `"}}`, false},
		{"extract any result", "POST", "/v1/sessions/{id}/extract", 200, jsonCT, `{"success":true,"data":{"result":[1,"a",null],"actionId":"` + actionID + `",` + metadata + `}}`, true},
		{"extract without metadata", "POST", "/v1/sessions/{id}/extract", 200, jsonCT, `{"success":true,"data":{"result":{},"actionId":"` + actionID + `"}}`, false},
		{"extract schema violation", "POST", "/v1/sessions/{id}/extract", 422, jsonCT, `{"success":false,"error":"at /p: want number","code":"SCHEMA_VIOLATION"}`, true},
		{"navigate", "POST", "/v1/sessions/{id}/navigate", 200, jsonCT, `{"success":true,"data":{"result":{"url":"about:blank","ok":true},"actionId":"` + actionID + `"}}`, true},
		{"navigate egress denied", "POST", "/v1/sessions/{id}/navigate", 403, jsonCT, `{"success":false,"error":"the egress policy refuses connections to 10.0.0.5 (a private address)","code":"EGRESS_DENIED"}`, true},
		{"act egress denied", "POST", act, 403, jsonCT, `{"success":false,"error":"the model openai/x: the egress policy refuses connections to 127.0.0.1 (a loopback address)","code":"EGRESS_DENIED"}`, true},
		{"navigate without ok", "POST", "/v1/sessions/{id}/navigate", 200, jsonCT, `{"success":true,"data":{"result":{"url":"about:blank","status":200},"actionId":"` + actionID + `"}}`, false},
		{"agent", "POST", "/v1/sessions/{id}/agentExecute", 200, jsonCT, `{"success":true,"data":{"result":{"success":true,"message":"m","actions":[{"type":"act","reasoning":"","taskCompleted":false,"action":"","timeMs":0,"pageText":"","pageUrl":"","instruction":""}],"completed":true,"metadata":{},"usage":{"input_tokens":1,"output_tokens":2,"inference_time_ms":3,"reasoning_tokens":0,"cached_input_tokens":0}},"cacheEntry":{"cacheKey":"k","entry":{"a":1}}}}`, true},
		{"agent failed", "POST", "/v1/sessions/{id}/agentExecute", 422, jsonCT, `{"success":false,"error":"the agent gave up","code":"AGENT_FAILED"}`, true},
		{"replay", "GET", "/v1/sessions/{id}/replay", 200, jsonCT, `{"success":true,"data":{"pages":[{"url":"u","timestamp":1,"duration":2,"actions":[{"actionId":"a","method":"observe","parameters":{},"result":[],"timestamp":1,"endTime":2,"tokenUsage":{"inputTokens":1,"outputTokens":1,"reasoningTokens":0,"cachedInputTokens":0,"timeMs":5}}]}]}}`, true},
		{"replay after the end", "GET", "/v1/sessions/{id}/replay", 200, jsonCT, `{"success":true,"data":{"pages":[],"summary":{"calls":3,"failed":1,"byMethod":{"act":2,"navigate":1},"tokenUsage":{"inputTokens":1,"outputTokens":1,"reasoningTokens":0,"cachedInputTokens":0,"timeMs":5},"firstCallAt":1,"lastCallAt":2}}}`, true},
		{"replay summary with an unknown field", "GET", "/v1/sessions/{id}/replay", 200, jsonCT, `{"success":true,"data":{"pages":[],"summary":{"calls":3,"failed":1,"byMethod":{},"tokenUsage":{},"cost":2}}}`, false},
		{"session", "GET", "/v1/sessions/{id}", 200, jsonCT, `{"success":true,"data":` + view + `}`, true},
		{"session without cdpUrl", "GET", "/v1/sessions/{id}", 200, jsonCT, `{"success":true,"data":` + strings.Replace(view, `,"cdpUrl":null`, "", 1) + `}`, false},
		{"session with an unknown phase", "GET", "/v1/sessions/{id}", 200, jsonCT, `{"success":true,"data":` + strings.Replace(view, "Ready", "Running", 1) + `}`, false},
		{"session with a bad time", "GET", "/v1/sessions/{id}", 200, jsonCT, `{"success":true,"data":` + strings.Replace(view, "2026-01-01T00:00:00Z", "yesterday", 1) + `}`, false},
		{"sessions", "GET", "/v1/sessions", 200, jsonCT, `{"success":true,"data":{"sessions":[` + view + `]}}`, true},
		{"healthz", "GET", "/healthz", 200, jsonCT, `{"success":true}`, true},
		{"healthz has no 503", "GET", "/healthz", 503, jsonCT, `{"success":false,"error":"x","code":"UNAVAILABLE"}`, false},
		{"readyz 503", "GET", "/readyz", 503, jsonCT, `{"success":false,"error":"cache not synced yet","code":"UNAVAILABLE"}`, true},
		{"openapi", "GET", "/v1/openapi.json", 200, jsonCT, string(OpenAPI()), true},
		{"cdp upgrade", "GET", "/v1/sessions/{id}/devtools/browser/{token}", 101, "", "", true},
		{"cdp bad token", "GET", "/v1/sessions/{id}/devtools/browser/{token}", 401, jsonCT, `{"success":false,"error":"bad token","code":"UNAUTHORIZED"}`, true},

		{"stream", "POST", act, 200, sseCT, sse(starting, connected, running, [2]string{"", ": keep-alive"}, running, frame("finished", "system", actResult)), true},
		{"stream ending in error", "POST", act, 200, sseCT, sse(starting, connected, frame("error", "system", `,"error":"boom"`)), true},
		{"stream with a wrong result", "POST", act, 200, sseCT, sse(starting, frame("finished", "system", `,"result":{"success":true}`)), false},
		{"stream ending without metadata", "POST", act, 200, sseCT, sse(starting, connected,
			frame("finished", "system", strings.Replace(actResult, ","+metadata, "", 1))), false},
		{"navigate stream has no metadata", "POST", "/v1/sessions/{id}/navigate", 200, sseCT, sse(starting, connected,
			frame("finished", "system", `,"result":{"url":"about:blank","ok":true},"actionId":"`+actionID+`"`)), true},
		{"stream without an end", "POST", act, 200, sseCT, sse(starting, connected, running), false},
		{"stream going on after its end", "POST", act, 200, sseCT, sse(starting, frame("error", "system", `,"error":"x"`), running), false},
		{"stream event name and status differ", "POST", act, 200, sseCT, sse(starting, [2]string{"finished", frame("error", "system", `,"error":"x"`)[1]}), false},
		{"stream log as system", "POST", act, 200, sseCT, sse(frame("running", "system", `,"message":{"message":"m","level":1}`), frame("error", "system", `,"error":"x"`)), false},
		{"stream error without message", "POST", act, 200, sseCT, sse(starting, frame("error", "system", "")), false},
		{"stream with a bad log level", "POST", act, 200, sseCT, sse(frame("running", "log", `,"message":{"message":"m","level":3}`), frame("error", "system", `,"error":"x"`)), false},
		{"stream of start", "POST", "/v1/sessions/start", 200, sseCT, sse(starting, frame("finished", "system", `,"result":{"sessionId":"s","cdpUrl":null,"available":true}`)), true},
		{"agent stream without actionId", "POST", "/v1/sessions/{id}/agentExecute", 200, sseCT, sse(starting, connected, frame("finished", "system",
			`,"result":{"success":true,"message":"m","actions":[],"completed":true}`)), true},
		{"empty stream", "POST", act, 200, sseCT, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.ValidateResponse(tt.method, tt.pattern, tt.status, tt.ct, []byte(tt.body))
			if (err == nil) != tt.ok {
				t.Errorf("ValidateResponse = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// The document's providers are the engine's (engine/llm/provider).
func TestOpenAPIProvidersAreTheEngines(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum []string `json:"enum"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Components.Schemas["ModelProvider"].Enum
	if diff := cmp.Diff(provider.Names, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("ModelProvider enum (-engine +document):\n%s", diff)
	}
}
