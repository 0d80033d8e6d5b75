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

// Package procs looks at this machine's processes, for tests that must show
// that a runner and its Chromium are gone: a runner started by the local
// kubelet leads a session of its own (setsid), and Chromium's processes stay
// in it.
package procs

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// SessionMembers lists the live processes of the session sid.
func SessionMembers(sid int) []int {
	var pids []int
	ForEach(func(pid int, fields []string) {
		if len(fields) > 3 && fields[3] == strconv.Itoa(sid) && fields[0] != "Z" {
			pids = append(pids, pid)
		}
	})
	return pids
}

// Running reports whether pid is a live process: kill(pid, 0) fails with
// ESRCH once it is gone, and a zombie is dead too (whoever inherited it may
// not have collected it yet).
func Running(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	fields := stat(pid)
	return fields != nil && fields[0] != "Z" && fields[0] != "X"
}

// ForEach calls f with each process's stat fields after the command name:
// state, ppid, pgrp, session, ...
func ForEach(f func(pid int, fields []string)) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if fields := stat(pid); fields != nil {
			f(pid, fields)
		}
	}
}

func stat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// GroupAlive reports whether process group pgid has a live member.
func GroupAlive(pgid int) bool {
	if pgid <= 0 || syscall.Kill(-pgid, 0) != nil {
		return false
	}
	alive := false
	ForEach(func(_ int, fields []string) {
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			alive = true
		}
	})
	return alive
}
