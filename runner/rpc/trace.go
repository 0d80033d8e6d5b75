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

	"github.com/browserfleet/browserfleet/tracing"
)

// injectTrace puts the W3C trace context of ctx's span (traceparent, and
// tracestate when there is one) on a runner call, so that the runner's span
// of the operation is a child of the caller's: the API's span of the /v1
// call. Nothing is added when ctx has no span, as in the manager's calls.
func injectTrace(ctx context.Context, h http.Header) {
	tracing.Propagator.Inject(ctx, propagation.HeaderCarrier(h))
}

// TracesSamplerFollowCaller is the runner's sampler (tracing.EnvTracesSampler,
// which the manager sets on runner pods with the other OTEL_* variables of
// package tracing when its runner.otlpEndpoint is set): it records a call
// when the caller's trace context says its trace is recorded, and never
// starts a trace. The API decides which traces are recorded, and the
// manager's calls (agent tasks, which carry none) make no spans.
const TracesSamplerFollowCaller = "parentbased_always_off"
