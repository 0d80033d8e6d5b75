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

// Package runner is the process inside each browser-runner pod. Run wires
// its parts: the session's browser (runner/chromium), the operations on its
// page (runner/operations, over the engine), and the RPC server the API and
// manager pods call on port 8080 (runner/rpcserver), until SIGTERM. The
// configuration comes from the pod's environment and Secret volume
// (runner/config); the contract with its callers is runner/rpc. A warm
// pool's runner starts its pool's browser ahead of any session and serves
// the session that claims it (pool.go).
//
// docs/runner.md records the decisions: the environment contract, launch
// settings, the egress gate, supervision and crashes, the RPC and its
// errors, the CDP proxy, warm pools.
package runner
