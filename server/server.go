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

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/search"
	"github.com/browserfleet/browserfleet/server/apikey"
	"github.com/browserfleet/browserfleet/server/cdptoken"
	"github.com/browserfleet/browserfleet/server/metrics"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
	"github.com/browserfleet/browserfleet/store"
)

// Defaults of Options.
const (
	// DefaultStartTimeout is how long start waits for a session to be ready.
	DefaultStartTimeout = 60 * time.Second
	// DefaultMaxBodyBytes bounds request bodies: 1 MiB, far more than any
	// start body needs, small enough that a flood of them cannot exhaust
	// the pod's memory.
	DefaultMaxBodyBytes int64 = 1 << 20
	// DefaultBodyReadTimeout bounds reading a request body.
	DefaultBodyReadTimeout = 30 * time.Second
)

// Headers the server reads.
const (
	// HeaderAPIKey carries the service API key.
	HeaderAPIKey = "x-svc-api-key"
	// HeaderProjectID is deprecated and ignored: the key decides the project.
	HeaderProjectID = "x-svc-project-id"
	// HeaderModelAPIKey carries the model provider's API key on start, as the
	// reference server takes it.
	HeaderModelAPIKey = "x-model-api-key"
)

// Options configure the server.
type Options struct {
	// Client reads through the API pod's cache (BrowserSessions of every
	// namespace) and writes to the API server. Required.
	Client client.Client
	// APIReader reads from the API server directly. A session that the cache
	// does not hold is looked up here before the server answers 404, because
	// another API pod may have created it a moment ago. Required.
	APIReader client.Reader
	// Cache is the cache behind Client: start waits on its BrowserSession
	// informer, and /readyz reports whether it has synced. Required.
	Cache cache.Cache
	// Authenticator checks API keys. Required.
	Authenticator *apikey.Authenticator
	// StartTimeout bounds start's wait for Ready; DefaultStartTimeout if 0.
	StartTimeout time.Duration
	// MaxBodyBytes bounds request bodies; DefaultMaxBodyBytes if 0.
	MaxBodyBytes int64
	// Logger receives the request log and errors; logr.Discard() if zero.
	Logger logr.Logger
	// Metrics records request, operation and token metrics; nil records
	// none.
	Metrics *metrics.Metrics
	// CDPSigner signs the tokens of the cdpUrls the server hands out; with
	// nil, cdpUrl is null. Every replica must share its key.
	CDPSigner *cdptoken.Signer
	// CDPURLTTL bounds how long a cdpUrl may be used to connect;
	// DefaultCDPURLTTL if 0. A URL never outlives its session's expiry.
	CDPURLTTL time.Duration
	// PublicURL is the base URL clients reach the API at (an Ingress's),
	// used for cdpUrl. Empty: the scheme and host of each request
	// (X-Forwarded-Proto and X-Forwarded-Host when a proxy set them).
	PublicURL string
	// AllowedExecutables are the browser binaries a start's
	// launchOptions.executablePath may name: the manager's
	// runner.allowedExecutables. Empty: none (start answers 400).
	AllowedExecutables []string
	// AcceptedRegions are the regions a start's
	// cloudSessionCreateParams.region may name: the manager's
	// runner.regions.accepted. Empty: every region.
	AcceptedRegions []string
	// Projects are the namespaces that are projects: a key counts only in
	// one of them. Empty: every namespace (the API then needs cluster-wide
	// rights). The cache must hold no other namespace (CacheOptions).
	Projects []string
	// BodyReadTimeout bounds reading a request's body. Zero:
	// DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
	// RevocationCheck is how often the keys of open requests and CDP
	// connections are checked; those of a revoked or expired key are
	// closed. Zero: DefaultRevocationCheck.
	RevocationCheck time.Duration
	// Quota bounds each project's sessions; start refuses one beyond it.
	// Zero: quota.DefaultConfig().
	Quota quota.Config
	// Search is the operator's web search provider, which agents reach
	// through the relay of RunnerHandler. nil: none, and agentExecute
	// refuses useSearch.
	Search search.Searcher
	// SearchMaxInFlight bounds the searches the relay runs at once; zero
	// is search.DefaultMaxInFlight.
	SearchMaxInFlight int
	// Gateway is the model gateway, served at /v1/models/generate and on
	// the runner listener; nil: none, and a start must name a model.
	Gateway *gateway.Gateway
	// TracerProvider makes a server span of each /v1 call, continuing the
	// caller's traceparent; the runner call it makes carries it on. nil:
	// no spans (tracing.go).
	TracerProvider trace.TracerProvider
	// Store holds the server-side cache's entries (per project) and the
	// gateway's budgets: store.Redis, shared by every replica, or the
	// embedded store.Memory. nil: no server-side cache (every call is
	// DISABLED), and the gateway's budgets are not counted.
	Store store.Store
	// ManagedCache are the server-side cache's project defaults
	// (cache_setting.go).
	ManagedCache ManagedCacheOptions
}

// CacheOptions are what the API pod's cache must hold: BrowserSessions of
// the project namespaces (every namespace when projects is empty) and, of
// Secrets, only API keys (apikey.Selector()), so that
// the pod never holds the cluster's other Secrets. The request Secrets the
// server creates are written and never read back, so they need no cache.
func CacheOptions(projects []string) cache.Options {
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Label: apikey.Selector()},
	}}
	if len(projects) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range projects {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// server holds what the handlers share.
type server struct {
	opts      Options
	log       logr.Logger
	mux       *http.ServeMux
	hub       *hub
	tokens    tokens
	publicURL *url.URL
	routes    []string
	synced    atomic.Bool
	draining  atomic.Bool
	// abort is cancelled by Server.Abort: every operation, stream and
	// CDP connection still running stops.
	abort     context.Context
	abortFunc context.CancelFunc
	held      holds
	projects  map[string]bool
}

// Server is the API's http.Handler.
type Server struct {
	s *server
	h http.Handler
}

// ServeHTTP serves the API.
func (x *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { x.h.ServeHTTP(w, r) }

// Drain makes /readyz fail, so that load balancers stop sending new calls,
// while everything else keeps serving. Call it when shutdown begins.
func (x *Server) Drain() { x.s.draining.Store(true) }

// Abort stops every operation, stream and CDP connection still running:
// plain calls answer 503, streams end with an error frame, CDP connections
// close. Call it when the shutdown grace has passed, so that
// http.Server.Shutdown, which waits for handlers but not for hijacked
// connections, can finish.
func (x *Server) Abort() { x.s.abortFunc() }

// New returns the API's handler. It registers event handlers on the cache's
// BrowserSession and AgentTask informers, which start and agentExecute wait
// on; call it before the cache starts or after, either works.
func New(opts Options) (*Server, error) {
	if opts.Client == nil || opts.APIReader == nil || opts.Cache == nil || opts.Authenticator == nil {
		return nil, errors.New("server: Client, APIReader, Cache and Authenticator are required")
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.BodyReadTimeout <= 0 {
		opts.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if opts.RevocationCheck <= 0 {
		opts.RevocationCheck = DefaultRevocationCheck
	}
	if opts.Quota.Default == (quota.Limits{}) {
		opts.Quota = quota.DefaultConfig()
	}
	if err := opts.Quota.Validate(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if opts.CDPURLTTL <= 0 {
		opts.CDPURLTTL = DefaultCDPURLTTL
	}
	public, err := parsePublicURL(opts.PublicURL)
	if err != nil {
		return nil, err
	}
	s := &server{opts: opts, log: opts.Logger, mux: http.NewServeMux(), hub: newHub(), publicURL: public}
	s.abort, s.abortFunc = context.WithCancel(context.Background())

	// GetInformer does not block before the cache starts; once it has
	// started, it waits for the informer to sync, which a short context
	// would cut off, hence Background.
	// One hub serves both kinds: a session and a task of the same name
	// would only wake each other's waiters, who re-read and wait again.
	for _, obj := range []client.Object{&v1alpha1.BrowserSession{}, &v1alpha1.AgentTask{}} {
		inf, err := opts.Cache.GetInformer(context.Background(), obj)
		if err != nil {
			return nil, fmt.Errorf("server: getting the %T informer: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(s.hub.handler()); err != nil {
			return nil, fmt.Errorf("server: watching %T: %w", obj, err)
		}
	}

	go s.sweepRevoked(s.abort, opts.RevocationCheck)
	if len(opts.Projects) > 0 {
		s.projects = map[string]bool{}
		for _, ns := range opts.Projects {
			s.projects[ns] = true
		}
	}

	s.register()
	return &Server{s: s, h: s.traced(s.logged(s.mux))}, nil
}

// register registers every route.
func (s *server) register() {
	s.handle("GET /healthz", s.healthz)
	s.handle("GET /readyz", s.readyz)
	s.handle("POST /v1/sessions/start", s.authed(s.start))
	s.handle("POST /v1/sessions/{id}/end", s.authed(s.end))
	s.handle("GET /v1/sessions/{id}", s.authed(s.get))
	s.handle("GET /v1/sessions", s.authed(s.list))
	s.handle("POST /v1/sessions/{id}/act", s.authed(s.act))
	s.handle("POST /v1/sessions/{id}/observe", s.authed(s.observe))
	s.handle("POST /v1/sessions/{id}/extract", s.authed(s.extract))
	s.handle("POST /v1/sessions/{id}/navigate", s.authed(s.navigate))
	s.handle("POST /v1/sessions/{id}/agentExecute", s.authed(s.agentExecute))
	s.handle("POST /v1/sessions/{id}/batch", s.authed(s.batch))
	s.handle("GET /v1/sessions/{id}/replay", s.authed(s.replay))
	s.handle("GET "+CDPPathPattern, s.cdp)
	s.handle("GET /v1/openapi.json", s.openapi)
	s.registerCache()
	s.registerGateway()
	s.mux.HandleFunc("/", s.fallback) // not a route: the JSON 404 and 405
}

// handle registers a route, and remembers it so that a test can hold the
// routes to the OpenAPI document.
func (s *server) handle(pattern string, h http.HandlerFunc) {
	s.routes = append(s.routes, pattern)
	s.mux.HandleFunc(pattern, h)
}

// openapi serves the OpenAPI document, which needs no key: it describes
// the API, not a project.
func (s *server) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(serverv1.OpenAPI())
}

// fallback answers what no route matched with JSON, as every error is:
// a 405 for a known path with another method, else a 404. (The catch-all
// pattern keeps ServeMux from writing its own plain-text replies.)
func (s *server) fallback(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "method "+r.Method+" not allowed")
		return
	}
	writeError(w, http.StatusNotFound, CodeNotFound, "no such path")
}

// healthz answers 200 while the process serves.
func (s *server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}

// readyz answers 200 once the cache has synced: before that, keys cannot be
// checked and sessions not found.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "shutting down")
		return
	}
	if !s.synced.Load() {
		// WaitForCacheSync blocks until the cache syncs or the context
		// ends; a probe must answer promptly either way.
		ctx, cancel := context.WithTimeout(r.Context(), 200*time.Millisecond)
		defer cancel()
		if !s.opts.Cache.WaitForCacheSync(ctx) {
			writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "cache not synced yet")
			return
		}
		s.synced.Store(true)
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}

// authedHandler is a /v1 handler: it runs for an authenticated project.
// isProject reports whether namespace is a project.
func (s *server) isProject(namespace string) bool {
	return s.projects == nil || s.projects[namespace]
}

type authedHandler func(w http.ResponseWriter, r *http.Request, project apikey.Project)

// authed checks the API key before h. Every refused key gets the same 401,
// whatever was wrong with it.
func (s *server) authed(h authedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		project, err := s.opts.Authenticator.Authenticate(r.Context(), r.Header.Get(HeaderAPIKey))
		if errors.Is(err, apikey.ErrInvalidKey) {
			writeError(w, http.StatusUnauthorized, CodeUnauthorized, apikey.ErrInvalidKey.Error())
			return
		}
		if err != nil {
			// The cache is not ready or the request is gone: not the
			// caller's fault, and retrying will work.
			s.log.Error(err, "authenticating request")
			writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "cannot check the API key right now; retry")
			return
		}
		if !s.isProject(project.Namespace) {
			// The API pod's cache holds no key outside its projects; this
			// is a second lock on the same door.
			writeError(w, http.StatusUnauthorized, CodeUnauthorized, apikey.ErrInvalidKey.Error())
			return
		}
		// Held under the key until it ends, so that revoking the key ends it.
		ctx, cancel := context.WithCancel(withProject(r.Context(), project))
		defer cancel()
		release := s.held.hold(project, cancel)
		defer release()
		h(w, r.WithContext(ctx), project)
	}
}

// readBody reads the body within MaxBodyBytes. It writes the 413 itself and
// returns ok=false then, or on a broken body (400).
func (s *server) readBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	return s.readBodyLimit(w, r, s.opts.MaxBodyBytes)
}

// readBodyLimit is readBody with a bound of its own: the cache endpoints'
// (cache.MaxBodyBytes), which take an entry of up to a mebibyte whatever
// MaxBodyBytes is.
func (s *server) readBodyLimit(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, ok bool) {
	// A body that trickles in holds a connection and a goroutine: it gets
	// BodyReadTimeout in all. (The server's ReadHeaderTimeout bounds the
	// headers; a server-wide ReadTimeout would also cut CDP connections.)
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(s.opts.BodyReadTimeout)); err != nil {
		s.log.V(1).Info("cannot bound the body read", "error", err.Error())
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		// Lifted again: net/http watches the connection for the client
		// going away while a reply streams, and a deadline would end it;
		// and the connection may serve a next request.
		_ = rc.SetReadDeadline(time.Time{})
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writeError(w, http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
			fmt.Sprintf("request body is larger than %d bytes", limit))
		return nil, false
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The rest of the body is not waited for either.
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, CodeRequestTimeout, fmt.Sprintf("the request body did not arrive within %s", s.opts.BodyReadTimeout))
		return nil, false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "reading request body failed")
		return nil, false
	}
	return body, true
}

// statusRecorder remembers the status a handler wrote, for the log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushing for
// SSE, deadlines) through the recorder.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logged logs one line per request: method, route pattern (never the raw
// path's ids, which would make every line unique), status and duration.
// Headers and bodies are never logged: they carry keys.
func (s *server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		// ServeMux sets r.Pattern on the request it was given, this one.
		route := r.Pattern
		if route == "" || route == "/" {
			route = "unmatched"
		}
		if !strings.HasPrefix(route, r.Method) && route != "unmatched" {
			route = r.Method + " " + route
		}
		status := rec.status
		switch {
		case status == 0 && strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
			// The CDP proxy hijacked the connection and wrote its 101
			// itself.
			status = http.StatusSwitchingProtocols
		case status == 0:
			status = http.StatusOK
		}
		elapsed := time.Since(start)
		s.opts.Metrics.ObserveRequest(route, status, elapsed)
		s.log.Info("request", "method", r.Method, "route", route, "status", status,
			"durationMs", elapsed.Milliseconds())
	})
}
