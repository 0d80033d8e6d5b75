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

package client

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// entries collects what OnLog receives.
type entries struct {
	mu  sync.Mutex
	all []LogEntry
}

func (e *entries) add(l LogEntry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, l)
}

func (e *entries) list() []LogEntry {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]LogEntry(nil), e.all...)
}

func TestLoggingCallbackLevelsAndSecrets(t *testing.T) {
	srv, model := scripted(t)
	ctx := testCtx(t)
	p := openPage(t, nil, "/form")
	var debug, warn entries
	run := func(level LogLevel, into *entries) {
		c := newInstance(t, CreateOptions{Model: model, Logging: &LoggingConfig{Level: level, OnLog: into.add}})
		srv.Enqueue(llmtest.JSON(actAnswer(idOf(t, p, "textbox: Password"), "fill", "%pw%")))
		if _, err := c.Act(ctx, ActInstruction("type the password"), &ActOptions{Page: p,
			Variables: Variables{"pw": {Value: "hunter2-secret"}}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run(LogLevelDebug, &debug)
	run(LogLevelWarn, &warn)

	cats := map[string]bool{}
	for _, e := range debug.list() {
		cats[e.Category] = true
		if e.Level != LogLevelDebug && e.Level != LogLevelInfo {
			t.Errorf("an act that went well logged %s: %+v", e.Level, e)
		}
		if e.Message != strings.ToLower(e.Message) {
			t.Errorf("message %q is not lower case", e.Message)
		}
		all := e.Message + fmt.Sprint(e.Attrs)
		for _, secret := range []string{"hunter2", "sk-test-secret-key"} {
			if strings.Contains(all, secret) {
				t.Errorf("a log carries a secret: %+v", e)
			}
		}
	}
	if !cats["client"] || !cats["engine"] {
		t.Errorf("debug logs came from %v, want the client's and the engine's", cats)
	}
	if got := warn.list(); len(got) != 0 {
		t.Errorf("at warn, a call that went well logged %+v", got)
	}
}

func TestLoggingHandlerAndFormats(t *testing.T) {
	var buf bytes.Buffer
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	l, err := newLogger(&LoggingConfig{Level: LogLevelInfo, Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	l.Debug("dropped")
	l.With(logCategory, "client").Info("kept", "n", 1)
	if s := buf.String(); strings.Contains(s, "dropped") || !strings.Contains(s, `"msg":"kept"`) || !strings.Contains(s, `"category":"client"`) {
		t.Errorf("the handler got %s", s)
	}

	var got entries
	l, err = newLogger(&LoggingConfig{Level: LogLevelDebug, OnLog: got.add})
	if err != nil {
		t.Fatal(err)
	}
	l.With(logCategory, "engine").WithGroup("call").Debug("model chose an action", "element", "0-12", slog.Group("usage", "in", 3))
	e := got.list()
	if len(e) != 1 {
		t.Fatalf("got %d entries", len(e))
	}
	want := LogEntry{Time: e[0].Time, Level: LogLevelDebug, Category: "engine", Message: "model chose an action",
		Attrs: map[string]any{"call.element": "0-12", "call.usage.in": int64(3)}}
	if diff := cmp.Diff(want, e[0]); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}

	for _, cfg := range []*LoggingConfig{{Format: "xml"}, {Level: "verbose"}, {OnLog: got.add, Handler: h}} {
		if _, err := newLogger(cfg); err == nil {
			t.Errorf("%+v was accepted", cfg)
		}
	}
	if l, err := newLogger(&LoggingConfig{Level: LogLevelOff}); err != nil || l.Enabled(t.Context(), slog.LevelError) {
		t.Errorf("off: %v, enabled %v", err, l.Enabled(t.Context(), slog.LevelError))
	}
}
