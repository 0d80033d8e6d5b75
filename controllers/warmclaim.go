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
	"hash/fnv"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// maxClaimAttempts bounds the runners one pass tries to claim: others
// starting at the same moment may take the first ones it tries.
const maxClaimAttempts = 8

// claimWarmRunner claims a ready runner of a pool of the session's
// namespace whose template is the session's launch (v1alpha1.LaunchHash),
// or returns nil when there is none. The claim is one update of the pod,
// conditional on the version the cache read: it makes the session the
// pod's controller (the pool's owner reference goes, so the pool starts
// another runner and never takes this one back) and labels the pod with
// the session. Of sessions racing for one runner, the API server lets one
// update through; the others try the next runner.
func (r *BrowserSessionReconciler) claimWarmRunner(ctx context.Context, s *v1alpha1.BrowserSession) (*corev1.Pod, error) {
	if r.Claimer == nil {
		return nil, nil
	}
	tmpl, ok := v1alpha1.LaunchSettingsOf(&s.Spec)
	if !ok {
		return nil, nil
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(s.Namespace),
		client.MatchingLabelsSelector{Selector: unclaimedRunners(
			requirement(v1alpha1.LabelLaunchHash, selection.Equals, v1alpha1.LaunchHash(tmpl)), requirement(v1alpha1.LabelPool, selection.Exists))}); err != nil {
		return nil, fmt.Errorf("listing warm runners: %w", err)
	}
	candidates := claimable(pods.Items)
	if len(candidates) == 0 {
		return nil, nil
	}
	// Sessions starting together begin at different runners.
	h := fnv.New32a()
	_, _ = h.Write([]byte(s.UID))
	start := int(h.Sum32() % uint32(len(candidates)))
	for i := range min(len(candidates), maxClaimAttempts) {
		pod := candidates[(start+i)%len(candidates)].DeepCopy()
		pool := pod.Labels[v1alpha1.LabelPool]
		pod.Labels[v1alpha1.LabelSession] = s.Name
		pod.OwnerReferences = slices.DeleteFunc(pod.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Controller != nil && *o.Controller })
		if err := controllerutil.SetControllerReference(s, pod, r.Scheme); err != nil {
			return nil, fmt.Errorf("owning warm runner: %w", err)
		}
		controllerutil.AddFinalizer(pod, RunnerSummaryFinalizer)
		err := r.Client.Update(ctx, pod)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("claiming warm runner %s: %w", pod.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("claimed a warm runner", "pod", klog.KObj(pod), "pool", pool)
		s.Status.PodName, s.Status.Pool = pod.Name, pool
		return pod, nil
	}
	return nil, nil
}

// claimable are the pods of a pool that a session may claim now: ready,
// not going, and still their pool's.
func claimable(pods []corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		owner := metav1.GetControllerOf(p)
		if owner == nil || owner.Kind != "BrowserPool" || owner.APIVersion != v1alpha1.GroupVersion.String() {
			continue
		}
		if p.DeletionTimestamp == nil && podReady(p) && p.Status.PodIP != "" {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// claimedEarlier finds a runner the session claimed in an earlier pass
// whose status write was lost (its podName names neither pod): read past
// the cache, which may not show the claim yet, so that the session never
// claims two.
func (r *BrowserSessionReconciler) claimedEarlier(ctx context.Context, s *v1alpha1.BrowserSession) (*corev1.Pod, error) {
	if r.Claimer == nil {
		return nil, nil
	}
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(s.Namespace),
		client.MatchingLabels{v1alpha1.LabelSession: s.Name}, client.HasLabels{v1alpha1.LabelPool}); err != nil {
		return nil, fmt.Errorf("listing the session's claimed runners: %w", err)
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; metav1.IsControlledBy(p, s) {
			s.Status.PodName, s.Status.Pool = p.Name, p.Labels[v1alpha1.LabelPool]
			return p, nil
		}
	}
	return nil, nil
}

// handOver hands a claimed runner its session (Claimer), until it has it:
// handingOver says it does not yet, failure that it never will.
func (r *BrowserSessionReconciler) handOver(s *v1alpha1.BrowserSession, pod *corev1.Pod) (handingOver bool, failure string) {
	if r.Claimer == nil || pod.Labels[v1alpha1.LabelPool] == "" {
		return false, ""
	}
	if s.Status.StartedAt != nil {
		// Ready, as read: the runner has its session.
		r.Claimer.Forget(s.UID)
		return false, ""
	}
	if pod.DeletionTimestamp != nil || !podReady(pod) || pod.Status.PodIP == "" {
		// A runner deleted after its hand-over failed: the failure says
		// why, not the deletion.
		return false, r.Claimer.Failure(s.UID)
	}
	// A failure stays known until the session is over (forgetStart), so
	// that a pass that reads the session before its Failed status does
	// not claim again.
	done, failure := r.Claimer.Handover(s, pod)
	return !done, failure
}
