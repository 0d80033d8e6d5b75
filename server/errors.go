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

package server

import (
	"encoding/json"
	"net/http"

	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// Codes of the error envelope: `code` says, for programs, why a call failed.
const (
	// CodeInvalidRequest (400): the body or query is not acceptable; issues
	// say where.
	CodeInvalidRequest = "INVALID_REQUEST"
	// CodeUnauthorized (401): the API key is missing or invalid.
	CodeUnauthorized = "UNAUTHORIZED"
	// CodeNotFound (404): no such path.
	CodeNotFound = "NOT_FOUND"
	// CodeSessionNotFound (404): no session of that id in the key's project.
	CodeSessionNotFound = "SESSION_NOT_FOUND"
	// CodeMethodNotAllowed (405): the path exists with another method.
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	// CodeSessionEnded (409): the session is ending, ended or failed.
	CodeSessionEnded = "SESSION_ENDED"
	// CodeRequestTimeout (408): the body did not arrive in time.
	CodeRequestTimeout = "REQUEST_TIMEOUT"
	// CodePayloadTooLarge (413): the body is over the server's limit.
	CodePayloadTooLarge = "PAYLOAD_TOO_LARGE"
	// CodeQuotaExceeded (429): the project has as many sessions as its
	// quota allows; Retry-After says when to try again.
	CodeQuotaExceeded = "QUOTA_EXCEEDED"
	// CodeInternal (500): the server's fault; the message says no more.
	CodeInternal = "INTERNAL"
	// CodeSessionFailed (502): the session's browser failed to start; the
	// message is the session's status.message.
	CodeSessionFailed = "SESSION_FAILED"
	// CodeUnavailable (503): the server cannot answer yet (its cache is not
	// synced) or its backend is unreachable; retry.
	CodeUnavailable = "UNAVAILABLE"
	// CodeStartTimeout (504): the session did not become ready in time.
	CodeStartTimeout = "START_TIMEOUT"
)

// errorBody is the error envelope.
type errorBody struct {
	Success bool             `json:"success"`
	Error   string           `json:"error"`
	Code    string           `json:"code"`
	Issues  []serverv1.Issue `json:"issues,omitempty"`
}

// writeJSON writes v with status. A failed write means the client is gone;
// there is no one left to tell.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes the error envelope.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody{Error: message, Code: code})
}

// writeIssues writes a 400 with the issues of a refused body or query.
func writeIssues(w http.ResponseWriter, message string, issues []serverv1.Issue) {
	writeJSON(w, http.StatusBadRequest, errorBody{Error: message, Code: CodeInvalidRequest, Issues: issues})
}

// writeSessionNotFound is the one answer for a session that does not exist
// and for one of another project, so that ids of other projects cannot be
// probed.
func writeSessionNotFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, CodeSessionNotFound, "session not found")
}

// writeInternal answers an error that is the server's fault. The details go
// to the log (by the caller), not to the client.
func writeInternal(w http.ResponseWriter) {
	writeError(w, http.StatusInternalServerError, CodeInternal, "internal error")
}
