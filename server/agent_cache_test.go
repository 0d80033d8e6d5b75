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

package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
)

// TestAgentCacheSpec: agentExecute writes the resolved setting into the
// task with enabled explicit, and reads back whether its run asked the
// cache.
func TestAgentCacheSpec(t *testing.T) {
	tests := []struct {
		name        string
		setting     *cache.Setting
		shouldCache bool
		want        *v1alpha1.CacheSpec
		asked       bool
	}{
		{"off", nil, true, &v1alpha1.CacheSpec{Enabled: ptr.To(false)}, false},
		{"on", &cache.Setting{Threshold: 3}, true, &v1alpha1.CacheSpec{Enabled: ptr.To(true), Threshold: 3}, true},
		{"on without shouldCache", &cache.Setting{Threshold: 1}, false, &v1alpha1.CacheSpec{Enabled: ptr.To(true), Threshold: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cacheSpecOf(tt.setting)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("spec.cache (-want +got):\n%s", diff)
			}
			task := &v1alpha1.AgentTask{Spec: v1alpha1.AgentTaskSpec{ShouldCache: ptr.To(tt.shouldCache), Cache: got}}
			if a := cacheAsked(task); a != tt.asked {
				t.Errorf("cacheAsked = %v, want %v", a, tt.asked)
			}
		})
	}
	if diff := cmp.Diff(cache.Disabled(), reportOrDisabled(nil)); diff != "" {
		t.Errorf("a nil report (-want +got):\n%s", diff)
	}
}
