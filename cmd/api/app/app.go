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

// Package app is the API pod's wiring: cmd/api runs it with its flags, and
// the local dev stack (internal/devstack) runs the same code in-process.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/search"
	"github.com/browserfleet/browserfleet/server"
	"github.com/browserfleet/browserfleet/server/apikey"
	"github.com/browserfleet/browserfleet/server/cdptoken"
	"github.com/browserfleet/browserfleet/server/metrics"
	"github.com/browserfleet/browserfleet/store"
)

// Options configure the API pod. AddFlags binds the first group to
// cmd/api's flags; the rest are for processes that embed the API.
type Options struct {
	// ListenAddress serves the /v1 API, /healthz and /readyz.
	ListenAddress string
	// MetricsAddress is the metrics endpoint's address; "0" disables it.
	MetricsAddress string
	// MetricsSecure serves metrics over HTTPS to callers the cluster
	// authorizes.
	MetricsSecure bool
	// StartTimeout bounds how long session start waits for the browser.
	StartTimeout time.Duration
	// MaxBodyBytes is the largest request body accepted.
	MaxBodyBytes int64
	// ShutdownGrace is how long in-flight requests may finish once ctx
	// ends.
	ShutdownGrace time.Duration
	// CDPKeyFile holds the key that signs cdpUrl tokens; empty: a random
	// key of this process.
	CDPKeyFile string
	// CDPKeyPreviousFile holds the previous key, accepted during rotation.
	CDPKeyPreviousFile string
	// CDPURLTTL bounds how long a cdpUrl may be used to connect.
	CDPURLTTL time.Duration
	// PublicURL is the base URL clients reach the API at; empty: the host
	// of each request.
	PublicURL string
	// AllowedExecutables are the browser binaries a session's
	// launchOptions.executablePath may name; the manager's
	// runner.allowedExecutables.
	AllowedExecutables []string
	// AcceptedRegions are the regions a session's
	// cloudSessionCreateParams.region may name; the manager's
	// runner.regions.accepted. Empty: every region.
	AcceptedRegions []string
	// ProjectNamespaces are the namespaces that are projects; empty: every
	// namespace.
	ProjectNamespaces []string
	// Quota bounds each project's sessions: the manager's quota.
	Quota quota.Config
	// Search is the web search provider of agents; Provider empty: none.
	// Its APIKey is read from SearchAPIKeyFile.
	Search search.Config
	// SearchAPIKeyFile holds the provider's API key (a mounted Secret).
	SearchAPIKeyFile string
	// SearchMaxInFlight bounds the searches run at once.
	SearchMaxInFlight int
	// RunnerListenAddress serves runners the server-side cache, the model
	// gateway (when configured) and the search relay (when a search
	// provider is).
	RunnerListenAddress string
	// CacheRedisAddress is the Redis (or Valkey) of the server-side cache
	// and the gateway's budgets, host:port; empty: the embedded store,
	// which only this process sees.
	CacheRedisAddress string
	// CacheRedisPasswordFile holds Redis's password (a mounted Secret);
	// empty: none.
	CacheRedisPasswordFile string
	// CacheEnabled turns the server-side cache on for calls that do not
	// say (the project default).
	CacheEnabled bool
	// CacheThreshold is the default threshold, 1 to cache.MaxThreshold.
	CacheThreshold int64
	// CacheTTL is an entry's life after its last write, MinCacheTTL to
	// MaxCacheTTL.
	CacheTTL time.Duration
	// Gateway configures the model gateway; no provider: none.
	Gateway GatewayOptions

	// Listener, when set, is served instead of listening on ListenAddress:
	// the dev stack binds its port before anything else starts.
	Listener net.Listener
	// RunnerListener, when set, is served instead of listening on
	// RunnerListenAddress.
	RunnerListener net.Listener
	// Registry gets the API's metrics; default controller-runtime's
	// registry, which the metrics endpoint serves. A process that runs the
	// API more than once needs a registry per run.
	Registry prometheus.Registerer
	// Logger is the API's logger; default ctrl.Log.
	Logger logr.Logger
	// TracerProvider makes the spans of /v1 calls; default the export the
	// OTEL_* environment configures (tracing.go), none when it is unset.
	TracerProvider trace.TracerProvider
}

// DefaultOptions are the defaults of cmd/api's flags.
func DefaultOptions() Options {
	return Options{
		ListenAddress:  ":8000",
		MetricsAddress: ":8080",
		StartTimeout:   server.DefaultStartTimeout,
		MaxBodyBytes:   server.DefaultMaxBodyBytes,
		ShutdownGrace:  30 * time.Second,
		CDPURLTTL:      server.DefaultCDPURLTTL,
		Quota:          quota.DefaultConfig(),

		RunnerListenAddress: ":8001",
		SearchMaxInFlight:   search.DefaultMaxInFlight,

		CacheThreshold: cache.DefaultThreshold,
		CacheTTL:       cache.DefaultEntryTTL,
	}
}

// Bounds of --cache-ttl.
const (
	// MinCacheTTL: an entry that lives less is hardly ever served.
	MinCacheTTL = time.Minute
	// MaxCacheTTL: pages change; an entry that outlives a month mostly
	// replays into replay_failed.
	MaxCacheTTL = 30 * 24 * time.Hour
)

// AddFlags binds the options to cmd/api's flags.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.ListenAddress, "listen-address", o.ListenAddress, "address of the /v1 API, /healthz and /readyz")
	fs.StringVar(&o.MetricsAddress, "metrics-bind-address", o.MetricsAddress, "address of the metrics endpoint; 0 disables it")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "serve metrics over HTTPS, to callers the cluster authorizes")
	fs.DurationVar(&o.StartTimeout, "start-timeout", o.StartTimeout, "how long session start waits for the browser to be ready")
	fs.Int64Var(&o.MaxBodyBytes, "max-body-bytes", o.MaxBodyBytes, "largest request body accepted; larger ones get 413")
	fs.DurationVar(&o.ShutdownGrace, "shutdown-grace", o.ShutdownGrace, "how long in-flight requests may finish after SIGTERM")
	fs.StringVar(&o.CDPKeyFile, "cdp-signing-key-file", o.CDPKeyFile, "file holding the key that signs cdpUrl tokens (a mounted Secret, shared by every replica); empty: a random key per process, which only suits a single replica")
	fs.StringVar(&o.CDPKeyPreviousFile, "cdp-signing-key-previous-file", o.CDPKeyPreviousFile, "file holding the previous signing key, still accepted while a rotation completes")
	fs.DurationVar(&o.CDPURLTTL, "cdp-url-ttl", o.CDPURLTTL, "how long a cdpUrl may be used to connect (never past its session's expiry)")
	fs.StringVar(&o.PublicURL, "public-url", o.PublicURL, "base URL clients reach the API at, for cdpUrl (e.g. https://browserfleet.example.com); empty: the host of each request")
	o.Quota.AddFlags(fs)
	o.Gateway.AddFlags(fs)
	fs.StringVar(&o.RunnerListenAddress, "runner-listen-address", o.RunnerListenAddress, "address serving runners the server-side cache, the model gateway (with a --gateway-<provider>-* flag) and the search relay (with --search-provider); open it to runner pods only")
	fs.StringVar(&o.CacheRedisAddress, "cache-redis-address", o.CacheRedisAddress, "host:port of the Redis (or Valkey) holding the server-side cache and the gateway's budgets, shared by every API replica; empty: an embedded store in this process, not shared with other replicas")
	fs.StringVar(&o.CacheRedisPasswordFile, "cache-redis-password-file", o.CacheRedisPasswordFile, "file holding the Redis password (a mounted Secret); empty: none")
	fs.BoolVar(&o.CacheEnabled, "cache-enabled", o.CacheEnabled, "serve act, observe, extract and agent replays from the server-side cache for calls and sessions that do not say (the project default); off, a call turns it on with options.cache")
	fs.Int64Var(&o.CacheThreshold, "cache-threshold", o.CacheThreshold, fmt.Sprintf("how many times a key must have been seen before its entry is served, 1 to %d, for calls and sessions that do not say; 1: the second identical call hits", cache.MaxThreshold))
	fs.DurationVar(&o.CacheTTL, "cache-ttl", o.CacheTTL, fmt.Sprintf("how long a cache entry lives after its last write, %s to %s", MinCacheTTL, MaxCacheTTL))
	fs.StringVar(&o.Search.Provider, "search-provider", o.Search.Provider, "the agent's web search provider: brave or searxng; empty: none, and agentExecute refuses useSearch")
	fs.StringVar(&o.Search.Endpoint, "search-endpoint", o.Search.Endpoint, "the provider's search URL (brave: default "+search.DefaultBraveEndpoint+"; searxng: the instance's /search URL, required)")
	fs.StringVar(&o.SearchAPIKeyFile, "search-api-key-file", o.SearchAPIKeyFile, "file holding the provider's API key (brave's subscription token), a mounted Secret")
	fs.IntVar(&o.Search.Results, "search-results", search.DefaultResults, fmt.Sprintf("hits per search, 1 to %d", search.MaxResults))
	fs.IntVar(&o.SearchMaxInFlight, "search-max-in-flight", o.SearchMaxInFlight, "searches the relay runs at once, across every session; more are refused and the agent is told to retry")
	fs.Func("project-namespace", "a namespace that is a project: API keys count only there, and the API reads and writes no other namespace (its RBAC can then be namespaced); repeatable; none: every namespace, with cluster-wide rights", func(v string) error {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return fmt.Errorf("%q is not a namespace name: %s", v, strings.Join(errs, "; "))
		}
		o.ProjectNamespaces = append(o.ProjectNamespaces, v)
		return nil
	})
	fs.Func("allowed-executable", "absolute path of a browser binary a session's launchOptions.executablePath may name (the manager's runner.allowedExecutables); repeatable; none by default, so start refuses every executablePath", func(v string) error {
		if err := rpc.CheckAllowedExecutable(v); err != nil {
			return err
		}
		o.AllowedExecutables = append(o.AllowedExecutables, v)
		return nil
	})
	fs.Func("accepted-region", "a region a session's cloudSessionCreateParams.region may name (the manager's runner.regions.accepted); repeatable; none: every region", func(v string) error {
		if !slices.Contains(v1alpha1.Regions, v1alpha1.Region(v)) {
			return fmt.Errorf("%q is not a region; want one of %v", v, v1alpha1.Regions)
		}
		o.AcceptedRegions = append(o.AcceptedRegions, v)
		return nil
	})
}

// Run serves the API against cfg until ctx ends, then drains: /readyz
// fails at once, in-flight calls have ShutdownGrace to finish, and what
// still runs then is aborted. It returns early with an error when serving
// or the cache fails.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	if opts.Logger.GetSink() == nil {
		opts.Logger = ctrl.Log
	}
	if opts.Registry == nil {
		opts.Registry = ctrlmetrics.Registry
	}
	log := opts.Logger.WithName("setup")
	if err := validateCache(opts); err != nil {
		return err
	}
	if opts.TracerProvider == nil {
		tp, err := newTracerProvider(ctx, opts.Logger)
		if err != nil {
			return err
		}
		if tp != nil {
			defer flushTraces(tp, log)
			opts.TracerProvider = tp
		}
	}
	mgr, err := newManager(cfg, opts)
	if err != nil {
		return err
	}
	// The manager outlives the HTTP server: draining requests still read
	// its cache. Hence its own context, cancelled after the drain.
	mgrCtx, stopMgr := context.WithCancel(context.Background())
	defer stopMgr()
	st, err := newStore(opts, log)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	handler, err := newHandler(mgrCtx, mgr, st, opts)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              opts.ListenAddress,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		// No WriteTimeout: start legitimately takes up to --start-timeout,
		// and streamed replies longer; handlers bound their own work.
		IdleTimeout: 2 * time.Minute,
	}

	runnerHandler, err := handler.RunnerHandler()
	if err != nil {
		return err
	}

	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	srvDone := make(chan error, 2)
	go func() { srvDone <- serve(srv, opts.Listener) }()
	log.Info("serving", "address", address(opts), "startTimeout", opts.StartTimeout, "maxBodyBytes", opts.MaxBodyBytes, "projects", opts.ProjectNamespaces)
	// The runner listener always serves: every runner may use the cache.
	runnerSrv := &http.Server{
		Addr:              opts.RunnerListenAddress,
		Handler:           runnerHandler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	go func() { srvDone <- serve(runnerSrv, opts.RunnerListener) }()
	runnerAddr := opts.RunnerListenAddress
	if opts.RunnerListener != nil {
		runnerAddr = opts.RunnerListener.Addr().String()
	}
	log.Info("serving runners", "address", runnerAddr, "searchProvider", opts.Search.Provider)
	if opts.Search.Provider == "" {
		log.Info("no --search-provider: agents have no search tool, and agentExecute refuses useSearch")
	}
	if len(opts.ProjectNamespaces) == 0 {
		log.Info("no --project-namespace: every namespace with an API key is a project, and the API needs cluster-wide rights")
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down", "grace", opts.ShutdownGrace)
	case err := <-srvDone:
		return fmt.Errorf("serving: %w", err)
	case err := <-mgrDone:
		if err == nil {
			err = errors.New("manager stopped")
		}
		return fmt.Errorf("running manager: %w", err)
	}
	// A search takes seconds at most, a cache call less; a runner whose
	// search is cut off tells its model, which may retry against another
	// replica, and a cache call cut off is a miss.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), search.DefaultTimeout)
	_ = runnerSrv.Shutdown(shutdownCtx)
	cancel()
	shutdown(srv, handler, opts.ShutdownGrace, log)
	stopMgr()
	if err := <-mgrDone; err != nil {
		return fmt.Errorf("stopping manager: %w", err)
	}
	return nil
}

// newManager makes the API pod's manager: a cache and clients, no
// controllers. No leader election: every API replica serves. The probes are
// the server's own, on the API port, so the manager's are off.
func newManager(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	metricsOpts := metricsserver.Options{BindAddress: opts.MetricsAddress, SecureServing: opts.MetricsSecure}
	if opts.MetricsSecure {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 opts.Logger,
		Cache:                  server.CacheOptions(opts.ProjectNamespaces),
		Metrics:                metricsOpts,
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	return mgr, nil
}

// newHandler sets up the /v1 handler over the manager's cache. ctx is the
// manager's: the authenticator's index lives as long as it.
func newHandler(ctx context.Context, mgr ctrl.Manager, st store.Store, opts Options) (*server.Server, error) {
	auth, err := apikey.NewAuthenticator(ctx, mgr.GetFieldIndexer(), mgr.GetClient())
	if err != nil {
		return nil, fmt.Errorf("setting up the authenticator: %w", err)
	}
	signer, err := cdpSigner(opts.CDPKeyFile, opts.CDPKeyPreviousFile)
	if err != nil {
		return nil, fmt.Errorf("loading the cdpUrl signing key: %w", err)
	}
	if opts.CDPKeyFile == "" {
		opts.Logger.WithName("setup").Info("no --cdp-signing-key-file: cdpUrls are signed with a random key of this process, which other replicas refuse")
	}
	searcher, err := newSearcher(opts)
	if err != nil {
		return nil, err
	}
	// The metrics server of the manager serves these, on its own port:
	// they name projects and models, which is not for the API's callers.
	m, err := metrics.New(opts.Registry, mgr.GetClient())
	if err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	gw, err := newGateway(opts.Gateway, st, opts.Registry, opts.Logger.WithName("setup"))
	if err != nil {
		return nil, fmt.Errorf("setting up the model gateway: %w", err)
	}
	handler, err := server.New(server.Options{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		Cache:         mgr.GetCache(),
		Authenticator: auth,
		StartTimeout:  opts.StartTimeout,
		MaxBodyBytes:  opts.MaxBodyBytes,
		Logger:        opts.Logger.WithName("http"),
		Metrics:       m,
		CDPSigner:     signer,
		CDPURLTTL:     opts.CDPURLTTL,
		PublicURL:     opts.PublicURL,

		AllowedExecutables: opts.AllowedExecutables,
		AcceptedRegions:    opts.AcceptedRegions,
		Quota:              opts.Quota,
		Projects:           opts.ProjectNamespaces,
		Search:             searcher,
		SearchMaxInFlight:  opts.SearchMaxInFlight,
		Gateway:            gw,
		TracerProvider:     opts.TracerProvider,
		Store:              st,
		ManagedCache: server.ManagedCacheOptions{
			Enabled:   opts.CacheEnabled,
			Threshold: opts.CacheThreshold,
			TTL:       opts.CacheTTL,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("setting up the server: %w", err)
	}
	return handler, nil
}

// newSearcher is the configured search provider, or nil.
func newSearcher(opts Options) (search.Searcher, error) {
	if opts.Search.Provider == "" {
		if opts.Search.Endpoint != "" || opts.SearchAPIKeyFile != "" {
			return nil, errors.New("--search-endpoint and --search-api-key-file need --search-provider")
		}
		return nil, nil
	}
	cfg := opts.Search
	if opts.SearchAPIKeyFile != "" {
		b, err := os.ReadFile(opts.SearchAPIKeyFile)
		if err != nil {
			return nil, fmt.Errorf("reading --search-api-key-file: %w", err)
		}
		cfg.APIKey = strings.TrimSpace(string(b))
	}
	s, err := search.New(cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// validateCache says what is wrong with the cache's flags.
func validateCache(opts Options) error {
	if err := cache.CheckThreshold(opts.CacheThreshold); err != nil {
		return fmt.Errorf("--cache-threshold: %w", err)
	}
	if opts.CacheTTL < MinCacheTTL || opts.CacheTTL > MaxCacheTTL {
		return fmt.Errorf("--cache-ttl must be from %s to %s, not %s", MinCacheTTL, MaxCacheTTL, opts.CacheTTL)
	}
	if opts.CacheRedisAddress == "" {
		if opts.CacheRedisPasswordFile != "" {
			return errors.New("--cache-redis-password-file needs --cache-redis-address")
		}
		return nil
	}
	if err := (store.RedisOptions{Address: opts.CacheRedisAddress}).Validate(); err != nil {
		return fmt.Errorf("--cache-redis-address: %w", err)
	}
	return nil
}

// newStore is the store of the managed services: the Redis of
// --cache-redis-address, or the embedded one. A Redis is not dialled
// here: an API that starts before its Redis serves, its cache missing
// (store_unavailable) until Redis answers.
func newStore(opts Options, log logr.Logger) (store.Store, error) {
	if opts.CacheRedisAddress == "" {
		log.Info("no --cache-redis-address: the managed cache and the gateway's budgets live in this process, NOT shared with other API replicas; run one replica or give a Redis",
			"maxItems", store.DefaultMemoryMaxItems, "maxBytes", store.DefaultMemoryMaxBytes)
		return store.NewMemory(store.MemoryOptions{}), nil
	}
	ro := store.RedisOptions{Address: opts.CacheRedisAddress}
	if opts.CacheRedisPasswordFile != "" {
		b, err := os.ReadFile(opts.CacheRedisPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("reading --cache-redis-password-file: %w", err)
		}
		ro.Password = strings.TrimSpace(string(b))
		if ro.Password == "" {
			return nil, fmt.Errorf("--cache-redis-password-file %s is empty", opts.CacheRedisPasswordFile)
		}
	}
	store.SetRedisLogger(opts.Logger.WithName("redis"))
	st, err := store.NewRedis(ro)
	if err != nil {
		return nil, fmt.Errorf("--cache-redis-address: %w", err)
	}
	log.Info("the managed cache and the gateway's budgets live in Redis, shared by every API replica", "address", opts.CacheRedisAddress, "password", ro.Password != "")
	return st, nil
}

// serve serves on l when set, else on srv.Addr. Run reads its result only
// when serving failed, never after Shutdown.
func serve(srv *http.Server, l net.Listener) error {
	if l != nil {
		return srv.Serve(l)
	}
	return srv.ListenAndServe()
}

func address(opts Options) string {
	if opts.Listener != nil {
		return opts.Listener.Addr().String()
	}
	return opts.ListenAddress
}

// shutdown stops accepting and waits for in-flight calls. /readyz fails at
// once so that load balancers send no more; calls still running when the
// grace has passed are aborted: plain calls answer 503, streams end with an
// error frame, CDP connections close (a start whose client is cut off ends
// the session it made).
func shutdown(srv *http.Server, handler *server.Server, grace time.Duration, log logr.Logger) {
	handler.Drain()
	graceCtx, cancelGrace := context.WithTimeout(context.Background(), grace)
	defer cancelGrace()
	go func() {
		<-graceCtx.Done()
		handler.Abort()
	}()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace+10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Error(err, "graceful shutdown incomplete; closing connections")
		_ = srv.Close()
	}
	// Hijacked connections (CDP) are not Shutdown's to wait for.
	handler.Abort()
}

// cdpSigner loads the cdpUrl signing keys, or makes a random one.
func cdpSigner(current, previous string) (*cdptoken.Signer, error) {
	var key []byte
	var err error
	if current == "" {
		key, err = cdptoken.GenerateKey()
	} else {
		key, err = cdptoken.LoadKey(current)
	}
	if err != nil {
		return nil, err
	}
	var prev [][]byte
	if previous != "" {
		p, err := cdptoken.LoadKey(previous)
		if err != nil {
			return nil, err
		}
		prev = append(prev, p)
	}
	return cdptoken.NewSigner(key, prev...)
}
