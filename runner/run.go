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

package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpcserver"
)

// Options are the parts of a runner that are not configuration.
type Options struct {
	// Operations performs the operations; nil means
	// operations.NewAutomation(cfg, Logger), over the session's spec (for
	// a pooled runner, the claiming session's).
	Operations operations.Interface
	// Logger receives the runner's logs; nil means slog.Default(). Every
	// line carries the session's name (a pooled runner's, the pool's, and
	// the session's once claimed).
	Logger *slog.Logger
	// Listener, when set, is served instead of listening on
	// cfg.Address().
	Listener net.Listener
	// TracerProvider makes a span of each operation call, continuing the
	// API's trace; nil: none.
	TracerProvider trace.TracerProvider
	// OnClaim, when set, is called with the claiming session's
	// configuration when a session claims a pooled runner, before the
	// claim is answered (cmd/runner sets the log level from its verbose).
	OnClaim func(*config.Config)
}

// ErrBrowserCrashed is what Run returns when the browser crashed and
// Config.CrashExitDelay passed.
var ErrBrowserCrashed = errors.New("the browser crashed")

// Run is the runner: it serves the RPC at once (/healthz says "starting"),
// starts the session's browser, then serves operations until ctx ends,
// which is how SIGTERM arrives. It then refuses new calls, cancels those in
// flight, closes the browser (gracefully within cfg.ShutdownTimeout, then by
// killing its process group), writes the summary of its history to
// cfg.TerminationMessagePath and returns nil. It returns an error when the
// browser cannot start, when the server fails, and, with a CrashExitDelay,
// after the browser crashed.
//
// A warm pool's runner (cfg.Pool) starts the browser of the pool's
// template (cfg.Spec) and, until a session claims it (rpc.ClaimPath, with
// the pool's token cfg.Token), serves /healthz and answers NOT_CLAIMED to
// everything else; the claim applies the session (config.ApplyClaim),
// connects its services and switches every later request to the session's
// server, as if the runner had been started for it. Stopped unclaimed, it
// closes the browser and writes no summary.
func Run(ctx context.Context, cfg *config.Config, opts Options) (err error) {
	if err := errors.Join(cfg.Validate(), chromium.ValidateSettings(cfg)); err != nil {
		return err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Pool != "" {
		log = log.With("pool", cfg.Pool)
	} else {
		log = log.With("session", cfg.SessionName)
	}

	ln := opts.Listener
	if ln == nil {
		var err error
		if ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Address()); err != nil {
			return fmt.Errorf("listening: %w", err)
		}
	}
	// No page may reach the runner's own RPC, whatever the operator
	// allows.
	cfg.Egress.DenyOwn(ln.Addr())
	f := newFront(cfg, opts, log)
	// The session's log, once there is one.
	logger := func() *slog.Logger {
		if s := f.claimed(); s != nil {
			return s.log
		}
		return log
	}
	defer func() {
		if s := f.claimed(); s != nil {
			rpcserver.WriteSummary(cfg.TerminationMessagePath, s.srv.History(), err != nil, s.log)
		}
	}()
	httpSrv := &http.Server{
		Handler:           f,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()
	log.Info("serving the runner rpc", "address", ln.Addr().String())

	b, err := chromium.StartBrowser(ctx, cfg, log)
	if err != nil {
		shutdownHTTP(httpSrv, time.Second)
		if ctx.Err() != nil {
			// Stopped while starting: nothing failed.
			log.Info("stopped while the browser was starting")
			return nil
		}
		log.Error("the browser did not start", "err", err)
		return err
	}
	f.setBrowser(b)
	if cfg.Pool != "" {
		log.Info("the browser is ready to be claimed")
	}
	// Starting (the spec, the session's settings, the egress proxy,
	// Chromium's output) leaves garbage the Go runtime would keep for a
	// while; an idle session should not hold it (docs/performance.md).
	debug.FreeOSMemory()

	stop := func() error {
		s := f.beginShutdown()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		if s != nil {
			// An agent task's run ends within moments of its
			// cancellation; waiting for it lets its followers read its
			// final state and the history (and so the summary) count it.
			if err := s.srv.AgentTasks().Wait(sctx); err != nil {
				s.log.Warn("an agent task did not stop in time", "err", err)
			}
		}
		// Operations were cancelled; their handlers return at once.
		shutdownHTTP(httpSrv, min(cfg.ShutdownTimeout/3, 3*time.Second))
		return b.Close(sctx)
	}

	gone := b.Done()
	var crashed <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			logger().Info("stopping", "cause", context.Cause(ctx))
			if err := stop(); err != nil {
				logger().Warn("closing the browser left something behind", "err", err)
			}
			return nil
		case <-gone:
			gone = nil
			if b.Err() != nil && cfg.CrashExitDelay > 0 {
				logger().Info("exiting after the browser crash", "in", cfg.CrashExitDelay)
				crashed = time.After(cfg.CrashExitDelay)
			}
		case <-crashed:
			_ = stop()
			return fmt.Errorf("%w: %w", ErrBrowserCrashed, b.Err())
		case err := <-serveErr:
			_ = stop()
			return fmt.Errorf("serving: %w", err)
		}
	}
}

func shutdownHTTP(srv *http.Server, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
}
