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
	"net/http"
	"strings"

	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/server/sse"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// HeaderStreamResponse asks for a streamed (SSE) reply; a body's
// streamResponse, when present, wins over it.
const HeaderStreamResponse = "x-stream-response"

// wantsStream decides whether a call streams: the body's streamResponse
// when present, else the header. A header that is neither "true" nor
// "false" is refused rather than guessed at.
func wantsStream(r *http.Request, body *bool) (bool, *serverv1.Issue) {
	if body != nil {
		return *body, nil
	}
	switch v := strings.ToLower(strings.TrimSpace(r.Header.Get(HeaderStreamResponse))); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, &serverv1.Issue{Path: HeaderStreamResponse, Message: `header must be "true" or "false"`}
	}
}

// responder answers a call either as one JSON reply or as an SSE stream,
// so that each handler is written once for both.
type responder interface {
	// log reports progress; a plain reply drops it.
	log(line rpc.LogLine)
	// succeed answers with the call's result. actionID is empty for calls
	// that have none (start); metadata is nil for calls that have none
	// (start, navigate).
	succeed(result any, actionID string, metadata *serverv1.Metadata)
	// succeedAgent answers agentExecute: its data is {result, cacheEntry},
	// cacheEntry left out when nil.
	succeedAgent(result, cacheEntry any)
	// fail answers with an error.
	fail(status int, code, message string)
	// failIssues answers a refused request.
	failIssues(message string, issues []serverv1.Issue)
}

// plain writes a single JSON reply. Its data is {result, actionId}, or with
// bare the result itself (start's data is its result).
type plain struct {
	w    http.ResponseWriter
	bare bool
}

func (p plain) log(rpc.LogLine) {}

// opData is an operation's data: its result, the id of this call and, for
// act, observe and extract, how the result was made.
type opData struct {
	Result   any                `json:"result"`
	ActionID string             `json:"actionId,omitempty"`
	Metadata *serverv1.Metadata `json:"metadata,omitempty"`
}

func (p plain) succeed(result any, actionID string, metadata *serverv1.Metadata) {
	if p.bare {
		writeJSON(p.w, http.StatusOK, success{Success: true, Data: result})
		return
	}
	writeJSON(p.w, http.StatusOK, success{Success: true, Data: opData{Result: result, ActionID: actionID, Metadata: metadata}})
}

// agentData is agentExecute's data.
type agentData struct {
	Result     any `json:"result"`
	CacheEntry any `json:"cacheEntry,omitempty"`
}

func (p plain) succeedAgent(result, cacheEntry any) {
	writeJSON(p.w, http.StatusOK, success{Success: true, Data: agentData{Result: result, CacheEntry: cacheEntry}})
}

func (p plain) fail(status int, code, message string) { writeError(p.w, status, code, message) }

func (p plain) failIssues(message string, issues []serverv1.Issue) { writeIssues(p.w, message, issues) }

// streamed writes SSE frames. Its errors are the client's disconnection,
// which the call's context reports too; they are dropped here.
type streamed struct{ s *sse.Stream }

func (s streamed) log(line rpc.LogLine) { _ = s.s.Log(line) }

func (s streamed) succeed(result any, actionID string, metadata *serverv1.Metadata) {
	if metadata == nil {
		_ = s.s.Finished(result, actionID)
		return
	}
	_ = s.s.FinishedOperation(result, actionID, metadata)
}

func (s streamed) succeedAgent(result, cacheEntry any) {
	_ = s.s.FinishedAgent(result, cacheEntry)
}

func (s streamed) fail(_ int, _, message string) { _ = s.s.Error(message) }

func (s streamed) failIssues(message string, issues []serverv1.Issue) {
	_ = s.s.Error((&serverv1.ValidationError{Issues: issues}).Error())
}

// openStream starts an SSE reply with its starting frame. A writer that
// cannot stream gets a 500: the server's own middleware must not hide the
// flusher.
func (s *server) openStream(w http.ResponseWriter) (*sse.Stream, bool) {
	st, err := sse.New(w)
	if err != nil {
		s.log.Error(err, "opening an event stream")
		writeInternal(w)
		return nil, false
	}
	_ = st.Starting()
	return st, true
}
