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
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/testing/otlptest"
)

// otelEnv are the variables that would turn export on; the tests clear
// them, whatever the machine's environment holds.
var otelEnv = []string{
	"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
}

func clearOTelEnv(t *testing.T) {
	t.Helper()
	for _, k := range otelEnv {
		t.Setenv(k, "")
	}
}

// recorded is what a test reads of a finished span.
type recorded struct {
	Name       string
	Kind       trace.SpanKind
	Attributes map[string]any
	Status     codes.Code
	Message    string
}

func record(s sdktrace.ReadOnlySpan) recorded {
	attrs := map[string]any{}
	for _, kv := range s.Attributes() {
		attrs[string(kv.Key)] = kv.Value.AsInterface()
	}
	return recorded{Name: s.Name(), Kind: s.SpanKind(), Attributes: attrs, Status: s.Status().Code, Message: s.Status().Description}
}

func recorderTracer() (*tracetest.SpanRecorder, trace.Tracer) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	return rec, tp.Tracer("test")
}

func TestOperationSpan(t *testing.T) {
	hit := &Metadata{
		Cache:    CacheMetadata{Status: CacheStatusHIT, Count: 3, Threshold: 2},
		ActionID: "6f0c1d0e-61a4-4c55-9b1e-0d6c2f1b9a77",
	}
	miss := &Metadata{
		Cache:    CacheMetadata{Status: CacheStatusMISS},
		ActionID: "a1",
		Usage:    Usage{InputTokens: 1200, OutputTokens: 35, ReasoningTokens: 7, CachedInputTokens: 1024, InferenceTimeMs: 812.5},
	}
	tests := []struct {
		name  string
		op    string
		model string
		md    *Metadata
		err   error
		want  recorded
	}{
		{
			name: "act with inference", op: "act", model: "openai/gpt-4.1-mini", md: miss,
			want: recorded{Name: "browserfleet.act", Kind: trace.SpanKindClient, Attributes: map[string]any{
				"gen_ai.request.model":                   "openai/gpt-4.1-mini",
				"gen_ai.provider.name":                   "openai",
				"gen_ai.usage.input_tokens":              int64(1200),
				"gen_ai.usage.output_tokens":             int64(35),
				"browserfleet.usage.reasoning_tokens":    int64(7),
				"browserfleet.usage.cached_input_tokens": int64(1024),
				"browserfleet.usage.inference_time_ms":   812.5,
				"browserfleet.cache.status":              "MISS",
				"browserfleet.action_id":                 "a1",
			}},
		},
		{
			name: "a cache hit costs nothing", op: "observe", model: "anthropic/claude-sonnet-4-5", md: hit,
			want: recorded{Name: "browserfleet.observe", Kind: trace.SpanKindClient, Attributes: map[string]any{
				"gen_ai.request.model":                   "anthropic/claude-sonnet-4-5",
				"gen_ai.provider.name":                   "anthropic",
				"gen_ai.usage.input_tokens":              int64(0),
				"gen_ai.usage.output_tokens":             int64(0),
				"browserfleet.usage.reasoning_tokens":    int64(0),
				"browserfleet.usage.cached_input_tokens": int64(0),
				"browserfleet.usage.inference_time_ms":   0.0,
				"browserfleet.cache.status":              "HIT",
				"browserfleet.action_id":                 hit.ActionID,
			}},
		},
		{
			name: "a failed extract: the error, no metadata", op: "extract", model: "google/gemini-2.5-flash",
			err: fmt.Errorf("%w: schema: must be an object", ErrInvalidArgument),
			want: recorded{Name: "browserfleet.extract", Kind: trace.SpanKindClient, Attributes: map[string]any{
				"gen_ai.request.model": "google/gemini-2.5-flash",
				"gen_ai.provider.name": "google",
			}, Status: codes.Error, Message: "invalid argument: schema: must be an object"},
		},
		{
			name: "a batch with no model of its own", op: "batch", err: &BatchError{Message: "TypeError: x is undefined"},
			want: recorded{Name: "browserfleet.batch", Kind: trace.SpanKindClient, Attributes: map[string]any{},
				Status: codes.Error, Message: "the batch script threw: TypeError: x is undefined"},
		},
		{
			name: "a model without a provider prefix (Generate)", op: "act", model: "my-model", md: &Metadata{Cache: CacheMetadata{Status: CacheStatusDISABLED}},
			want: recorded{Name: "browserfleet.act", Kind: trace.SpanKindClient, Attributes: map[string]any{
				"gen_ai.request.model":                   "my-model",
				"gen_ai.usage.input_tokens":              int64(0),
				"gen_ai.usage.output_tokens":             int64(0),
				"browserfleet.usage.reasoning_tokens":    int64(0),
				"browserfleet.usage.cached_input_tokens": int64(0),
				"browserfleet.usage.inference_time_ms":   0.0,
				"browserfleet.cache.status":              "DISABLED",
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, tr := recorderTracer()
			cfg := &instanceConfig{tracer: tr}
			parentCtx, parent := tr.Start(context.Background(), "the application's request")
			ctx, span := startOperation(parentCtx, cfg, tt.op)
			if got := trace.SpanFromContext(ctx); got != span {
				t.Errorf("the operation's ctx does not carry its span")
			}
			endOperation(span, tt.model, tt.md, tt.err)
			parent.End()

			ended := rec.Ended()
			if len(ended) != 2 {
				t.Fatalf("%d spans ended, want the operation's and its parent", len(ended))
			}
			op := ended[0]
			if diff := cmp.Diff(tt.want, record(op)); diff != "" {
				t.Errorf("span (-want +got):\n%s", diff)
			}
			if op.Parent().SpanID() != parent.SpanContext().SpanID() || op.SpanContext().TraceID() != parent.SpanContext().TraceID() {
				t.Errorf("the operation's span is not a child of ctx's span")
			}
		})
	}
}

// TestNoTelemetry: an instance without Telemetry makes no span and starts
// nothing; a TelemetryConfig that names no endpoint, with none in the
// environment, neither.
func TestNoTelemetry(t *testing.T) {
	clearOTelEnv(t)
	for _, cfg := range []*TelemetryConfig{nil, {}, {ServiceName: "shop-bot", Headers: map[string]string{"x-key": "k"}}} {
		tr, shutdown, err := newTracer(context.Background(), cfg)
		if err != nil {
			t.Fatalf("newTracer(%+v) = %v", cfg, err)
		}
		if _, ok := tr.(noop.Tracer); !ok {
			t.Errorf("newTracer(%+v) = %T, want the no-op tracer", cfg, tr)
		}
		ctx, span := startOperation(context.Background(), &instanceConfig{tracer: tr}, "act")
		if span.IsRecording() || span.SpanContext().IsValid() {
			t.Errorf("the no-op tracer made a span that records (%v) or has an id (%v)", span.IsRecording(), span.SpanContext())
		}
		if trace.SpanFromContext(ctx).SpanContext().IsValid() {
			t.Errorf("the operation's ctx carries a span with an id")
		}
		endOperation(span, "openai/gpt-4.1-mini", &Metadata{}, errors.New("boom"))
		if err := shutdown(context.Background()); err != nil {
			t.Errorf("shutdown() = %v", err)
		}
	}

	// An instance whose core left no tracer behaves as without Telemetry,
	// and never ends the caller's span.
	rec, tr := recorderTracer()
	ctx, parent := tr.Start(context.Background(), "the application's request")
	_, span := startOperation(ctx, &instanceConfig{}, "act")
	endOperation(span, "", nil, nil)
	if len(rec.Ended()) != 0 {
		t.Errorf("ending the operation ended the caller's span")
	}
	parent.End()
}

// TestCallersTracerProvider: the application's provider makes the spans,
// and the instance never shuts it down.
func TestCallersTracerProvider(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr, shutdown, err := newTracer(context.Background(), &TelemetryConfig{TracerProvider: tp, Endpoint: "http://127.0.0.1:1/never"})
	if err != nil {
		t.Fatalf("newTracer() = %v", err)
	}
	for range 2 {
		_, span := startOperation(context.Background(), &instanceConfig{tracer: tr}, "observe")
		endOperation(span, "openai/gpt-4.1-mini", &Metadata{}, nil)
		if err := shutdown(context.Background()); err != nil {
			t.Fatalf("shutdown() = %v", err)
		}
	}
	ended := rec.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans ended, want 2: the second after the instance's shutdown", len(ended))
	}
	if got := ended[0].InstrumentationScope().Name; got != tracerName {
		t.Errorf("scope = %q, want %q", got, tracerName)
	}
}

// TestExportToEndpoint exports over OTLP/HTTP to a receiver on loopback:
// the span arrives, at the latest when the instance shuts its exporter
// down, with the service name and the headers of the config.
func TestExportToEndpoint(t *testing.T) {
	tests := []struct {
		name        string
		cfg         func(rcv *otlptest.Receiver) *TelemetryConfig
		env         func(rcv *otlptest.Receiver) map[string]string
		wantService string
	}{
		{
			name: "Endpoint",
			cfg: func(rcv *otlptest.Receiver) *TelemetryConfig {
				return &TelemetryConfig{Endpoint: rcv.TracesURL(), Headers: map[string]string{"x-honeycomb-team": "team-key"}, ServiceName: "shop-bot"}
			},
			wantService: "shop-bot",
		},
		{
			name: "the OTEL_* environment",
			cfg: func(*otlptest.Receiver) *TelemetryConfig {
				return &TelemetryConfig{Headers: map[string]string{"x-honeycomb-team": "team-key"}}
			},
			env: func(rcv *otlptest.Receiver) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": rcv.TracesURL()}
			},
			wantService: defaultServiceName,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearOTelEnv(t)
			rcv := otlptest.NewReceiver(t)
			if tt.env != nil {
				for k, v := range tt.env(rcv) {
					t.Setenv(k, v)
				}
			}
			ctx := context.Background()
			tr, shutdown, err := newTracer(ctx, tt.cfg(rcv))
			if err != nil {
				t.Fatalf("newTracer() = %v", err)
			}
			_, span := startOperation(ctx, &instanceConfig{tracer: tr}, "extract")
			endOperation(span, "openai/gpt-4.1-mini", &Metadata{ActionID: "a7", Cache: CacheMetadata{Status: CacheStatusMISS}, Usage: Usage{InputTokens: 10, OutputTokens: 2}}, nil)
			if err := shutdown(ctx); err != nil {
				t.Fatalf("shutdown() = %v", err)
			}
			spans := rcv.Spans()
			if len(spans) != 1 {
				t.Fatalf("received %d spans, want 1 (refused: %v)", len(spans), rcv.Refused())
			}
			got := spans[0]
			want := otlptest.Span{Service: tt.wantService, Scope: tracerName, Name: "browserfleet.extract", Kind: "client", StatusCode: "unset"}
			if diff := cmp.Diff(want, got, cmpIgnoreIDs); diff != "" {
				t.Errorf("span (-want +got):\n%s", diff)
			}
			for k, v := range map[string]any{"gen_ai.request.model": "openai/gpt-4.1-mini", "gen_ai.usage.input_tokens": int64(10), "browserfleet.action_id": "a7", "browserfleet.cache.status": "MISS"} {
				if got.Attributes[k] != v {
					t.Errorf("attribute %s = %v, want %v", k, got.Attributes[k], v)
				}
			}
			if h := rcv.Headers()[0].Get("x-honeycomb-team"); h != "team-key" {
				t.Errorf("the export's x-honeycomb-team = %q, want the config's", h)
			}
		})
	}
}

// cmpIgnoreIDs compares received spans on what a test can know.
var cmpIgnoreIDs = cmp.FilterPath(func(p cmp.Path) bool {
	switch p.Last().String() {
	case ".TraceID", ".SpanID", ".ParentSpanID", ".Attributes", ".Resource":
		return true
	}
	return false
}, cmp.Ignore())

func TestTelemetryRefusesBadEndpoint(t *testing.T) {
	clearOTelEnv(t)
	_, _, err := newTracer(context.Background(), &TelemetryConfig{Endpoint: "localhost:4318"})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("newTracer() error = %v, want ErrInvalidArgument", err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	_, _, err = newTracer(context.Background(), &TelemetryConfig{})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("newTracer() with OTEL_EXPORTER_OTLP_PROTOCOL=grpc: error = %v, want ErrInvalidArgument", err)
	}
}

// TestLocalHandleSpans: an instance of a local handle (real Chromium,
// scripted model) exports one span per operation to the OTLP endpoint by
// the time Close returns: an act with its model, usage and action id, and
// a failed observe whose status is the error's message, which carries
// neither the model key the provider echoed nor a variable's value.
func TestLocalHandleSpans(t *testing.T) {
	clearOTelEnv(t)
	rcv := otlptest.NewReceiver(t)
	srv, model := scripted(t)
	ctx := testCtx(t)
	p := openPage(t, nil, "/list")
	c, err := Create(ctx, CreateOptions{
		Browser:   shared,
		Model:     model,
		Logging:   &LoggingConfig{Level: LogLevelOff},
		Telemetry: &TelemetryConfig{Endpoint: rcv.TracesURL(), ServiceName: "shop-bot"},
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	defer func() { _ = c.Close(context.Background()) }()

	const secret = "hunter2-card-number"
	srv.Enqueue(
		llmtest.JSON(actAnswer(idOf(t, p, "button: Buy 2"), "click")).WithUsage(100, 20).WithReasoningTokens(5),
		llmtest.Status(http.StatusUnauthorized).WithMessage("Incorrect API key provided: "+model.APIKey),
	)
	res, err := c.Act(ctx, ActInstruction("buy the second item"), &ActOptions{Page: p, Variables: Variables{"card": {Value: secret}}})
	if err != nil {
		t.Fatal(err)
	}
	instruction := "the buy buttons"
	if _, err := c.Observe(ctx, &instruction, &ObserveOptions{Page: p, Variables: Variables{"card": {Value: secret}}}); err == nil {
		t.Fatal("observe succeeded; the model answered 401")
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}

	type seen struct {
		Name, Kind, Service, Status string
		Attributes                  map[string]any
	}
	var got []seen
	for _, s := range rcv.Spans() {
		got = append(got, seen{Name: s.Name, Kind: s.Kind, Service: s.Service, Status: s.StatusCode, Attributes: s.Attributes})
		for k, v := range s.Attributes {
			if str, ok := v.(string); ok && (strings.Contains(str, secret) || strings.Contains(str, model.APIKey)) {
				t.Errorf("attribute %s of %s holds a secret: %q", k, s.Name, str)
			}
		}
		if s.Name == "browserfleet.observe" && !strings.Contains(s.StatusMessage, "HTTP 401 Unauthorized") {
			t.Errorf("the failed observe's status says %q, not the model's refusal", s.StatusMessage)
		}
		if strings.Contains(s.StatusMessage, secret) || strings.Contains(s.StatusMessage, model.APIKey) {
			t.Errorf("the status of %s holds a secret: %q", s.Name, s.StatusMessage)
		}
	}
	want := []seen{
		{Name: "browserfleet.act", Kind: "client", Service: "shop-bot", Status: "unset", Attributes: map[string]any{
			"gen_ai.request.model":                   "openai/gpt-4.1-mini",
			"gen_ai.provider.name":                   "openai",
			"gen_ai.usage.input_tokens":              int64(100),
			"gen_ai.usage.output_tokens":             int64(20),
			"browserfleet.usage.reasoning_tokens":    int64(5),
			"browserfleet.usage.cached_input_tokens": int64(0),
			"browserfleet.usage.inference_time_ms":   res.Metadata.Usage.InferenceTimeMs,
			"browserfleet.cache.status":              "DISABLED",
			"browserfleet.action_id":                 res.Metadata.ActionID,
		}},
		{Name: "browserfleet.observe", Kind: "client", Service: "shop-bot", Status: "error", Attributes: map[string]any{
			"gen_ai.request.model": "openai/gpt-4.1-mini",
			"gen_ai.provider.name": "openai",
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exported spans (-want +got):\n%s", diff)
	}
}
