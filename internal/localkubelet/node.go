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
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// hostIP is the node's address, and every pod's hostIP.
const hostIP = "127.0.0.1"

// kubeletVersion is what the node reports as its kubelet version.
const kubeletVersion = "v0.0.0-localkubelet"

// registerNode creates the Kubelet's Node, or takes over the one a previous
// run left, and reports it Ready. There is no heartbeat: nothing in envtest
// watches nodes' health.
func (k *Kubelet) registerNode(ctx context.Context) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: k.opts.NodeName,
		Labels: map[string]string{
			corev1.LabelHostname:   k.opts.NodeName,
			corev1.LabelOSStable:   runtime.GOOS,
			corev1.LabelArchStable: runtime.GOARCH,
		},
	}}
	if err := k.client.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node %s: %w", k.opts.NodeName, err)
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	ready := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "the local kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
	}
	capacity := nodeCapacity()
	return k.updateNode(ctx, func(n *corev1.Node) {
		n.Status.Capacity = capacity
		n.Status.Allocatable = capacity
		n.Status.Addresses = []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: hostIP},
			{Type: corev1.NodeHostName, Address: k.opts.NodeName},
		}
		n.Status.NodeInfo = corev1.NodeSystemInfo{
			KubeletVersion:          kubeletVersion,
			ContainerRuntimeVersion: "localkubelet://" + runtime.Version(),
			OperatingSystem:         runtime.GOOS,
			Architecture:            runtime.GOARCH,
			OSImage:                 runtime.GOOS,
			KernelVersion:           "unknown",
		}
		n.Status.Conditions = []corev1.NodeCondition{
			ready,
			nodePressure(corev1.NodeMemoryPressure, "KubeletHasSufficientMemory", now),
			nodePressure(corev1.NodeDiskPressure, "KubeletHasNoDiskPressure", now),
			nodePressure(corev1.NodePIDPressure, "KubeletHasSufficientPID", now),
		}
	})
}

func nodePressure(typ corev1.NodeConditionType, reason string, now metav1.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: typ, Status: corev1.ConditionFalse, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
}

// markNodeStopped reports the node's Ready condition Unknown, as the node
// lifecycle controller would once the heartbeats stop. The API server may be
// gone already, so it tries briefly and only logs failure.
func (k *Kubelet) markNodeStopped() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	err := k.updateNode(ctx, func(n *corev1.Node) {
		for i := range n.Status.Conditions {
			if c := &n.Status.Conditions[i]; c.Type == corev1.NodeReady {
				c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "the local kubelet stopped"
				c.LastTransitionTime = now
			}
		}
	})
	if err != nil {
		k.log.Info("could not mark the node stopped", "node", k.opts.NodeName, "err", err.Error())
	}
}

func (k *Kubelet) updateNode(ctx context.Context, mutate func(*corev1.Node)) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := k.reader.Get(ctx, keyOf(k.opts.NodeName, ""), node); err != nil {
			return err
		}
		mutate(node)
		return k.client.Status().Update(ctx, node)
	})
	if err != nil {
		return fmt.Errorf("updating the status of node %s: %w", k.opts.NodeName, err)
	}
	return nil
}

// nodeCapacity is the host's CPUs and memory, and as many pods as a pod
// address block holds.
func nodeCapacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(hostMemory(), resource.BinarySI),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		corev1.ResourcePods:             *resource.NewQuantity(poolSize, resource.DecimalSI),
	}
}

// hostMemory is MemTotal from /proc/meminfo, or 8Gi where there is none.
func hostMemory() int64 {
	const fallback = 8 << 30
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallback
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return fallback
}
