package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// prerequisites names what is missing and how to get it.
func prerequisites(c config) error {
	var missing []string
	for _, f := range []string{
		filepath.Join(c.assets, "etcd"), filepath.Join(c.assets, "kube-apiserver"), filepath.Join(c.assets, "kubectl"),
	} {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f+" (make envtest)")
		}
	}
	for _, b := range []string{"kubelet", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kube-router", "coredns", "tiny"} {
		if _, err := os.Stat(filepath.Join(c.bin, b)); err != nil {
			missing = append(missing, filepath.Join(c.bin, b)+" (make cluster-build)")
		}
	}
	for _, cmd := range []string{"containerd", "containerd-shim-runc-v2", "ctr", "runc", "ip", "nsenter", "iptables", "ipset", "sysctl"} {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, cmd+" (apt-get install containerd runc iptables ipset iproute2 util-linux procps)")
		}
	}
	for _, plugin := range []string{"ptp", "host-local", "portmap", "loopback"} {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", plugin)); err != nil {
			missing = append(missing, "/usr/lib/cni/"+plugin+" (apt-get install containernetworking-plugins)")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing:\n  %s", strings.Join(missing, "\n  "))
	}
	if os.Geteuid() != 0 {
		return errors.New("the cluster needs root (network namespaces, mounts, cgroups)")
	}
	return nil
}

func up(c config, timeout time.Duration, keep bool) error {
	t0 := time.Now()
	if err := prerequisites(c); err != nil {
		return err
	}
	if netnsInode(netnsPath(nodeNetns)) != 0 {
		return fmt.Errorf("%s exists: the cluster is up (or was not stopped); run `make cluster-down` first", netnsPath(nodeNetns))
	}
	// A fresh cluster every time. Whatever a crashed run left is removed
	// first, mounts included, so that RemoveAll cannot reach through one.
	if err := down(c); err != nil {
		return fmt.Errorf("clearing the previous run: %w", err)
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	step := func(name string, since time.Time) { logf("%-34s %5.1fs", name, time.Since(since).Seconds()) }

	s := time.Now()
	pk, err := newPKI(c.dir)
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(c.dir, "kubeconfigs"), 0o700); err != nil {
		return err
	}
	local := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	for name, file := range map[string]string{
		"controller-manager": "controller-manager", "scheduler": "scheduler", "kubelet": "kubelet-client",
		"kube-proxy": "kube-proxy", "kube-router": "kube-router",
	} {
		if err := pk.kubeconfig(filepath.Join(c.dir, "kubeconfigs", name), local, file); err != nil {
			return err
		}
	}
	if err := pk.kubeconfig(kubeconfigPath(c), fmt.Sprintf("https://%s:%d", nodeIP, apiPort), "admin"); err != nil {
		return err
	}
	if err := writeConfigs(c); err != nil {
		return err
	}
	if err := ownImages(c); err != nil {
		return err
	}
	step("certificates, configs, images", s)

	s = time.Now()
	if err := setupNetwork(c); err != nil {
		return err
	}
	step("network namespace "+nodeNetns, s)

	// From here on a failure stops what started.
	started := false
	defer func() {
		if !started && keep {
			logf("start failed; -keep leaves it running: look, then cluster down")
		}
		if !started && !keep {
			logf("start failed; stopping what runs (logs stay in %s/logs)", c.dir)
			if err := down(c); err != nil {
				logf("stopping: %v", err)
			}
		}
	}()
	args := componentArgs(c)
	s = time.Now()
	for _, name := range controlPlane[:2] {
		if err := start(c, name, args[name]...); err != nil {
			return err
		}
	}
	if err := waitAPI(ctx, c, pk); err != nil {
		return err
	}
	step("etcd, kube-apiserver ready", s)

	s = time.Now()
	for _, name := range controlPlane[2:] {
		if err := start(c, name, args[name]...); err != nil {
			return err
		}
	}
	if err := start(c, "containerd", args["containerd"]...); err != nil {
		return err
	}
	if err := waitFor(ctx, "containerd's socket", func() error {
		if err := alive(c, "containerd"); err != nil {
			return err
		}
		return ctr(c, "version")
	}); err != nil {
		return err
	}
	step("containerd ready", s)

	s = time.Now()
	for _, img := range []string{"pause", "tiny", "coredns"} {
		if err := ctr(c, "-n", "k8s.io", "images", "import", filepath.Join(c.dir, "images", img+".oci.tar")); err != nil {
			return fmt.Errorf("importing the %s image: %w", img, err)
		}
	}
	step("images pause, tiny, coredns loaded", s)

	s = time.Now()
	if err := kubectlApply(c, addons()); err != nil {
		return err
	}
	for _, name := range []string{"kubelet", "kube-proxy"} {
		if err := start(c, name, args[name]...); err != nil {
			return err
		}
	}
	// kube-router reads its node at start and gives up when it is missing.
	if err := waitFor(ctx, "node "+nodeName+" registered", func() error {
		if err := alive(c, "kubelet"); err != nil {
			return err
		}
		_, err := kubectl(c, "get", "node", nodeName)
		return err
	}); err != nil {
		return err
	}
	if err := start(c, "kube-router", args["kube-router"]...); err != nil {
		return err
	}
	if err := waitFor(ctx, "node "+nodeName+" Ready", func() error {
		for _, name := range append(append([]string{}, controlPlane...), nodeParts...) {
			if err := alive(c, name); err != nil {
				return err
			}
		}
		out, err := kubectl(c, "get", "node", nodeName, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if err != nil {
			return err
		}
		if out != "True" {
			return fmt.Errorf("node %s Ready=%q", nodeName, out)
		}
		return nil
	}); err != nil {
		return err
	}
	step("node Ready", s)

	s = time.Now()
	if err := waitFor(ctx, "CoreDNS available", func() error {
		out, err := kubectl(c, "-n", "kube-system", "get", "deploy", "coredns", "-o", "jsonpath={.status.availableReplicas}")
		if err != nil {
			return err
		}
		if out != "1" {
			return fmt.Errorf("coredns availableReplicas=%q", out)
		}
		return nil
	}); err != nil {
		return err
	}
	step("CoreDNS available", s)
	started = true
	logf("up in %.1fs; export KUBECONFIG=%s", time.Since(t0).Seconds(), kubeconfigPath(c))
	return nil
}

func kubeconfigPath(c config) string { return filepath.Join(c.dir, "kubeconfig") }

// ownImages writes the archives of the cluster's own images.
func ownImages(c config) error {
	tiny := filepath.Join(c.bin, "tiny")
	for _, o := range []imageOptions{
		{out: "pause", name: pauseImage, files: listFlag{"/tiny=" + tiny}, entrypoint: listFlag{"/tiny", "pause"}},
		{out: "tiny", name: tinyImage, files: listFlag{"/tiny=" + tiny}, entrypoint: listFlag{"/tiny"}},
		{out: "coredns", name: corednsImage, files: listFlag{"/coredns=" + filepath.Join(c.bin, "coredns")}, entrypoint: listFlag{"/coredns"}},
	} {
		o.out = filepath.Join(c.dir, "images", o.out+".oci.tar")
		o.user = 65532
		if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
			return err
		}
		if err := writeImage(o); err != nil {
			return fmt.Errorf("image %s: %w", o.name, err)
		}
	}
	return nil
}

// waitAPI waits for the API server's /readyz, from the host, as kubectl
// will reach it.
func waitAPI(ctx context.Context, c config, pk *pki) error {
	cert, err := tls.LoadX509KeyPair(pk.path("admin.crt"), pk.path("admin.key"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(pk.caCert)
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}}
	url := fmt.Sprintf("https://%s:%d/readyz", nodeIP, apiPort)
	return waitFor(ctx, "kube-apiserver "+url, func() error {
		for _, name := range controlPlane[:2] {
			if err := alive(c, name); err != nil {
				return err
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s", resp.Status)
		}
		return nil
	})
}

// processExited: an error that waiting longer cannot mend.
func processExited(err error) bool {
	return err != nil && strings.Contains(err.Error(), ") exited; the end of")
}

// waitFor polls check every half second until it passes or ctx ends; a
// component that died ends the wait at once.
func waitFor(ctx context.Context, what string, check func() error) error {
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		if processExited(last) {
			return last
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %w)", what, ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func ctr(c config, args ...string) error {
	args = append([]string{"--address", filepath.Join(c.dir, "containerd/containerd.sock"), "--timeout", "2m"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %s: %w: %s", strings.Join(args[4:], " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func kubectl(c config, args ...string) (string, error) {
	args = append([]string{"--kubeconfig", kubeconfigPath(c), "--request-timeout", "10s"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.assets, "kubectl"), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("kubectl %s: %w: %s", strings.Join(args[4:], " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func kubectlApply(c config, manifest string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.assets, "kubectl"), "--kubeconfig", kubeconfigPath(c), "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply (the cluster's add-ons): %w: %s", err, out)
	}
	return nil
}

// load imports OCI image archives (buildah's oci-archive, docker save's
// too) into the node's containerd, where the kubelet finds them: pods name
// them with imagePullPolicy IfNotPresent or Never.
func load(c config, archives []string) error {
	if len(archives) == 0 {
		return errors.New("load: name the image archives (make cluster-load IMAGES=\"a.oci.tar b.oci.tar\")")
	}
	if err := alive(c, "containerd"); err != nil {
		return fmt.Errorf("the cluster's containerd does not run (make cluster): %w", err)
	}
	for _, a := range archives {
		s := time.Now()
		if _, err := os.Stat(a); err != nil {
			return fmt.Errorf("load: %w", err)
		}
		if err := ctr(c, "-n", "k8s.io", "images", "import", a); err != nil {
			return fmt.Errorf("load %s: %w", a, err)
		}
		logf("loaded %s in %.1fs", a, time.Since(s).Seconds())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", "--address", filepath.Join(c.dir, "containerd/containerd.sock"), "-n", "k8s.io", "images", "ls", "-q").Output()
	if err != nil {
		return fmt.Errorf("ctr images ls: %w", err)
	}
	logf("images on the node:\n%s", out)
	return nil
}

func status(c config) error {
	var errs []error
	for _, name := range append(append([]string{}, controlPlane...), nodeParts...) {
		if err := alive(c, name); err != nil {
			errs = append(errs, fmt.Errorf("%s: not running", name))
			continue
		}
		pid, _ := readPid(c, name)
		logf("%-24s pid %d", name, pid)
	}
	if len(errs) == 0 {
		out, err := kubectl(c, "get", "nodes", "-o", "wide")
		if err != nil {
			return err
		}
		fmt.Println(out)
		logf("export KUBECONFIG=%s", kubeconfigPath(c))
	}
	return errors.Join(errs...)
}

// stopAll stops every process of the cluster: the node agents first (so
// that nothing restarts a container), then every container and shim, then
// containerd and the control plane; whatever is left in the cluster's
// network namespaces or the kubelet's cgroups is killed.
func stopAll(c config) error {
	order := append(append([]string{}, nodeParts...), controlPlane...)
	// kubelet, kube-proxy, kube-router first
	var agents []int
	for _, name := range []string{"kube-router", "kube-proxy", "kubelet"} {
		if pid, err := readPid(c, name); err == nil && running(pid) {
			agents = append(agents, pid)
		}
	}
	stopPids(agents, 5*time.Second)

	inodes := map[uint64]bool{}
	for _, ns := range clusterNetns(c) {
		if ino := netnsInode(netnsPath(ns)); ino != 0 {
			inodes[ino] = true
		}
	}
	own := map[int]bool{}
	for _, name := range order {
		if pid, err := readPid(c, name); err == nil {
			own[pid] = true
		}
	}
	// The containers (pods' namespaces and the kubelet's cgroups), then the
	// shims, containerd and the control plane.
	var containers []int
	podNS := map[uint64]bool{}
	for ino := range inodes {
		if ino != netnsInode(netnsPath(nodeNetns)) {
			podNS[ino] = true
		}
	}
	// The kubelet's cgroups are this cluster's unless another kubelet runs.
	otherKubelet := kubeletRunning()
	containers = processesIn(podNS)
	if !otherKubelet {
		containers = append(containers, cgroupProcesses()...)
	}
	stopPids(containers, 3*time.Second)
	for _, name := range []string{"containerd", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
		if pid, err := readPid(c, name); err == nil && running(pid) {
			stopPids([]int{pid}, 10*time.Second)
		}
	}
	// Whatever is left: shims, and anything a crashed run left behind.
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := append(processesIn(inodes), shims(c)...)
		if !otherKubelet {
			left = append(left, cgroupProcesses()...)
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes still running after 30s: %v", left)
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// shims lists containerd's runc shims of this cluster: they name its socket
// in their arguments. They run in the node's namespace, so processesIn finds
// them too while it exists.
func shims(c config) []int {
	var pids []int
	sock := filepath.Join(c.dir, "containerd/containerd.sock")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), "containerd-shim") || !strings.Contains(string(b), sock) {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err == nil && running(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// down stops the cluster and removes every mount, network namespace and
// cgroup it made. Its state directory stays, for the logs; `up` starts
// afresh.
func down(c config) error {
	var errs []error
	if err := stopAll(c); err != nil {
		errs = append(errs, err)
	}
	if err := unmountAll(c); err != nil {
		errs = append(errs, err)
	}
	for _, ns := range clusterNetns(c) {
		// unmountAll has unmounted it; what is left is the file.
		if err := os.Remove(netnsPath(ns)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove network namespace %s: %w", ns, err))
		}
	}
	// The host's end of the veth pair went with the node's namespace; a
	// crashed run may have left it.
	if _, err := os.Stat("/sys/class/net/" + hostVeth); err == nil {
		// The kernel removes it asynchronously once the namespace is gone.
		if err := run("ip", "link", "del", hostVeth); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
			errs = append(errs, err)
		}
	}
	marker := filepath.Join(c.dir, "netns-mount-created")
	if _, err := os.Stat(marker); err == nil {
		// Another's namespace keeps it (and the marker, for the next down).
		if entries, _ := os.ReadDir(netnsDir); len(entries) == 0 {
			if isMountPoint(netnsDir) {
				if err := syscall.Unmount(netnsDir, syscall.MNT_DETACH); err != nil {
					errs = append(errs, fmt.Errorf("unmount %s: %w", netnsDir, err))
				}
			}
			_ = os.Remove(marker)
		}
	}
	if !kubeletRunning() {
		if err := removeCgroups(); err != nil {
			errs = append(errs, err)
		}
	}
	// libcni caches each attachment's result (the pod network's and the
	// loopback's), named for the network, the sandbox and the interface.
	sandboxes, _ := os.ReadDir(filepath.Join(c.dir, "containerd/state/io.containerd.runtime.v2.task/k8s.io"))
	for _, sb := range sandboxes {
		matches, _ := filepath.Glob("/var/lib/cni/results/*-" + sb.Name() + "-*")
		for _, m := range matches {
			_ = os.Remove(m)
		}
	}
	if err := removeRunState(c); err != nil {
		errs = append(errs, err)
	}
	if err := removeKubeletLeftovers(c); err != nil {
		errs = append(errs, err)
	}
	for _, name := range append(append([]string{}, controlPlane...), nodeParts...) {
		_ = os.Remove(filepath.Join(c.dir, "pids", name))
	}
	// Without the veth pair the node's address is no longer on this machine,
	// and the host would route a kubectl call to it out of the machine:
	// the kubeconfigs go with the cluster.
	for _, p := range []string{kubeconfigPath(c), filepath.Join(c.dir, "kubeconfigs")} {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		logf("down: no process, mount or network namespace of the cluster is left")
	}
	return errors.Join(errs...)
}

// removeRunState removes what containerd 1.6 keeps under /run/containerd
// whatever its configuration says, for this cluster's containers only
// (another containerd on the machine may use the directory): runc's state
// (/run/containerd/runc/k8s.io/<id>) and the shims' sockets
// (/run/containerd/s/<sha256 of socket/namespace/id>, as its shim package
// names them).
func removeRunState(c config) error {
	sock := filepath.Join(c.dir, "containerd/containerd.sock")
	tasks, _ := os.ReadDir(filepath.Join(c.dir, "containerd/state/io.containerd.runtime.v2.task/k8s.io"))
	var errs []error
	for _, t := range tasks {
		id := t.Name()
		sum := sha256.Sum256([]byte(filepath.Join(sock, "k8s.io", id)))
		for _, p := range []string{
			filepath.Join("/run/containerd/runc/k8s.io", id),
			filepath.Join("/run/containerd/s", hex.EncodeToString(sum[:])),
		} {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// The directories themselves, when nothing else is in them.
	for _, d := range []string{"/run/containerd/runc/k8s.io", "/run/containerd/runc", "/run/containerd/s", "/run/containerd"} {
		_ = syscall.Rmdir(d)
	}
	return errors.Join(errs...)
}

// removeKubeletLeftovers removes what the kubelet puts at fixed paths,
// whatever its root directory: the links to its containers' logs in
// /var/log/containers (those into this cluster's state directory) and its
// device plugin socket under /var/lib/kubelet; each directory goes when
// nothing else is left in it.
func removeKubeletLeftovers(c config) error {
	var errs []error
	links, _ := os.ReadDir("/var/log/containers")
	for _, l := range links {
		p := filepath.Join("/var/log/containers", l.Name())
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, c.dir+"/") {
			if err := os.Remove(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	_ = syscall.Rmdir("/var/log/containers")
	if !kubeletRunning() {
		for _, p := range []string{
			"/var/lib/kubelet/device-plugins/kubelet.sock",
			"/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint",
		} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		_ = syscall.Rmdir("/var/lib/kubelet/device-plugins")
		_ = syscall.Rmdir("/var/lib/kubelet")
	}
	return errors.Join(errs...)
}

// kubeletRunning: another kubelet runs on this machine (then its device
// plugin socket is its own).
func kubeletRunning() bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && filepath.Base(exe) == "kubelet" {
			return true
		}
	}
	return false
}
