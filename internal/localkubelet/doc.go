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

// Package localkubelet is a stand-in for the kubelet (and the scheduler) that
// runs pods' containers as local processes. envtest has neither, so pods
// stay Pending forever; with a Kubelet running, the API server's test suites
// and `make dev` run the real runner binary for each runner pod, and the
// controllers and the API server see what they would see on a cluster. No
// product package knows this package exists.
//
// What it does, as far as the API server can see:
//
//   - It registers a Node (Options.NodeName) with condition Ready, and binds
//     the pods it watches (Options.Selector, Options.Namespaces) that have no
//     node to it through pods/binding, as the scheduler would. Scheduling
//     constraints (node selectors, affinity, taints, resources) are ignored.
//     A pod that stops matching the selector is as good as deleted.
//   - It resolves each container's environment as the kubelet does: value
//     with $(VAR) expansion, fieldRef, resourceFieldRef, secretKeyRef and
//     configMapKeyRef (honouring optional), and envFrom with prefixes. A
//     missing Secret, ConfigMap or key leaves the container Waiting with
//     reason CreateContainerConfigError until it appears; command and args
//     get $(VAR) expansion too.
//   - Secret, ConfigMap and projected volumes (of Secrets and ConfigMaps)
//     that a container mounts are written into the pod directory, at
//     volumes/<name>, when the container starts: the items asked for, or
//     every key, with the mode of the item, else the volume's defaultMode,
//     else 0644, and, when the Kubelet runs as root, owned by the
//     container's user (where a kubelet makes them root's with the pod's
//     fsGroup: for a pod whose fsGroup is its own group, 0400 reads the
//     same). In-container paths under a mount path (the mount path itself
//     or below it; subPath honoured) are rewritten to the pod directory's
//     copy wherever they stand alone in an environment value or an
//     argument, or follow the = of a --flag=value argument; other mentions
//     stay as written. A missing Secret or ConfigMap (unless optional)
//     leaves the container Waiting with reason ContainerCreating and the
//     kubelet's FailedMount words until it appears. The files are plain
//     files on the host's disk, not tmpfs, and a running container does not
//     see later changes.
//   - Images are not pulled: Options.Images maps an image name to the local
//     argv of its entrypoint and default args, and Options.Paths maps
//     in-container executables named in command to local ones. An image
//     without a mapping leaves the container Waiting with reason ErrImagePull.
//   - Each pod gets its own loopback address: a Kubelet picks a random
//     127.A.B.0/24 block, so that parallel test processes do not collide, and
//     hands out .1, .2, ... in turn, reusing a freed address only after all
//     others were used. Linux routes all of 127.0.0.0/8 to the loopback
//     interface, so no alias needs configuring; macOS needs the block's
//     addresses configured as lo0 aliases.
//   - Readiness probes (httpGet and tcpSocket; grpc is a TCP connect, exec
//     always succeeds) drive the ContainersReady and Ready conditions.
//     Liveness and startup probes are ignored.
//   - A container's exit is reported as the kubelet reports it. Its
//     termination message is what the process left in the file that stands
//     for its terminationMessagePath (a fresh empty file per start,
//     termination-<container> in the pod directory, the container user's;
//     the in-container path is rewritten to it in the environment and the
//     arguments as a mount's are), at most 4096 bytes; when that is empty
//     and the container failed, with terminationMessagePolicy
//     FallbackToLogsOnError, the end of its log. Restart policies
//     Always and OnFailure restart it after a back-off of 1s, 2s, ... up to
//     10s; with Never the pod ends Succeeded or Failed.
//   - Deleting a pod sends SIGTERM to its processes, waits for the grace
//     period, sends SIGKILL, and only then deletes the pod for good (grace
//     period 0, UID precondition), as the kubelet does; until then the pod
//     is Terminating. A pod deleted outright has its processes killed the
//     same way, with the grace period it had, or the kubelet's minimum of
//     2s when it was deleted with none.
//
// Processes. Each container is one process started in the pod's directory,
// with HOME and TMPDIR its home and tmp subdirectories. Pod directories are
// short paths in a directory of the Kubelet's under the system's temporary
// directory (lk-*/p<n>), because Unix socket paths, such as Chromium's
// SingletonSocket in TMPDIR, have at most 107 bytes; the state directory
// links to each as StateDir/pods/<namespace>_<name>_<uid>. HOME and TMPDIR
// override what the pod sets: the in-container paths a pod names, such as
// HOME=/tmp on an emptyDir, are not private on the host. The process does
// not inherit the Kubelet's environment, so that it sees what a container
// would: only PATH (unless the pod sets it), HOSTNAME (the pod's name), the
// image's Env from Options.Images and the container's resolved env.
//
// Users. A Kubelet that runs as root (as `make dev` and the test suites do
// in CI) runs each container's process as its runAsUser and runAsGroup (the
// container's security context, else the pod's; the group defaults to the
// user's id, where a kubelet would take the image's), with the pod's
// fsGroup and supplementalGroups: runner pods run as 65532, as the runner
// image does. The pod directory, its HOME and its TMPDIR belong to the user
// of the pod's first container, mode 0700, and the directory that holds the
// pod directories is searchable but not listable by others (mode 0711); so
// a runner process can write in its own pod directory and in world-writable
// places (/tmp, /dev/shm), and nowhere the Kubelet's user owns. A pod that
// names no user runs as root, unless it sets runAsNonRoot, which then waits
// with CreateContainerConfigError, as with an image whose user is root. What
// a process runs and reads must be reachable by its user: an executable
// under a private directory (a test's temporary directory, a clone in
// /root) fails to start with StartError naming the directory, so suites
// build their binaries into directories every user can search, and the dev
// stack runs a copy of its runner binary. A Kubelet that is not root cannot
// change users: every process runs as its own user.
//
// Each process gets a session (and so a process group) of its own, and
// SIGKILL when the Kubelet's process dies, so nothing outlives the Kubelet.
// SIGTERM goes to its process group; SIGKILL, and the end of the first
// process, to everything left in its session, as a PID namespace's
// processes die with its first one. Only a process that starts a session
// of its own (Chromium's crashpad handler does) escapes: it must end by
// itself when its parent dies. Output goes to
// StateDir/logs/<namespace>_<pod>_<container>.log (appended to, and kept
// after the pod is gone) and, when set, to Options.LogOutput with each line
// prefixed by pod and container. All of a pod's containers run, sharing its
// address, directory, HOME and TMPDIR; init containers are not run, so a
// pod with some stays Pending with a message saying so.
//
// What it does not fake: no container isolation (no namespaces, cgroups,
// resource limits, capabilities, seccomp or read-only root; the users above
// are all of security contexts it honours, and pods of the same user can
// reach each other's directories), no image pulls, no volumes other than
// the ones above (emptyDir and other mount paths are not mounted: the
// process sees its own HOME and TMPDIR instead; nothing is read-only), no
// container working directories, no lifecycle
// hooks, no liveness or startup probes, no ephemeral containers, no node
// heartbeats or leases, no network namespace: the pod address is a loopback
// address shared by the host, so the ports a pod listens on must be free on
// it, and nothing stops a pod from reaching another's.
//
// Restarts (`make dev` keeps etcd across runs). A Kubelet wipes
// StateDir/pods when it starts, and pods bound to its node that a previous
// Kubelet ran have no process any more. With restart policy Never such a pod
// is reported Failed with reason NodeRestarted, so that whatever owns it
// sees it fail; with Always or OnFailure its containers start again with
// their restart counts increased. Pods Terminating from the previous run are
// deleted for good at once. (The pod directories, lk-* in the system's
// temporary directory, are removed when Run returns; a Kubelet killed
// outright leaves its own behind.)
//
// Its credentials (Options.Config) need what a kubelet's and a scheduler's
// have: nodes and nodes/status, pods, pods/status and pods/binding, and
// reading Secrets and ConfigMaps (for environments and volumes).
//
// Stopping. Run returns once its context is cancelled and every process has
// exited: each gets SIGTERM, then SIGKILL after the smaller of its grace
// period and Options.StopTimeout. Pod statuses are left as they were; the
// Node's Ready condition becomes Unknown.
package localkubelet
