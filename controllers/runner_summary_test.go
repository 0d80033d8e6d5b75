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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestRunnerStopped: when the runner's termination message is final, and
// when a pod is let go without one.
func TestRunnerStopped(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	running := corev1.ContainerStatus{Name: runnerContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	terminated := corev1.ContainerStatus{Name: runnerContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}
	pod := func(mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "node"}, Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running}}}
		mutate(p)
		return p
	}
	deleting := func(at time.Time, grace int64) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.DeletionTimestamp = &metav1.Time{Time: at}
			p.DeletionGracePeriodSeconds = ptr.To(grace)
		}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"running", pod(func(*corev1.Pod) {}), false},
		{"terminating, within its grace", pod(deleting(now.Add(10*time.Second), 15)), false},
		{"terminating, just past its grace", pod(deleting(now.Add(-summaryGrace/2), 15)), false},
		{"its container terminated", pod(func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated} }), true},
		{"the pod failed", pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), true},
		{"the pod succeeded", pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), true},
		{"never on a node", pod(func(p *corev1.Pod) { p.Spec.NodeName = "" }), true},
		{"deleted with no grace left", pod(deleting(now.Add(10*time.Second), 0)), true},
		{"its node never reported the end", pod(deleting(now.Add(-summaryGrace), 15)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, runnerStopped(tt.pod, now)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
