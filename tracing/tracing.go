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

// Package tracing makes the OpenTelemetry tracer providers of browserfleet's
// processes (the API pod, the runner) and of its client library: spans are
// batched and exported over OTLP/HTTP (protobuf) to the endpoint given in
// code or by the standard OTEL_* environment variables, and nothing is made
// at all when neither names one.
//
// The environment is read as the OpenTelemetry specification describes,
// with one difference: export is off unless something turns it on, so that
// a process nobody configured never dials localhost:4318.
//
//   - OTEL_SDK_DISABLED=true: off, whatever else says.
//   - OTEL_TRACES_EXPORTER: none is off; otlp is on (to
//     http://localhost:4318/v1/traces unless an endpoint says otherwise);
//     empty is on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
//     OTEL_EXPORTER_OTLP_ENDPOINT is set. Other exporters are refused.
//   - OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL: empty
//     or http/protobuf; grpc and http/json are refused.
//   - The exporter's other variables (headers, timeout, compression,
//     certificates), OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
//     OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_* apply as the SDK reads them.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Environment variables this package reads itself; the exporter and the SDK
// read the rest.
const (
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvServiceName    = "OTEL_SERVICE_NAME"
	EnvResourceAttrs  = "OTEL_RESOURCE_ATTRIBUTES"
	EnvTracesSampler  = "OTEL_TRACES_SAMPLER"
)

// ProtocolHTTPProtobuf is the one export protocol: OTLP over HTTP with
// protobuf bodies.
const ProtocolHTTPProtobuf = "http/protobuf"

const (
	// tracesPath is the traces endpoint's path on a collector.
	tracesPath   = "/v1/traces"
	exporterOTLP = "otlp"
	exporterNone = "none"
)

// Options say where spans go. The zero value exports as the environment
// says, or not at all.
type Options struct {
	// Endpoint is the OTLP/HTTP traces URL, such as
	// "http://collector:4318/v1/traces"; a URL without a path gets
	// /v1/traces. It turns export on whatever OTEL_TRACES_EXPORTER says.
	// Empty: the environment decides.
	Endpoint string
	// Headers are sent with every export, in place of
	// OTEL_EXPORTER_OTLP_(TRACES_)HEADERS.
	Headers map[string]string
	// ServiceName is the resource's service.name, over OTEL_SERVICE_NAME.
	ServiceName string
	// DefaultServiceName is service.name when neither ServiceName nor
	// OTEL_SERVICE_NAME (nor service.name in OTEL_RESOURCE_ATTRIBUTES)
	// gives one.
	DefaultServiceName string
}

// Enabled reports whether opts and the environment turn export on, or why
// they cannot.
func Enabled(opts Options) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv(EnvSDKDisabled)), "true") {
		return false, nil
	}
	on := opts.Endpoint != ""
	if !on {
		switch exp := strings.ToLower(strings.TrimSpace(os.Getenv(EnvTracesExporter))); exp {
		case exporterNone:
			return false, nil
		case exporterOTLP:
			on = true
		case "":
			on = os.Getenv(EnvTracesEndpoint) != "" || os.Getenv(EnvEndpoint) != ""
		default:
			return false, fmt.Errorf("%s=%q is not supported: otlp or none", EnvTracesExporter, exp)
		}
	}
	if !on {
		return false, nil
	}
	for _, name := range []string{EnvTracesProtocol, EnvProtocol} {
		p := strings.TrimSpace(os.Getenv(name))
		if p == "" {
			continue
		}
		if p != ProtocolHTTPProtobuf {
			return false, fmt.Errorf("%s=%q is not supported: spans are exported over OTLP/HTTP only (%s, the collector's port 4318)", name, p, ProtocolHTTPProtobuf)
		}
		// The traces variable, when set, wins over the general one.
		break
	}
	return true, nil
}

// New returns a provider that batches spans and exports them as opts and
// the environment say, or nil when export is off: then make no spans at all
// (a no-op provider). Shut the provider down to flush what it holds.
func New(ctx context.Context, opts Options) (*sdktrace.TracerProvider, error) {
	on, err := Enabled(opts)
	if err != nil || !on {
		return nil, err
	}
	var expOpts []otlptracehttp.Option
	if opts.Endpoint != "" {
		u, err := endpointURL(opts.Endpoint)
		if err != nil {
			return nil, err
		}
		expOpts = append(expOpts, otlptracehttp.WithEndpointURL(u))
	}
	if len(opts.Headers) > 0 {
		expOpts = append(expOpts, otlptracehttp.WithHeaders(opts.Headers))
	}
	// New dials nothing: the first export does.
	exp, err := otlptracehttp.New(ctx, expOpts...)
	if err != nil {
		return nil, fmt.Errorf("making the OTLP trace exporter: %w", err)
	}
	res, err := newResource(ctx, opts)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// endpointURL checks an explicit endpoint, which the exporter would
// otherwise replace by its default when it does not parse.
func endpointURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("the trace endpoint %q must be an absolute http or https URL", redactURL(endpoint))
	}
	if u.User != nil {
		return "", errors.New("the trace endpoint must not carry credentials; send them as headers")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = tracesPath
	}
	return u.String(), nil
}

// redactURL drops what may be a credential from a URL quoted in an error.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	return s
}

// newResource is the service's resource: the default name, then the
// environment's attributes and name, then the explicit name, each over the
// one before.
func newResource(ctx context.Context, opts Options) (*resource.Resource, error) {
	detectors := []resource.Option{resource.WithTelemetrySDK()}
	if opts.DefaultServiceName != "" {
		detectors = append(detectors, resource.WithAttributes(semconv.ServiceName(opts.DefaultServiceName)))
	}
	detectors = append(detectors, resource.WithFromEnv())
	if opts.ServiceName != "" {
		detectors = append(detectors, resource.WithAttributes(semconv.ServiceName(opts.ServiceName)))
	}
	res, err := resource.New(ctx, detectors...)
	if err != nil {
		return nil, fmt.Errorf("reading the trace resource (%s, %s): %w", EnvServiceName, EnvResourceAttrs, err)
	}
	return res, nil
}
