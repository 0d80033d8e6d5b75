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

// Package agenttask keeps a runner's agent tasks by the AgentTask's UID:
// it starts a task's run once however often it is asked to (so that a
// manager that restarts, or another that takes the lead, re-attaches
// rather than starting it again), runs one task at a time, lets any number
// of followers read its steps as they happen, cancels it, ends it at its
// deadline, and keeps the latest finished tasks, bounded, for their
// outcome to be read. What a run does (the page, the agent, the history)
// is the caller's RunFunc; the runner's RPC server gives it.
package agenttask
