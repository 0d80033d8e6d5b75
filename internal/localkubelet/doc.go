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

// Package localkubelet is a stand-in for the kubelet (and the scheduler) that
// runs pods' containers as local processes. envtest has neither, so pods
// stay Pending forever; with a Kubelet running, the API server's test suites
// and `make dev` run the real runner binary for each runner pod, and the
// controllers and the API server see what they would see on a cluster. Only
// the local stack (internal/devstack) uses it: the manager and the API never
// know the difference.
//
// docs/local-stack.md records what it does, as far as the API server can
// see, and what it leaves out.
package localkubelet
