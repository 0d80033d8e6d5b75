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
// docs/api.md records the decisions: the error envelope and codes, body
// limits, how start waits and resumes, end, listing and filtering, and why a
// session of another project is a 404 like a missing one.
package server
