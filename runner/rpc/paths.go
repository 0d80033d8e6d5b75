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

package rpc

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// Paths and media types of the runner's RPC, next to the port and health and
// CDP paths in rpc.go.
const (
	// ActPath runs one action described in natural language or given as an
	// Action. Body ActRequest; result ActResult.
	ActPath = "/v1/act"
	// ObservePath lists the actions the page offers. Body ObserveRequest;
	// result []Action.
	ObservePath = "/v1/observe"
	// ExtractPath extracts data from the page. Body ExtractRequest; result
	// any JSON value.
	ExtractPath = "/v1/extract"
	// NavigatePath loads a URL in the page. Body NavigateRequest; result
	// NavigateResult.
	NavigatePath = "/v1/navigate"
	// ReplayPath (GET) answers the session's history of calls, as the
	// runner keeps it in memory: a replay.Replay, never with a summary.
	ReplayPath = "/v1/replay"

	// HeaderActionID carries the id the API gave an operation call; the
	// runner records the call in its history under it (a new id when the
	// header is missing or not an id).
	HeaderActionID = "X-Browserfleet-Action-Id"

	// ContentTypeJSON is the media type of request bodies and of plain
	// responses.
	ContentTypeJSON = "application/json"
	// ContentTypeNDJSON, sent in Accept, asks for a streamed response: one
	// StreamLine per line. See StreamLine.
	ContentTypeNDJSON = "application/x-ndjson"

	// AuthorizationScheme is the scheme of the Authorization header that
	// carries the runner token: "Authorization: Bearer <token>".
	AuthorizationScheme = "Bearer"

	// MaxRequestBytes bounds a request body. Bodies are instructions, JSON
	// schemas and variables; a larger one is refused with 413.
	MaxRequestBytes = 4 << 20
)

// BearerToken returns the token of a request's "Authorization: Bearer
// <token>" header; the scheme is case-insensitive (RFC 9110).
func BearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, AuthorizationScheme) {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// SameToken reports whether a presented token is the expected one. It
// compares SHA-256 digests in constant time, so neither the token's bytes
// nor its length leak through timing.
func SameToken(got, want string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
