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

package chromium

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// configureCmd makes Chromium die with the runner: it gets its own process
// group, so that killGroup reaches its zygote and renderers too, and
// SIGKILL when the runner's process dies, even by SIGKILL. Killing on
// context cancellation kills the whole group, not only the browser process.
func configureCmd(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return killGroup(cmd.Process.Pid)
	}
}

// killGroup sends SIGKILL to the process group led by pid. A group that is
// already gone is not an error.
func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing process group %d: %w", pid, err)
	}
	return nil
}

// groupAlive reports whether any process of the group led by pid is still
// running. Zombies do not count: they are dead, only not reaped yet (a
// helper orphaned by Chromium's exit is reaped by PID 1, not by us).
func groupAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(-pid, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		state, pgrp, ok := procStat(e.Name())
		if ok && pgrp == pid && state != "Z" {
			return true
		}
	}
	return false
}

// procStat returns the state and process group of process pid from
// /proc/<pid>/stat.
func procStat(pid string) (state string, pgrp int, ok bool) {
	fields, ok := statFields(pid)
	if !ok || len(fields) < 3 {
		return "", 0, false
	}
	pgrp, err := strconv.Atoi(fields[2])
	if err != nil {
		return "", 0, false
	}
	return fields[0], pgrp, true
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name, starting with the state. The name is in parentheses and may hold
// spaces, so the fields start after the last ')'.
func statFields(pid string) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// exitStatus describes how process pid ended, when it has ended but not been
// reaped yet (a zombie keeps its wait status in /proc/<pid>/stat); exited is
// false while it runs.
func exitStatus(pid int) (desc string, exited bool) {
	fields, ok := statFields(strconv.Itoa(pid))
	if !ok {
		return "", true // reaped already
	}
	if len(fields) == 0 || fields[0] != "Z" {
		return "", false
	}
	// exit_code is field 52 of the file, the 50th after the name.
	if len(fields) < 50 {
		return "", true
	}
	ws, err := strconv.Atoi(fields[49])
	if err != nil {
		return "", true
	}
	status := syscall.WaitStatus(ws)
	switch {
	case status.Signaled():
		return fmt.Sprintf("killed by signal %d (%v)", int(status.Signal()), status.Signal()), true
	case status.Exited():
		return fmt.Sprintf("exit code %d", status.ExitStatus()), true
	}
	return "", true
}
