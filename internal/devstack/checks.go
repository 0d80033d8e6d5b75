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

package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/browserfleet/browserfleet/runner/config"
)

// checkPrerequisites checks what the stack needs before anything starts,
// so that each problem fails with one line saying how to fix it. It holds
// Dir's lock and the API's port from here on.
func (s *Stack) checkPrerequisites() error {
	if err := os.MkdirAll(s.opts.Dir, 0o755); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	checks := []func() error{
		s.lockDir,
		s.listen,
		s.checkAssets,
		s.checkChromium,
		s.checkRunner,
		s.checkStrays,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// lockDir takes Dir's lock: two stacks on one etcd data directory would
// wreck it.
func (s *Stack) lockDir() error {
	path := filepath.Join(s.opts.Dir, "lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("opening the lock of %s: %w", s.opts.Dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("another dev stack (pid %s) uses %s: stop it first, or set DEV_DIR to another directory", strings.TrimSpace(string(holder)), s.opts.Dir)
		}
		return fmt.Errorf("locking %s: %w", s.opts.Dir, err)
	}
	s.lock = f
	// The pid is for the message above; the lock is the flock.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return nil
}

// listen binds the API's address now, before the control plane starts, so
// that a busy port fails at once, and no one takes it meanwhile.
func (s *Stack) listen() error {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", s.opts.APIAddress)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("port %s is in use: stop what uses it, or set DEV_API_ADDRESS (e.g. DEV_API_ADDRESS=127.0.0.1:8001)", portOf(s.opts.APIAddress))
		}
		return fmt.Errorf("listening on %s: %w (set DEV_API_ADDRESS to another address)", s.opts.APIAddress, err)
	}
	s.listener = l
	s.apiURL = "http://" + dialAddress(l.Addr().(*net.TCPAddr))
	// The API's runner listener (the cache's runner paths, the gateway's,
	// the search relay): on loopback, where the local runners are, on a
	// free port.
	rl, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening for the API's runner listener: %w", err)
	}
	s.runnerListener = rl
	s.servicesURL = "http://" + dialAddress(rl.Addr().(*net.TCPAddr))
	return nil
}

func portOf(address string) string {
	if _, port, err := net.SplitHostPort(address); err == nil {
		return port
	}
	return address
}

// dialAddress is where clients reach a listener: a wildcard address is
// reached on loopback.
func dialAddress(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(a.Port))
}

func (s *Stack) checkAssets() error {
	for _, name := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if !isExecutable(filepath.Join(s.opts.AssetsDir, name)) {
			return fmt.Errorf("envtest binaries missing (no %s in %s): run `make envtest`", name, s.opts.AssetsDir)
		}
	}
	return nil
}

func (s *Stack) checkChromium() error {
	if s.opts.ChromiumPath == "" {
		p, err := config.FindChromium()
		if err != nil {
			return fmt.Errorf("chromium missing: %w", err)
		}
		s.opts.ChromiumPath = p
	}
	if !isExecutable(s.opts.ChromiumPath) {
		return fmt.Errorf("chromium missing: %s is not an executable; apt-get install chromium, or set CHROMIUM to the browser's path", s.opts.ChromiumPath)
	}
	if os.Geteuid() == 0 && !executableByAll(s.opts.ChromiumPath) {
		return fmt.Errorf("chromium at %s is out of reach of other users, and the runners run as their pods' user (65532) when the stack runs as root: set CHROMIUM to a browser every user can run", s.opts.ChromiumPath)
	}
	return nil
}

// checkRunner checks the runner binary. When the stack runs as root, the
// local kubelet runs each runner as its pod's user (65532), who may not
// reach the binary (a clone in /root, a test's temporary directory): the
// stack then runs a copy, in a directory of its own every user can search,
// removed when it stops.
func (s *Stack) checkRunner() error {
	if !isExecutable(s.opts.RunnerBinary) {
		return fmt.Errorf("runner binary missing (%s): run `make build`", s.opts.RunnerBinary)
	}
	s.runnerBinary = s.opts.RunnerBinary
	if os.Geteuid() != 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "browserfleet-dev-runner-")
	if err != nil {
		return fmt.Errorf("copying the runner binary: %w", err)
	}
	s.runnerCopy = dir
	bin := filepath.Join(dir, "runner")
	if err := errors.Join(os.Chmod(dir, 0o755), copyFile(s.opts.RunnerBinary, bin, 0o755)); err != nil {
		return fmt.Errorf("copying the runner binary: %w", err)
	}
	s.runnerBinary = bin
	s.log.Info("running as root: each runner runs as its pod's user (65532), from a copy of the runner binary", "copy", bin)
	return nil
}

// copyFile copies src to a new file dst with mode perm.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// executableByAll reports whether every user may run path: each directory
// on the way searchable by others, and the file executable by others.
func executableByAll(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	for p := resolved; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// checkStrays stops the control plane of an earlier run on Dir that was
// killed outright: its etcd holds the data directory, so a new one would
// never start. Dir's lock shows that no live stack owns it.
func (s *Stack) checkStrays() error {
	pids := strayControlPlane(s.etcdDir())
	if len(pids) == 0 {
		return nil
	}
	s.log.Info("stopping the control plane an earlier run left behind", "pids", pids)
	left := terminate(pids, strayStopTimeout)
	if len(left) == 0 {
		return nil
	}
	list := strings.Trim(fmt.Sprint(left), "[]")
	return fmt.Errorf("the control plane of an earlier run still runs on %s (pids %s): stop it with `kill -9 %s`", s.opts.Dir, list, list)
}

// strayStopTimeout is how long strays get for SIGTERM, and then SIGKILL:
// a kube-apiserver whose etcd is gone ignores SIGTERM for minutes.
const strayStopTimeout = 5 * time.Second

// terminate sends SIGTERM to pids, SIGKILL to those alive after timeout,
// and returns those that still live after another timeout.
func terminate(pids []int, timeout time.Duration) []int {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
		deadline := time.Now().Add(timeout)
		for len(pids) > 0 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			pids = slices.DeleteFunc(pids, func(pid int) bool { return !alive(pid) })
		}
		if len(pids) == 0 {
			return nil
		}
	}
	return pids
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
