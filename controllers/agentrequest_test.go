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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestAgentCacheSetting(t *testing.T) {
	spec := func(enabled *bool, threshold int32) *v1alpha1.CacheSpec {
		return &v1alpha1.CacheSpec{Enabled: enabled, Threshold: threshold}
	}
	on, off := ptr.To(true), ptr.To(false)
	tests := []struct {
		name          string
		task, session *v1alpha1.CacheSpec
		want          *cache.Setting
	}{
		{"neither says: off", nil, nil, nil},
		{"enabled unset is off: the manager cannot see the project default", spec(nil, 3), nil, nil},
		{"the task's", spec(on, 3), nil, &cache.Setting{Threshold: 3}},
		{"the task's, the default threshold", spec(on, 0), nil, &cache.Setting{Threshold: cache.DefaultThreshold}},
		{"the session's", nil, spec(on, 2), &cache.Setting{Threshold: 2}},
		{"the task turns the session's off", spec(off, 0), spec(on, 2), nil},
		{"the task turns it on, the session's threshold", spec(on, 0), spec(off, 5), &cache.Setting{Threshold: 5}},
		{"the task's threshold wins", spec(nil, 7), spec(on, 2), &cache.Setting{Threshold: 7}},
		{"an out-of-bounds threshold is bounded", spec(on, 5000), nil, &cache.Setting{Threshold: cache.MaxThreshold}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, agentCacheSetting(tt.task, tt.session)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFinishFromRunnerSaysReplayed: a run the runner replayed from the
// server-side cache says so in the task's message, which the Succeeded
// event carries; the status keeps no cache report.
func TestFinishFromRunnerSaysReplayed(t *testing.T) {
	tests := []struct {
		name   string
		report *cache.Report
		want   string
	}{
		{"live", &cache.Report{Status: cache.StatusMiss, MissReason: cache.MissNotCached}, "the agent finished: the list is open"},
		{"no report", nil, "the agent finished: the list is open"},
		{"replayed", &cache.Report{Status: cache.StatusHit}, "the agent finished, replayed from the server-side cache with no model call: the list is open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &AgentTaskReconciler{Clock: clocktesting.NewFakePassiveClock(time.Unix(1_800_000_000, 0))}
			task := &v1alpha1.AgentTask{}
			view := &taskView{Final: &rpc.AgentTaskState{Phase: rpc.AgentTaskSucceeded,
				Result: &rpc.AgentResult{Success: true, Completed: true, Message: "the list is open", Cache: tt.report}}}
			r.finishFromRunner(task, view, time.Minute, "the runner")
			if diff := cmp.Diff(tt.want, task.Status.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if task.Status.Phase != v1alpha1.AgentTaskSucceeded {
				t.Errorf("phase %s", task.Status.Phase)
			}
		})
	}
}
