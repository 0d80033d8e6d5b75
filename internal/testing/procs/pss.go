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

package procs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Memory is what a process holds, from /proc/<pid>/smaps_rollup.
type Memory struct {
	// PSS, the proportional set size, is its private pages plus its share
	// of the pages it shares (libraries, Chromium's shared memory), so
	// that the PSS of a group of processes adds up to what the group
	// holds. Its share of a library depends on who else maps it: other
	// browsers on the machine lower it.
	PSS int64
	// USS, the unique set size, is its private pages only: what its end
	// would free, whoever else runs.
	USS int64
}

// Add is the memory of both: the sum of each figure.
func (m Memory) Add(o Memory) Memory {
	return Memory{PSS: m.PSS + o.PSS, USS: m.USS + o.USS}
}

// ReadMemory reads pid's Memory, in bytes.
func ReadMemory(pid int) (Memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	defer f.Close()
	var m Memory
	var seen bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var field *int64
		switch name {
		case "Pss":
			field, seen = &m.PSS, true
		case "Private_Clean", "Private_Dirty":
			field = &m.USS
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("process %d: parsing %q: %w", pid, sc.Text(), err)
		}
		*field += kb << 10
	}
	if err := sc.Err(); err != nil {
		return Memory{}, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	if !seen {
		return Memory{}, fmt.Errorf("process %d: no Pss line in smaps_rollup", pid)
	}
	return m, nil
}

// Cmdline is pid's command line, its arguments split; nil when the process
// is gone.
func Cmdline(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00")
}
