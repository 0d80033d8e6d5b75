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

package rpc

import (
	"fmt"
	"path/filepath"
	"slices"
)

// FlagAllowedExecutable is the runner's flag, repeatable, that allows a
// browser binary for a session's launchOptions.executablePath, besides its
// own --chromium. The manager passes one for each path the operator allows
// (its runner.allowedExecutables); the API refuses other paths with the
// same list (its --allowed-executable).
const FlagAllowedExecutable = "allowed-executable"

// CheckAllowedExecutable checks a path an operator allows: absolute and
// clean, so that the runner, the manager and the API each compare a
// session's executablePath with it exactly as written.
func CheckAllowedExecutable(path string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return fmt.Errorf("%q is not a clean absolute path", path)
	}
	return nil
}

// ExecutableAllowed reports whether a session's executablePath may be used:
// empty (the runner's own browser) or one of allowed, exactly.
func ExecutableAllowed(path string, allowed []string) bool {
	return path == "" || slices.Contains(allowed, path)
}
