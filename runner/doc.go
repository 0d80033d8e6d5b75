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

// Package runner is the process inside each browser-runner pod: it launches
// the session's Chromium (or attaches to the browser at its cdpUrl),
// supervises it, and serves the runner RPC of runner/rpc to the API and
// manager pods on port 8080: act, observe, extract and navigate, and a
// token-checked WebSocket proxy to the browser's DevTools endpoint.
//
// docs/runner.md records the runner's decisions for operators and
// developers: the environment contract, how the session's spec becomes
// launch settings (and what is ignored), the egress gate, ad blocking,
// supervision and crashes, the RPC's endpoints, authentication, streaming
// format, error codes and limits, the CDP proxy, and why the image wants a
// minimal init. This comment keeps only what a reader of the code needs
// first.
//
// # Shape
//
// Run is the runner: it serves the RPC at once (/healthz says "starting"),
// starts the Browser, then serves operations until its context ends. A
// Server routes calls; page operations run one at a time in arrival order
// (fifo), each with a context that ends when the caller goes away, the
// call's timeout passes, the runner stops or the browser dies, and the
// outcome of which classify turns into an rpc.ErrorCode. A responder writes
// one JSON answer or an NDJSON stream.
//
// The operations are an Engine's. Automation, the one cmd/runner uses,
// adapts engine (act, observe, extract) and Navigate; engine/page is
// attached to the Browser's tab once, with the tab's long-lived chromedp
// context (Page.TabContext), so that its network tracking outlives calls.
//
// # Safety
//
// The DevTools port listens on loopback only and switches that would change
// that are refused; /cdp checks the token and strips it before the browser
// sees the request. Every connection of the browser goes through the egress
// proxy (runner/egress), which safety switches pin it to, and every one of
// the runner's own through the egress dialer. Chromium starts with the
// runner's BROWSERFLEET_* variables blanked, and navigate refuses file: and
// the browser's own pages (rpc.NavigateURLProblem). Secrets are Secret
// values, which print as "[redacted]"; no log line or error carries one,
// and a model's key goes only to the endpoint the session gave it.
package runner
