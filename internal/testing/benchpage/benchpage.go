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

// Package benchpage is the fixed page benchmarks and load runs measure on,
// so that their figures compare across runs and with other engines: a
// byte-for-byte copy of the shared bench directory's catalogue-6k.html
// (about 6,000 elements: navigation, a form, a 500-row table with links,
// buttons, inputs and selects, and an open shadow root), kept here so that
// a clone alone runs the tests that use it.
package benchpage

import (
	_ "embed" // the page
	"os"
)

//go:embed catalogue-6k.html
var catalogue []byte

// EnvPath names a file to use instead (BROWSERFLEET_BENCH_PAGE), to
// measure another page with the same benchmarks.
const EnvPath = "BROWSERFLEET_BENCH_PAGE"

// HTML returns the page: the file EnvPath names, else the catalogue.
func HTML() ([]byte, error) {
	if p := os.Getenv(EnvPath); p != "" {
		return os.ReadFile(p)
	}
	return catalogue, nil
}
