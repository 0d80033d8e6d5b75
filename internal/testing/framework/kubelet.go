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

package framework

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Kubelet plays the part of the kubelet and the scheduler, which envtest
// runs neither of, for tests: it writes the pod status a node would report, and holds deleted
// pods in Terminating until it lets them go, as a node does while the
// container shuts down.
type Kubelet struct {
	Client client.Client
}

// holdFinalizer keeps a deleted pod Terminating until Release.
const holdFinalizer = "test.browserfleet.io/kubelet"

// PodIP is the address Kubelet reports for every pod it runs.
const PodIP = "10.244.0.17"

// Hold makes the pod stay Terminating after its deletion until Release.
func (k Kubelet) Hold(ctx context.Context, key types.NamespacedName) error {
	return k.update(ctx, key, func(p *corev1.Pod) { controllerutil.AddFinalizer(p, holdFinalizer) })
}

// Release lets a held pod go.
func (k Kubelet) Release(ctx context.Context, key types.NamespacedName) error {
	return k.update(ctx, key, func(p *corev1.Pod) { controllerutil.RemoveFinalizer(p, holdFinalizer) })
}

func (k Kubelet) update(ctx context.Context, key types.NamespacedName, mutate func(*corev1.Pod)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := k.Client.Get(ctx, key, pod); err != nil {
			return err
		}
		mutate(pod)
		return k.Client.Update(ctx, pod)
	})
}

func (k Kubelet) setStatus(ctx context.Context, key types.NamespacedName, mutate func(*corev1.PodStatus)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := k.Client.Get(ctx, key, pod); err != nil {
			return err
		}
		mutate(&pod.Status)
		return k.Client.Status().Update(ctx, pod)
	})
}

// Bind assigns the pod to a node, as the scheduler does. A bound pod's
// deletion waits for its grace period: it stays Terminating until
// DeleteFinally, as on a node.
func (k Kubelet) Bind(ctx context.Context, key types.NamespacedName) error {
	pod := &corev1.Pod{}
	if err := k.Client.Get(ctx, key, pod); err != nil {
		return err
	}
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: "test-node"},
	}
	return k.Client.SubResource("binding").Create(ctx, pod, binding)
}

// DeleteFinally deletes the pod with no grace left, as a kubelet does once
// its containers stopped.
func (k Kubelet) DeleteFinally(ctx context.Context, key types.NamespacedName) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	return client.IgnoreNotFound(k.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)))
}

// Run reports the pod's container running, ready or not.
func (k Kubelet) Run(ctx context.Context, key types.NamespacedName, ready bool) error {
	return k.setStatus(ctx, key, func(st *corev1.PodStatus) {
		now := metav1.Now()
		readiness := corev1.ConditionFalse
		if ready {
			readiness = corev1.ConditionTrue
		}
		st.Phase = corev1.PodRunning
		st.PodIP = PodIP
		st.PodIPs = []corev1.PodIP{{IP: PodIP}}
		st.StartTime = &now
		st.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: readiness, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: readiness, LastTransitionTime: now},
		}
		st.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "runner", Ready: ready, Started: &ready, Image: "runner", ImageID: "runner",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}}
	})
}

// Wait reports the pod's container waiting to start, for a reason.
func (k Kubelet) Wait(ctx context.Context, key types.NamespacedName, reason, message string) error {
	return k.setStatus(ctx, key, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodPending
		st.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "runner", Image: "runner",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
		}}
	})
}

// Exit reports the pod's container exited with a code; a non-zero code fails
// the pod.
func (k Kubelet) Exit(ctx context.Context, key types.NamespacedName, code int32, reason, message string) error {
	return k.setStatus(ctx, key, func(st *corev1.PodStatus) {
		now := metav1.Now()
		st.Phase = corev1.PodSucceeded
		if code != 0 {
			st.Phase = corev1.PodFailed
		}
		st.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now}}
		st.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "runner", Image: "runner", ImageID: "runner",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, Message: message, StartedAt: now, FinishedAt: now,
			}},
		}}
	})
}

// Evict reports the pod failed with a pod-level reason, as a node does when
// it evicts a pod.
func (k Kubelet) Evict(ctx context.Context, key types.NamespacedName, message string) error {
	return k.setStatus(ctx, key, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodFailed
		st.Reason = "Evicted"
		st.Message = message
	})
}
