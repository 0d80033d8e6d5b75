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
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// startCmd starts cmd in a session of its own, and thus a process group: a
// process that moves to another group (Chromium's, under the runner) stays
// in the session, where killAll finds it. Pdeathsig kills the process when
// the Kubelet's process dies, however it dies. With cred, the process runs
// as that user and those groups (the kernel would clear a parent-death
// signal set before a change of user; Go sets it after).
//
// Pdeathsig fires when the thread that forked the process exits, not the
// process, and Go ends a thread whose goroutine exits while locked to it; so
// processes are started from one locked thread that never exits.
func startCmd(cmd *exec.Cmd, cred *syscall.Credential) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	starterOnce.Do(func() {
		go func() {
			runtime.LockOSThread()
			for req := range starts {
				req.done <- req.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	starts <- startRequest{cmd: cmd, done: done}
	return <-done
}

type startRequest struct {
	cmd  *exec.Cmd
	done chan<- error
}

var (
	starterOnce sync.Once
	starts      = make(chan startRequest)
)

// pPID is waitid's P_PID.
const pPID = 1

// awaitExit blocks until the process exits but leaves it unreaped, so that
// its pid, which names its session and group, is not reused while the rest
// of the container is killed. It reports whether it reaped the process.
func awaitExit(cmd *exec.Cmd) bool {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(cmd.Process.Pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return false
		}
	}
}

// killAll signals every process of the session sid, and of the group sid.
func killAll(sid int, sig syscall.Signal) {
	_ = syscall.Kill(-sid, sig)
	for _, pid := range members(sid) {
		_ = syscall.Kill(pid, sig)
	}
}

// alive reports whether a process of the session or group sid still runs.
func alive(sid int) bool { return len(members(sid)) > 0 }

// members lists the live processes of the session or group sid. Zombies do
// not count: they are dead, only not reaped yet (an orphan is reaped by
// PID 1, not by the Kubelet).
func members(sid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold anything, so
		// the fields start after the last ')': state ppid pgrp session.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 4 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if f[2] == strconv.Itoa(sid) || f[3] == strconv.Itoa(sid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
