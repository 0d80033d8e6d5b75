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
	"fmt"
	"os/exec"
	"testing"
)

func TestCrashReasonWaitsForTheExit(t *testing.T) {
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	b := &Browser{settings: &settings{}, pid: cmd.Process.Pid}
	got := b.crashReason()
	want := fmt.Sprintf("chromium (pid %d) exited unexpectedly: exit code 0", cmd.Process.Pid)
	if got != want {
		t.Errorf("crashReason() = %q, want %q", got, want)
	}
}
