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
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine/action"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Schemas of the operation bodies, from the OpenAPI document.
var (
	actSchema      = requestSchema("ActRequest")
	observeSchema  = requestSchema("ObserveRequest")
	extractSchema  = requestSchema("ExtractRequest")
	navigateSchema = requestSchema("NavigateRequest")
)

// ActBody is a decoded act body: the request the runner takes, and the
// body's streamResponse (nil when absent: the x-stream-response header
// decides).
type ActBody struct {
	Request        rpc.ActRequest
	StreamResponse *bool
	// Cache is options.cache, nil when absent. The server resolves it,
	// with the bypass header and the session's and project's settings,
	// into Request.Options.Cache.
	Cache *CacheOption
}

// ObserveBody is a decoded observe body.
type ObserveBody struct {
	Request        rpc.ObserveRequest
	StreamResponse *bool
	// Cache is options.cache; see ActBody.
	Cache *CacheOption
}

// ExtractBody is a decoded extract body.
type ExtractBody struct {
	Request        rpc.ExtractRequest
	StreamResponse *bool
	// Cache is options.cache; see ActBody.
	Cache *CacheOption
}

// NavigateBody is a decoded navigate body.
type NavigateBody struct {
	Request        rpc.NavigateRequest
	StreamResponse *bool
}

// DecodeAct decodes and validates an act body. The operation decoders
// (DecodeAct, DecodeObserve, DecodeExtract, DecodeNavigate,
// DecodeAgentExecute) work like DecodeStart, against their schema in the
// OpenAPI document, then make the checks a schema cannot express; docs/api.md
// ("act, observe, extract, navigate") lists the rules.
func DecodeAct(body []byte) (*ActBody, *ValidationError) {
	doc, issues, verr := checkBody(body, actSchema)
	if verr != nil {
		return nil, verr
	}
	issues = append(issues, actIssues(doc)...)
	if len(issues) > 0 {
		return nil, &ValidationError{Issues: sortIssues(issues)}
	}
	var w actWire
	if verr := decodeChecked(body, &w); verr != nil {
		return nil, verr
	}
	return &ActBody{
		Request: rpc.ActRequest{
			Input: rpc.ActInput(w.Input),
			Options: rpc.ActOptions{
				Model:           w.Options.Model.config(),
				Variables:       w.Options.Variables.variables(),
				Timeout:         w.Options.Timeout,
				Selector:        w.Options.Selector,
				IgnoreSelectors: w.Options.IgnoreSelectors,
				SelfHeal:        w.Options.SelfHeal,
				CallSettings:    w.Options.settings(),
			},
			FrameID: deref(w.FrameID),
		},
		StreamResponse: w.StreamResponse,
		Cache:          w.Options.Cache,
	}, nil
}

// DecodeObserve decodes and validates an observe body; see DecodeAct.
func DecodeObserve(body []byte) (*ObserveBody, *ValidationError) {
	_, issues, verr := checkBody(body, observeSchema)
	if verr != nil {
		return nil, verr
	}
	if len(issues) > 0 {
		return nil, &ValidationError{Issues: sortIssues(issues)}
	}
	var w observeWire
	if verr := decodeChecked(body, &w); verr != nil {
		return nil, verr
	}
	return &ObserveBody{
		Request: rpc.ObserveRequest{
			Instruction: w.Instruction,
			Options: rpc.ObserveOptions{
				Model:           w.Options.Model.config(),
				Variables:       w.Options.Variables.variables(),
				Timeout:         w.Options.Timeout,
				Selector:        w.Options.Selector,
				IgnoreSelectors: w.Options.IgnoreSelectors,
				CallSettings:    w.Options.settings(),
			},
			FrameID: deref(w.FrameID),
		},
		StreamResponse: w.StreamResponse,
		Cache:          w.Options.Cache,
	}, nil
}

// DecodeExtract decodes and validates an extract body; see DecodeAct. The
// schema is passed on compact, as sent otherwise.
func DecodeExtract(body []byte) (*ExtractBody, *ValidationError) {
	doc, issues, verr := checkBody(body, extractSchema)
	if verr != nil {
		return nil, verr
	}
	issues = append(issues, extractIssues(doc)...)
	if len(issues) > 0 {
		return nil, &ValidationError{Issues: sortIssues(issues)}
	}
	var w extractWire
	if verr := decodeChecked(body, &w); verr != nil {
		return nil, verr
	}
	req := rpc.ExtractRequest{
		Instruction: w.Instruction,
		Options: rpc.ExtractOptions{
			Model:           w.Options.Model.config(),
			Timeout:         w.Options.Timeout,
			Selector:        w.Options.Selector,
			IgnoreSelectors: w.Options.IgnoreSelectors,
			Screenshot:      w.Options.Screenshot,
			CallSettings:    w.Options.settings(),
		},
		FrameID: deref(w.FrameID),
	}
	if len(w.Schema) > 0 {
		schema := w.Schema.Clone()
		if err := schema.Compact(); err != nil {
			return nil, &ValidationError{Issues: []Issue{{Path: "schema", Message: "does not decode: " + err.Error()}}}
		}
		req.Schema = []byte(schema)
	}
	return &ExtractBody{Request: req, StreamResponse: w.StreamResponse, Cache: w.Options.Cache}, nil
}

// DecodeNavigate decodes and validates a navigate body; see DecodeAct.
func DecodeNavigate(body []byte) (*NavigateBody, *ValidationError) {
	doc, issues, verr := checkBody(body, navigateSchema)
	if verr != nil {
		return nil, verr
	}
	issues = append(issues, navigateIssues(doc)...)
	if len(issues) > 0 {
		return nil, &ValidationError{Issues: sortIssues(issues)}
	}
	var w navigateWire
	if verr := decodeChecked(body, &w); verr != nil {
		return nil, verr
	}
	return &NavigateBody{
		Request: rpc.NavigateRequest{
			URL: w.URL,
			Options: rpc.NavigateOptions{
				Referer:   w.Options.Referer,
				Timeout:   w.Options.Timeout,
				WaitUntil: rpc.WaitUntil(w.Options.WaitUntil),
			},
			FrameID: deref(w.FrameID),
		},
		StreamResponse: w.StreamResponse,
	}, nil
}

// The wire forms of the bodies. They hold only the fields their schema
// knows: an unknown field is ignored by the schema, so it must not reach a
// Go type that could refuse it.
type (
	actWire struct {
		Input          actInputWire   `json:"input"`
		Options        actOptionsWire `json:"options"`
		FrameID        *string        `json:"frameId"`
		StreamResponse *bool          `json:"streamResponse"`
	}
	actOptionsWire struct {
		Model           *modelWire    `json:"model"`
		Variables       variablesWire `json:"variables"`
		Timeout         *float64      `json:"timeout"`
		Selector        string        `json:"selector"`
		IgnoreSelectors []string      `json:"ignoreSelectors"`
		SelfHeal        *bool         `json:"selfHeal"`
		Cache           *CacheOption  `json:"cache"`
		settingsWire
	}
	// settingsWire are the session settings an operation may override.
	settingsWire struct {
		SystemPrompt *string `json:"systemPrompt"`
		// A number: 2000.0 is a valid integer to the schema.
		DOMSettleTimeoutMs *float64 `json:"domSettleTimeoutMs"`
	}
	observeWire struct {
		Instruction    string             `json:"instruction"`
		Options        observeOptionsWire `json:"options"`
		FrameID        *string            `json:"frameId"`
		StreamResponse *bool              `json:"streamResponse"`
	}
	observeOptionsWire struct {
		Model           *modelWire    `json:"model"`
		Variables       variablesWire `json:"variables"`
		Timeout         *float64      `json:"timeout"`
		Selector        string        `json:"selector"`
		IgnoreSelectors []string      `json:"ignoreSelectors"`
		Cache           *CacheOption  `json:"cache"`
		settingsWire
	}
	extractWire struct {
		Instruction    string             `json:"instruction"`
		Schema         jsontext.Value     `json:"schema"`
		Options        extractOptionsWire `json:"options"`
		FrameID        *string            `json:"frameId"`
		StreamResponse *bool              `json:"streamResponse"`
	}
	extractOptionsWire struct {
		Model           *modelWire   `json:"model"`
		Timeout         *float64     `json:"timeout"`
		Selector        string       `json:"selector"`
		IgnoreSelectors []string     `json:"ignoreSelectors"`
		Screenshot      *bool        `json:"screenshot"`
		Cache           *CacheOption `json:"cache"`
		settingsWire
	}
	navigateWire struct {
		URL            string              `json:"url"`
		Options        navigateOptionsWire `json:"options"`
		FrameID        *string             `json:"frameId"`
		StreamResponse *bool               `json:"streamResponse"`
	}
	navigateOptionsWire struct {
		Referer   string   `json:"referer"`
		Timeout   *float64 `json:"timeout"`
		WaitUntil string   `json:"waitUntil"`
	}
)

// settings are the runner's form of the overrides.
func (w settingsWire) settings() rpc.CallSettings {
	return rpc.CallSettings{SystemPrompt: w.SystemPrompt, DOMSettleTimeoutMs: w.DOMSettleTimeoutMs}
}

// actInputWire is act's input, `string | Action`. It has rpc.ActInput's
// fields without its methods, whose decoding is case-insensitive.
type actInputWire rpc.ActInput

// UnmarshalJSON decodes either form.
func (in *actInputWire) UnmarshalJSON(b []byte) error {
	*in = actInputWire{}
	if jsontext.Value(b).Kind() == '"' {
		return unmarshalField(b, "input", &in.Instruction)
	}
	var a struct {
		Selector    string `json:"selector"`
		Description string `json:"description"`
		// A number: 12.0 is a valid integer to the schema, not to int64.
		BackendNodeID *float64 `json:"backendNodeId"`
		Method        string   `json:"method"`
		Arguments     []string `json:"arguments"`
	}
	if err := unmarshalField(b, "input", &a); err != nil {
		return err
	}
	in.Action = &rpc.Action{Selector: a.Selector, Description: a.Description, Method: a.Method, Arguments: a.Arguments}
	if a.BackendNodeID != nil {
		id := int64(*a.BackendNodeID)
		in.Action.BackendNodeID = &id
	}
	return nil
}

// modelWire is a model, `string | ModelConfig`.
type modelWire struct{ cfg rpc.ModelConfig }

// modelObject has rpc.ModelConfig's fields without its methods, whose
// decoding is case-insensitive.
type modelObject rpc.ModelConfig

// UnmarshalJSON decodes either form: a string is the model's name.
func (m *modelWire) UnmarshalJSON(b []byte) error {
	m.cfg = rpc.ModelConfig{}
	if jsontext.Value(b).Kind() == '"' {
		return unmarshalField(b, "model", &m.cfg.ModelName)
	}
	var obj modelObject
	if err := unmarshalField(b, "model", &obj); err != nil {
		return err
	}
	m.cfg = rpc.ModelConfig(obj)
	return nil
}

// config is the model config, nil when the body gave none.
func (m *modelWire) config() *rpc.ModelConfig {
	if m == nil {
		return nil
	}
	cfg := m.cfg
	return &cfg
}

// variablesWire are the variables of a body.
type variablesWire map[string]variableWire

// variableWire is a variable's value: a string, number or boolean, or
// {value, description}.
type variableWire rpc.Variable

// UnmarshalJSON decodes any of the forms.
func (v *variableWire) UnmarshalJSON(b []byte) error {
	*v = variableWire{}
	if jsontext.Value(b).Kind() != '{' {
		s, err := primitiveText(b)
		v.Value = s
		return err
	}
	var obj struct {
		Value       jsontext.Value `json:"value"`
		Description string         `json:"description"`
	}
	if err := unmarshalField(b, "variable", &obj); err != nil {
		return err
	}
	s, err := primitiveText(obj.Value)
	*v = variableWire{Value: s, Description: obj.Description}
	return err
}

// variables are the runner's variables, nil when there are none.
func (w variablesWire) variables() rpc.Variables {
	if len(w) == 0 {
		return nil
	}
	out := make(rpc.Variables, len(w))
	for k, v := range w {
		out[k] = rpc.Variable(v)
	}
	return out
}

// primitiveText is the text of a JSON string, number or boolean. Numbers
// are written as JavaScript's String() writes them, which is what the
// reference substitutes for %name%: 1.0 is "1", 1e21 is "1e+21".
func primitiveText(b []byte) (string, error) {
	switch jsontext.Value(b).Kind() {
	case '"':
		var s string
		err := unmarshalField(b, "variable", &s)
		return s, err
	case 't':
		return "true", nil
	case 'f':
		return "false", nil
	case '0':
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
		if err != nil {
			return "", fmt.Errorf("variable: %w", err)
		}
		return jsNumber(f), nil
	}
	return "", fmt.Errorf("variable must be a string, a number or a boolean, not %s", jsontext.Value(b).Kind())
}

// jsNumber formats f as JavaScript's Number.prototype.toString does.
func jsNumber(f float64) string {
	if f == 0 {
		return "0" // -0 too
	}
	abs := math.Abs(f)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes e+21 and e-07; JavaScript writes e+21 and e-7.
		mant, exp, _ := strings.Cut(s, "e")
		sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
		return mant + "e" + sign + digits
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// unmarshalField decodes a value of a union with the case-sensitive JSON v2
// decoder, like the rest of the body.
func unmarshalField(b []byte, field string, v any) error {
	if err := jsonv2.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// deref is the string p points to, "" for nil (an absent or null frameId).
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// actIssues checks an input action's method, which the schema only bounds.
func actIssues(doc any) []Issue {
	root, _ := doc.(map[string]any)
	input, _ := root["input"].(map[string]any)
	method, ok := input["method"].(string)
	if _, known := action.Canonical(method); !ok || method == "" || known {
		return nil
	}
	return []Issue{{Path: "input.method", Message: fmt.Sprintf("must be one of %s; got %s", strings.Join(action.Methods, ", "), strconv.Quote(method))}}
}

// navigateIssues checks the url by the runner's rule
// (rpc.NavigateURLProblem).
func navigateIssues(doc any) []Issue {
	root, _ := doc.(map[string]any)
	raw, ok := root["url"].(string)
	if !ok || raw == "" {
		return nil
	}
	if msg := rpc.NavigateURLProblem(raw); msg != "" {
		return []Issue{{Path: "url", Message: msg}}
	}
	return nil
}

// extractSchemaURL is where a caller's extract schema is filed for
// compiling; only references inside it resolve.
const extractSchemaURL = "https://browserfleet.io/v1/extract-schema.json"

// extractIssues requires an instruction with a schema, and a schema that
// compiles.
func extractIssues(doc any) []Issue {
	root, _ := doc.(map[string]any)
	schema, ok := root["schema"].(map[string]any)
	if !ok {
		// Absent, or of the wrong type: the schema said so.
		return nil
	}
	var issues []Issue
	if instr, _ := root["instruction"].(string); instr == "" {
		issues = append(issues, Issue{Path: "schema", Message: "requires an instruction"})
	}
	if err := compileCallerSchema(schema); err != nil {
		issues = append(issues, Issue{Path: "schema", Message: "is not a valid JSON Schema: " + err.Error()})
	}
	return issues
}

// compileCallerSchema compiles a caller's JSON Schema as the runner will:
// draft 2020-12 unless its $schema names another, formats asserted. Unlike
// the runner's compiler it loads nothing: a reference outside the schema
// is an error here, where the runner would read files of its pod.
func compileCallerSchema(schema map[string]any) error {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(extractSchemaURL, schema); err != nil {
		return errors.New(compileMessage(err))
	}
	if _, err := c.Compile(extractSchemaURL); err != nil {
		return errors.New(compileMessage(err))
	}
	return nil
}

// compileMessage words a schema compile error on one line, locating
// problems by JSON pointer within the caller's schema.
func compileMessage(err error) string {
	var sve *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	var load *jsonschema.LoadURLError
	switch {
	case errors.As(err, &sve) && errors.As(sve.Err, &verr):
		var parts []string
		for _, l := range leafErrors(verr) {
			parts = append(parts, "at /"+strings.Join(l.InstanceLocation, "/")+": "+kindMessage(l))
		}
		return strings.Join(parts, "; ")
	case errors.As(err, &load):
		return fmt.Sprintf("references %s; only references within the schema (#...) are supported", load.URL)
	}
	msg := strings.ReplaceAll(err.Error(), extractSchemaURL, "")
	return strings.Join(strings.Fields(msg), " ")
}

// Metadata is data.metadata of an act, observe or extract success: how the
// result was made, in the shape of the client library's result metadata.
type Metadata struct {
	// Cache is what the server-side cache did; its optional fields appear
	// only when set, so that clients that know only status keep working.
	Cache cache.Report `json:"cache"`
	// Usage is the call's model usage, all zero when no inference ran (a
	// cache hit, an input action, pageText).
	Usage rpc.Usage `json:"usage"`
}

// NewMetadata is the metadata of a result: the runner's cache report (nil,
// no lookup ran, is DISABLED) and the call's usage.
func NewMetadata(report *cache.Report, usage rpc.Usage) *Metadata {
	md := &Metadata{Cache: cache.Disabled(), Usage: usage}
	if report != nil {
		md.Cache = *report
	}
	return md
}

// ComputedMetadata is the metadata of a result computed with no cache
// lookup, which cost usage.
func ComputedMetadata(usage rpc.Usage) *Metadata { return NewMetadata(nil, usage) }

// The cache's part of Metadata, under the names this package had before
// package cache defined them.
type (
	// CacheMetadata is cache.Report.
	CacheMetadata = cache.Report
	// CacheStatus is cache.Status.
	CacheStatus = cache.Status
	// TokensSaved is cache.TokensSaved.
	TokensSaved = cache.TokensSaved
)

// Cache statuses.
const (
	CacheHit      = cache.StatusHit
	CacheMiss     = cache.StatusMiss
	CacheDisabled = cache.StatusDisabled
)
