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

// Package sse writes the Server-Sent Events of a streamed /v1 call (act,
// observe, extract, navigate with streamResponse, or header
// x-stream-response: true).
//
// # Wire format
//
// The frames are those of the reference server (Stagehand's server-v3,
// packages/server-v3/src/lib/stream.ts), so that its clients read this
// service's streams unchanged. Each frame is
//
//	event: <status>
//	data: {"data": {...}, "type": "system"|"log", "id": "<uuid v4>"}
//
// followed by a blank line; the JSON sits on one line (JSON escapes every
// newline in a string) and its keys come in the reference's order. The id is
// fresh per frame; it is not a Last-Event-ID resume point, since a call
// cannot be resumed. A stream is, in order:
//
//	event: starting   type system  data {"status": "starting"}
//	event: connected  type system  data {"status": "connected"}
//	event: running    type log     data {"status": "running", "message": <log object>}   (any number)
//	event: finished   type system  data {"status": "finished", "result": <result>, "actionId": "<uuid>"}
//	event: error      type system  data {"status": "error", "error": "<message>"}
//
// ending with exactly one of finished or error. The log object is an
// rpc.LogLine: category, message, level (0 error, 1 info, 2 debug),
// timestamp and auxiliary ({name: {value, type}}), the reference's LogLine.
// finished's result is what the plain call returns in data.result, and
// actionId the same id as the plain call's data.actionId. error carries only
// a message for people, as in the reference; error frames have type system
// there too. A failure before the stream starts (authentication, a bad body,
// an unknown session) is a plain JSON error with its status instead: the
// status of a stream is always 200.
//
// Beyond the reference: while the stream is open, a comment line
// ": keep-alive" goes out every DefaultKeepAlive (see WithKeepAlive), so that
// proxies and load balancers in between (nginx's 60 s proxy_read_timeout,
// cloud load balancers' idle timeouts) do not cut a call whose operation is
// quiet for a while. SSE parsers ignore comment lines, and a client that
// only looks at "data: " lines skips them too.
package sse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Event names, the "event:" of each frame and the data's status.
const (
	EventStarting  = "starting"
	EventConnected = "connected"
	EventRunning   = "running"
	EventFinished  = "finished"
	EventError     = "error"
)

// Payload types, the "type" of each frame's data.
const (
	TypeSystem = "system"
	TypeLog    = "log"
)

// ContentType is the media type of a stream.
const ContentType = "text/event-stream"

// DefaultKeepAlive is how often a quiet stream sends a keep-alive comment:
// well under the 60 s idle timeouts common in proxies.
const DefaultKeepAlive = 15 * time.Second

// DefaultWriteTimeout bounds each write to the client, so that a client
// that stops reading cannot hold the handler, its goroutine and the runner's
// operation forever.
const DefaultWriteTimeout = 30 * time.Second

// ErrClosed is returned by a Stream's methods once its terminal frame has
// been written or it was closed.
var ErrClosed = errors.New("sse: the stream has ended")

// ErrFlushNotSupported is returned by New when the ResponseWriter cannot
// flush, so events would sit in a buffer until the call ends.
var ErrFlushNotSupported = errors.New("sse: the response writer cannot flush")

// Option configures a Stream.
type Option func(*Stream)

// WithKeepAlive sets how often a keep-alive comment goes out while the
// stream is open; 0 or less sends none.
func WithKeepAlive(interval time.Duration) Option {
	return func(s *Stream) { s.keepAlive = interval }
}

// WithWriteTimeout bounds each write to the client; 0 or less leaves the
// server's own write deadline in place.
func WithWriteTimeout(d time.Duration) Option {
	return func(s *Stream) { s.writeTimeout = d }
}

// Stream writes the frames of one streamed call. Its methods are safe for
// concurrent use: frames never interleave, and they go out in the order the
// calls took the lock. Once Finished or Error has written the terminal
// frame, every method returns ErrClosed and writes nothing.
//
// The handler must call Close (or end with Finished or Error) before it
// returns, since the keep-alive goroutine writes to the ResponseWriter:
//
//	s, err := sse.New(w)
//	if err != nil { ... }
//	defer s.Close()
type Stream struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	keepAlive    time.Duration
	writeTimeout time.Duration

	mu     sync.Mutex
	closed bool
	// err is the first write error: the client has gone away, and
	// later frames would be lost too.
	err error

	// stop ends the keep-alive goroutine, done says it has ended.
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// New starts a stream on w: it sets the headers, commits status 200 and
// flushes them, so the client sees the stream open before the first event.
// It fails, writing nothing, when w cannot flush.
func New(w http.ResponseWriter, opts ...Option) (*Stream, error) {
	if !canFlush(w) {
		return nil, ErrFlushNotSupported
	}
	s := &Stream{
		w:            w,
		rc:           http.NewResponseController(w),
		keepAlive:    DefaultKeepAlive,
		writeTimeout: DefaultWriteTimeout,
	}
	for _, o := range opts {
		o(s)
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	// no-transform too, as the reference sends: a compressing proxy
	// would buffer events.
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	// Tell nginx (ingress-nginx) not to buffer the stream.
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")

	s.mu.Lock()
	s.setDeadline()
	w.WriteHeader(http.StatusOK)
	if err := s.rc.Flush(); err != nil {
		s.err = fmt.Errorf("sse: flushing the headers: %w", err)
	}
	s.mu.Unlock()

	if s.keepAlive > 0 {
		s.stop = make(chan struct{})
		s.done = make(chan struct{})
		go s.keepAliveLoop()
	}
	return s, nil
}

// Starting writes the starting frame, the first of a stream.
func (s *Stream) Starting() error {
	return s.frame(EventStarting, TypeSystem, statusData{Status: EventStarting}, false)
}

// Connected writes the connected frame: the session's runner has been
// reached and the operation is under way.
func (s *Stream) Connected() error {
	return s.frame(EventConnected, TypeSystem, statusData{Status: EventConnected}, false)
}

// Log writes a running frame carrying one log line of the operation.
func (s *Stream) Log(line rpc.LogLine) error {
	return s.frame(EventRunning, TypeLog, runningData{Status: EventRunning, Message: line}, false)
}

// Finished writes the terminal finished frame with the call's result and
// actionId, as the plain call would return them in its data. A result that
// cannot be encoded as JSON ends the stream with an error frame instead, so
// the client always sees an end; the encoding error is returned.
func (s *Stream) Finished(result any, actionID string) error {
	return s.frame(EventFinished, TypeSystem, finishedData{Status: EventFinished, Result: result, ActionID: actionID}, true)
}

// FinishedOperation writes the terminal frame of act, observe and extract:
// Finished's, with how the result was made (data.metadata).
func (s *Stream) FinishedOperation(result any, actionID string, metadata any) error {
	return s.frame(EventFinished, TypeSystem, finishedData{Status: EventFinished, Result: result, ActionID: actionID, Metadata: metadata}, true)
}

// FinishedAgent writes agentExecute's terminal frame: the result and, when
// the call asked for one, its cache entry.
func (s *Stream) FinishedAgent(result, cacheEntry any) error {
	return s.frame(EventFinished, TypeSystem, finishedData{Status: EventFinished, Result: result, CacheEntry: cacheEntry}, true)
}

// Error writes the terminal error frame with a message for people; it must
// carry no secret.
func (s *Stream) Error(msg string) error {
	return s.frame(EventError, TypeSystem, errorData{Status: EventError, Error: msg}, true)
}

// Close ends the stream without a terminal frame (the client went away, or
// the handler gives up) and stops the keep-alives. It waits until the
// keep-alive goroutine has stopped, so nothing writes to the ResponseWriter
// once Close returns. It is idempotent and safe after a terminal frame.
func (s *Stream) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stopKeepAlive()
}

// Data of the frames. Field order is the reference's.
type (
	statusData struct {
		Status string `json:"status"`
	}
	runningData struct {
		Status  string      `json:"status"`
		Message rpc.LogLine `json:"message"`
	}
	finishedData struct {
		Status     string `json:"status"`
		Result     any    `json:"result"`
		ActionID   string `json:"actionId,omitempty"`
		Metadata   any    `json:"metadata,omitempty"`
		CacheEntry any    `json:"cacheEntry,omitempty"`
	}
	errorData struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
)

// payload is the JSON of a frame's data line.
type payload struct {
	Data any    `json:"data"`
	Type string `json:"type"`
	ID   string `json:"id"`
}

// frame encodes and writes one frame; terminal ends the stream.
func (s *Stream) frame(event, typ string, data any, terminal bool) error {
	// Encoding outside the lock keeps a large result from holding up
	// concurrent callers for longer than its write.
	body, encErr := encode(payload{Data: data, Type: typ, ID: uuid.NewString()})
	if encErr != nil {
		if !terminal {
			return fmt.Errorf("sse: encoding the %s frame: %w", event, encErr)
		}
		// The stream must still end: tell the client in an error frame.
		event = EventError
		body, _ = encode(payload{Data: errorData{Status: EventError, Error: "encoding the result failed"}, Type: TypeSystem, ID: uuid.NewString()})
	}

	var buf bytes.Buffer
	buf.Grow(len(body) + len(event) + 16)
	buf.WriteString("event: ")
	buf.WriteString(event)
	buf.WriteString("\ndata: ")
	buf.Write(body)
	buf.WriteString("\n\n")

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if terminal {
		s.closed = true
	}
	err := s.writeLocked(buf.Bytes())
	s.mu.Unlock()

	if terminal {
		s.stopKeepAlive()
	}
	if encErr != nil {
		return fmt.Errorf("sse: encoding the %s frame: %w", EventFinished, encErr)
	}
	return err
}

// encode marshals v without HTML escaping, as JSON.stringify does, and
// without the trailing newline, which would end the data line early.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeLocked writes and flushes b; s.mu must be held. After the first
// failure nothing more is written: the client is gone.
func (s *Stream) writeLocked(b []byte) error {
	if s.err != nil {
		return s.err
	}
	s.setDeadline()
	if _, err := s.w.Write(b); err != nil {
		s.err = fmt.Errorf("sse: writing to the client: %w", err)
		return s.err
	}
	if err := s.rc.Flush(); err != nil {
		s.err = fmt.Errorf("sse: flushing to the client: %w", err)
		return s.err
	}
	return nil
}

// setDeadline moves the write deadline forward before each write: a stream
// outlives any server-wide WriteTimeout, yet a client that stopped reading
// must not block a write forever. Writers without deadlines (tests) are
// fine as they are.
func (s *Stream) setDeadline() {
	if s.writeTimeout > 0 {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	}
}

var keepAliveComment = []byte(": keep-alive\n\n")

func (s *Stream) keepAliveLoop() {
	defer close(s.done)
	t := time.NewTicker(s.keepAlive)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			var err error
			if !s.closed {
				err = s.writeLocked(keepAliveComment)
			}
			closed := s.closed
			s.mu.Unlock()
			if closed || err != nil {
				return
			}
		}
	}
}

// stopKeepAlive stops the keep-alive goroutine and waits for it. It must be
// called without s.mu held: the goroutine may be waiting for it.
func (s *Stream) stopKeepAlive() {
	if s.stop == nil {
		return
	}
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

// canFlush reports whether w, or a writer it wraps (Unwrap, as
// http.ResponseController follows), can flush, without flushing: New must
// not commit a response it refuses.
func canFlush(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case interface{ FlushError() error }, http.Flusher:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}
