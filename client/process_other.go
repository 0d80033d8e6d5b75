//go:build !linux

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

package client

import (
	"os"
	"os/exec"
)

// configureProcess leaves the browser's process as it is: process groups
// are Linux's here.
func configureProcess(*exec.Cmd) {}

// terminate asks the browser to shut down; elsewhere than Linux it is
// killed.
func terminate(p *os.Process) { _ = p.Kill() }

// killGroup kills the browser's process.
func killGroup(p *os.Process) { _ = p.Kill() }
