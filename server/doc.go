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

// Package server is the HTTP core of the API pod: the /v1 session endpoints
// of spec/http-api.md (start, end, and the beyond-the-spec GET of one session
// and of a project's sessions), authentication by API key, the error
// envelope, request logging, and the /healthz and /readyz probes.
//
// The server holds no state of its own: a session is a BrowserSession in the
// key's project (namespace), read through the API pod's informer cache and
// written to the API server. Several API pods can therefore serve the same
// cluster side by side.
//
// # Decisions
//
//   - Errors: every non-2xx reply is `{"success": false, "error": "<message>",
//     "code": "<CODE>"}`, plus `issues` for a refused body (400). The codes are
//     the Code* constants of this package.
//   - Bodies: at most Options.MaxBodyBytes (DefaultMaxBodyBytes, 1 MiB);
//     a larger one is a 413 before anything is read into memory or changed.
//   - Start waits, event-driven, until the session is Ready (200), Failed
//     (502 SESSION_FAILED with the session's status.message) or
//     Options.StartTimeout (DefaultStartTimeout, 60s) passes (504
//     START_TIMEOUT). A session this request created and whose id the client
//     therefore never received is ended on a timeout or when the client goes
//     away, so that it does not hold a browser until its own timeout.
//   - Resume (`cloudSessionID`): the session of that id in the key's project;
//     unknown is a 404, Ending/Ended/Failed (or already asked to end) a 409
//     SESSION_ENDED; otherwise the call waits for Ready like a start. The
//     session's spec is immutable, so the rest of the body and
//     `x-model-api-key` are ignored on resume.
//   - End: the body must be empty; `{}` (an object with no fields, which some
//     clients send for every POST) is taken as empty, anything else is a 400.
//     End records the request (spec.ended, a merge patch) and answers at
//     once; the browser stops asynchronously. Ending an ending, ended or
//     failed session is a 200: end is idempotent.
//   - GET /v1/sessions/{id} and GET /v1/sessions answer the session view
//     (sessionView): timestamps are RFC 3339 or null, userMetadata is an
//     object (empty when none). The list is `data.sessions`, oldest first,
//     filtered by `phase=<Phase>` and `userMetadata.<key>=<value>` (a
//     metadata value matches when it is that string, or when its compact JSON
//     text is the value: `userMetadata.tier=3`, `userMetadata.vip=true`).
//     Repeating a parameter matches any of its values; different parameters
//     must all match; an unknown parameter or phase is a 400.
//   - A session of another project is a 404, exactly like a missing one.
//   - Unknown paths are a JSON 404, a known path with another method a JSON
//     405 with Allow.
package server
