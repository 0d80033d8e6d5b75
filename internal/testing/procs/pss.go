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
	"encoding/binary"
	"errors"
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
	// USS, the unique set size, is its private pages only, those no other
	// process maps (another process mapping the same file makes them
	// shared).
	USS int64
	// PSSFile is the part of PSS in pages of files (binaries, data files).
	PSSFile int64
}

// Add is the memory of both: the sum of each figure.
func (m Memory) Add(o Memory) Memory {
	return Memory{PSS: m.PSS + o.PSS, USS: m.USS + o.USS, PSSFile: m.PSSFile + o.PSSFile}
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
		case "Pss_File":
			field = &m.PSSFile
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

// FilePages adds to pages the page frames of the file pages pid has in
// memory (its mappings of binaries and data files), from
// /proc/<pid>/pagemap: the union over a group of processes is what the
// group's file pages would weigh if nothing else mapped those files. It
// needs CAP_SYS_ADMIN (root), without which the kernel hides the frames:
// ErrNoFrames then.
func FilePages(pid int, pages map[uint64]struct{}) error {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return fmt.Errorf("reading the mappings of process %d: %w", pid, err)
	}
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return fmt.Errorf("reading the pages of process %d: %w", pid, err)
	}
	defer pm.Close()
	const pageSize = 4096
	var present, framed int
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		// Files only: not anonymous memory, not shared memory segments.
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") || strings.HasPrefix(f[5], "/dev/") || strings.HasPrefix(f[5], "/memfd:") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		buf := make([]byte, (end-start)/pageSize*8)
		if _, err := pm.ReadAt(buf, int64(start/pageSize*8)); err != nil {
			continue // the mapping changed meanwhile
		}
		for i := 0; i+8 <= len(buf); i += 8 {
			e := binary.LittleEndian.Uint64(buf[i:])
			if e&(1<<63) == 0 {
				continue // not in memory
			}
			present++
			if pfn := e & (1<<55 - 1); pfn != 0 {
				framed++
				pages[pfn] = struct{}{}
			}
		}
	}
	if present > 0 && framed == 0 {
		return ErrNoFrames
	}
	return nil
}

// ErrNoFrames says the kernel hid the page frames: FilePages needs root.
var ErrNoFrames = errors.New("the kernel hides page frames from this user")
