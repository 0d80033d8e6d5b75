package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const netnsDir = "/run/netns"

func netnsPath(name string) string { return filepath.Join(netnsDir, name) }

// run runs a short command and names it in the error.
func run(name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// setupNetwork makes the node's network namespace and the veth pair that
// joins it to the host. The node has no default route: pods reach the node,
// each other and the services, and nothing beyond the namespace.
func setupNetwork(c config) error {
	// `ip netns add` makes /run/netns a mount point when it is not one yet;
	// remember whether we did, so that `down` removes it again.
	if !isMountPoint(netnsDir) {
		if err := os.WriteFile(filepath.Join(c.dir, "netns-mount-created"), nil, 0o644); err != nil {
			return err
		}
	}
	steps := [][]string{
		{"ip", "netns", "add", nodeNetns},
		{"ip", "link", "add", hostVeth, "type", "veth", "peer", "name", "eth0", "netns", nodeNetns},
		{"ip", "addr", "add", fmt.Sprintf("%s/%d", hostIP, linkPrefix), "dev", hostVeth},
		{"ip", "link", "set", hostVeth, "up"},
		{"ip", "-n", nodeNetns, "link", "set", "lo", "up"},
		{"ip", "-n", nodeNetns, "addr", "add", fmt.Sprintf("%s/%d", nodeIP, linkPrefix), "dev", "eth0"},
		{"ip", "-n", nodeNetns, "link", "set", "eth0", "up"},
		// Routing between pods (ptp gives each a /32 behind the node).
		{"nsenter", "--net=" + netnsPath(nodeNetns), "--", "sysctl", "-qw", "net.ipv4.ip_forward=1"},
		// kube-proxy's ClusterIPs are DNATed only; a pod reaching its own
		// Service is masqueraded by kube-proxy.
		{"nsenter", "--net=" + netnsPath(nodeNetns), "--", "sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1"},
		// The host's end of the veth pair is the one address outside the
		// node that the node routes to: pods do not reach it (dropped before
		// routing, in a table kube-proxy and kube-router leave alone).
		{"nsenter", "--net=" + netnsPath(nodeNetns), "--", "iptables", "-w", "5", "-t", "raw", "-A", "PREROUTING",
			"-s", podCIDR, "-d", hostIP + "/32", "-m", "comment", "--comment", "bf-cluster: pods never reach the host", "-j", "DROP"},
	}
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return fmt.Errorf("node network: %w", err)
		}
	}
	return nil
}

// mounts lists the mount points (decoded) of this mount namespace.
func mounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var mps []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			mps = append(mps, unescapeMount(fields[4]))
		}
	}
	return mps, sc.Err()
}

// unescapeMount decodes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isMountPoint(path string) bool {
	mps, _ := mounts()
	for _, m := range mps {
		if m == path {
			return true
		}
	}
	return false
}

// clusterMount: a mount the cluster made. The state directory holds
// containerd's and the kubelet's (rootfs overlays, sandbox /dev/shm, volume
// tmpfs); /run/netns holds the node's namespace and the pods' (netns).
func clusterMount(c config, netns map[string]bool, m string) bool {
	if m == c.dir || strings.HasPrefix(m, c.dir+"/") {
		return true
	}
	return filepath.Dir(m) == netnsDir && netns[filepath.Base(m)]
}

// unmountAll unmounts every mount of the cluster, deepest first, until none
// is left (mounts stack); lazily, so that a busy one still goes.
func unmountAll(c config) error {
	for range 10 {
		mps, err := mounts()
		if err != nil {
			return err
		}
		netns := map[string]bool{}
		for _, ns := range clusterNetns(c) {
			netns[ns] = true
		}
		var ours []string
		for _, m := range mps {
			if clusterMount(c, netns, m) {
				ours = append(ours, m)
			}
		}
		if len(ours) == 0 {
			return nil
		}
		sort.Slice(ours, func(i, j int) bool { return len(ours[i]) > len(ours[j]) })
		for _, m := range ours {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				return fmt.Errorf("unmount %s: %w", m, err)
			}
		}
	}
	return errors.New("mounts keep coming back under the state directory or /run/netns; is a component still running?")
}

// clusterNetns lists the named network namespaces of the cluster: the
// node's, and the pods' that containerd made (/run/netns/cni-<uuid>, next to
// those of any other containerd on the machine), which the OCI specs of this
// cluster's containers name: the running tasks' bundles, and, while
// containerd answers, its containers' records, which also name the sandboxes
// whose task has exited (a pod terminating when the cluster stops); what
// containerd named once is kept for the later calls of the same run, made
// after containerd has stopped.
func clusterNetns(c config) []string {
	var names []string
	if netnsInode(netnsPath(nodeNetns)) != 0 {
		names = append(names, nodeNetns)
	}
	var specs [][]byte
	bundles, _ := os.ReadDir(filepath.Join(c.dir, "containerd/state/io.containerd.runtime.v2.task/k8s.io"))
	for _, b := range bundles {
		if data, err := os.ReadFile(filepath.Join(c.dir, "containerd/state/io.containerd.runtime.v2.task/k8s.io", b.Name(), "config.json")); err == nil {
			specs = append(specs, data)
		}
	}
	specs = append(specs, containerSpecs(c)...)
	for _, data := range specs {
		var spec struct {
			Linux struct {
				Namespaces []struct {
					Type string `json:"type"`
					Path string `json:"path"`
				} `json:"namespaces"`
			} `json:"linux"`
		}
		if json.Unmarshal(data, &spec) != nil {
			continue
		}
		for _, ns := range spec.Linux.Namespaces {
			// A pod's netns (a sandbox's; its containers name the same).
			dir, name := filepath.Dir(filepath.Clean(ns.Path)), filepath.Base(ns.Path)
			if ns.Type == "network" && (dir == netnsDir || dir == "/var/run/netns") && strings.HasPrefix(name, "cni-") {
				namedNetns[name] = true
			}
		}
	}
	for name := range namedNetns {
		names = append(names, name)
	}
	return names
}

// namedNetns are the pods' network namespaces clusterNetns has seen named.
var namedNetns = map[string]bool{}

// containerSpecs are the OCI specs of the containers this cluster's
// containerd records, none when it does not answer.
func containerSpecs(c config) [][]byte {
	sock := filepath.Join(c.dir, "containerd/containerd.sock")
	if _, err := os.Stat(sock); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", "--address", sock, "--timeout", "5s", "-n", "k8s.io", "containers", "ls", "-q").Output()
	if err != nil {
		return nil
	}
	var specs [][]byte
	for _, id := range strings.Fields(string(out)) {
		if spec, err := exec.CommandContext(ctx, "ctr", "--address", sock, "--timeout", "5s", "-n", "k8s.io", "containers", "info", "--spec", id).Output(); err == nil {
			specs = append(specs, spec)
		}
	}
	return specs
}
