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
	"os/exec"
	"syscall"
)

// The package runs on Linux; this file lets it build on macOS, where pods'
// 127.A.B.x addresses work only once lo0 has them as aliases.

// startCmd starts cmd in a session and process group of its own, as cred
// when set. Without Pdeathsig, processes outlive a Kubelet that dies without
// stopping.
func startCmd(cmd *exec.Cmd, cred *syscall.Credential) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: cred}
	return cmd.Start()
}

// awaitExit waits for the process and reaps it: waiting without reaping is
// Linux's.
func awaitExit(cmd *exec.Cmd) bool {
	_ = cmd.Wait()
	return true
}

// killAll signals the process group sid.
func killAll(sid int, sig syscall.Signal) { _ = syscall.Kill(-sid, sig) }

// alive reports whether the process group sid has a process left.
func alive(sid int) bool { return syscall.Kill(-sid, 0) == nil }
