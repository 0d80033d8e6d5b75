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

package client

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// CreateOptions configure an instance. Browser is required; everything else
// has a default.
type CreateOptions struct {
	// Browser is the handle the instance drives, from LaunchLocalBrowser,
	// ConnectLocalBrowser, LaunchCloudBrowser or ConnectCloudBrowser. It
	// backs at most one open instance at a time.
	Browser *Browser
	// APIKey is the service API key that the managed services (model
	// gateway, server-side cache) use. A cloud handle brings its own; this
	// one, when set, takes its place for the instance's calls.
	APIKey string
	// APIURL is the service origin, without the /v1 suffix; empty takes
	// the cloud handle's, or $BROWSERFLEET_API_URL.
	APIURL string
	// Model is the default model of act, observe and extract; a call's own
	// Model takes its place. It cannot be set with Generate.
	Model *ModelConfig
	// Generate, when set, answers every model call of the instance instead
	// of a provider: the caller brings its own model. Local handles only,
	// since a cloud handle's engine runs next to the browser.
	Generate GenerateFunc
	// Telemetry exports a trace span per operation; nil exports nothing.
	Telemetry *TelemetryConfig
	// SystemPrompt is added to the system instructions of every model call.
	SystemPrompt string
	// SelfHeal re-infers an action once when its recorded selector no
	// longer resolves or the action fails.
	SelfHeal bool
	// DOMSettleTimeoutMs bounds the wait for the DOM to settle before each
	// operation, in milliseconds; zero means the engine's default (10 s).
	DOMSettleTimeoutMs int
	// Cache is the instance's server-side cache setting for act, observe
	// and extract; a call's own Cache takes its place. nil is enabled with
	// the service's threshold.
	Cache *Caching
	// Logging says which of the library's logs are written, how, and
	// where; nil writes warnings and errors to standard error as text.
	Logging *LoggingConfig
}

// ModelConfig names a model and how to reach it. The provider key and
// headers are sent to the provider only: never to the service's logs, an
// error or a trace.
type ModelConfig struct {
	// ModelName is the provider-prefixed model, such as
	// "openai/gpt-4.1-mini", "anthropic/claude-sonnet-4-5" or
	// "google/gemini-2.5-flash". Required.
	ModelName string
	// APIKey is the model provider's key.
	APIKey string
	// Headers are added to every request to the provider.
	Headers map[string]string
	// BaseURL overrides the provider's endpoint: an OpenAI-compatible
	// server (vLLM, Ollama, LiteLLM) is "openai/<model>" with a BaseURL
	// such as "http://localhost:11434/v1".
	BaseURL string
}

// GenerateFunc answers one model call of the engine with the caller's own
// model. It is called from the goroutine of the operation that needs it,
// never concurrently for one instance.
type GenerateFunc func(ctx context.Context, req GenerateRequest) (GenerateResult, error)

// GenerateRequest is one model call of the engine.
type GenerateRequest struct {
	// Model is the model name the operation asked for: the call's or the
	// instance's ModelConfig.ModelName, empty when neither is set.
	Model string
	// Messages are the conversation, system instructions first.
	Messages []GenerateMessage
	// Schema is the JSON Schema the answer must be valid against.
	Schema json.RawMessage
	// SchemaName names the answer's schema, for providers that want one.
	SchemaName string
}

// GenerateMessage is one message of a GenerateRequest.
type GenerateMessage struct {
	// Role is "system", "user" or "assistant".
	Role string
	// Text is the message's text.
	Text string
	// Images are the images of a user message (PNG screenshots when the
	// operation uses one), in order after Text.
	Images []GenerateImage
}

// GenerateImage is an image of a GenerateMessage.
type GenerateImage struct {
	// MIMEType is the image's type, such as "image/png".
	MIMEType string
	// Data is the encoded image.
	Data []byte
}

// GenerateResult is the caller's answer to a GenerateRequest.
type GenerateResult struct {
	// Text is the answer: a JSON document valid against the request's
	// Schema.
	Text string
	// Usage is what the call cost; it feeds the result's Usage and Metrics.
	Usage Usage
}

// Caching is a cache setting: enabled or not, and the identical-result count
// required before a hit is served. Make one with CacheEnabled or
// CacheWithThreshold.
type Caching struct {
	enabled   bool
	threshold int
	// thresholdSet marks CacheWithThreshold, whose threshold must be
	// positive.
	thresholdSet bool
}

// CacheEnabled turns the server-side cache on or off.
func CacheEnabled(enabled bool) *Caching { return &Caching{enabled: enabled} }

// CacheWithThreshold turns the server-side cache on with a threshold: the
// number of identical results required before a hit is served. It must be
// positive; an operation given another value fails naming the field.
func CacheWithThreshold(threshold int) *Caching {
	return &Caching{enabled: true, threshold: threshold, thresholdSet: true}
}

// Enabled reports whether the setting turns the cache on.
func (c *Caching) Enabled() bool { return c != nil && c.enabled }

// Threshold is the setting's threshold; zero when it leaves the service's.
func (c *Caching) Threshold() int {
	if c == nil {
		return 0
	}
	return c.threshold
}

// Variables are values an instruction uses by name: the model sees
// %name% and the description, never the value, which the engine fills in
// when it performs the action.
type Variables map[string]Variable

// Variable is one entry of Variables.
type Variable struct {
	Value       string
	Description string
}

// ActOptions are the options of Act. The zero value (or nil) acts on the
// active page with the instance's model and settings.
type ActOptions struct {
	// Cache overrides the instance's cache setting for this call.
	Cache *Caching
	// IgnoreLocators are elements left out of what the model sees.
	IgnoreLocators []*Locator
	// Locator scopes the action to an element: the model chooses within
	// it (the element itself included).
	Locator *Locator
	// Model overrides the instance's model for this call.
	Model *ModelConfig
	// Page is the page to act on; nil is the active page, or the
	// Locator's page when Locator is set.
	Page *Page
	// Timeout bounds the call; zero leaves only ctx.
	Timeout time.Duration
	// Variables are the values the instruction may use by name.
	Variables Variables
}

// ObserveOptions are the options of Observe.
type ObserveOptions struct {
	Cache          *Caching
	IgnoreLocators []*Locator
	// Locator scopes the snapshot to an element's subtree. A "text="
	// locator is refused.
	Locator   *Locator
	Model     *ModelConfig
	Page      *Page
	Timeout   time.Duration
	Variables Variables
}

// ExtractOptions are the options of Extract.
type ExtractOptions struct {
	Cache          *Caching
	IgnoreLocators []*Locator
	// Locator scopes the snapshot to an element's subtree. A "text="
	// locator is refused.
	Locator *Locator
	Model   *ModelConfig
	Page    *Page
	Timeout time.Duration
	// Screenshot lets the operation show the model a screenshot of the
	// page besides its text.
	Screenshot bool
}

// BatchOptions are the options of ExperimentalBatch.
type BatchOptions struct {
	// Timeout is the batch's overall deadline; zero means
	// DefaultBatchTimeout.
	Timeout time.Duration
	// Page is the page the script sees as batch.page; nil is the active
	// page when the batch starts.
	Page *Page
}

// DefaultBatchTimeout is ExperimentalBatch's deadline when BatchOptions say
// none.
const DefaultBatchTimeout = 30 * time.Second

// LogLevel is the least severe level of the logs written.
type LogLevel string

// Log levels, from quiet to verbose.
const (
	LogLevelOff   LogLevel = "off"
	LogLevelError LogLevel = "error"
	LogLevelWarn  LogLevel = "warn"
	LogLevelInfo  LogLevel = "info"
	LogLevelDebug LogLevel = "debug"
)

// LogFormat is how logs are written to Output.
type LogFormat string

// Log formats.
const (
	LogFormatText LogFormat = "text"
	LogFormatJSON LogFormat = "json"
)

// LoggingConfig says which logs of the library are written, and where.
type LoggingConfig struct {
	// Level is the least severe level written; empty is LogLevelWarn.
	Level LogLevel
	// Format is the format of Output; empty is LogFormatText.
	Format LogFormat
	// OnLog, when set, receives every log at Level or above instead of
	// Output.
	OnLog func(LogEntry)
	// Handler, when set, receives the logs instead, as slog records.
	Handler slog.Handler
}

// LogEntry is one log of the library, as OnLog receives it.
type LogEntry struct {
	Time     time.Time
	Level    LogLevel
	Category string
	Message  string
	// Attrs are the log's structured fields. Secrets (keys, variable
	// values) are never among them.
	Attrs map[string]any
}

// TelemetryConfig exports OpenTelemetry traces: a span per operation, with
// the model, the token usage and the cache status as attributes.
type TelemetryConfig struct {
	// Endpoint is the OTLP/HTTP traces endpoint, such as
	// "http://localhost:4318/v1/traces". Empty uses TracerProvider, or the
	// OTEL_EXPORTER_OTLP_* environment variables when that is nil too.
	Endpoint string
	// Headers are sent with every export (an observability vendor's key).
	Headers map[string]string
	// ServiceName is the resource's service.name; empty is
	// "browserfleet-client".
	ServiceName string
	// TracerProvider, when set, is the provider the spans are made with,
	// such as the application's own; Endpoint and Headers are then unused
	// and the instance does not shut it down.
	TracerProvider trace.TracerProvider
}
