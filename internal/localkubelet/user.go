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
	"errors"
	"fmt"
	"slices"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// containerUser is the user and groups a container's process runs as, when
// the Kubelet runs as root: runAsUser and runAsGroup (the container's, else
// the pod's; the group defaults to the user's id, where a kubelet would take
// the image's), with the pod's fsGroup and supplementalGroups. nil means the
// Kubelet's own user: the Kubelet is not root (it cannot change users), or
// the pod names no user and does not insist on a non-root one. The error is
// what the kubelet reports with CreateContainerConfigError.
func containerUser(root bool, pod *corev1.Pod, c *corev1.Container) (*syscall.Credential, error) {
	if !root {
		return nil, nil
	}
	var uid, gid *int64
	nonRoot := false
	if sc := pod.Spec.SecurityContext; sc != nil {
		uid, gid = sc.RunAsUser, sc.RunAsGroup
		nonRoot = sc.RunAsNonRoot != nil && *sc.RunAsNonRoot
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = *sc.RunAsNonRoot
		}
	}
	switch {
	case uid == nil && nonRoot:
		return nil, errors.New("container has runAsNonRoot and image will run as root (the local kubelet knows no image's user: set runAsUser)")
	case uid == nil:
		return nil, nil
	case *uid == 0 && nonRoot:
		return nil, errors.New("container's runAsUser breaks non-root policy")
	case *uid < 0 || *uid > 1<<31-1 || (gid != nil && (*gid < 0 || *gid > 1<<31-1)):
		return nil, fmt.Errorf("runAsUser %d or runAsGroup is out of range", *uid)
	}
	if gid == nil {
		gid = uid
	}
	cred := &syscall.Credential{Uid: uint32(*uid), Gid: uint32(*gid), Groups: []uint32{}}
	if sc := pod.Spec.SecurityContext; sc != nil {
		groups := sc.SupplementalGroups
		if sc.FSGroup != nil {
			groups = append([]int64{*sc.FSGroup}, groups...)
		}
		for _, g := range groups {
			if g >= 0 && g <= 1<<31-1 && uint32(g) != cred.Gid && !slices.Contains(cred.Groups, uint32(g)) {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	return cred, nil
}
