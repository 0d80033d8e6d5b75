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

package localkubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// conflictRetry is how soon a pod is looked at again after a write lost to
// a newer version, in case the cache's event for it came first.
const conflictRetry = 100 * time.Millisecond

// syncPod plays the scheduler and the kubelet for one pod: bind it, start
// its containers, report their status, and stop them when it goes away.
func (k *Kubelet) syncPod(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	k.mu.Lock()
	ps := k.pods[req.NamespacedName]
	stopping := k.stopping
	k.mu.Unlock()
	if stopping {
		return reconcile.Result{}, nil
	}

	pod := &corev1.Pod{}
	if err := k.client.Get(ctx, req.NamespacedName, pod); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("reading pod %s: %w", req.NamespacedName, err)
		}
		pod = nil
	}
	// A pod that is gone, or replaced by another of the same name, was
	// deleted without waiting for the Kubelet: kill what it left.
	if ps != nil && (pod == nil || pod.UID != ps.uid) {
		ps.kill(ps.terminationGrace())
		if ps.running() {
			return reconcile.Result{}, nil // its processes' exit brings it back
		}
		k.forget(ps)
		ps = nil
	}
	if pod == nil {
		return reconcile.Result{}, nil
	}
	log := k.log.WithValues("pod", klog.KObj(pod))

	switch pod.Spec.NodeName {
	case "":
		if pod.DeletionTimestamp != nil {
			return reconcile.Result{}, nil // the API server deletes it without a node
		}
		return reconcile.Result{}, k.bind(ctx, pod)
	case k.opts.NodeName:
	default:
		return reconcile.Result{}, nil // another node's
	}

	if pod.DeletionTimestamp != nil {
		if ps == nil {
			return reconcile.Result{}, k.deleteFinally(ctx, pod)
		}
		ps.kill(graceOf(pod))
		if err := k.writeStatus(ctx, ps, pod); err != nil {
			return k.writeFailed(err)
		}
		if ps.running() {
			return reconcile.Result{}, nil
		}
		if err := k.deleteFinally(ctx, pod); err != nil {
			return reconcile.Result{}, err
		}
		k.forget(ps)
		return reconcile.Result{}, nil
	}

	if ps == nil {
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			return reconcile.Result{}, nil
		}
		resumed := ranBefore(pod)
		if resumed && pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
			log.Info("failing pod a previous run started")
			return k.writeFailed(k.failRestarted(ctx, pod))
		}
		var err error
		if ps, err = k.newPodState(pod); err != nil {
			log.Error(err, "cannot set the pod up")
			return reconcile.Result{RequeueAfter: maxBackoff}, nil
		}
		if resumed {
			log.Info("restarting pod a previous run started")
			ps.resumeAfterRestart(pod.Status.ContainerStatuses)
		}
		k.mu.Lock()
		k.pods[req.NamespacedName] = ps
		k.mu.Unlock()
		log.Info("running pod", "podIP", ps.ip)
	}

	retry := ps.startDue(ctx)
	if err := k.writeStatus(ctx, ps, pod); err != nil {
		return k.writeFailed(err)
	}
	return reconcile.Result{RequeueAfter: retry}, nil
}

// writeFailed turns a lost write into a retry; other errors go to the
// controller's back-off.
func (k *Kubelet) writeFailed(err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: conflictRetry}, nil
	}
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil // its delete event brings it back
	}
	return reconcile.Result{}, err
}

// ranBefore reports whether a container of the pod was started by a
// previous run of the node.
func ranBefore(pod *corev1.Pod) bool {
	for _, st := range pod.Status.ContainerStatuses {
		if st.ContainerID != "" || st.State.Running != nil {
			return true
		}
	}
	return false
}

// bind assigns the pod to the node through pods/binding, as the scheduler
// does.
func (k *Kubelet) bind(ctx context.Context, pod *corev1.Pod) error {
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: k.opts.NodeName},
	}
	err := k.client.SubResource("binding").Create(ctx, pod, binding)
	switch {
	case err == nil:
		k.log.Info("bound pod", "pod", klog.KObj(pod), "node", k.opts.NodeName)
		return nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil // gone, or bound meanwhile: its next event says
	}
	return fmt.Errorf("binding pod %s to node %s: %w", klog.KObj(pod), k.opts.NodeName, err)
}

// deleteFinally deletes a pod whose processes are gone, with no grace and
// only if it is still the same pod, as the kubelet ends a graceful delete.
func (k *Kubelet) deleteFinally(ctx context.Context, pod *corev1.Pod) error {
	err := k.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: ptr.To(pod.UID)})
	switch {
	case err == nil:
		k.log.Info("deleted pod", "pod", klog.KObj(pod))
		return nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return nil
	}
	return fmt.Errorf("deleting pod %s: %w", klog.KObj(pod), err)
}

// writeStatus writes the pod's status when it changed.
func (k *Kubelet) writeStatus(ctx context.Context, ps *podState, pod *corev1.Pod) error {
	st := ps.status(&pod.Status)
	ps.mu.Lock()
	same := equality.Semantic.DeepEqual(st, pod.Status) || (ps.written != nil && equality.Semantic.DeepEqual(st, *ps.written))
	ps.mu.Unlock()
	if same {
		return nil
	}
	updated := pod.DeepCopy()
	updated.Status = st
	if err := k.client.Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("updating the status of pod %s: %w", klog.KObj(pod), err)
	}
	ps.mu.Lock()
	ps.written = &st
	ps.mu.Unlock()
	return nil
}

// failRestarted reports a pod that a previous run started and whose
// restart policy forbids starting again Failed: its processes died with
// that run.
func (k *Kubelet) failRestarted(ctx context.Context, pod *corev1.Pod) error {
	updated := pod.DeepCopy()
	st := &updated.Status
	t := mtime(now())
	st.Phase, st.Reason, st.Message = corev1.PodFailed, reasonNodeRestarted, messageNodeRestarted
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if cs.State.Terminated != nil {
			continue
		}
		term := &corev1.ContainerStateTerminated{
			ExitCode: 128 + 9, Reason: reasonNodeRestarted, Message: messageNodeRestarted,
			FinishedAt: t, ContainerID: cs.ContainerID,
		}
		if r := cs.State.Running; r != nil {
			term.StartedAt = r.StartedAt
		}
		cs.State = corev1.ContainerState{Terminated: term}
		cs.Ready, cs.Started = false, ptr.To(false)
	}
	completed := condition{corev1.ConditionFalse, "PodCompleted", ""}
	setCondition(st, corev1.PodReadyToStartContainers, condition{status: corev1.ConditionFalse}, t)
	setCondition(st, corev1.ContainersReady, completed, t)
	setCondition(st, corev1.PodReady, completed, t)
	if err := k.client.Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("failing pod %s: %w", klog.KObj(pod), err)
	}
	return nil
}

// forget drops a pod whose processes are gone: its address goes back to the
// pool and its directory away; its logs stay.
func (k *Kubelet) forget(ps *podState) {
	k.mu.Lock()
	if k.pods[ps.key] == ps {
		delete(k.pods, ps.key)
	}
	k.mu.Unlock()
	ps.mu.Lock()
	if !ps.released {
		ps.released = true
		k.ips.put(ps.ip)
	}
	ps.mu.Unlock()
	ps.cancel()
	if err := errors.Join(os.RemoveAll(ps.dir), os.Remove(ps.link)); err != nil {
		k.log.Error(err, "cannot remove the pod directory", "pod", ps.log)
	}
}

// podsWaitingFor maps a Secret or ConfigMap to the pods of its namespace
// that wait for one, so that they retry as soon as it changes.
func (k *Kubelet) podsWaitingFor(_ context.Context, obj client.Object) []reconcile.Request {
	k.mu.Lock()
	defer k.mu.Unlock()
	var reqs []reconcile.Request
	for key, ps := range k.pods {
		if key.Namespace == obj.GetNamespace() && ps.waitingForConfig() {
			reqs = append(reqs, reconcile.Request{NamespacedName: key})
		}
	}
	return reqs
}
