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

package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode"

	"github.com/go-logr/logr"
)

// newLogger logs text lines to w: V(0) and errors, more with verbosity.
// At verbosity 0, controller-runtime's start and stop chatter (a dozen lines
// per controller) is dropped, so that the terminal shows what happens.
func newLogger(w io.Writer, verbosity int) logr.Logger {
	h := slog.NewTextHandler(w, &slog.HandlerOptions{
		Level: slog.Level(-verbosity),
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.String(slog.TimeKey, a.Value.Time().Format(time.TimeOnly))
			}
			return a
		},
	})
	if verbosity > 0 {
		return logr.FromSlogHandler(h)
	}
	return logr.FromSlogHandler(quiet{h})
}

// chatter starts the messages that controller-runtime logs at info level
// for every controller and source when it starts and stops.
var chatter = []string{
	"Starting EventSource",
	"Starting Controller",
	"Starting workers",
	"Shutdown signal received",
	"Stopping and waiting",
	"All workers finished",
	"Wait completed",
	"Starting metrics server",
	"Serving metrics server",
}

// quiet drops chatter, the API's request log of /readyz (the dev stack
// polls it while starting), and the attributes controller-runtime adds to
// every reconcile's log that repeat the object or only help correlate.
type quiet struct{ slog.Handler }

func (q quiet) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && (isChatter(r.Message) || isProbe(r)) {
		return nil
	}
	return q.Handler.Handle(ctx, r)
}

func (q quiet) WithAttrs(attrs []slog.Attr) slog.Handler {
	kept := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		if !redundant(a.Key) {
			kept = append(kept, a)
		}
	}
	return quiet{q.Handler.WithAttrs(kept)}
}

func (q quiet) WithGroup(name string) slog.Handler { return quiet{q.Handler.WithGroup(name)} }

func isChatter(msg string) bool {
	for _, c := range chatter {
		if strings.HasPrefix(msg, c) {
			return true
		}
	}
	return false
}

func isProbe(r slog.Record) bool {
	probe := false
	r.Attrs(func(a slog.Attr) bool {
		probe = a.Key == "route" && a.Value.String() == "GET /readyz"
		return !probe
	})
	return probe
}

// redundant reports the reconcile attributes that say nothing the others
// do not: controllerGroup, controllerKind, reconcileID, and the object
// under its Kind (BrowserSession=...) next to name and namespace.
func redundant(key string) bool {
	switch key {
	case "controllerGroup", "controllerKind", "reconcileID":
		return true
	}
	return key != "" && unicode.IsUpper(rune(key[0]))
}
