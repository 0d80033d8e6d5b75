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
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpcserver"
)

// Options are the parts of a runner that are not configuration.
type Options struct {
	// Operations performs the operations; nil means
	// operations.NewAutomation(cfg, Logger), over the session's spec.
	Operations operations.Interface
	// Logger receives the runner's logs; nil means slog.Default(). Every
	// line carries the session's name.
	Logger *slog.Logger
	// Listener, when set, is served instead of listening on
	// cfg.Address().
	Listener net.Listener
	// TracerProvider makes a span of each operation call, continuing the
	// API's trace; nil: none.
	TracerProvider trace.TracerProvider
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
func Run(ctx context.Context, cfg *config.Config, opts Options) (err error) {
	if err := errors.Join(cfg.Validate(), chromium.ValidateSettings(cfg)); err != nil {
		return err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("session", cfg.SessionName)

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
	ops := opts.Operations
	if ops == nil {
		ops = operations.NewAutomation(cfg, log)
	}
	srv := rpcserver.NewServer(rpcserver.ServerOptions{
		Token:               cfg.Token,
		Operations:          ops,
		Logger:              log,
		DOMSettleTimeout:    time.Duration(ptr.Deref(cfg.Spec.DOMSettleTimeoutMs, 0)) * time.Millisecond,
		MaxQueuedOperations: cfg.MaxQueuedOperations,
		TracerProvider:      opts.TracerProvider,
	})
	defer func() { rpcserver.WriteSummary(cfg.TerminationMessagePath, srv.History(), err != nil, log) }()
	httpSrv := &http.Server{
		Handler:           srv,
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
	srv.SetBrowser(b)
	// Starting (the spec, the session's settings, the egress proxy,
	// Chromium's output) leaves garbage the Go runtime would keep for a
	// while; an idle session should not hold it (docs/performance.md).
	debug.FreeOSMemory()

	stop := func() error {
		srv.BeginShutdown()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		// An agent task's run ends within moments of its cancellation;
		// waiting for it lets its followers read its final state and the
		// history (and so the summary) count it.
		if err := srv.AgentTasks().Wait(sctx); err != nil {
			log.Warn("an agent task did not stop in time", "err", err)
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
			log.Info("stopping", "cause", context.Cause(ctx))
			if err := stop(); err != nil {
				log.Warn("closing the browser left something behind", "err", err)
			}
			return nil
		case <-gone:
			gone = nil
			if b.Err() != nil && cfg.CrashExitDelay > 0 {
				log.Info("exiting after the browser crash", "in", cfg.CrashExitDelay)
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
