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

package controllers

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
)

// TestRunnerTraceEnv: a runner pod gets the OTEL_* variables of its trace
// export only when the manager names a collector, and then follows the
// API's sampling and names its session.
func TestRunnerTraceEnv(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string
		want     map[string]string
	}{
		{name: "no collector: no variable", want: map[string]string{}},
		{
			name:     "a collector",
			endpoint: "http://otel-collector.observability:4318",
			want: map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability:4318",
				"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
				"OTEL_TRACES_SAMPLER":         "parentbased_always_off",
				"OTEL_RESOURCE_ATTRIBUTES":    "k8s.namespace.name=team-a,k8s.pod.name=3f1c-runner,browserfleet.session.id=3f1c",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultOptions().Runner
			cfg.OTLPEndpoint = tt.endpoint
			pod, err := constructRunnerPod(wrappers.MakeBrowserSession("3f1c", "team-a").Obj(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, e := range pod.Spec.Containers[0].Env {
				if strings.HasPrefix(e.Name, "OTEL_") {
					got[e.Name] = e.Value
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("OTEL_* env (-want +got):\n%s", diff)
			}
		})
	}
}
