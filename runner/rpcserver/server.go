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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/agenttask"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// ServerOptions configure a Server.
type ServerOptions struct {
	// Token is the runner token every call but /healthz must present.
	Token config.Secret
	// Operations performs act, observe, extract and navigate; nil means an
	// Automation without a default model (operations.NewAutomation(nil, Logger)).
	Operations operations.Interface
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
	// DOMSettleTimeout is the session's domSettleTimeoutMs, handed to the
	// engine through Page.
	DOMSettleTimeout time.Duration
	// MaxQueuedOperations bounds the operations that wait for their turn;
	// beyond it an operation answers SESSION_BUSY. 0 means
	// DefaultMaxQueuedOperations.
	MaxQueuedOperations int
	// History records the operations the server serves; nil means a new
	// one with the default bounds (replay.DefaultMaxCalls,
	// replay.DefaultMaxBytes).
	History *replay.History
	// TracerProvider makes a span of each operation call, continuing the
	// caller's traceparent (trace.go); nil: none.
	TracerProvider trace.TracerProvider
	// Batch bounds the batch scripts the server runs (batch.go).
	Batch BatchOptions
}

// Server serves the runner RPC: /healthz, the operations under /v1 and the
// /cdp proxy. It answers 503 until SetBrowser gives it a browser.
type Server struct {
	log     *slog.Logger
	ops     operations.Interface
	settle  time.Duration
	queue   fifo
	history *replay.History
	batch   BatchOptions
	handler http.Handler
	// cdpConns counts the open /cdp connections (maxCDPConnections).
	cdpConns atomic.Int32
	// cdpLog bounds the lines the /cdp filter's refusals and rewrites
	// log; cdpSuppressed counts the ones it held back.
	cdpLog        *rate.Limiter
	cdpSuppressed atomic.Int64

	mu       sync.Mutex
	browser  *chromium.Browser
	stopping bool
	inflight map[*int]context.CancelCauseFunc
	// sources report what happens in the session besides its operations
	// (AddProgressSource).
	sources []ProgressSource
	// tasks are the session's agent tasks.
	tasks *agenttask.Registry
}

// NewServer returns a Server without a browser.
func NewServer(opts ServerOptions) *Server {
	s := &Server{
		log:      opts.Logger,
		ops:      opts.Operations,
		settle:   opts.DOMSettleTimeout,
		queue:    fifo{limit: opts.MaxQueuedOperations},
		history:  opts.History,
		batch:    opts.Batch,
		inflight: map[*int]context.CancelCauseFunc{},
		cdpLog:   rate.NewLimiter(rate.Every(time.Minute/cdpLogPerMinute), cdpLogPerMinute),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.ops == nil {
		s.ops = operations.NewAutomation(nil, s.log)
	}
	if s.history == nil {
		s.history = replay.NewHistory(0, 0)
	}
	s.tasks = agenttask.New(agenttask.Options{Logger: s.log})
	s.handler = requireToken(opts.Token, traced(opts.TracerProvider, http.HandlerFunc(s.route)))
	return s
}

// SetBrowser gives the server its browser; /healthz turns 200.
func (s *Server) SetBrowser(b *chromium.Browser) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.browser = b
}

// ProgressSource reports what happens in the session besides its
// operations, such as a captcha solved, as progress lines of the
// operations in flight.
type ProgressSource interface {
	// Watch sends the source's lines to progress until stop is called.
	Watch(progress func(rpc.LogLine)) (stop func())
}

// AddProgressSource has every operation from now on carry src's lines in
// its progress while it runs.
func (s *Server) AddProgressSource(src ProgressSource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sources = append(s.sources, src)
}

// watchSources sends the lines of the session's progress sources to
// progress until the returned function is called.
func (s *Server) watchSources(progress func(rpc.LogLine)) (stop func()) {
	s.mu.Lock()
	sources := slices.Clone(s.sources)
	s.mu.Unlock()
	stops := make([]func(), len(sources))
	for i, src := range sources {
		stops[i] = src.Watch(progress)
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// BeginShutdown refuses new operations and agent tasks with SHUTTING_DOWN
// and cancels those in flight (they fail with the same code, an agent task
// waiting for its turn too); /healthz turns 503.
func (s *Server) BeginShutdown() {
	s.tasks.Stop(errShuttingDown)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping = true
	for _, cancel := range s.inflight {
		cancel(errShuttingDown)
	}
}

// AgentTasks returns the server's agent tasks.
func (s *Server) AgentTasks() *agenttask.Registry { return s.tasks }

var (
	errShuttingDown = rpc.Errorf(rpc.CodeShuttingDown, "the runner is shutting down")
	errCallerGone   = rpc.Errorf(rpc.CodeCanceled, "the caller went away")
)

// ServeHTTP serves /healthz to anyone and everything else to callers with
// the token.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == rpc.HealthPath {
		s.serveHealth(w, r)
		return
	}
	s.handler.ServeHTTP(w, r)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	type route struct {
		method string
		serve  http.HandlerFunc
	}
	routes := map[string]route{
		rpc.ActPath:        {http.MethodPost, s.serveAct},
		rpc.ObservePath:    {http.MethodPost, s.serveObserve},
		rpc.ExtractPath:    {http.MethodPost, s.serveExtract},
		rpc.NavigatePath:   {http.MethodPost, s.serveNavigate},
		rpc.CDPPath:        {http.MethodGet, s.serveCDP},
		rpc.ReplayPath:     {http.MethodGet, s.serveReplay},
		rpc.AgentTasksPath: {http.MethodPost, s.serveAgentTasks},
		rpc.BatchPath:      {http.MethodPost, s.serveBatch},
	}
	if strings.HasPrefix(r.URL.Path, rpc.AgentTaskPathPrefix) {
		s.serveAgentTask(w, r)
		return
	}
	rt, ok := routes[r.URL.Path]
	switch {
	case !ok:
		writeError(w, rpc.Errorf(rpc.CodeNotFound, "no such path"))
	case r.Method != rt.method:
		w.Header().Set("Allow", rt.method)
		writeError(w, rpc.Errorf(rpc.CodeMethodNotAllowed, "%s takes %s", r.URL.Path, rt.method))
	default:
		rt.serve(w, r)
	}
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, rpc.Errorf(rpc.CodeMethodNotAllowed, "%s takes GET", rpc.HealthPath))
		return
	}
	h := s.health()
	status := http.StatusOK
	if h.Status != rpc.HealthReady {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, h)
}

func (s *Server) health() rpc.Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopping:
		return rpc.Health{Status: rpc.HealthStopping, Reason: "the runner is shutting down"}
	case s.browser == nil:
		return rpc.Health{Status: rpc.HealthStarting, Reason: "the browser is starting"}
	}
	if err := s.browser.Err(); err != nil {
		return rpc.Health{Status: rpc.HealthCrashed, Reason: err.Error()}
	}
	return rpc.Health{Status: rpc.HealthReady}
}

// readyBrowser returns the browser, or the error a call gets while there is
// none that works.
func (s *Server) readyBrowser() (*chromium.Browser, *rpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopping:
		return nil, errShuttingDown
	case s.browser == nil:
		return nil, rpc.Errorf(rpc.CodeBrowserStarting, "the browser is starting")
	}
	if err := s.browser.Err(); err != nil {
		return nil, rpc.Errorf(rpc.CodeBrowserCrashed, "%s", err.Error())
	}
	return s.browser, nil
}

func (s *Server) serveAct(w http.ResponseWriter, r *http.Request) {
	var req rpc.ActRequest
	if !decode(w, r, &req) {
		return
	}
	switch {
	case req.Input.IsZero():
		writeError(w, rpc.Errorf(rpc.CodeBadRequest, "input is required: an instruction or an action"))
		return
	case req.Input.Action != nil && req.Input.Action.Selector == "":
		writeError(w, rpc.Errorf(rpc.CodeBadRequest, "input.selector is required for an action"))
		return
	case req.Options.Problem() != "":
		writeError(w, rpc.Errorf(rpc.CodeBadRequest, "%s", req.Options.Problem()))
		return
	case cacheProblem(req.Options.Cache) != "":
		writeError(w, rpc.Errorf(rpc.CodeBadRequest, "%s", cacheProblem(req.Options.Cache)))
		return
	}
	s.operate(w, r, "act", actParams(&req), req.FrameID, req.Options.Timeout, 0, func(ctx context.Context, p *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error) {
		res, usage, report, err := s.ops.Act(ctx, p, req, progress)
		if res != nil && res.Actions == nil {
			res.Actions = []rpc.Action{}
		}
		return res, usage, report, err
	})
}

func (s *Server) serveObserve(w http.ResponseWriter, r *http.Request) {
	var req rpc.ObserveRequest
	if !decode(w, r, &req) {
		return
	}
	if msg := cmp.Or(req.Options.Problem(), cacheProblem(req.Options.Cache)); msg != "" {
		writeError(w, rpc.Errorf(rpc.CodeBadRequest, "%s", msg))
		return
	}
	s.operate(w, r, "observe", observeParams(&req), req.FrameID, req.Options.Timeout, 0, func(ctx context.Context, p *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error) {
		actions, usage, report, err := s.ops.Observe(ctx, p, req, progress)
		if actions == nil {
			actions = []rpc.Action{}
		}
		return actions, usage, report, err
	})
}

func (s *Server) serveExtract(w http.ResponseWriter, r *http.Request) {
	var req rpc.ExtractRequest
	if !decode(w, r, &req) {
		return
	}
	if msg := cmp.Or(req.Options.Problem(), cacheProblem(req.Options.Cache)); msg != "" {
		writeError(w, rpc.Errorf(rpc.CodeBadRequest, "%s", msg))
		return
	}
	if len(req.Schema) > 0 && string(req.Schema) != "null" {
		if req.Instruction == "" {
			writeError(w, rpc.Errorf(rpc.CodeBadRequest, "a schema needs an instruction"))
			return
		}
		if !json.Valid(req.Schema) || !strings.HasPrefix(strings.TrimSpace(string(req.Schema)), "{") {
			writeError(w, rpc.Errorf(rpc.CodeBadRequest, "schema must be a JSON Schema object"))
			return
		}
	}
	s.operate(w, r, "extract", extractParams(&req), req.FrameID, req.Options.Timeout, 0, func(ctx context.Context, p *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error) {
		return s.ops.Extract(ctx, p, req, progress)
	})
}

func (s *Server) serveNavigate(w http.ResponseWriter, r *http.Request) {
	var req rpc.NavigateRequest
	if !decode(w, r, &req) {
		return
	}
	if err := operations.ValidateNavigateURL(req.URL); err != nil {
		writeError(w, err)
		return
	}
	if !req.Options.WaitUntil.Valid() {
		writeError(w, rpc.Errorf(rpc.CodeBadRequest, "waitUntil must be load, domcontentloaded or networkidle"))
		return
	}
	s.operate(w, r, "navigate", navigateParams(&req), req.FrameID, req.Options.Timeout, operations.DefaultNavigateTimeout, func(ctx context.Context, p *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error) {
		res, err := s.ops.Navigate(ctx, p, req, progress)
		return res, rpc.Usage{}, nil, err
	})
}

// decode reads a JSON body of at most rpc.MaxRequestBytes into v, or
// answers 400 or 413 and returns false. Unknown fields are accepted: the API
// pod forwards bodies nearly verbatim.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body := http.MaxBytesReader(w, r.Body, rpc.MaxRequestBytes)
	dec := json.NewDecoder(body)
	err := dec.Decode(v)
	if err == nil {
		// Read to EOF: trailing garbage is an error, and the server only
		// notices a caller that goes away once the body is consumed.
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("unexpected data after the JSON body")
		}
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, rpc.Errorf(rpc.CodePayloadTooLarge, "the body exceeds %d bytes", rpc.MaxRequestBytes))
			return false
		}
		if errors.Is(err, io.EOF) {
			writeError(w, rpc.Errorf(rpc.CodeBadRequest, "the body is empty; it must be a JSON object"))
			return false
		}
		writeError(w, rpc.Errorf(rpc.CodeBadRequest, "the body is not valid: %s", jsonErrorText(err)))
		return false
	}
	return true
}

// jsonErrorText describes a decoding error without quoting the body, which
// may hold a model key.
func jsonErrorText(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("malformed JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("%s must not be a JSON %s", typ.Field, typ.Value)
		}
		return fmt.Sprintf("a JSON %s is not allowed here", typ.Value)
	}
	// Our own UnmarshalJSON errors name kinds, never values.
	return err.Error()
}

// opFunc performs an operation: its result, the usage of its model calls,
// and what the server-side cache did (nil: DISABLED).
type opFunc func(ctx context.Context, page *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error)

// operate runs one page operation: in its turn, on the tab frameID names
// (chromium.Browser.Target: the runner's own for none), with the call's
// timeout, and writes its outcome. Every outcome is recorded in the
// history, with params, the request as the history keeps it.
func (s *Server) operate(w http.ResponseWriter, r *http.Request, op string, params any, frameID string, timeoutMs *float64, defaultTimeout time.Duration, fn opFunc) {
	resp := newResponder(w, r, s.log)
	started := time.Now()
	fail := func(e *rpc.Error) {
		s.record(r, op, params, started, nil, rpc.Usage{}, e)
		resp.fail(e)
	}
	timeout, terr := opTimeout(timeoutMs, defaultTimeout)
	if terr != nil {
		fail(terr)
		return
	}
	if _, err := s.readyBrowser(); err != nil {
		fail(err)
		return
	}
	if s.queue.full() {
		// Answered before the stream starts, so that a plain 429 tells
		// the caller to come back later.
		fail(errBusy)
		return
	}
	resp.start()
	if n := s.queue.ahead(); n > 0 {
		resp.progress(rpc.LogLine{Category: "runner", Message: fmt.Sprintf("waiting for %d earlier operation(s)", n), Level: rpc.LogLevelDebug, Timestamp: time.Now()})
	}
	release, err := s.queue.acquire(r.Context())
	if errors.Is(err, errBusy) {
		fail(errBusy)
		return
	}
	if err != nil {
		fail(errCallerGone)
		return
	}
	defer release()
	b, rerr := s.readyBrowser()
	if rerr != nil {
		fail(rerr)
		return
	}

	tgt, terr := s.target(r.Context(), b, op, frameID, timeout)
	if terr != nil {
		fail(terr)
		return
	}
	ctx, finish, ok := s.begin(r.Context(), tgt.Context(), op, timeout)
	if !ok {
		fail(errShuttingDown)
		return
	}
	defer finish()
	page := tgt.TabFor(ctx, s.settle)
	start := time.Now()
	stopEgress := b.WatchEgress(resp.progress)
	stopSources := s.watchSources(resp.progress)
	result, usage, report, err := fn(ctx, page, resp.progress)
	// The refusals are told before the outcome.
	stopEgress()
	stopSources()
	elapsed := time.Since(start)
	if err != nil {
		e := s.classify(ctx, b, err)
		s.log.Info("operation failed", "op", op, "code", e.Code, "error", e.Message, "durationMs", elapsed.Milliseconds())
		s.record(r, op, params, started, nil, usage, e)
		resp.fail(e)
		return
	}
	s.log.Info("operation done", "op", op, "durationMs", elapsed.Milliseconds(),
		"inputTokens", usage.InputTokens, "outputTokens", usage.OutputTokens, "cache", cacheStatus(report))
	s.record(r, op, params, started, result, usage, nil)
	resp.result(result, usage, report)
}

// cacheProblem says what is wrong with a call's cache setting, or "".
func cacheProblem(set *cache.Setting) string {
	if set == nil {
		return ""
	}
	if err := cache.CheckThreshold(set.Threshold); err != nil {
		return "options.cache.threshold: " + err.Error()
	}
	return ""
}

// cacheStatus is a report's status for the log; nil is DISABLED.
func cacheStatus(r *cache.Report) cache.Status {
	if r == nil {
		return cache.StatusDisabled
	}
	return r.Status
}

// opTimeout turns options.timeout (milliseconds) into a duration; absent or
// zero means def (0: none beyond the caller's patience).
func opTimeout(ms *float64, def time.Duration) (time.Duration, *rpc.Error) {
	if ms == nil || *ms == 0 {
		return def, nil
	}
	if math.IsNaN(*ms) || *ms < 0 || *ms > float64(24*time.Hour/time.Millisecond) {
		return 0, rpc.Errorf(rpc.CodeBadRequest, "options.timeout must be between 0 and 86400000 milliseconds")
	}
	return time.Duration(*ms * float64(time.Millisecond)), nil
}

// targetLookupTimeout bounds finding (and attaching to) the tab of an
// operation without a timeout of its own.
const targetLookupTimeout = 30 * time.Second

// target is the tab an operation naming frameID runs on, found within the
// operation's timeout.
func (s *Server) target(reqCtx context.Context, b *chromium.Browser, op, frameID string, timeout time.Duration) (*chromium.Target, *rpc.Error) {
	if timeout <= 0 {
		timeout = targetLookupTimeout
	}
	ctx, cancel := context.WithTimeoutCause(reqCtx, timeout, rpc.Errorf(rpc.CodeTimeout, "%s did not find its tab within %v", op, timeout))
	defer cancel()
	t, err := b.Target(ctx, frameID)
	if err == nil {
		return t, nil
	}
	var cause *rpc.Error
	switch {
	case reqCtx.Err() != nil:
		return nil, errCallerGone
	case errors.As(context.Cause(ctx), &cause):
		return nil, cause
	case b.Err() != nil:
		return nil, rpc.Errorf(rpc.CodeBrowserCrashed, "%s", b.Err().Error())
	}
	return nil, rpc.Errorf(rpc.CodeEngineError, "frameId %s: %s", frameID, err.Error())
}

// begin makes the operation's context: a chromedp context of the tab
// (tabCtx) that ends when the caller goes away (CANCELED), the timeout
// passes (TIMEOUT), the runner stops (SHUTTING_DOWN), the tab closes (a
// BAD_REQUEST naming frameId) or the browser dies (its context, cancelled
// by chromedp, with no cause of ours). reqCtx is the request's context, or
// an agent task's, whose *rpc.Error cause (its cancellation, its deadline)
// becomes the operation's.
func (s *Server) begin(reqCtx, tabCtx context.Context, op string, timeout time.Duration) (context.Context, func(), bool) {
	ctx, cancel := context.WithCancelCause(tabCtx)
	stopReq := context.AfterFunc(reqCtx, func() {
		var cause *rpc.Error
		if errors.As(context.Cause(reqCtx), &cause) {
			cancel(cause)
			return
		}
		cancel(errCallerGone)
	})
	cancelTimeout := func() {}
	if timeout > 0 {
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, timeout,
			rpc.Errorf(rpc.CodeTimeout, "%s did not finish within %v", op, timeout))
	}
	key := new(int)
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		stopReq()
		cancelTimeout()
		cancel(nil)
		return nil, nil, false
	}
	s.inflight[key] = cancel
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		delete(s.inflight, key)
		s.mu.Unlock()
		stopReq()
		cancelTimeout()
		cancel(nil)
	}, true
}

// classify gives a failed operation its code. Why ctx ended wins over what
// the engine made of it: a chromedp call cut short by a timeout returns
// "context deadline exceeded", a crash "context canceled".
func (s *Server) classify(ctx context.Context, b *chromium.Browser, err error) *rpc.Error {
	if ctx.Err() != nil {
		var cause *rpc.Error
		if errors.As(context.Cause(ctx), &cause) {
			return cause
		}
		// Ended without a cause of ours: chromedp cancelled the tab
		// because the browser went away. Give the supervisor a moment
		// to record why.
		select {
		case <-b.Done():
		case <-time.After(5 * time.Second):
		}
	}
	if cerr := b.Err(); cerr != nil {
		return rpc.Errorf(rpc.CodeBrowserCrashed, "%s", cerr.Error())
	}
	var re *rpc.Error
	if errors.As(err, &re) {
		return re
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return rpc.Errorf(rpc.CodeTimeout, "%s", err.Error())
	}
	return rpc.Errorf(rpc.CodeEngineError, "%s", err.Error())
}
