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

// Package operations performs act, observe, extract and navigate, and runs
// agent tasks, on the session's tab: Automation adapts the engine (the
// top-level engine package, and engine/agent for agent tasks) to the
// runner RPC's requests and results, with the session's model merged into
// each call's, and maps the engine's errors to the RPC's codes. Interface
// is what the RPC server calls.
package operations
