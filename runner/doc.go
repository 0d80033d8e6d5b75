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
// manager pods on port 8080.
//
// # The RPC
//
// GET /healthz needs no token: 200 {"status":"ready"} while the browser is
// up, 503 with "starting", "crashed" or "stopping" and the reason otherwise.
// Everything else needs "Authorization: Bearer <runner token>" and answers
// 401 without it. POST /v1/act, /v1/observe, /v1/extract and /v1/navigate
// take the /v1 API's bodies (rpc.ActRequest, ...) and answer
// {"result": ..., "usage": {...}}, or a status and {"error", "code"}. With
// "Accept: application/x-ndjson" the answer is a stream of rpc.StreamLine:
// log lines, then one result or error line. GET /cdp is a WebSocket proxy to
// the browser's DevTools browser endpoint, for chromedp's RemoteAllocator or
// Playwright's connectOverCDP.
//
// Page operations run one at a time in arrival order (one page cannot take
// two engines at once). options.timeout bounds an operation (navigate: 30s
// by default) and a caller that disconnects cancels its operation. The
// engine that performs act, observe and extract is an Engine; NoEngine,
// the default, navigates and answers the others with ENGINE_UNAVAILABLE.
//
// # From the session's spec to the browser
//
// launchOptions (type local) and cloudSessionCreateParams (type cloud; it
// also runs on the runner pod) are read together. Decisions where the /v1
// API leaves room:
//
//   - Identity: the session presents one coherent operating system, device
//     and browser, chosen from browserSettings.os, else the fingerprint's
//     devices and operatingSystems (first fitting entry, so a session looks
//     the same each time), else Chrome on Linux desktop. User agent (Chrome's
//     reduced format, never "HeadlessChrome"), navigator.platform, client
//     hints, viewport, device scale factor and touch follow from it; explicit
//     viewport, deviceScaleFactor and hasTouch override the device's. The
//     locale is launchOptions.locale, else the fingerprint's first locale.
//     Firefox and Safari cannot be presented by Chromium (Chrome is, and a
//     log line says so).
//   - Tab-level settings (identity, metrics, locale override, proxy
//     credentials, ad blocking) apply to the runner's tab, which every
//     operation uses; tabs a page opens itself get the launch-level ones
//     only (switches, download behaviour, certificate errors).
//   - Proxy: launchOptions.proxy, else the first external proxy of
//     cloudSessionCreateParams.proxies. Chromium takes one proxy for all
//     traffic, so further proxies and domainPattern are not honoured, and
//     there are no cloud proxies on this installation. Credentials are
//     answered through the Fetch domain's authRequired; a proxy that refuses
//     them fails the navigation with PROXY_AUTH_FAILED at once.
//   - Downloads are accepted by default (as in Playwright) into
//     downloadsPath, else a temporary directory removed with the browser.
//   - userDataDir: without one, a temporary profile, removed at close. A
//     given one is removed at close unless preserveUserDataDir (never "/",
//     the temporary directory itself or $HOME).
//   - blockAds blocks the hosts of the list in runner/blocklist (embedded,
//     one domain per line, subdomains included) with
//     Network.setBlockedURLs.
//   - chromiumSandbox defaults to off: the pod, not Chromium, is the sandbox
//     (a hardened pod has no user namespaces for Chromium's).
//   - cdpUrl: the runner attaches with chromedp's RemoteAllocator and opens
//     a tab of its own, closed at the end; the browser and its other tabs
//     are left alone. An http(s) cdpUrl is resolved through /json/version.
//     cdpHeaders go on every connection through a loopback reverse proxy,
//     because chromedp's dialer takes no headers. Launch-only options are
//     noted and ignored.
//   - Not supported, noted in the log at start: captcha solving, stealth,
//     persisted contexts, extensions, session recording, verified.
//
// # Safety
//
// The DevTools port listens on loopback only and switches that would change
// that are refused; /cdp checks the token and strips it before the browser
// sees the request. Chromium starts with the runner's BROWSERFLEET_*
// variables blanked, so no page can read the token or the session's keys
// from its /proc environment, and navigate refuses file: URLs. Secrets are
// Secret values, which print as "[redacted]"; no log line or error carries
// one.
//
// # Life and death of the browser
//
// A browser that exits or drops its DevTools connection unasked has
// crashed: /healthz turns 503 with the reason, calls in flight and later
// fail with BROWSER_CRASHED, and what is left of Chromium is killed. With
// Config.CrashExitDelay, Run then returns so the pod fails and the session
// with it. Chromium runs in a process group of its own with SIGKILL as its
// parent-death signal; stopping (SIGTERM, or Run's context) refuses new
// calls, cancels those in flight (SHUTTING_DOWN), closes the browser
// gracefully, kills the group and waits until none of it runs. Helpers
// orphaned by Chromium's exit are reparented to PID 1; when the runner is
// the container's PID 1 they stay zombies until the pod ends, so the runner
// image should start it under a minimal init (tini) or the pod share its
// process namespace.
package runner
