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

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// processInfo names the process whose memory a scenario reads. On make dev
// it is bin/dev, which runs the API and the manager in one process
// (internal/devstack); runners and Chromium are processes of their own,
// the local kubelet's children, and are not counted.
type processInfo struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	Note    string `json:"note"`
}

// describeProcess reads pid's command line.
func describeProcess(pid int) (processInfo, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return processInfo{}, fmt.Errorf("reading the command of process %d: %w", pid, err)
	}
	args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	return processInfo{PID: pid, Command: filepath.Base(args[0]),
		Note: "serves the API; on make dev (bin/dev) the manager runs in the same process"}, nil
}

// listenerPID is the process that listens on TCP port (loopback or any
// address), found through /proc/net/tcp{,6} and the processes' sockets.
func listenerPID(port int) (int, error) {
	var inodes []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		inodes = append(inodes, listeningInodes(bytes.NewReader(b), port)...)
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("no socket listens on port %d", port)
	}
	want := map[string]bool{}
	for _, ino := range inodes {
		want["socket:["+ino+"]"] = true
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("listing processes: %w", err)
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err == nil && want[link] {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no process of this user holds the socket listening on port %d", port)
}

// tcpListen is the st field of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// listeningInodes reads /proc/net/tcp's format and returns the inodes of
// the sockets that listen on port.
func listeningInodes(r io.Reader, port int) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil || int(p) != port {
			continue
		}
		out = append(out, f[9])
	}
	return out
}

// rssKiB is the process's resident set (VmRSS), in KiB.
func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	return vmRSS(bytes.NewReader(b))
}

// vmRSS reads the VmRSS line of /proc/<pid>/status.
func vmRSS(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmRSS line %q", sc.Text())
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no VmRSS line: the process is gone")
}

// rssSampler reads a process's RSS every interval and keeps the largest.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	max  int64
	err  error
}

// sampleRSS starts sampling pid until the sampler is stopped or ctx ends.
func sampleRSS(ctx context.Context, pid int, interval time.Duration) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			kib, err := rssKiB(pid)
			s.mu.Lock()
			if err != nil && s.err == nil {
				s.err = err
			}
			s.max = max(s.max, kib)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the largest RSS seen, in KiB.
func (s *rssSampler) Stop() (int64, error) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max, s.err
}

// machine describes where the figures were taken.
type machine struct {
	CPUs       int    `json:"cpus"`
	MemTotalGB string `json:"memTotalGB"`
	LoadAvg    string `json:"loadAvg"`
	Time       string `json:"time"`
}

func machineNow() machine {
	m := machine{CPUs: runtime.NumCPU(), Time: time.Now().UTC().Format(time.RFC3339)}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if f := strings.Fields(v); len(f) == 2 {
					if kib, err := strconv.ParseFloat(f[0], 64); err == nil {
						m.MemTotalGB = strconv.FormatFloat(kib/(1<<20), 'f', 1, 64)
					}
				}
			}
		}
	}
	return m
}
