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

package tracing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/internal/testing/otlptest"
	"github.com/browserfleet/browserfleet/tracing"
)

// otelEnv are the variables the tests set; each case starts with all of
// them empty, whatever the machine's environment holds.
var otelEnv = []string{
	tracing.EnvSDKDisabled, tracing.EnvTracesExporter, tracing.EnvEndpoint, tracing.EnvTracesEndpoint,
	tracing.EnvProtocol, tracing.EnvTracesProtocol, tracing.EnvServiceName, tracing.EnvResourceAttrs,
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_TRACES_SAMPLER",
}

func clearEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, k := range otelEnv {
		t.Setenv(k, "")
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

func TestEnabled(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		endpoint string
		want     bool
		wantErr  string
	}{
		{name: "nothing set: off", want: false},
		{name: "an endpoint in code", endpoint: "http://127.0.0.1:4318", want: true},
		{name: "the general endpoint", env: map[string]string{tracing.EnvEndpoint: "http://collector:4318"}, want: true},
		{name: "the traces endpoint", env: map[string]string{tracing.EnvTracesEndpoint: "http://collector:4318/v1/traces"}, want: true},
		{name: "otlp with no endpoint: the default one", env: map[string]string{tracing.EnvTracesExporter: "otlp"}, want: true},
		{name: "none wins over an endpoint", env: map[string]string{tracing.EnvTracesExporter: "none", tracing.EnvEndpoint: "http://collector:4318"}, want: false},
		{name: "an endpoint in code wins over none", env: map[string]string{tracing.EnvTracesExporter: "none"}, endpoint: "http://127.0.0.1:4318", want: true},
		{name: "the SDK disabled wins over all", env: map[string]string{tracing.EnvSDKDisabled: "true", tracing.EnvTracesExporter: "otlp"}, endpoint: "http://127.0.0.1:4318", want: false},
		{name: "http/protobuf", env: map[string]string{tracing.EnvEndpoint: "http://collector:4318", tracing.EnvProtocol: "http/protobuf"}, want: true},
		{name: "the traces protocol wins over the general one", env: map[string]string{tracing.EnvEndpoint: "http://collector:4318", tracing.EnvProtocol: "grpc", tracing.EnvTracesProtocol: "http/protobuf"}, want: true},
		{name: "grpc is refused", env: map[string]string{tracing.EnvEndpoint: "http://collector:4317", tracing.EnvProtocol: "grpc"}, wantErr: `OTEL_EXPORTER_OTLP_PROTOCOL="grpc" is not supported`},
		{name: "grpc does not matter while export is off", env: map[string]string{tracing.EnvProtocol: "grpc"}, want: false},
		{name: "another exporter is refused", env: map[string]string{tracing.EnvTracesExporter: "zipkin"}, wantErr: `OTEL_TRACES_EXPORTER="zipkin" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t, tt.env)
			got, err := tracing.Enabled(tracing.Options{Endpoint: tt.endpoint})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Enabled() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Enabled() error = %v", err)
			}
			if got != tt.want {
				t.Errorf("Enabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNewOffMakesNothing(t *testing.T) {
	clearEnv(t, nil)
	tp, err := tracing.New(context.Background(), tracing.Options{DefaultServiceName: "browserfleet-test"})
	if err != nil || tp != nil {
		t.Fatalf("New() = %v, %v; want nil, nil with nothing configured", tp, err)
	}
}

func TestNewRefusesBadEndpoints(t *testing.T) {
	clearEnv(t, nil)
	for _, endpoint := range []string{"collector:4318", "ftp://collector/v1/traces", "http://user:hunter2@collector:4318"} {
		_, err := tracing.New(context.Background(), tracing.Options{Endpoint: endpoint})
		if err == nil {
			t.Errorf("New(%q) succeeded; want an error", endpoint)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("New(%q) error quotes the password: %v", endpoint, err)
		}
	}
}

// TestExport exports one span to a receiver on loopback and reads back its
// resource: the service name's precedence and the headers sent.
func TestExport(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		opts        tracing.Options
		wantService string
		wantHeader  string
	}{
		{
			name:        "endpoint in code, the default name",
			opts:        tracing.Options{DefaultServiceName: "browserfleet-api", Headers: map[string]string{"x-vendor-key": "k1"}},
			wantService: "browserfleet-api",
			wantHeader:  "k1",
		},
		{
			name:        "OTEL_SERVICE_NAME over the default",
			env:         map[string]string{tracing.EnvServiceName: "api-eu"},
			opts:        tracing.Options{DefaultServiceName: "browserfleet-api"},
			wantService: "api-eu",
		},
		{
			name:        "the name in code over OTEL_SERVICE_NAME",
			env:         map[string]string{tracing.EnvServiceName: "api-eu", "OTEL_EXPORTER_OTLP_HEADERS": "x-vendor-key=k2"},
			opts:        tracing.Options{ServiceName: "shop-bot", DefaultServiceName: "browserfleet-client"},
			wantService: "shop-bot",
			wantHeader:  "k2",
		},
	}
	for _, tt := range tests {
		for _, byEnv := range []bool{false, true} {
			name := tt.name + ", endpoint in code"
			if byEnv {
				name = tt.name + ", endpoint from OTEL_EXPORTER_OTLP_ENDPOINT"
			}
			t.Run(name, func(t *testing.T) {
				rcv := otlptest.NewReceiver(t)
				env := map[string]string{}
				for k, v := range tt.env {
					env[k] = v
				}
				opts := tt.opts
				if byEnv {
					env[tracing.EnvEndpoint] = rcv.URL()
				} else {
					// Without a path: /v1/traces is added.
					opts.Endpoint = rcv.URL()
				}
				clearEnv(t, env)
				ctx := context.Background()
				tp, err := tracing.New(ctx, opts)
				if err != nil || tp == nil {
					t.Fatalf("New() = %v, %v", tp, err)
				}
				_, span := tp.Tracer("test").Start(ctx, "op")
				span.End()
				if err := tp.Shutdown(ctx); err != nil {
					t.Fatalf("Shutdown() = %v", err)
				}
				got := rcv.Spans()
				if len(got) != 1 {
					t.Fatalf("received %d spans, want 1 (refused: %v)", len(got), rcv.Refused())
				}
				if diff := cmp.Diff(tt.wantService, got[0].Service); diff != "" {
					t.Errorf("service.name (-want +got):\n%s", diff)
				}
				if got[0].Resource["telemetry.sdk.language"] != "go" {
					t.Errorf("resource %v lacks the SDK's attributes", got[0].Resource)
				}
				if h := rcv.Headers()[0].Get("x-vendor-key"); h != tt.wantHeader {
					t.Errorf("x-vendor-key = %q, want %q", h, tt.wantHeader)
				}
			})
		}
	}
}
