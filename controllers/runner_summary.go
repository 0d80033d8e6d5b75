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
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/replay"
)

// The runner keeps its session's history of calls in memory; when it stops
// it writes a summary of it (runner/replay) to its container's termination
// message, which the kubelet copies into the pod's status. The manager
// copies that summary into the session's status.history: no network call,
// and nothing of the runner's but a few hundred bytes the kubelet already
// reports. The pod carries RunnerSummaryFinalizer so that it cannot vanish
// between the kubelet's report and the manager's look.

// summaryGrace is how long past its deletion deadline a pod whose
// container never reported its end (its node is gone) is kept for a
// summary that will not come.
const summaryGrace = 30 * time.Second

// runnerStopped reports whether the pod's runner will not run again, so
// that its termination message is final: its container terminated, the
// pod is over, it never reached a node, the kubelet is done with it (a
// deletion with no grace left), or its deletion is overdue by
// summaryGrace.
func runnerStopped(pod *corev1.Pod, now time.Time) bool {
	switch {
	case pod.Spec.NodeName == "",
		pod.Status.Phase == corev1.PodSucceeded, pod.Status.Phase == corev1.PodFailed,
		pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0,
		pod.DeletionTimestamp != nil && !now.Before(pod.DeletionTimestamp.Add(summaryGrace)):
		return true
	}
	return runnerTermination(pod) != nil
}

// runnerTermination is the runner container's terminated state, if it has
// one.
func runnerTermination(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == runnerContainer && cs.State.Terminated != nil {
			return cs.State.Terminated
		}
	}
	return nil
}

// isSummary reports whether a termination message is the runner's summary
// rather than words for people.
func isSummary(msg string) bool {
	_, ok := replay.ParseTerminationMessage(msg)
	return ok
}

// takeSummary copies the summary the runner left in its termination
// message into the status, unless the status has one already. It reports
// whether it did.
func takeSummary(s *v1alpha1.BrowserSession, pod *corev1.Pod) bool {
	t := runnerTermination(pod)
	if s.Status.History != nil || t == nil {
		return false
	}
	sum, ok := replay.ParseTerminationMessage(t.Message)
	if !ok {
		return false
	}
	s.Status.History = sum.History()
	return true
}

// collectSummary takes the runner's summary into the status once the
// runner has stopped, and lets a deleted pod go (RunnerSummaryFinalizer)
// once the status holds the summary, or there is none to take. A summary
// just taken holds the pod until the status that shows it is written: the
// write brings the next pass.
func (r *BrowserSessionReconciler) collectSummary(ctx context.Context, s *v1alpha1.BrowserSession, pod *corev1.Pod, now time.Time) error {
	if !runnerStopped(pod, now) || takeSummary(s, pod) {
		return nil
	}
	if pod.DeletionTimestamp == nil || !controllerutil.ContainsFinalizer(pod, RunnerSummaryFinalizer) {
		return nil
	}
	orig := pod.DeepCopy()
	controllerutil.RemoveFinalizer(pod, RunnerSummaryFinalizer)
	err := r.Client.Patch(ctx, pod, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("letting runner pod %s go: %w", pod.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("let the runner pod go", "pod", pod.Name, "summary", s.Status.History != nil)
	return nil
}

// summaryDeadline is when a deleted runner pod that still waits for its
// summary is let go all the same (runnerStopped).
func summaryDeadline(pod *corev1.Pod) (time.Time, bool) {
	if pod.DeletionTimestamp == nil || !controllerutil.ContainsFinalizer(pod, RunnerSummaryFinalizer) {
		return time.Time{}, false
	}
	return pod.DeletionTimestamp.Add(summaryGrace), true
}
