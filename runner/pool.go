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
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/runner/captcha"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/runner/rpcserver"
)

// front is what the runner's listener serves: the session's server, and,
// for a warm pool's runner (config.Config.Pool), the pool's answers until
// a claim switches every later request to the claiming session's server.
type front struct {
	// cfg is the runner's configuration as started: for a pooled runner,
	// the pool's template and token. Nothing writes it once Run serves; a
	// claim applies the session to a copy.
	cfg  *config.Config
	opts Options
	log  *slog.Logger

	// session is the session's server: from the start for a runner
	// started for a session, from the claim for a pooled one.
	session atomic.Pointer[session]

	// mu orders claims, the browser's arrival and the shutdown, so that a
	// claim gets the browser and a shutdown sees the claim.
	mu       sync.Mutex
	browser  *chromium.Browser
	stopping bool
}

// session is the runner of one session.
type session struct {
	cfg *config.Config
	log *slog.Logger
	srv *rpcserver.Server
	ops operations.Interface
}

// newFront returns the front of a runner; one started for a session serves
// it at once.
func newFront(cfg *config.Config, opts Options, log *slog.Logger) *front {
	f := &front{cfg: cfg, opts: opts, log: log}
	if cfg.Pool == "" {
		f.session.Store(f.newSession(cfg, log))
	}
	return f
}

// newSession makes the server of the session cfg describes: its
// operations over its model, its token, its domSettleTimeoutMs.
func (f *front) newSession(cfg *config.Config, log *slog.Logger) *session {
	ops := f.opts.Operations
	if ops == nil {
		ops = operations.NewAutomation(cfg, log)
	}
	srv := rpcserver.NewServer(rpcserver.ServerOptions{
		Token:               cfg.Token,
		Operations:          ops,
		Logger:              log,
		DOMSettleTimeout:    time.Duration(ptr.Deref(cfg.Spec.DOMSettleTimeoutMs, 0)) * time.Millisecond,
		MaxQueuedOperations: cfg.MaxQueuedOperations,
		TracerProvider:      f.opts.TracerProvider,
	})
	return &session{cfg: cfg, log: log, srv: srv, ops: ops}
}

// setBrowser hands the session its browser, once what works on the
// browser's tab for the session's life is in place (the captcha solver,
// when the session asks for one): no operation may run before it.
func (s *session) setBrowser(b *chromium.Browser) {
	s.startCaptchas(b)
	s.srv.SetBrowser(b)
}

// startCaptchas starts the session's captcha solver on the browser's tab,
// when the session asks for one (browserSettings.solveCaptchas).
func (s *session) startCaptchas(b *chromium.Browser) {
	img, in, ok := b.CaptchaSelectors()
	if !ok {
		return
	}
	var (
		model    llm.Client
		modelErr = errors.New("the runner's operations have no session model")
	)
	if m, ok := s.ops.(interface{ SessionModel() (llm.Client, error) }); ok {
		model, modelErr = m.SessionModel()
	}
	solver := captcha.New(captcha.Selectors{Image: img, Input: in}, model, modelErr, s.log)
	tab, err := b.TabFor(b.TabContext(), 0).Automation()
	if err == nil {
		err = solver.Start(b.TabContext(), tab)
	}
	if err != nil {
		// A watcher that cannot start is said, not kept quiet; the
		// session works on without it.
		s.log.Error("captchas will not be solved: the watcher did not start", "err", err)
		return
	}
	s.srv.AddProgressSource(solver)
	s.log.Info("solving captchas", "imageSelector", img, "inputSelector", in)
}

// claimed returns the session the runner serves, nil for a pooled runner
// no session has claimed.
func (f *front) claimed() *session { return f.session.Load() }

// setBrowser hands the started browser to the session, or keeps it for
// the claim.
func (f *front) setBrowser(b *chromium.Browser) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.browser = b
	if s := f.session.Load(); s != nil {
		s.setBrowser(b)
	}
}

// beginShutdown refuses claims from now on and begins the session's
// shutdown; it returns the session, nil when none claimed the runner.
func (f *front) beginShutdown() *session {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopping = true
	s := f.session.Load()
	if s != nil {
		s.srv.BeginShutdown()
	}
	return s
}

// ServeHTTP serves ClaimPath to a pooled runner, everything to the session
// once there is one, and, before a claim, /healthz, and NOT_CLAIMED to the
// pool's token on every other path.
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.cfg.Pool != "" && r.URL.Path == rpc.ClaimPath {
		f.serveClaim(w, r)
		return
	}
	if s := f.session.Load(); s != nil {
		s.srv.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == rpc.HealthPath {
		f.serveHealth(w, r)
		return
	}
	if !f.poolCaller(w, r) {
		return
	}
	rpcserver.WriteError(w, rpc.Errorf(rpc.CodeNotClaimed, "the runner is pool %s's and no session has claimed it yet", f.cfg.Pool))
}

// poolCaller lets through a request with the pool's token (the manager),
// or answers 401 as the session's server does.
func (f *front) poolCaller(w http.ResponseWriter, r *http.Request) bool {
	got, ok := rpc.BearerToken(r)
	switch {
	case !ok:
		w.Header().Set("WWW-Authenticate", rpc.AuthorizationScheme)
		rpcserver.WriteError(w, rpc.Errorf(rpc.CodeUnauthorized, "missing runner token"))
		return false
	case !rpc.SameToken(got, f.cfg.Token.Reveal()):
		w.Header().Set("WWW-Authenticate", rpc.AuthorizationScheme+` error="invalid_token"`)
		rpcserver.WriteError(w, rpc.Errorf(rpc.CodeUnauthorized, "invalid runner token"))
		return false
	}
	return true
}

// serveHealth answers /healthz before a claim: ready once the browser is
// up, so that the pod turns Ready and the manager may claim it.
func (f *front) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		rpcserver.WriteError(w, rpc.Errorf(rpc.CodeMethodNotAllowed, "%s takes GET", rpc.HealthPath))
		return
	}
	f.mu.Lock()
	h := rpc.Health{Status: rpc.HealthReady}
	switch {
	case f.stopping:
		h = rpc.Health{Status: rpc.HealthStopping, Reason: "the runner is shutting down"}
	case f.browser == nil:
		h = rpc.Health{Status: rpc.HealthStarting, Reason: "the browser is starting"}
	case f.browser.Err() != nil:
		h = rpc.Health{Status: rpc.HealthCrashed, Reason: f.browser.Err().Error()}
	}
	f.mu.Unlock()
	status := http.StatusOK
	if h.Status != rpc.HealthReady {
		status = http.StatusServiceUnavailable
	}
	rpcserver.WriteJSON(w, status, h)
}

// serveClaim hands the runner to a session (POST rpc.ClaimPath, with the
// pool's token). It answers once every later request goes to the
// session's server, which the manager takes as the session being ready.
// The pool's token still reaches this path after the claim, so that the
// manager may repeat a claim whose answer it lost: the same session,
// namespace and token get 200 again, anything else ALREADY_CLAIMED.
func (f *front) serveClaim(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		rpcserver.WriteError(w, rpc.Errorf(rpc.CodeMethodNotAllowed, "%s takes POST", rpc.ClaimPath))
		return
	}
	if !f.poolCaller(w, r) {
		return
	}
	var req rpc.ClaimRequest
	if e := decodeClaim(w, r, &req); e != nil {
		rpcserver.WriteError(w, e)
		return
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.session.Load(); s != nil {
		if req.Session == s.cfg.SessionName && req.Namespace == s.cfg.Namespace && rpc.SameToken(req.Token, s.cfg.Token.Reveal()) {
			rpcserver.WriteJSON(w, http.StatusOK, rpc.ClaimResult{Session: s.cfg.SessionName})
			return
		}
		f.log.Info("claim refused: the runner is claimed", "claim", req)
		rpcserver.WriteError(w, rpc.Errorf(rpc.CodeAlreadyClaimed, "another session claimed the runner"))
		return
	}
	switch {
	case f.stopping:
		rpcserver.WriteError(w, rpc.Errorf(rpc.CodeShuttingDown, "the runner is shutting down"))
		return
	case f.browser == nil:
		rpcserver.WriteError(w, rpc.Errorf(rpc.CodeBrowserStarting, "the browser is starting"))
		return
	case f.browser.Err() != nil:
		rpcserver.WriteError(w, rpc.Errorf(rpc.CodeBrowserCrashed, "%s", f.browser.Err().Error()))
		return
	}

	cfg := *f.cfg
	if err := cfg.ApplyClaim(req); err != nil {
		e := &rpc.Error{}
		if !errors.As(err, &e) {
			e = rpc.Errorf(rpc.CodeInternal, "applying the claim: %s", err.Error())
		}
		f.log.Info("claim refused", "claim", req, "code", e.Code, "reason", e.Message)
		rpcserver.WriteError(w, e)
		return
	}
	log := f.log.With("session", cfg.SessionName)
	if err := cfg.ConnectServices(); err != nil {
		// CheckServices passed at start, so this is a bug.
		log.Error("connecting the session's services failed", "err", err)
		rpcserver.WriteError(w, rpc.Errorf(rpc.CodeInternal, "connecting the session's services failed"))
		return
	}
	s := f.newSession(&cfg, log)
	s.setBrowser(f.browser)
	if f.opts.OnClaim != nil {
		f.opts.OnClaim(&cfg)
	}
	f.session.Store(s)
	log.Info("claimed by the session", "namespace", cfg.Namespace)
	rpcserver.WriteJSON(w, http.StatusOK, rpc.ClaimResult{Session: cfg.SessionName})
}

// decodeClaim reads a claim's body, at most rpc.MaxRequestBytes, without
// quoting it: it holds the session's token and model secrets.
func decodeClaim(w http.ResponseWriter, r *http.Request, req *rpc.ClaimRequest) *rpc.Error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, rpc.MaxRequestBytes))
	err := dec.Decode(req)
	if err == nil {
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("unexpected data after the JSON body")
		}
	}
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooLarge):
		return rpc.Errorf(rpc.CodePayloadTooLarge, "the body exceeds %d bytes", rpc.MaxRequestBytes)
	default:
		return rpc.Errorf(rpc.CodeBadRequest, "the claim's body is not a valid claim")
	}
}
