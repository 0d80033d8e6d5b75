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
	"context"
	"log/slog"
	"os"
	"slices"
)

// logCategory is the attribute that names a log's source: "client" for the
// instance's own, "engine" for the engine's.
const logCategory = "category"

// newLogger makes the instance's logger of its Logging option: text or
// JSON on standard error, a callback, or the caller's slog.Handler, at the
// level asked.
func newLogger(cfg *LoggingConfig) (*slog.Logger, error) {
	const f = "CreateOptions.Logging."
	if cfg == nil {
		cfg = &LoggingConfig{}
	}
	var level slog.Level
	switch cfg.Level {
	case LogLevelOff:
		return slog.New(slog.DiscardHandler), nil
	case LogLevelError:
		level = slog.LevelError
	case LogLevelWarn, "":
		level = slog.LevelWarn
	case LogLevelInfo:
		level = slog.LevelInfo
	case LogLevelDebug:
		level = slog.LevelDebug
	default:
		return nil, invalid(f+"Level", "%q: want off, error, warn, info or debug", cfg.Level)
	}
	if cfg.OnLog != nil && cfg.Handler != nil {
		return nil, invalid(f+"OnLog and "+f+"Handler", "set one: each receives the logs instead of standard error")
	}
	opts := &slog.HandlerOptions{Level: level}
	switch {
	case cfg.Handler != nil:
		return slog.New(&levelHandler{level: level, next: cfg.Handler}), nil
	case cfg.OnLog != nil:
		return slog.New(&callbackHandler{level: level, fn: cfg.OnLog}), nil
	}
	switch cfg.Format {
	case LogFormatText, "":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case LogFormatJSON:
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, invalid(f+"Format", "%q: want text or json", cfg.Format)
}

// levelHandler passes the records at level or above on to the caller's
// handler.
type levelHandler struct {
	level slog.Level
	next  slog.Handler
}

func (h *levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.next.Enabled(ctx, l)
}

func (h *levelHandler) Handle(ctx context.Context, r slog.Record) error { return h.next.Handle(ctx, r) }

func (h *levelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &levelHandler{level: h.level, next: h.next.WithAttrs(attrs)}
}

func (h *levelHandler) WithGroup(name string) slog.Handler {
	return &levelHandler{level: h.level, next: h.next.WithGroup(name)}
}

// callbackHandler turns records into LogEntry values for OnLog. Groups
// prefix their attributes' keys ("group.key").
type callbackHandler struct {
	level  slog.Level
	fn     func(LogEntry)
	attrs  []slog.Attr
	prefix string
}

func (h *callbackHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *callbackHandler) Handle(_ context.Context, r slog.Record) error {
	e := LogEntry{Time: r.Time, Level: levelOf(r.Level), Message: r.Message, Attrs: map[string]any{}}
	add := func(prefix string, a slog.Attr) {
		if a.Key == logCategory && prefix == "" {
			e.Category = a.Value.String()
			return
		}
		putAttr(e.Attrs, prefix, a)
	}
	for _, a := range h.attrs {
		add("", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		add(h.prefix, a)
		return true
	})
	h.fn(e)
	return nil
}

// putAttr stores an attribute under its key, a group's as "group.key".
func putAttr(m map[string]any, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			putAttr(m, p, g)
		}
		return
	}
	if a.Key != "" {
		m[prefix+a.Key] = a.Value.Any()
	}
}

func (h *callbackHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		if h.prefix != "" {
			a = slog.Attr{Key: h.prefix + a.Key, Value: a.Value}
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *callbackHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}

// levelOf names a slog level as a LogLevel.
func levelOf(l slog.Level) LogLevel {
	switch {
	case l >= slog.LevelError:
		return LogLevelError
	case l >= slog.LevelWarn:
		return LogLevelWarn
	case l >= slog.LevelInfo:
		return LogLevelInfo
	}
	return LogLevelDebug
}
