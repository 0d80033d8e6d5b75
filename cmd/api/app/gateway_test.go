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
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/browserfleet/browserfleet/store"
)

func TestGatewayFlags(t *testing.T) {
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("sk-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		args        []string
		wantGateway bool
		wantDefault string
		wantErr     string
	}{
		{name: "none", args: nil},
		{name: "openai with a key", args: []string{"--gateway-openai-api-key-file=" + key, "--gateway-openai-models=gpt-4.1-mini, gpt-4.1", "--gateway-default-model=openai/gpt-4.1-mini"}, wantGateway: true, wantDefault: "openai/gpt-4.1-mini"},
		{name: "a local endpoint without a key", args: []string{"--gateway-openai-base-url=http://127.0.0.1:11434/v1", "--gateway-budget-tokens=1000", "--gateway-project-budget=team-a=50"}, wantGateway: true},
		{name: "default model not offered", args: []string{"--gateway-openai-api-key-file=" + key, "--gateway-openai-models=gpt-4.1", "--gateway-default-model=openai/gpt-5"}, wantErr: "not one the gateway offers"},
		{name: "a budget without a provider", args: []string{"--gateway-budget-tokens=5"}, wantErr: "need a provider"},
		{name: "a bad project budget", args: []string{"--gateway-project-budget=team-a"}, wantErr: "want namespace=tokens"},
		{name: "a short window", args: []string{"--gateway-openai-api-key-file=" + key, "--gateway-budget-window=1s"}, wantErr: "at least 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o GatewayOptions
			fs := flag.NewFlagSet("api", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.AddFlags(fs)
			err := fs.Parse(tt.args)
			if err == nil {
				var g interface{ DefaultModel() string }
				gw, gerr := newGateway(o, store.NewMemory(store.MemoryOptions{}), prometheus.NewRegistry(), logr.Discard())
				err = gerr
				if gw != nil {
					g = gw
				}
				if err == nil {
					if diff := cmp.Diff(tt.wantGateway, g != nil); diff != "" {
						t.Errorf("a gateway (-want +got):\n%s", diff)
					}
					if g != nil {
						if diff := cmp.Diff(tt.wantDefault, g.DefaultModel()); diff != "" {
							t.Errorf("default model (-want +got):\n%s", diff)
						}
					}
				}
			}
			if tt.wantErr == "" && err != nil {
				t.Fatalf("got %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}
