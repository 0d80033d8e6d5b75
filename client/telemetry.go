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
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/browserfleet/browserfleet/tracing"
)

// Names of the client's spans and their attributes. The gen_ai.* ones are
// OpenTelemetry's generative-AI conventions; the rest are the library's.
const (
	// tracerName is the instrumentation scope of the client's spans.
	tracerName = "github.com/browserfleet/browserfleet/client"
	// spanPrefix makes an operation's span name: "browserfleet.act".
	spanPrefix = "browserfleet."
	// defaultServiceName is service.name when neither TelemetryConfig
	// nor OTEL_SERVICE_NAME names the service.
	defaultServiceName = "browserfleet-client"

	attrModel             = attribute.Key("gen_ai.request.model")
	attrProvider          = attribute.Key("gen_ai.provider.name")
	attrInputTokens       = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens      = attribute.Key("gen_ai.usage.output_tokens")
	attrReasoningTokens   = attribute.Key("browserfleet.usage.reasoning_tokens")
	attrCachedInputTokens = attribute.Key("browserfleet.usage.cached_input_tokens")
	attrInferenceTimeMs   = attribute.Key("browserfleet.usage.inference_time_ms")
	attrCacheStatus       = attribute.Key("browserfleet.cache.status")
	attrActionID          = attribute.Key("browserfleet.action_id")
)

// noopTracer is the tracer of an instance without Telemetry: its spans are
// not recorded, cost nothing and start no goroutine.
var noopTracer = noop.NewTracerProvider().Tracer(tracerName)

func noShutdown(context.Context) error { return nil }

// newTracer makes the tracer of an instance's spans from its Telemetry
// option; nil gives a tracer that records nothing. shutdown flushes and
// stops what newTracer started (never the caller's own TracerProvider).
//
// With neither Endpoint nor TracerProvider, the OTEL_* environment decides
// (package tracing): no variable set exports nothing, and makes no span.
func newTracer(ctx context.Context, cfg *TelemetryConfig) (tr trace.Tracer, shutdown func(context.Context) error, err error) {
	if cfg == nil {
		return noopTracer, noShutdown, nil
	}
	if cfg.TracerProvider != nil {
		return cfg.TracerProvider.Tracer(tracerName), noShutdown, nil
	}
	tp, err := tracing.New(ctx, tracing.Options{
		Endpoint:           cfg.Endpoint,
		Headers:            cfg.Headers,
		ServiceName:        cfg.ServiceName,
		DefaultServiceName: defaultServiceName,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: Telemetry: %w", ErrInvalidArgument, err)
	}
	if tp == nil {
		return noopTracer, noShutdown, nil
	}
	return tp.Tracer(tracerName), tp.Shutdown, nil
}

// startOperation starts the span of one operation (op is "act", "observe",
// "extract" or "batch") as a child of ctx's. The returned ctx carries it, so
// that a cloud handle's request sends it as its traceparent.
func startOperation(ctx context.Context, cfg *instanceConfig, op string) (context.Context, trace.Span) {
	tr := noopTracer
	if cfg != nil && cfg.tracer != nil {
		tr = cfg.tracer
	}
	return tr.Start(ctx, spanPrefix+op, trace.WithSpanKind(trace.SpanKindClient))
}

// endOperation ends an operation's span with the model it used, its
// metadata (usage, cache status, action id) and its error.
//
// The error's message becomes the span's status: the library's messages
// name fields, never their values, and never carry keys or variable values
// (the engine and package llm redact them), so it is safe to export.
func endOperation(span trace.Span, model string, md *Metadata, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 9)
	if model != "" {
		attrs = append(attrs, attrModel.String(model))
		if provider, _, ok := strings.Cut(model, "/"); ok && provider != "" {
			attrs = append(attrs, attrProvider.String(provider))
		}
	}
	if md != nil {
		attrs = append(attrs,
			attrInputTokens.Int64(int64(md.Usage.InputTokens)),
			attrOutputTokens.Int64(int64(md.Usage.OutputTokens)),
			attrReasoningTokens.Int64(int64(md.Usage.ReasoningTokens)),
			attrCachedInputTokens.Int64(int64(md.Usage.CachedInputTokens)),
			attrInferenceTimeMs.Float64(md.Usage.InferenceTimeMs),
		)
		if md.Cache.Status != "" {
			attrs = append(attrs, attrCacheStatus.String(string(md.Cache.Status)))
		}
		if md.ActionID != "" {
			attrs = append(attrs, attrActionID.String(md.ActionID))
		}
	}
	span.SetAttributes(attrs...)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
}
