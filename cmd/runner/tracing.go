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

package main

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/browserfleet/browserfleet/tracing"
)

// serviceName is the runner's service.name unless OTEL_SERVICE_NAME says
// otherwise.
const serviceName = "browserfleet-runner"

// traceFlushTimeout bounds sending the last spans at exit; it fits in the
// pod's termination grace after the browser's ShutdownTimeout.
const traceFlushTimeout = 2 * time.Second

// newTracerProvider is the runner's trace export, as the OTEL_* variables
// the manager sets from its runner.tracing (docs/configuration.md) say; nil
// when they are unset. Its calls go straight to the operator's collector,
// not through the egress gate, which is for what tenants make the runner
// reach.
func newTracerProvider(ctx context.Context, log *slog.Logger) (*sdktrace.TracerProvider, error) {
	tp, err := tracing.New(ctx, tracing.Options{DefaultServiceName: serviceName})
	if err != nil || tp == nil {
		return nil, err
	}
	// The SDK reports failed exports here; the spans of that batch are
	// dropped, the operations go on.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("trace export failed", "err", err)
	}))
	log.Info("exporting traces over OTLP/HTTP")
	return tp, nil
}

// flushTraces sends what the provider still holds, within
// traceFlushTimeout.
func flushTraces(tp *sdktrace.TracerProvider, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		log.Warn("the last spans were not all exported", "err", err)
	}
}
