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

import "syscall"

// prSetDumpable is PR_SET_DUMPABLE from <linux/prctl.h>.
const prSetDumpable = 4

// harden makes the runner's process non-dumpable. Its /proc/<pid>/environ
// still holds the token and the session's secrets as the container started
// with them, and Chromium runs untrusted pages as the same user without a
// sandbox of its own; a non-dumpable process's /proc files belong to root and
// it cannot be ptraced by that user. Chromium itself is unaffected: exec
// resets the flag, and its environment has the runner's variables blanked.
func harden() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
