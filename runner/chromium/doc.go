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

// Package chromium is the session's browser: it launches Chromium with the
// settings the session's spec allows (or attaches to the browser at its
// cdpUrl), pins every connection to the egress proxy, attaches the engine's
// page to the runner's tab, and supervises the process, reporting a crash
// the same way whichever signal arrives first. A Tab is an operation's handle
// on that tab. docs/runner.md records which settings are honoured and why.
package chromium
