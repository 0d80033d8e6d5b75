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

package app

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/browserfleet/browserfleet/tracing"
)

// ServiceName is the API's service.name unless OTEL_SERVICE_NAME says
// otherwise.
const ServiceName = "browserfleet-api"

// traceFlushTimeout bounds sending the last spans once the API has
// drained.
const traceFlushTimeout = 5 * time.Second

// newTracerProvider is the API's trace export as the OTEL_* environment
// configures it (package tracing); nil when it is unset.
func newTracerProvider(ctx context.Context, log logr.Logger) (*sdktrace.TracerProvider, error) {
	tp, err := tracing.New(ctx, tracing.Options{DefaultServiceName: ServiceName})
	if err != nil {
		return nil, fmt.Errorf("setting up trace export: %w", err)
	}
	if tp == nil {
		return nil, nil
	}
	// The SDK reports failed exports here; the spans of that batch are
	// dropped, the calls go on.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.WithName("tracing").Info("trace export failed", "error", err.Error())
	}))
	log.WithName("setup").Info("exporting traces over OTLP/HTTP")
	return tp, nil
}

// flushTraces sends what the provider still holds, within
// traceFlushTimeout.
func flushTraces(tp *sdktrace.TracerProvider, log logr.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		log.Error(err, "the last spans were not all exported")
	}
}
