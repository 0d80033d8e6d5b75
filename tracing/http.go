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

package tracing

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Propagator is the one trace-context format browserfleet sends and
// accepts: the W3C traceparent (and tracestate), whatever the process's
// global propagator. Baggage is left out: it would let a caller set
// attributes.
var Propagator = propagation.TraceContext{}

// ServerHandler gives the calls it serves a server span of tp, the child of
// the caller's span when the request carries a traceparent (Propagator).
// The span is named for r.Pattern, which the caller sets to the route
// ("POST /v1/act") before the call so that the span starts with its name
// and http.route. Its attributes are OpenTelemetry's HTTP server
// conventions; bodies and headers are never among them, and 5xx answers
// mark it failed. No metrics are made: browserfleet's are Prometheus's.
func ServerHandler(tp trace.TracerProvider, next http.Handler) http.Handler {
	return otelhttp.NewHandler(next, "",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(Propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
	)
}
