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
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// sessionPhase derives the phase, for people to read, from the conditions.
func sessionPhase(st *v1alpha1.BrowserSessionStatus) v1alpha1.BrowserSessionPhase {
	switch {
	case meta.IsStatusConditionTrue(st.Conditions, v1alpha1.BrowserSessionConditionFailed):
		return v1alpha1.BrowserSessionFailed
	case meta.IsStatusConditionTrue(st.Conditions, v1alpha1.BrowserSessionConditionEnded):
		return v1alpha1.BrowserSessionEnded
	case meta.IsStatusConditionTrue(st.Conditions, v1alpha1.BrowserSessionConditionEnding):
		return v1alpha1.BrowserSessionEnding
	case meta.IsStatusConditionTrue(st.Conditions, v1alpha1.BrowserSessionConditionReady):
		return v1alpha1.BrowserSessionReady
	case st.PodName != "":
		return v1alpha1.BrowserSessionStarting
	default:
		return v1alpha1.BrowserSessionPending
	}
}

// sessionOver reports whether the session reached a terminal state.
func sessionOver(st *v1alpha1.BrowserSessionStatus) bool {
	return st.Finished()
}

func setSessionCondition(s *v1alpha1.BrowserSession, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: s.Generation,
	})
}

// markUnsupported sets the UnsupportedSetting condition from the settings
// of the spec this installation does not honour, and removes it when there
// are none.
func markUnsupported(s *v1alpha1.BrowserSession) {
	list := v1alpha1.UnsupportedSettings(&s.Spec)
	if len(list) == 0 {
		meta.RemoveStatusCondition(&s.Status.Conditions, v1alpha1.BrowserSessionConditionUnsupportedSetting)
		return
	}
	setSessionCondition(s, v1alpha1.BrowserSessionConditionUnsupportedSetting, metav1.ConditionTrue,
		v1alpha1.BrowserSessionReasonSettingsIgnored, v1alpha1.UnsupportedSettingsMessage(list))
}

// markFailed makes the session Failed, a terminal state.
func markFailed(s *v1alpha1.BrowserSession, reason, message string, now time.Time) {
	setSessionCondition(s, v1alpha1.BrowserSessionConditionFailed, metav1.ConditionTrue, reason, message)
	setSessionCondition(s, v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonSessionOver, "the session failed")
	s.Status.EndedAt = &metav1.Time{Time: now}
	s.Status.Message = message
}

// markEnding records that the session was asked to end.
func markEnding(s *v1alpha1.BrowserSession, reason, message string) {
	setSessionCondition(s, v1alpha1.BrowserSessionConditionEnding, metav1.ConditionTrue, reason, message)
	setSessionCondition(s, v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonSessionOver, "the session is ending")
	s.Status.Message = message
}

// markEnded records that an ending session's browser has stopped.
func markEnded(s *v1alpha1.BrowserSession, now time.Time) {
	const msg = "the browser stopped and the runner pod is gone"
	setSessionCondition(s, v1alpha1.BrowserSessionConditionEnded, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonBrowserStopped, msg)
	s.Status.EndedAt = &metav1.Time{Time: now}
	s.Status.Endpoint = ""
	s.Status.CDPURL = ""
	s.Status.Message = "session ended: " + msg
}

// observePod derives the session's state from its runner pod. handingOver
// says the pod is a pool's runner that the session claimed and that does
// not have the session yet (Claimer): it is ready, the session not.
func observePod(s *v1alpha1.BrowserSession, pod *corev1.Pod, now time.Time, handingOver bool) {
	switch {
	case pod.DeletionTimestamp != nil:
		markFailed(s, v1alpha1.BrowserSessionReasonPodDeleted,
			fmt.Sprintf("runner pod %s was deleted while the session was running", pod.Name), now)
	case pod.Status.Phase == corev1.PodFailed:
		markFailed(s, v1alpha1.BrowserSessionReasonPodFailed, "runner pod failed: "+podFailure(pod), now)
	case pod.Status.Phase == corev1.PodSucceeded:
		markFailed(s, v1alpha1.BrowserSessionReasonRunnerExited, "runner exited before the session ended: "+podFailure(pod), now)
	case podReady(pod) && pod.Status.PodIP != "" && handingOver:
		msg := fmt.Sprintf("handing the warm runner %s of pool %s the session", pod.Name, pod.Labels[v1alpha1.LabelPool])
		setSessionCondition(s, v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonHandingOver, msg)
		s.Status.Message = msg
	case podReady(pod) && pod.Status.PodIP != "":
		setSessionCondition(s, v1alpha1.BrowserSessionConditionReady, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonRunnerReady, "the runner is ready")
		if s.Status.StartedAt == nil {
			s.Status.StartedAt = &metav1.Time{Time: now}
		}
		hostPort := runnerHostPort(pod.Status.PodIP)
		s.Status.Endpoint = "http://" + hostPort
		s.Status.CDPURL = "ws://" + hostPort + rpc.CDPPath
		s.Status.Message = "the runner is ready"
	default:
		reason := v1alpha1.BrowserSessionReasonRunnerNotReady
		if pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "" {
			reason = v1alpha1.BrowserSessionReasonPodPending
		}
		msg := podWaiting(pod)
		setSessionCondition(s, v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, reason, msg)
		s.Status.Message = msg
	}
}

// runnerHostPort is the address of the runner RPC of the pod at ip.
func runnerHostPort(ip string) string {
	return net.JoinHostPort(ip, strconv.Itoa(int(rpc.Port)))
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podFailure describes why a pod's runner stopped, from the pod's reason or
// its container's last state.
func podFailure(pod *corev1.Pod) string {
	var parts []string
	if pod.Status.Reason != "" {
		parts = append(parts, pod.Status.Reason)
	}
	if pod.Status.Message != "" {
		parts = append(parts, pod.Status.Message)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			desc := fmt.Sprintf("container %s exited with code %d", cs.Name, t.ExitCode)
			if t.Reason != "" {
				desc += " (" + t.Reason + ")"
			}
			// The runner's summary of its history is no words for people.
			if t.Message != "" && !isSummary(t.Message) {
				desc += ": " + t.Message
			}
			parts = append(parts, desc)
		}
	}
	if len(parts) == 0 {
		return "pod phase " + string(pod.Status.Phase)
	}
	return strings.Join(parts, ": ")
}

// podWaiting describes why a pod's runner is not ready yet.
func podWaiting(pod *corev1.Pod) string {
	phase := pod.Status.Phase
	if phase == "" {
		phase = corev1.PodPending
	}
	msg := fmt.Sprintf("runner pod %s is %s", pod.Name, phase)
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
			msg += ": " + c.Message
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			msg += fmt.Sprintf(": container %s is waiting: %s", cs.Name, w.Reason)
			if w.Message != "" {
				msg += ": " + w.Message
			}
		} else if cs.State.Running != nil && !cs.Ready {
			msg += fmt.Sprintf(": container %s is running but not ready", cs.Name)
		}
	}
	return msg
}
