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
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// injectTrace puts the W3C trace context of ctx's span (traceparent, and
// tracestate when there is one) on a runner call, so that the runner's span
// of the operation is a child of the caller's: the API's span of the /v1
// call. Nothing is added when ctx has no span, as in the manager's calls.
func injectTrace(ctx context.Context, h http.Header) {
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}

// The runner's trace export: the manager sets these standard OpenTelemetry
// variables on runner pods when its runner.otlpEndpoint is set, and the
// runner reads them (package tracing).
const (
	// EnvOTLPEndpoint is the collector's OTLP/HTTP base URL.
	EnvOTLPEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"
	// EnvOTLPProtocol is the export protocol, OTLPProtocol.
	EnvOTLPProtocol = "OTEL_EXPORTER_OTLP_PROTOCOL"
	// OTLPProtocol is the one protocol spans are exported with.
	OTLPProtocol = "http/protobuf"
	// EnvTracesSampler is the runner's sampler, TracesSamplerFollowCaller.
	EnvTracesSampler = "OTEL_TRACES_SAMPLER"
	// TracesSamplerFollowCaller records a call when the caller's trace
	// context says its trace is recorded, and never starts a trace: the
	// API decides which traces are recorded, and the manager's calls (agent
	// tasks, which carry none) make no spans.
	TracesSamplerFollowCaller = "parentbased_always_off"
	// EnvResourceAttributes names the runner's namespace, pod and session
	// on its spans.
	EnvResourceAttributes = "OTEL_RESOURCE_ATTRIBUTES"
)
