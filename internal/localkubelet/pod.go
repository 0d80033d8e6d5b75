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
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Container waiting reasons and messages, as the kubelet words them where it
// has one.
const (
	reasonConfigError    = "CreateContainerConfigError"
	reasonCreateError    = "CreateContainerError"
	reasonErrImagePull   = "ErrImagePull"
	reasonCrashLoop      = "CrashLoopBackOff"
	reasonCreating       = "ContainerCreating"
	reasonPodInitiating  = "PodInitializing"
	reasonStartError     = "StartError"
	reasonNodeRestarted  = "NodeRestarted"
	messageNodeRestarted = "the local kubelet restarted; the container's process is gone"
)

// Back-offs: of restarts (as the kubelet's, 10 times faster), and of retries
// of a container whose configuration is missing, which a watch on Secrets
// and ConfigMaps usually cuts short.
const (
	minBackoff = time.Second
	maxBackoff = 10 * time.Second
)

// minGrace is the grace period of a pod deleted with none (forced), the
// kubelet's minimum.
const minGrace = 2 * time.Second

// podState is a pod the Kubelet runs: its address, its directory and its
// containers. The reconciler starts containers and writes the status;
// processes' goroutines and probes change the state and enqueue the pod.
type podState struct {
	k   *Kubelet
	key types.NamespacedName
	uid types.UID
	// pod is the pod as first seen; what the Kubelet reads of its spec
	// does not change.
	pod *corev1.Pod
	ip  string
	// dir is the pod's directory, which holds its HOME and TMPDIR; link is
	// its name in the state directory.
	dir, link string
	// owner is the user the pod directory belongs to; nil: the Kubelet's.
	owner     *syscall.Credential
	startTime metav1.Time
	// ctx ends probes when the pod terminates.
	ctx    context.Context
	cancel context.CancelFunc
	log    klog.ObjectRef

	mu          sync.Mutex
	containers  []*containerState
	terminating bool
	released    bool
	// written is the status last written, to not write it again.
	written *corev1.PodStatus
}

// containerState is one container: exactly one of waiting, proc and
// terminated describes it now.
type containerState struct {
	spec    corev1.Container
	waiting *corev1.ContainerStateWaiting
	proc    *process
	// startedAt is proc's start.
	startedAt   time.Time
	terminated  *corev1.ContainerStateTerminated
	last        *corev1.ContainerStateTerminated
	containerID string
	restarts    int32
	ready       bool
	// termFile is the local file that stands for the running process's
	// terminationMessagePath.
	termFile string
	// pending means the reconciler should start the container, not before
	// startAfter.
	pending    bool
	startAfter time.Time
	// restarting means the next start is a restart, which counts.
	restarting bool
	// backoff is the restart back-off; configBackoff the retry of a
	// missing configuration.
	backoff, configBackoff time.Duration
}

func keyOf(name, namespace string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// now is the time for statuses: the API keeps seconds, and a status the
// Kubelet computes twice must come out the same.
func now() time.Time { return time.Now().Truncate(time.Second) }

func mtime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }

// newPodState allocates the pod's address and directory. The directory
// has a short path under the Kubelet's temporary root, so that Unix socket
// paths in its TMPDIR (Chromium's SingletonSocket) stay within 107 bytes;
// the state directory links to it. It belongs to the user of the pod's
// first container, mode 0700, as do the HOME and TMPDIR in it.
func (k *Kubelet) newPodState(pod *corev1.Pod) (*podState, error) {
	ip, err := k.ips.get()
	if err != nil {
		return nil, err
	}
	var owner *syscall.Credential
	if len(pod.Spec.Containers) > 0 {
		// A container that cannot run says so when it starts.
		owner, _ = containerUser(k.root, pod, &pod.Spec.Containers[0])
	}
	dir := filepath.Join(k.tmpRoot, fmt.Sprintf("p%d", k.podSeq.Add(1)))
	link := filepath.Join(k.opts.podsDir(), fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
	err = errors.Join(
		ownedDir(dir, owner),
		ownedDir(filepath.Join(dir, "home"), owner),
		ownedDir(filepath.Join(dir, "tmp"), owner),
		os.Symlink(dir, link),
	)
	if err != nil {
		k.ips.put(ip)
		_ = os.RemoveAll(dir)
		_ = os.Remove(link)
		return nil, fmt.Errorf("creating the pod directory: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ps := &podState{
		k: k, key: keyOf(pod.Name, pod.Namespace), uid: pod.UID, pod: pod.DeepCopy(),
		ip: ip, dir: dir, link: link, owner: owner, startTime: mtime(time.Now()), ctx: ctx, cancel: cancel, log: klog.KObj(pod),
	}
	for _, c := range pod.Spec.Containers {
		cs := &containerState{spec: c, pending: true}
		cs.waiting = &corev1.ContainerStateWaiting{Reason: reasonCreating}
		if len(pod.Spec.InitContainers) > 0 {
			cs.pending = false
			cs.waiting = &corev1.ContainerStateWaiting{
				Reason:  reasonPodInitiating,
				Message: "the local kubelet does not run init containers, so this pod never starts",
			}
		}
		ps.containers = append(ps.containers, cs)
	}
	return ps, nil
}

// ownedDir makes dir, mode 0700, belonging to owner when set.
func ownedDir(dir string, owner *syscall.Credential) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if owner == nil {
		return nil
	}
	return os.Chown(dir, int(owner.Uid), int(owner.Gid))
}

// resumeAfterRestart carries over what a previous Kubelet's run of the pod
// left in its status: the restart counts, and the runs its end cut short.
func (ps *podState) resumeAfterRestart(old []corev1.ContainerStatus) {
	t := now()
	for _, cs := range ps.containers {
		for _, st := range old {
			if st.Name != cs.spec.Name {
				continue
			}
			cs.restarts = st.RestartCount + 1
			cs.last = st.LastTerminationState.Terminated
			if r := st.State.Running; r != nil {
				cs.last = &corev1.ContainerStateTerminated{
					ExitCode: 128 + 9, Reason: reasonNodeRestarted, Message: messageNodeRestarted,
					StartedAt: r.StartedAt, FinishedAt: mtime(t), ContainerID: st.ContainerID,
				}
			}
			cs.containerID = st.ContainerID
		}
	}
}

// terminationGrace is how long the pod's processes have between SIGTERM
// and SIGKILL when it goes away without a graceful deletion.
func (ps *podState) terminationGrace() time.Duration {
	return graceOf(ps.pod)
}

func graceOf(pod *corev1.Pod) time.Duration {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return corev1.DefaultTerminationGracePeriodSeconds * time.Second
}

// startDue starts the containers that are due, and returns when the next
// one is due, or 0.
func (ps *podState) startDue(ctx context.Context) time.Duration {
	var next time.Duration
	ps.mu.Lock()
	var due []*containerState
	for _, cs := range ps.containers {
		if !cs.pending || ps.terminating {
			continue
		}
		if wait := time.Until(cs.startAfter); wait > 0 {
			next = minPositive(next, wait)
			continue
		}
		due = append(due, cs)
	}
	ps.mu.Unlock()
	for _, cs := range due {
		if retry := ps.start(ctx, cs); retry > 0 {
			next = minPositive(next, retry)
		}
	}
	return next
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || b < a {
		return b
	}
	return a
}

// start starts one container, or records why it cannot; it returns when to
// try again, or 0.
func (ps *podState) start(ctx context.Context, cs *containerState) time.Duration {
	k := ps.k
	log := k.log.WithValues("pod", ps.log, "container", cs.spec.Name)
	img, ok := k.opts.Images[cs.spec.Image]
	if !ok {
		log.Info("no local mapping for image", "image", cs.spec.Image)
		ps.setWaiting(cs, reasonErrImagePull, fmt.Sprintf(
			"the local kubelet does not pull images and has no mapping for image %q: add it to localkubelet.Options.Images "+
				"(image name to local entrypoint and args)", cs.spec.Image), false)
		return 0
	}
	env := &podEnv{pod: ps.pod, podIP: ps.ip, reader: k.reader}
	vars, err := env.resolveEnv(ctx, &cs.spec)
	if err != nil {
		log.Info("cannot configure container", "err", err.Error())
		ps.mu.Lock()
		cs.configBackoff = nextBackoff(cs.configBackoff)
		retry := cs.configBackoff
		ps.mu.Unlock()
		ps.setWaiting(cs, reasonConfigError, err.Error(), true)
		return retry
	}
	cred, err := containerUser(k.root, ps.pod, &cs.spec)
	if err != nil {
		log.Info("cannot configure container", "err", err.Error())
		ps.setWaiting(cs, reasonConfigError, err.Error(), false)
		return 0
	}
	mounts, err := ps.mountVolumes(ctx, &cs.spec, cred)
	if err != nil {
		log.Info("cannot mount the container's volumes", "err", err.Error())
		var retry time.Duration
		if errors.As(err, new(errMount)) {
			ps.mu.Lock()
			cs.configBackoff = nextBackoff(cs.configBackoff)
			retry = cs.configBackoff
			ps.mu.Unlock()
		}
		ps.setWaiting(cs, reasonCreating, err.Error(), retry > 0)
		return retry
	}
	// The termination message file, fresh for each start as a kubelet's
	// is, stands for the container's terminationMessagePath.
	termFile, err := ps.terminationFile(&cs.spec, cred)
	if err != nil {
		log.Info("cannot create the termination message file", "err", err.Error())
		ps.setWaiting(cs, reasonCreateError, err.Error(), false)
		return 0
	}
	if p := cs.spec.TerminationMessagePath; p != "" {
		mounts = append([]mount{{path: filepath.Clean(p), local: termFile}}, mounts...)
	}
	// In-container paths under a volume's mount name the pod directory's
	// copy, in the environment and the arguments alike.
	for name, v := range vars {
		vars[name] = rewritePath(v, mounts)
	}
	argv, err := k.argv(&cs.spec, img, vars)
	if err != nil {
		log.Info("cannot create container", "err", err.Error())
		ps.setWaiting(cs, reasonCreateError, err.Error(), false)
		return 0
	}
	for i := 1; i < len(argv); i++ {
		argv[i] = rewriteArg(argv[i], mounts)
	}
	procEnv := ps.processEnv(img, vars)

	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.terminating {
		return 0
	}
	cs.configBackoff = 0
	if cs.restarting {
		cs.restarts++
		cs.restarting = false
	}
	cs.pending = false
	var p *process
	path, err := lookPath(argv[0], procEnv["PATH"])
	if err == nil {
		argv[0] = path
		err = executableBy(path, cred)
	}
	if err == nil {
		prefix := fmt.Sprintf("[%s/%s] ", ps.key.Name, cs.spec.Name)
		p, err = startProcess(argv, envList(procEnv), ps.dir, cred, k.LogPath(ps.key, cs.spec.Name), k.logOut, prefix)
	}
	if err == nil {
		cs.proc, cs.startedAt, cs.waiting, cs.ready = p, p.startedAt, nil, false
		cs.termFile = termFile
		cs.containerID = fmt.Sprintf("local://%d", p.pid)
		if cred != nil {
			log.Info("started container", "pid", p.pid, "argv", argv, "uid", cred.Uid, "gid", cred.Gid)
		} else {
			log.Info("started container", "pid", p.pid, "argv", argv)
		}
		k.procs.Add(1)
		go ps.watch(cs, p)
		go ps.probe(ps.ctx, cs, p)
		return 0
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("%w (an in-container path? map it to a local executable in localkubelet.Options.Paths)", err)
	}
	log.Info("cannot start container", "err", err.Error())
	t := now()
	ps.exitedLocked(cs, &corev1.ContainerStateTerminated{
		ExitCode: 128, Reason: reasonStartError, Message: err.Error(), StartedAt: mtime(t), FinishedAt: mtime(t),
	}, 0)
	return cs.pendingRetry()
}

func (cs *containerState) pendingRetry() time.Duration {
	if !cs.pending {
		return 0
	}
	return max(time.Until(cs.startAfter), time.Millisecond)
}

// setWaiting records why the container does not start; retry says whether
// the reconciler tries again.
func (ps *podState) setWaiting(cs *containerState, reason, message string, retry bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	cs.waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: message}
	cs.pending = retry
}

// argv is the command line of a container: the container's command, or the
// image's entrypoint; the container's args, or with no command the image's
// args when the container has none. In-container executables map to local
// ones through Options.Paths.
func (k *Kubelet) argv(c *corev1.Container, img Image, env map[string]string) ([]string, error) {
	command, args := expandAll(c.Command, env), expandAll(c.Args, env)
	var argv []string
	switch {
	case len(command) > 0:
		argv = append(slices.Clone(command), args...)
	case len(c.Args) > 0:
		argv = append(slices.Clone(img.Entrypoint), args...)
	default:
		argv = append(slices.Clone(img.Entrypoint), img.Args...)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command specified: image %q has no entrypoint in localkubelet.Options.Images and the container sets no command", c.Image)
	}
	if local, ok := k.opts.Paths[argv[0]]; ok {
		argv[0] = local
	}
	return argv, nil
}

// processEnv is the environment a process starts with: what a container
// would see, not the Kubelet's (see the package documentation).
func (ps *podState) processEnv(img Image, vars map[string]string) map[string]string {
	env := map[string]string{}
	if path, ok := os.LookupEnv("PATH"); ok {
		env["PATH"] = path
	}
	env["HOSTNAME"] = ps.key.Name
	maps.Copy(env, img.Env)
	maps.Copy(env, vars)
	env["HOME"] = filepath.Join(ps.dir, "home")
	env["TMPDIR"] = filepath.Join(ps.dir, "tmp")
	return env
}

func envList(env map[string]string) []string {
	list := make([]string, 0, len(env))
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	sort.Strings(list)
	return list
}

func nextBackoff(d time.Duration) time.Duration {
	if d <= 0 {
		return minBackoff
	}
	return min(2*d, maxBackoff)
}

// maxTerminationMessage is as much of a termination message file as a
// kubelet reports.
const maxTerminationMessage = 4096

// terminationFile makes the empty local file that stands for a container's
// terminationMessagePath: termination-<container> in the pod directory,
// the container user's.
func (ps *podState) terminationFile(c *corev1.Container, owner *syscall.Credential) (string, error) {
	path := filepath.Join(ps.dir, "termination-"+c.Name)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("removing the previous termination message: %w", err)
	}
	if err := writeOwnedFile(path, nil, 0o600, owner); err != nil {
		return "", fmt.Errorf("creating %s: %w", path, err)
	}
	return path, nil
}

// terminationMessage reads what a container left in its termination
// message file, at most maxTerminationMessage bytes, as a kubelet does.
func terminationMessage(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	b, _ := io.ReadAll(io.LimitReader(f, maxTerminationMessage))
	return string(b)
}

// watch waits for a container's process to end and records it.
func (ps *podState) watch(cs *containerState, p *process) {
	defer ps.k.procs.Done()
	p.wait()
	t := now()
	term := &corev1.ContainerStateTerminated{
		ExitCode:    p.exitCode,
		Reason:      "Completed",
		StartedAt:   mtime(p.startedAt),
		FinishedAt:  mtime(t),
		ContainerID: fmt.Sprintf("local://%d", p.pid),
	}
	if p.exitCode != 0 {
		term.Reason = "Error"
	}
	ps.mu.Lock()
	termFile := cs.termFile
	ps.mu.Unlock()
	term.Message = terminationMessage(termFile)
	if term.Message == "" && p.exitCode != 0 && cs.spec.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError {
		term.Message = p.logTail()
	}
	ps.k.log.Info("container exited", "pod", ps.log, "container", cs.spec.Name, "pid", p.pid, "exitCode", p.exitCode)
	ps.mu.Lock()
	cs.proc, cs.ready = nil, false
	ps.exitedLocked(cs, term, time.Since(p.startedAt))
	ps.mu.Unlock()
	close(p.recorded)
	ps.k.enqueue(ps.key)
}

// exitedLocked records that a container ended after running for ran, and
// schedules its restart as the restart policy says.
func (ps *podState) exitedLocked(cs *containerState, term *corev1.ContainerStateTerminated, ran time.Duration) {
	restart := false
	switch ps.pod.Spec.RestartPolicy {
	case corev1.RestartPolicyAlways, "":
		restart = true
	case corev1.RestartPolicyOnFailure:
		restart = term.ExitCode != 0
	}
	if ps.terminating || !restart {
		cs.terminated, cs.waiting, cs.pending = term, nil, false
		ps.releaseIfDoneLocked()
		return
	}
	// A container that ran long enough starts again without back-off
	// history, as the kubelet's resets after twice its maximum.
	if ran >= 2*maxBackoff {
		cs.backoff = 0
	}
	cs.backoff = nextBackoff(cs.backoff)
	cs.last, cs.terminated = term, nil
	cs.waiting = &corev1.ContainerStateWaiting{Reason: reasonCrashLoop, Message: fmt.Sprintf(
		"back-off %s restarting failed container=%s pod=%s_%s(%s)", cs.backoff, cs.spec.Name, ps.key.Name, ps.key.Namespace, ps.uid)}
	cs.pending, cs.restarting, cs.startAfter = true, true, time.Now().Add(cs.backoff)
}

// releaseIfDoneLocked frees the pod's address once none of its containers
// runs or will run again; the status keeps showing it, as the kubelet's
// does.
func (ps *podState) releaseIfDoneLocked() {
	for _, cs := range ps.containers {
		if cs.proc != nil || cs.pending {
			return
		}
	}
	if !ps.released {
		ps.released = true
		ps.k.ips.put(ps.ip)
	}
}

// kill stops the pod's containers: SIGTERM, then SIGKILL after grace (or
// minGrace when there is none). Nothing starts any more.
func (ps *podState) kill(grace time.Duration) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.terminating {
		ps.terminating = true
		ps.cancel()
		for _, cs := range ps.containers {
			if cs.proc == nil && cs.pending {
				cs.pending = false
				if cs.last != nil {
					cs.terminated, cs.waiting = cs.last, nil
				}
			}
		}
	}
	if grace <= 0 {
		grace = minGrace
	}
	for _, cs := range ps.containers {
		if cs.proc != nil && cs.proc.terminate(grace) {
			ps.k.log.Info("killing container", "pod", ps.log, "container", cs.spec.Name, "pid", cs.proc.pid, "gracePeriod", grace)
		}
	}
	ps.releaseIfDoneLocked()
}

// running reports whether a process of the pod still runs.
func (ps *podState) running() bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, cs := range ps.containers {
		if cs.proc != nil {
			return true
		}
	}
	return false
}

// waitExited returns once the pod's processes have exited and been
// recorded.
func (ps *podState) waitExited() {
	for {
		ps.mu.Lock()
		var p *process
		for _, cs := range ps.containers {
			if cs.proc != nil {
				p = cs.proc
				break
			}
		}
		ps.mu.Unlock()
		if p == nil {
			return
		}
		<-p.recorded
	}
}

// setReady records a readiness probe's verdict on a running process.
func (ps *podState) setReady(cs *containerState, p *process, ready bool) {
	ps.mu.Lock()
	changed := cs.proc == p && cs.ready != ready
	if changed {
		cs.ready = ready
	}
	ps.mu.Unlock()
	if changed {
		ps.k.log.Info("container readiness changed", "pod", ps.log, "container", cs.spec.Name, "ready", ready)
		ps.k.enqueue(ps.key)
	}
}

// waitingForConfig reports whether a container waits for a Secret or
// ConfigMap, for its environment or its volumes.
func (ps *podState) waitingForConfig() bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, cs := range ps.containers {
		if cs.pending && cs.configBackoff > 0 {
			return true
		}
	}
	return false
}

// status is the pod status the Kubelet reports, from old, which keeps what
// others wrote (the scheduled condition, the QoS class, ...).
func (ps *podState) status(old *corev1.PodStatus) corev1.PodStatus {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	st := *old.DeepCopy()
	st.HostIP, st.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	st.PodIP, st.PodIPs = ps.ip, []corev1.PodIP{{IP: ps.ip}}
	st.StartTime = ptr.To(ps.startTime)
	st.ContainerStatuses = nil
	var unready []string
	for _, cs := range ps.containers {
		s := corev1.ContainerStatus{
			Name:         cs.spec.Name,
			Image:        cs.spec.Image,
			RestartCount: cs.restarts,
			ContainerID:  cs.containerID,
			Ready:        cs.ready,
			Started:      ptr.To(cs.proc != nil),
		}
		if cs.containerID != "" {
			s.ImageID = "local://" + cs.spec.Image
		}
		switch {
		case cs.proc != nil:
			s.State.Running = &corev1.ContainerStateRunning{StartedAt: mtime(cs.startedAt)}
		case cs.terminated != nil:
			s.State.Terminated = cs.terminated.DeepCopy()
		default:
			s.State.Waiting = cs.waiting.DeepCopy()
		}
		if cs.last != nil && cs.terminated == nil {
			s.LastTerminationState.Terminated = cs.last.DeepCopy()
		}
		if !cs.ready {
			unready = append(unready, cs.spec.Name)
		}
		st.ContainerStatuses = append(st.ContainerStatuses, s)
	}
	st.Phase = ps.phaseLocked()
	terminal := st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
	t := mtime(now())

	ready := condition{status: corev1.ConditionTrue}
	switch {
	case terminal:
		ready = condition{corev1.ConditionFalse, "PodCompleted", ""}
	case len(unready) > 0:
		ready = condition{corev1.ConditionFalse, "ContainersNotReady", fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))}
	}
	podReady := ready
	if ready.status == corev1.ConditionTrue {
		if gates := unmetGates(ps.pod.Spec.ReadinessGates, st.Conditions); len(gates) > 0 {
			podReady = condition{corev1.ConditionFalse, "ReadinessGatesNotReady", fmt.Sprintf("the readiness gates are not all True: [%s]", strings.Join(gates, " "))}
		}
	}
	sandbox := condition{status: corev1.ConditionTrue}
	if terminal {
		sandbox.status = corev1.ConditionFalse
	}
	initialized := condition{status: corev1.ConditionTrue}
	if len(ps.pod.Spec.InitContainers) > 0 {
		initialized = condition{corev1.ConditionFalse, "ContainersNotInitialized", "the local kubelet does not run init containers"}
	}
	setCondition(&st, corev1.PodScheduled, condition{status: corev1.ConditionTrue}, t)
	setCondition(&st, corev1.PodReadyToStartContainers, sandbox, t)
	setCondition(&st, corev1.PodInitialized, initialized, t)
	setCondition(&st, corev1.ContainersReady, ready, t)
	setCondition(&st, corev1.PodReady, podReady, t)
	return st
}

// phaseLocked is the pod's phase as the kubelet derives it from its
// containers. A pod being deleted restarts nothing, so it ends as with
// restart policy Never.
func (ps *podState) phaseLocked() corev1.PodPhase {
	var waiting, running, stopped, succeeded int
	for _, cs := range ps.containers {
		switch {
		case cs.proc != nil:
			running++
		case cs.terminated != nil:
			stopped++
			if cs.terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.last != nil:
			stopped++ // waiting to restart
		default:
			waiting++
		}
	}
	policy := ps.pod.Spec.RestartPolicy
	if ps.terminating {
		policy = corev1.RestartPolicyNever
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped == 0:
		return corev1.PodPending
	case policy == corev1.RestartPolicyAlways || policy == "":
		return corev1.PodRunning
	case stopped == succeeded:
		return corev1.PodSucceeded
	case policy == corev1.RestartPolicyOnFailure:
		return corev1.PodRunning
	}
	return corev1.PodFailed
}

type condition struct {
	status          corev1.ConditionStatus
	reason, message string
}

// setCondition sets a pod condition, keeping its transition time while its
// status stays.
func setCondition(st *corev1.PodStatus, typ corev1.PodConditionType, c condition, t metav1.Time) {
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != typ {
			continue
		}
		if old.Status != c.status {
			old.LastTransitionTime = t
		}
		if typ == corev1.PodScheduled && old.Status == corev1.ConditionTrue {
			return // the binding's, keep it as it is
		}
		old.Status, old.Reason, old.Message = c.status, c.reason, c.message
		return
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{
		Type: typ, Status: c.status, Reason: c.reason, Message: c.message, LastTransitionTime: t,
	})
}

// unmetGates lists the readiness gates whose condition is not True.
func unmetGates(gates []corev1.PodReadinessGate, conds []corev1.PodCondition) []string {
	var unmet []string
	for _, g := range gates {
		ok := false
		for _, c := range conds {
			if c.Type == g.ConditionType && c.Status == corev1.ConditionTrue {
				ok = true
			}
		}
		if !ok {
			unmet = append(unmet, string(g.ConditionType))
		}
	}
	return unmet
}
