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

// Package metrics holds the API pod's Prometheus metrics: request latency by
// route and status, requests in flight, the latency and outcome of browser
// operations, model tokens spent, and the number of sessions by phase.
//
// # Metrics
//
//	browserfleet_api_request_duration_seconds{route,code}                histogram
//	browserfleet_api_requests_in_flight{route}                           gauge
//	browserfleet_operation_duration_seconds{operation,outcome,streamed}  histogram
//	browserfleet_model_tokens_total{model,kind}                          counter
//	browserfleet_sessions{phase}                                         gauge
//	browserfleet_sessions_list_errors_total                              counter
//	browserfleet_session_start_seconds{phase="first_answer",start}       histogram (package startlatency)
//
// # Decisions
//
//   - Serving: New registers on the Registerer it is given and serves
//     nothing itself. The API pod passes controller-runtime's
//     metrics.Registry, which its manager's metrics server already serves
//     (with authentication when --metrics-secure is set), next to the
//     client-go and Go runtime metrics; a second /metrics endpoint would
//     only split them.
//   - Bounded labels: every label value comes from a closed set, or is
//     capped, because each distinct value is a time series kept in memory
//     here and in Prometheus, and values that callers control (model names)
//     or that a bug could make unbounded (a raw path instead of a route)
//     would otherwise grow without end. The route is the ServeMux pattern
//     ("POST /v1/sessions/{id}/act"), never a path with ids; "" is
//     "unmatched". The code is the HTTP status. The operation is one of act,
//     observe, extract, navigate, agentExecute and start, the outcome
//     "success" or one of the known error codes of the runner and the API;
//     anything else is "other". Routes (MaxRoutes) and models (MaxModels)
//     are capped at first come, first served: once the cap is reached, new
//     values are "other" until the process restarts.
//   - Sessions by phase are computed at scrape time from the informer cache
//     rather than kept up to date by event handlers: a scrape is then always
//     consistent with the cache, and there is nothing to drift. All six
//     phases are emitted on every scrape, zero included, so that graphs have
//     no gaps; a session with no phase yet counts as Pending. The list is
//     bounded by a short timeout (the cache waits for its first sync). When
//     it fails, the scrape goes on without browserfleet_sessions (no made-up
//     zeros) and browserfleet_sessions_list_errors_total goes up: the
//     manager's metrics server answers 500 for a whole scrape if any
//     collector reports an error, which would hide every other metric.
//   - A nil *Metrics is a valid no-op, so handlers and tests need no checks.
package metrics
