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

// Package replay is a session's history of calls: the wire shape of the
// replay (GET /v1/sessions/{id}/replay, and the runner's ReplayPath that
// serves it), the redaction that keeps every secret out of it, the bounded
// History a runner keeps in memory for its session, and the Summary of it
// that outlives the runner in the session's status.
//
// The history lives in the runner's memory, not in the cluster: a write to
// etcd per operation would let a loop of cheap calls fill etcd's quota. It
// goes with the runner; what stays is the Summary, small enough for a
// container's termination message (MaxSummaryBytes), which the manager
// copies into the BrowserSession's status.
package replay
