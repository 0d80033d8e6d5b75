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

// Package egress is the runner's one gate for outgoing connections: the
// browser's (through Proxy, the forward proxy Chromium is pinned to) and the
// runner's own (model providers, cdpUrl, upstream proxies, through Dialer).
//
// Policy says which addresses may be reached: the operator's allow list, and
// otherwise public unicast addresses only, outside the cluster's ranges,
// never a cloud metadata address and never one of the runner's own ports.
// Dialer resolves a name once, checks every answer and dials the checked
// addresses. Proxy answers what it cannot connect uniformly and records it,
// so that an operation can say which host it was refused.
package egress
