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

package sse

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// item is one thing a client reads from a stream: a comment, or an event
// whose data line was decoded as generic JSON (so that shapes, not Go
// types, are compared). ID is checked and then cleared.
type item struct {
	Comment string
	Event   string
	Data    map[string]any
	ID      string
}

// parseSSE reads a stream as an EventSource does, as far as these frames
// need: comment lines, event and data fields, a blank line ending each
// event. It fails on anything else, and on a data field that is not one
// complete JSON object: interleaved bytes would show up as such.
func parseSSE(t *testing.T, r io.Reader) []item {
	t.Helper()
	var (
		items []item
		event string
		data  []string
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "" && data == nil {
				continue // the blank line after a comment
			}
			if len(data) != 1 {
				t.Fatalf("event %q has %d data lines, want 1", event, len(data))
			}
			var p struct {
				Data map[string]any `json:"data"`
				Type string         `json:"type"`
				ID   string         `json:"id"`
			}
			dec := json.NewDecoder(strings.NewReader(data[0]))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				t.Fatalf("event %q: data %q is not a frame: %v", event, data[0], err)
			}
			if _, err := uuid.Parse(p.ID); err != nil {
				t.Errorf("event %q: id %q is not a uuid: %v", event, p.ID, err)
			}
			p.Data["type"] = p.Type // compared with the rest of the shape
			items = append(items, item{Event: event, Data: p.Data, ID: p.ID})
			event, data = "", nil
		case strings.HasPrefix(line, ":"):
			items = append(items, item{Comment: strings.TrimSpace(line[1:])})
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	if event != "" || data != nil {
		t.Fatalf("the stream ends inside event %q", event)
	}
	return items
}

// events drops comments and ids (after checking the ids are unique), for
// comparing the frames' order and shapes.
func events(t *testing.T, items []item) []item {
	t.Helper()
	seen := map[string]bool{}
	var out []item
	for _, it := range items {
		if it.Comment != "" {
			continue
		}
		if seen[it.ID] {
			t.Errorf("id %s used twice", it.ID)
		}
		seen[it.ID] = true
		it.ID = ""
		out = append(out, it)
	}
	return out
}

var logLine = rpc.LogLine{
	Category:  "action",
	Message:   "clicking <button>\nsecond line",
	Level:     rpc.LogLevelInfo,
	Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	Auxiliary: map[string]rpc.AuxiliaryValue{"selector": {Value: "xpath=/html/body/button", Type: "string"}},
}

// The shapes below are the reference server's (see the package comment).
var (
	starting  = item{Event: "starting", Data: map[string]any{"type": "system", "status": "starting"}}
	connected = item{Event: "connected", Data: map[string]any{"type": "system", "status": "connected"}}
	running   = item{Event: "running", Data: map[string]any{"type": "log", "status": "running", "message": map[string]any{
		"category":  "action",
		"message":   "clicking <button>\nsecond line",
		"level":     1.0,
		"timestamp": "2026-01-02T03:04:05Z",
		"auxiliary": map[string]any{"selector": map[string]any{"value": "xpath=/html/body/button", "type": "string"}},
	}}}
	finished = item{Event: "finished", Data: map[string]any{"type": "system", "status": "finished",
		"result":   map[string]any{"success": true, "message": "clicked", "actionDescription": "the button", "actions": []any{}},
		"actionId": "0b0c4c1e-8a3e-4a7b-9c4e-2f4b1e2d3c4a",
	}}
	failed = item{Event: "error", Data: map[string]any{"type": "system", "status": "error", "error": "act failed: TIMEOUT"}}
)

func TestStreamFrames(t *testing.T) {
	actResult := rpc.ActResult{Success: true, Message: "clicked", ActionDescription: "the button", Actions: []rpc.Action{}}
	tests := []struct {
		name string
		run  func(s *Stream) error
		want []item
	}{
		{
			name: "finished",
			run: func(s *Stream) error {
				return errors.Join(s.Starting(), s.Connected(), s.Log(logLine), s.Log(logLine),
					s.Finished(actResult, "0b0c4c1e-8a3e-4a7b-9c4e-2f4b1e2d3c4a"))
			},
			want: []item{starting, connected, running, running, finished},
		},
		{
			name: "error",
			run: func(s *Stream) error {
				return errors.Join(s.Starting(), s.Connected(), s.Log(logLine), s.Error("act failed: TIMEOUT"))
			},
			want: []item{starting, connected, running, failed},
		},
		{
			name: "error before connected",
			run: func(s *Stream) error {
				return errors.Join(s.Starting(), s.Error("act failed: TIMEOUT"))
			},
			want: []item{starting, failed},
		},
		{
			name: "extract result is raw JSON",
			run: func(s *Stream) error {
				return s.Finished(json.RawMessage("{\n  \"extraction\": \"a < b\"\n}"), "")
			},
			want: []item{{Event: "finished", Data: map[string]any{"type": "system", "status": "finished", "result": map[string]any{"extraction": "a < b"}}}},
		},
		{
			name: "an operation's result with its metadata",
			run: func(s *Stream) error {
				return s.FinishedOperation([]rpc.Action{}, "id-1", map[string]any{"cache": map[string]any{"status": "DISABLED"}})
			},
			want: []item{{Event: "finished", Data: map[string]any{"type": "system", "status": "finished", "result": []any{},
				"actionId": "id-1", "metadata": map[string]any{"cache": map[string]any{"status": "DISABLED"}}}}},
		},
		{
			name: "unencodable result ends in an error frame",
			run: func(s *Stream) error {
				if err := s.Finished(make(chan int), "id"); err == nil {
					return errors.New("Finished of a channel returned no error")
				}
				return nil
			},
			want: []item{{Event: "error", Data: map[string]any{"type": "system", "status": "error", "error": "encoding the result failed"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s, err := New(rec, WithKeepAlive(0))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := tt.run(s); err != nil {
				t.Fatal(err)
			}
			written := rec.Body.String()

			// The terminal frame is the last: later calls write nothing.
			for name, call := range map[string]func() error{
				"Starting":  s.Starting,
				"Connected": s.Connected,
				"Log":       func() error { return s.Log(logLine) },
				"Finished":  func() error { return s.Finished("late", "") },
				"Error":     func() error { return s.Error("late") },
			} {
				if err := call(); !errors.Is(err, ErrClosed) {
					t.Errorf("%s after the terminal frame: error %v, want ErrClosed", name, err)
				}
			}
			s.Close()
			if got := rec.Body.String(); got != written {
				t.Errorf("written after the terminal frame: %q", strings.TrimPrefix(got, written))
			}

			if diff := cmp.Diff(tt.want, events(t, parseSSE(t, strings.NewReader(written)))); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if rec.Code != http.StatusOK {
				t.Errorf("status %d, want 200", rec.Code)
			}
			wantHeaders := map[string]string{
				"Content-Type":      "text/event-stream",
				"Cache-Control":     "no-cache, no-transform",
				"X-Accel-Buffering": "no",
				"Connection":        "keep-alive",
			}
			gotHeaders := map[string]string{}
			for k := range wantHeaders {
				gotHeaders[k] = rec.Header().Get(k)
			}
			if diff := cmp.Diff(wantHeaders, gotHeaders); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFrameBytes pins the exact bytes of a frame: key order and spacing as
// the reference's JSON.stringify writes them, no HTML escaping.
func TestFrameBytes(t *testing.T) {
	rec := httptest.NewRecorder()
	s, err := New(rec, WithKeepAlive(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Error("a <b> & c"); err != nil {
		t.Fatal(err)
	}
	got := rec.Body.String()
	id := strings.TrimSuffix(got[strings.LastIndex(got, `"id":"`)+len(`"id":"`):], "\"}\n\n")
	want := `event: error` + "\n" +
		`data: {"data":{"status":"error","error":"a <b> & c"},"type":"system","id":"` + id + `"}` + "\n\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frame (-want +got):\n%s", diff)
	}
}

// TestKeepAlive reads a live stream over HTTP: keep-alives arrive while the
// operation is quiet and stop at the terminal frame, though the handler
// lingers after it.
func TestKeepAlive(t *testing.T) {
	const interval = 10 * time.Millisecond
	lateErrs := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := New(w, WithKeepAlive(interval))
		if err != nil {
			t.Error(err)
			return
		}
		defer s.Close()
		_ = s.Starting()
		time.Sleep(8 * interval) // a quiet operation
		_ = s.Connected()
		_ = s.Finished(map[string]any{"ok": true}, "")
		time.Sleep(8 * interval) // no keep-alive may follow the end
		lateErrs <- s.Log(logLine)
	}))
	defer srv.Close()

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	items := parseSSE(t, resp.Body)

	var kinds []string
	for _, it := range items {
		if it.Comment != "" {
			kinds = append(kinds, ": "+it.Comment)
		} else {
			kinds = append(kinds, it.Event)
		}
	}
	if len(items) == 0 || items[len(items)-1].Event != "finished" {
		t.Fatalf("the stream does not end with finished: %q", kinds)
	}
	var between int
	for _, k := range kinds[1 : len(kinds)-2] {
		if k != ": keep-alive" {
			t.Errorf("unexpected %q between starting and connected in %q", k, kinds)
		}
		between++
	}
	if kinds[0] != "starting" || kinds[len(kinds)-2] != "connected" {
		t.Errorf("frames %q, want starting, keep-alives, connected, finished", kinds)
	}
	if between < 2 {
		t.Errorf("%d keep-alives in %v of quiet at a %v interval, want at least 2: %q", between, 8*interval, interval, kinds)
	}
	if err := <-lateErrs; !errors.Is(err, ErrClosed) {
		t.Errorf("Log after finished: error %v, want ErrClosed", err)
	}
}

// TestConcurrentLog logs from many goroutines, with keep-alives racing them:
// every frame must parse whole (bytes of two frames never interleave) and
// none may be lost. Run with -race.
func TestConcurrentLog(t *testing.T) {
	const goroutines, perGoroutine = 16, 50
	rec := httptest.NewRecorder()
	s, err := New(rec, WithKeepAlive(time.Microsecond*100))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Starting(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				// Long messages make a torn write likely if the lock
				// did not cover whole frames.
				msg := fmt.Sprintf("g%d-%d %s", g, i, strings.Repeat("x", 4096))
				if err := s.Log(rpc.LogLine{Message: msg}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := s.Finished(nil, ""); err != nil {
		t.Fatal(err)
	}

	evs := events(t, parseSSE(t, strings.NewReader(rec.Body.String())))
	if got, want := len(evs), 2+goroutines*perGoroutine; got != want {
		t.Fatalf("%d events, want %d", got, want)
	}
	if evs[0].Event != "starting" || evs[len(evs)-1].Event != "finished" {
		t.Errorf("first %q, last %q; want starting and finished", evs[0].Event, evs[len(evs)-1].Event)
	}
	// Each goroutine's lines arrive in its own order.
	next := map[string]int{}
	for _, ev := range evs[1 : len(evs)-1] {
		msg := ev.Data["message"].(map[string]any)["message"].(string)
		var g, i int
		if _, err := fmt.Sscanf(msg, "g%d-%d ", &g, &i); err != nil {
			t.Fatalf("message %.20q: %v", msg, err)
		}
		key := fmt.Sprint(g)
		if i != next[key] {
			t.Errorf("goroutine %d: line %d after %d", g, i, next[key]-1)
		}
		next[key] = i + 1
	}
}

// plainWriter is a ResponseWriter that cannot flush.
type plainWriter struct {
	h    http.Header
	body strings.Builder
	code int
}

func (w *plainWriter) Header() http.Header         { return w.h }
func (w *plainWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *plainWriter) WriteHeader(code int)        { w.code = code }

// wrapper wraps a ResponseWriter as middleware does, exposing it through
// Unwrap only.
type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestNewNeedsFlush(t *testing.T) {
	w := &plainWriter{h: http.Header{}}
	if _, err := New(w); !errors.Is(err, ErrFlushNotSupported) {
		t.Fatalf("New of a writer that cannot flush: error %v, want ErrFlushNotSupported", err)
	}
	if w.code != 0 || w.body.Len() != 0 || len(w.h) != 0 {
		t.Errorf("New wrote a response it refused: status %d, headers %v, body %q", w.code, w.h, w.body.String())
	}

	// A flushing writer behind middleware's Unwrap is found.
	rec := httptest.NewRecorder()
	s, err := New(wrapper{rec}, WithKeepAlive(0))
	if err != nil {
		t.Fatalf("New of a wrapped recorder: %v", err)
	}
	s.Close()
}

// failingWriter fails every write, as a connection whose client left does.
type failingWriter struct{ *httptest.ResponseRecorder }

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriteFailure(t *testing.T) {
	s, err := New(failingWriter{httptest.NewRecorder()}, WithKeepAlive(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Starting(); err == nil || errors.Is(err, ErrClosed) {
		t.Errorf("Starting on a broken connection: error %v, want the write error", err)
	}
	// The terminal frame still ends the stream (no keep-alive leaks) and
	// reports the client as gone.
	if err := s.Error("late"); err == nil || errors.Is(err, ErrClosed) {
		t.Errorf("Error on a broken connection: error %v, want the write error", err)
	}
	if err := s.Log(logLine); !errors.Is(err, ErrClosed) {
		t.Errorf("Log after the terminal frame: error %v, want ErrClosed", err)
	}
}
