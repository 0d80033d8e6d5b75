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
	"bytes"
	"os"
	"strconv"
	"strings"
)

// strayControlPlane lists the etcd processes whose data directory is
// etcdDir, and the kube-apiservers that use them.
func strayControlPlane(etcdDir string) []int {
	procs := commandLines()
	var pids []int
	etcdURLs := map[string]bool{}
	for pid, args := range procs {
		if flagValue(args, "--data-dir") == etcdDir {
			pids = append(pids, pid)
			etcdURLs[flagValue(args, "--listen-client-urls")] = true
		}
	}
	for pid, args := range procs {
		if servers := flagValue(args, "--etcd-servers"); servers != "" && etcdURLs[servers] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// commandLines reads the argv of every process of this user that shows it.
func commandLines() map[int][]string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	procs := map[int][]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		procs[pid] = strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	}
	return procs
}

// flagValue is the value of --name=value in args, as envtest passes flags.
func flagValue(args []string, name string) string {
	for _, a := range args[1:] {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// alive reports whether pid runs: a zombie does not.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
