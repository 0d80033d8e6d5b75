package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// start runs a component in the node's network namespace as a process of its
// own session, so that it outlives `cluster up`; its output goes to
// DIR/logs/<name>.log and its pid to DIR/pids/<name>. nsenter switches only
// the network namespace: the mounts stay the host's, so containerd's and the
// kubelet's mounts are visible to (and removable by) `cluster down`.
func start(c config, name string, argv ...string) error {
	for _, d := range []string{"logs", "pids"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o755); err != nil {
			return err
		}
	}
	logFile, err := os.OpenFile(filepath.Join(c.dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	args := append([]string{"--net=" + netnsPath(nodeNetns), "--"}, argv...)
	// Not bound to a context: the component outlives this process.
	cmd := exec.CommandContext(context.Background(), "nsenter", args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	return os.WriteFile(filepath.Join(c.dir, "pids", name), []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

// alive says whether the component's process still runs; a component that
// died early is reported with the end of its log.
func alive(c config, name string) error {
	pid, err := readPid(c, name)
	if err != nil {
		return err
	}
	if syscall.Kill(pid, 0) == nil {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(b), ") Z ") {
			return nil
		}
	}
	return fmt.Errorf("%s (pid %d) exited; the end of %s:\n%s", name, pid, logPath(c, name), tail(logPath(c, name), 25))
}

func logPath(c config, name string) string { return filepath.Join(c.dir, "logs", name+".log") }

func readPid(c config, name string) (int, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, "pids", name))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// netnsInode is the inode that identifies a named network namespace; 0 when
// it does not exist.
func netnsInode(path string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return st.Ino
}

// processesIn lists the processes whose network namespace is one of inodes.
// Every process of the cluster (its components, containerd's shims, the
// containers) runs in the node's namespace or in a pod's.
func processesIn(inodes map[uint64]bool) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			continue
		}
		// net:[4026532281]
		ino, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "net:["), "]"), 10, 64)
		if err == nil && inodes[ino] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cgroupProcesses lists the processes in the kubelet's cgroups (kubepods in
// every v1 hierarchy, or the unified one): containers whose network
// namespace is the host's (hostNetwork pods) are found here.
func cgroupProcesses() []int {
	seen := map[int]bool{}
	var pids []int
	// A directory that goes while we read (a pod ending) is skipped.
	var walk func(dir string)
	walk = func(dir string) {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for f := range strings.FieldsSeq(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				pids = append(pids, pid)
			}
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() {
				walk(filepath.Join(dir, e.Name()))
			}
		}
	}
	for _, root := range kubepodsCgroups() {
		walk(root)
	}
	return pids
}

func kubepodsCgroups() []string {
	var roots []string
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	for _, e := range entries {
		p := filepath.Join("/sys/fs/cgroup", e.Name(), "kubepods")
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			roots = append(roots, p)
		}
	}
	if fi, err := os.Stat("/sys/fs/cgroup/kubepods"); err == nil && fi.IsDir() {
		roots = append(roots, "/sys/fs/cgroup/kubepods")
	}
	return roots
}

// removeCgroups removes the kubelet's cgroup directories, deepest first
// (a v1 cgroup directory is removed with rmdir, its files with it).
func removeCgroups() error {
	var errs []error
	for _, root := range kubepodsCgroups() {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("rmdir %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// stopPid sends SIGTERM, waits up to grace, then SIGKILL.
func stopPids(pids []int, grace time.Duration) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		left := 0
		for _, pid := range pids {
			if running(pid) {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// running: the process exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
