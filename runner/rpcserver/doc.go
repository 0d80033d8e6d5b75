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

// Package rpcserver serves the runner RPC of runner/rpc: token
// authentication, a bounded queue that runs page operations one at a time in
// arrival order, JSON or NDJSON streaming answers, the call history
// (runner/replay) and the token-checked, filtered CDP proxy. An operation's
// context ends when the caller goes away, its timeout passes, the runner
// stops or the browser dies; classify turns which of these into an
// rpc.ErrorCode.
package rpcserver
