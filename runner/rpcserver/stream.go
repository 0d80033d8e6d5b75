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

package rpcserver

import (
	"encoding/json"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// responder writes one operation's response: a single JSON body, or, when
// the caller accepts application/x-ndjson, a stream of log lines ended by
// one result or error line. Once a stream has started its status is 200 and
// the outcome travels in the last line.
type responder struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	log    *slog.Logger
	stream bool

	mu       sync.Mutex
	started  bool
	finished bool
}

func newResponder(w http.ResponseWriter, r *http.Request, log *slog.Logger) *responder {
	return &responder{w: w, rc: http.NewResponseController(w), log: log, stream: acceptsNDJSON(r)}
}

// acceptsNDJSON reports whether the Accept header lists application/x-ndjson.
func acceptsNDJSON(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == rpc.ContentTypeNDJSON {
				return true
			}
		}
	}
	return false
}

// start commits a streamed response to status 200. Plain responses wait
// for their outcome to choose the status.
func (rs *responder) start() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !rs.stream || rs.started {
		return
	}
	rs.started = true
	h := rs.w.Header()
	h.Set("Content-Type", rpc.ContentTypeNDJSON)
	h.Set("Cache-Control", "no-store")
	// Tell proxies in between (nginx) not to buffer the stream.
	h.Set("X-Accel-Buffering", "no")
	rs.w.WriteHeader(http.StatusOK)
	_ = rs.rc.Flush()
}

// progress sends a log line to a streaming caller, or to the debug log.
func (rs *responder) progress(line rpc.LogLine) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.finished {
		return
	}
	if line.Timestamp.IsZero() {
		line.Timestamp = time.Now()
	}
	if !rs.started {
		rs.log.Debug("operation progress", "category", line.Category, "message", line.Message)
		return
	}
	rs.writeLine(rpc.StreamLog, line)
}

// result ends the response with a successful result, and what the
// server-side cache did for it (nil: DISABLED, left out).
func (rs *responder) result(result any, usage rpc.Usage, report *cache.Report) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.finished {
		return
	}
	rs.finished = true
	body := rpc.Result[any]{Result: result, Usage: usage, Cache: report}
	if rs.started {
		rs.writeLine(rpc.StreamResult, body)
		return
	}
	writeJSON(rs.w, http.StatusOK, body)
}

// fail ends the response with an error.
func (rs *responder) fail(e *rpc.Error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.finished {
		return
	}
	rs.finished = true
	if rs.started {
		rs.writeLine(rpc.StreamError, e)
		return
	}
	writeError(rs.w, e)
}

func (rs *responder) writeLine(t rpc.StreamLineType, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		rs.log.Error("encoding a stream line failed", "type", t, "err", err)
		raw, _ = json.Marshal(rpc.Errorf(rpc.CodeInternal, "encoding the %s failed", t))
		t = rpc.StreamError
	}
	line, _ := json.Marshal(rpc.StreamLine{Type: t, Data: raw})
	line = append(line, '\n')
	// A write error means the caller is gone; the request's context
	// tells the operation.
	_, _ = rs.w.Write(line)
	_ = rs.rc.Flush()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(rpc.Errorf(rpc.CodeInternal, "encoding the response failed"))
	}
	w.Header().Set("Content-Type", rpc.ContentTypeJSON)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// WriteJSON answers with v as the server answers its calls; a pooled
// runner's front (package runner) answers the same way.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// WriteError answers a failed call as the server does: e, with
// rpc.HTTPStatus(e.Code).
func WriteError(w http.ResponseWriter, e *rpc.Error) { writeError(w, e) }

func writeError(w http.ResponseWriter, e *rpc.Error) {
	writeJSON(w, rpc.HTTPStatus(e.Code), e)
}
