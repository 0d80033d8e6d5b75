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

package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"time"
	"unicode/utf8"

	"github.com/browserfleet/browserfleet/cache"
)

// The request and result types below mirror the bodies of the /v1 API
// (DESIGN.md) without the path's session id and without streamResponse: the
// API pod forwards a body nearly verbatim and the runner answers with the
// result the API wraps in {"success": true, "data": {"result": ...}}.

// ModelConfig selects the model of one call and says how to reach it. Every
// field is optional: an empty field takes the session's default.
//
// It holds a secret (APIKey, and maybe Headers): never log it as is.
// LogValue redacts them.
type ModelConfig struct {
	// ModelName is "provider/model", for example "openai/gpt-4.1-mini".
	ModelName string `json:"modelName,omitempty"`
	// Provider overrides the provider taken from ModelName's prefix.
	Provider string `json:"provider,omitempty"`
	// APIKey is the model provider's API key.
	APIKey string `json:"apiKey,omitempty"`
	// BaseURL overrides the provider's endpoint.
	BaseURL string `json:"baseURL,omitempty"`
	// Headers are extra headers sent to the provider.
	Headers map[string]string `json:"headers,omitempty"`
	// Auth is service-account style authentication (Google Vertex AI).
	Auth *ModelAuth `json:"auth,omitempty"`
	// ProviderOptions holds one entry keyed by the provider variant name.
	ProviderOptions map[string]ProviderOptions `json:"providerOptions,omitempty"`
}

// modelConfigFields has ModelConfig's fields without its methods, so that
// (Un)MarshalJSON can use the default encoding.
type modelConfigFields ModelConfig

// UnmarshalJSON accepts the object form and, as the reference server does,
// a bare model name: "model": "openai/gpt-4.1-mini".
func (m *ModelConfig) UnmarshalJSON(data []byte) error {
	var f modelConfigFields
	kind, err := decodeStringOrObject(data, &f.ModelName, &f)
	if err != nil {
		return err
	}
	if kind == jsonOther {
		// null leaves the zero config; anything else is refused by the
		// object decoder with its own message.
		if err := json.Unmarshal(data, &f); err != nil {
			return err
		}
	}
	*m = ModelConfig(f)
	return nil
}

// LogValue logs the model's name and endpoint, never its key or headers'
// values.
func (m ModelConfig) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("modelName", m.ModelName)}
	if m.Provider != "" {
		attrs = append(attrs, slog.String("provider", m.Provider))
	}
	if m.BaseURL != "" {
		attrs = append(attrs, slog.String("baseURL", m.BaseURL))
	}
	if m.APIKey != "" {
		attrs = append(attrs, slog.String("apiKey", "[redacted]"))
	}
	if len(m.Headers) > 0 {
		attrs = append(attrs, slog.Int("headers", len(m.Headers)))
	}
	return slog.GroupValue(attrs...)
}

// ModelAuth is service-account authentication for a model provider.
type ModelAuth struct {
	Type           string            `json:"type,omitempty"`
	Credentials    map[string]string `json:"credentials,omitempty"`
	Scopes         string            `json:"scopes,omitempty"`
	ProjectID      string            `json:"projectId,omitempty"`
	UniverseDomain string            `json:"universeDomain,omitempty"`
}

// ProviderOptions are the settings of one provider variant.
type ProviderOptions struct {
	Project  string            `json:"project,omitempty"`
	Location string            `json:"location,omitempty"`
	BaseURL  string            `json:"baseURL,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
}

// Variable is the value of a variable that an instruction refers to as
// %name%. On the wire it is a bare string or {"value": ..., "description":
// ...}; a Variable without a description is written as a bare string.
type Variable struct {
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
}

type variableFields Variable

// MarshalJSON writes a bare string unless there is a description.
func (v Variable) MarshalJSON() ([]byte, error) {
	if v.Description == "" {
		return json.Marshal(v.Value)
	}
	return json.Marshal(variableFields(v))
}

// UnmarshalJSON reads a string or an object with value and description.
func (v *Variable) UnmarshalJSON(data []byte) error {
	var f variableFields
	kind, err := decodeStringOrObject(data, &f.Value, &f)
	if err != nil {
		return err
	}
	if kind == jsonOther {
		return fmt.Errorf("variable must be a string or an object with value and description, not %s", jsonKind(data))
	}
	*v = Variable(f)
	return nil
}

// jsonUnionKind says which form a string-or-object value took.
type jsonUnionKind int

const (
	jsonOther jsonUnionKind = iota
	jsonString
	jsonObject
)

// decodeStringOrObject decodes a value that the wire allows as a string, into
// s, or as an object, into obj. Any other value is left undecoded and
// reported as jsonOther, for the caller to accept (null) or refuse in its
// own words.
func decodeStringOrObject(data []byte, s *string, obj any) (jsonUnionKind, error) {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) > 0 && data[0] == '"':
		return jsonString, json.Unmarshal(data, s)
	case len(data) > 0 && data[0] == '{':
		return jsonObject, json.Unmarshal(data, obj)
	}
	return jsonOther, nil
}

// Variables maps a variable name to its value.
type Variables map[string]Variable

// Action is one action on an element: what observe returns and what act
// performs or reports.
type Action struct {
	// Selector locates the element: an XPath ("xpath=/html/body/button")
	// or a CSS selector.
	Selector string `json:"selector"`
	// Description says what the action does, for people and models.
	Description string `json:"description"`
	// BackendNodeID is the element's DevTools backend node id, when known.
	BackendNodeID *int64 `json:"backendNodeId,omitempty"`
	// Method is the action, for example "click", "fill" or "press".
	Method string `json:"method,omitempty"`
	// Arguments are the method's arguments, for example the text to fill.
	Arguments []string `json:"arguments,omitempty"`
}

// ActInput is act's input: a natural-language instruction or an Action to
// perform as is. Exactly one of Instruction and Action is set; on the wire it
// is a JSON string or an Action object.
type ActInput struct {
	Instruction string
	Action      *Action
}

// MarshalJSON writes the Action when there is one, else the instruction.
func (in ActInput) MarshalJSON() ([]byte, error) {
	if in.Action != nil {
		return json.Marshal(in.Action)
	}
	return json.Marshal(in.Instruction)
}

// UnmarshalJSON reads a string or an Action object.
func (in *ActInput) UnmarshalJSON(data []byte) error {
	var (
		text string
		a    Action
	)
	kind, err := decodeStringOrObject(data, &text, &a)
	switch {
	case err != nil:
		return err
	case kind == jsonString:
		*in = ActInput{Instruction: text}
	case kind == jsonObject:
		*in = ActInput{Action: &a}
	case bytes.Equal(bytes.TrimSpace(data), []byte("null")):
		*in = ActInput{}
	default:
		return fmt.Errorf("input must be an instruction string or an action object, not %s", jsonKind(data))
	}
	return nil
}

// IsZero reports whether neither an instruction nor an action is set.
func (in ActInput) IsZero() bool { return in.Instruction == "" && in.Action == nil }

// ActRequest is the body of POST /v1/act.
type ActRequest struct {
	Input   ActInput   `json:"input"`
	Options ActOptions `json:"options,omitzero"`
	// FrameID is the DevTools id of the frame to act in; empty is the main
	// frame.
	FrameID string `json:"frameId,omitempty"`
}

// ActOptions are act's options.
type ActOptions struct {
	Model     *ModelConfig `json:"model,omitempty"`
	Variables Variables    `json:"variables,omitempty"`
	// Timeout bounds the operation, in milliseconds.
	Timeout *float64 `json:"timeout,omitempty"`
	// Selector scopes what the model sees to the element it matches (the
	// element included); the action is chosen within it.
	Selector string `json:"selector,omitempty"`
	// IgnoreSelectors leave out the elements they match.
	IgnoreSelectors []string `json:"ignoreSelectors,omitempty"`
	// SelfHeal, when set, overrides the session's selfHeal for this call.
	SelfHeal *bool `json:"selfHeal,omitempty"`
	// Cache is the server-side cache setting the API resolved for the
	// call; nil: no lookup, no write (DISABLED).
	Cache *cache.Setting `json:"cache,omitempty"`
	CallSettings
}

// CallSettings override the session's engine settings for one call: an
// instance of the client library sends its own with each call, as the
// session was started before the instance. A nil field keeps the
// session's.
type CallSettings struct {
	// SystemPrompt replaces the session's systemPrompt; "" is none.
	SystemPrompt *string `json:"systemPrompt,omitempty"`
	// DOMSettleTimeoutMs replaces the session's domSettleTimeoutMs; 0 is
	// the engine's default.
	DOMSettleTimeoutMs *float64 `json:"domSettleTimeoutMs,omitempty"`
}

// Bounds of CallSettings: those of the session's own systemPrompt and
// domSettleTimeoutMs.
const (
	// MaxSystemPromptLength bounds SystemPrompt, in characters.
	MaxSystemPromptLength = 32768
	// MaxDOMSettleTimeoutMs bounds DOMSettleTimeoutMs: 10 minutes.
	MaxDOMSettleTimeoutMs = 600000
)

// Problem says what is wrong with the settings, naming the field under
// "options.", or "" when nothing is.
func (s CallSettings) Problem() string {
	if p := s.SystemPrompt; p != nil && utf8.RuneCountInString(*p) > MaxSystemPromptLength {
		return fmt.Sprintf("options.systemPrompt must be at most %d characters long", MaxSystemPromptLength)
	}
	if ms := s.DOMSettleTimeoutMs; ms != nil && (math.IsNaN(*ms) || *ms < 0 || *ms > MaxDOMSettleTimeoutMs || *ms != math.Trunc(*ms)) {
		return fmt.Sprintf("options.domSettleTimeoutMs must be a whole number of milliseconds from 0 to %d", MaxDOMSettleTimeoutMs)
	}
	return ""
}

// ActResult is act's result.
type ActResult struct {
	Success           bool     `json:"success"`
	Message           string   `json:"message"`
	ActionDescription string   `json:"actionDescription"`
	Actions           []Action `json:"actions"`
}

// ObserveRequest is the body of POST /v1/observe.
type ObserveRequest struct {
	Instruction string         `json:"instruction,omitempty"`
	Options     ObserveOptions `json:"options,omitzero"`
	FrameID     string         `json:"frameId,omitempty"`
}

// ObserveOptions are observe's options.
type ObserveOptions struct {
	Model     *ModelConfig `json:"model,omitempty"`
	Variables Variables    `json:"variables,omitempty"`
	// Timeout bounds the operation, in milliseconds.
	Timeout *float64 `json:"timeout,omitempty"`
	// Selector limits the observation to the element it matches.
	Selector string `json:"selector,omitempty"`
	// IgnoreSelectors leave out the elements they match.
	IgnoreSelectors []string `json:"ignoreSelectors,omitempty"`
	// Cache is the server-side cache setting the API resolved for the
	// call; nil: no lookup, no write (DISABLED).
	Cache *cache.Setting `json:"cache,omitempty"`
	CallSettings
}

// ExtractRequest is the body of POST /v1/extract. With Schema, the result is
// a value valid against it; with only Instruction, {"extraction": "..."};
// with neither, {"pageText": "..."}. A schema without an instruction is a bad
// request.
type ExtractRequest struct {
	Instruction string `json:"instruction,omitempty"`
	// Schema is a JSON Schema of the result.
	Schema  json.RawMessage `json:"schema,omitempty"`
	Options ExtractOptions  `json:"options,omitzero"`
	FrameID string          `json:"frameId,omitempty"`
}

// ExtractOptions are extract's options.
type ExtractOptions struct {
	Model *ModelConfig `json:"model,omitempty"`
	// Timeout bounds the operation, in milliseconds.
	Timeout         *float64 `json:"timeout,omitempty"`
	Selector        string   `json:"selector,omitempty"`
	IgnoreSelectors []string `json:"ignoreSelectors,omitempty"`
	// Screenshot sends a screenshot of the page to the model too.
	Screenshot *bool `json:"screenshot,omitempty"`
	// Cache is the server-side cache setting the API resolved for the
	// call; nil: no lookup, no write (DISABLED).
	Cache *cache.Setting `json:"cache,omitempty"`
	CallSettings
}

// WaitUntil is the page event a navigation waits for.
type WaitUntil string

// Events a navigation can wait for.
const (
	// WaitUntilLoad waits for the load event (the default).
	WaitUntilLoad WaitUntil = "load"
	// WaitUntilDOMContentLoaded waits for DOMContentLoaded.
	WaitUntilDOMContentLoaded WaitUntil = "domcontentloaded"
	// WaitUntilNetworkIdle waits until the page has had no network
	// connections for 500 ms.
	WaitUntilNetworkIdle WaitUntil = "networkidle"
)

// Valid reports whether w is empty (the default, load) or a known event.
func (w WaitUntil) Valid() bool {
	switch w {
	case "", WaitUntilLoad, WaitUntilDOMContentLoaded, WaitUntilNetworkIdle:
		return true
	}
	return false
}

// NavigateRequest is the body of POST /v1/navigate.
type NavigateRequest struct {
	URL     string          `json:"url"`
	Options NavigateOptions `json:"options,omitzero"`
	FrameID string          `json:"frameId,omitempty"`
}

// NavigateOptions are navigate's options.
type NavigateOptions struct {
	// Referer is sent as the navigation's Referer header.
	Referer string `json:"referer,omitempty"`
	// Timeout bounds the navigation, in milliseconds (default 30000).
	Timeout   *float64  `json:"timeout,omitempty"`
	WaitUntil WaitUntil `json:"waitUntil,omitempty"`
}

// NavigateResult is navigate's result.
type NavigateResult struct {
	// URL is the page's URL once loaded, after redirects.
	URL string `json:"url"`
	// Status is the HTTP status of the document, 0 when it did not come
	// from HTTP (about:, data:, a same-document navigation).
	Status int64 `json:"status,omitempty"`
	// OK is true unless Status is set and outside 200-299.
	OK bool `json:"ok"`
}

// Usage counts the model tokens and inference time an operation spent.
type Usage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	ReasoningTokens   int64 `json:"reasoningTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	InferenceTimeMs   int64 `json:"inferenceTimeMs"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + o.InputTokens,
		OutputTokens:      u.OutputTokens + o.OutputTokens,
		ReasoningTokens:   u.ReasoningTokens + o.ReasoningTokens,
		CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		InferenceTimeMs:   u.InferenceTimeMs + o.InferenceTimeMs,
	}
}

// Result is the body of a successful call: the operation's result and the
// model usage it took. T is *ActResult, []Action, json.RawMessage (extract)
// or *NavigateResult.
type Result[T any] struct {
	Result T     `json:"result"`
	Usage  Usage `json:"usage"`
	// Cache is what the server-side cache did for act, observe and
	// extract; nil is DISABLED.
	Cache *cache.Report `json:"cache,omitempty"`
}

// LogLevel is a log line's level, as in the /v1 API's log objects.
type LogLevel int

// Log levels.
const (
	// LogLevelError is an error the operation may recover from.
	LogLevelError LogLevel = 0
	// LogLevelInfo is normal progress.
	LogLevelInfo LogLevel = 1
	// LogLevelDebug is detail.
	LogLevelDebug LogLevel = 2
)

// LogLine is one progress message of an operation, the log object of the
// /v1 API's "running" events.
type LogLine struct {
	Category  string                    `json:"category,omitempty"`
	Message   string                    `json:"message"`
	Level     LogLevel                  `json:"level"`
	Timestamp time.Time                 `json:"timestamp,omitzero"`
	Auxiliary map[string]AuxiliaryValue `json:"auxiliary,omitempty"`
}

// AuxiliaryValue is one detail of a log line: a value and what kind of value
// it is ("string", "integer", "float", "boolean", "object", "html").
type AuxiliaryValue struct {
	Value string `json:"value"`
	Type  string `json:"type"`
}

// StreamLineType says what a StreamLine carries.
type StreamLineType string

// Types of stream lines.
const (
	// StreamLog carries a LogLine.
	StreamLog StreamLineType = "log"
	// StreamResult carries a Result and ends the stream.
	StreamResult StreamLineType = "result"
	// StreamError carries an Error and ends the stream.
	StreamError StreamLineType = "error"
)

// StreamLine is one line of a streamed response (Accept:
// application/x-ndjson): zero or more "log" lines, then exactly one "result"
// or "error" line. A streamed response has status 200 once the operation is
// under way; failures found before (authentication, a bad body, a browser
// that is not up) answer with their status and an Error body instead.
type StreamLine struct {
	Type StreamLineType `json:"type"`
	// Data is a LogLine, a Result or an Error, as Type says.
	Data json.RawMessage `json:"data"`
}

// Health is the body of GET /healthz: 200 with status "ready", or 503 with
// "starting", "crashed" or "stopping" and the reason.
type Health struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Health statuses.
const (
	HealthStarting = "starting"
	HealthReady    = "ready"
	HealthCrashed  = "crashed"
	HealthStopping = "stopping"
)

// jsonKind names the kind of a JSON value for an error message, without
// quoting the value (it may be a secret someone misplaced).
func jsonKind(data []byte) string {
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '"':
		return "a string"
	default:
		return "a number"
	}
}
