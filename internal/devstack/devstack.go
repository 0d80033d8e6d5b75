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

// Package devstack runs the whole service on one machine, with no cluster:
// kube-apiserver and etcd (envtest's binaries) with the CRDs installed, the
// manager and the API pod's server in-process (cmd/manager/app and
// cmd/api/app, the code the binaries run), and the local kubelet
// (internal/localkubelet), which runs each runner pod as a runner process with
// Debian's Chromium. `make dev` (hack/dev) runs it in the foreground; an
// end-to-end suite starts and stops it around its specs.
//
// Its state is in Options.Dir and outlives it, so that a restart finds the
// sessions and keys of the last run:
//
//	etcd/             etcd's data
//	kubeconfig        cluster-admin credentials (new on every start)
//	env               BROWSERFLEET_API_URL, BROWSERFLEET_API_KEY, KUBECONFIG
//	cdp-signing-key   the key of cdpUrl tokens, so that cdpUrls survive a restart
//	kubelet/logs/     the runners' output, one file per pod and container
//	logs/             etcd's and kube-apiserver's output of the last run
//	lock              held while a stack runs, so that two never share Dir
//
// The API key of the project (Options.Namespace) is made on the first start;
// its value is only in env, and it is reused as long as its Secret exists.
// Sessions that ran when the stack stopped are failed on the next start
// (their processes are gone), as a kubelet restart fails them.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/browserfleet/browserfleet/internal/localkubelet"
	"github.com/browserfleet/browserfleet/quota"
)

// Defaults of Options.
const (
	DefaultDir        = ".dev"
	DefaultAPIAddress = "127.0.0.1:8000"
	DefaultNamespace  = "default"
	// RunnerImage is the runner pods' image; the local kubelet runs
	// Options.RunnerBinary for it.
	RunnerImage = "browserfleet.local/runner:dev"
	// K8sVersion is the control plane `make envtest` builds, as in the
	// Makefile and internal/testing/framework.
	K8sVersion = "1.37.1"
)

// LoopbackEgress is what the dev stack's runners may reach beyond the
// internet: this machine's loopback, where a local model server (Ollama)
// and the pages a developer serves live. It also lets pages reach every
// other loopback service of the machine, which a shared cluster never
// allows.
var LoopbackEgress = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// startWait bounds each wait for a part to be ready.
const startWait = 2 * time.Minute

// Options configure a stack. Every field has a default.
type Options struct {
	// Dir holds the stack's state (see the package documentation).
	// Default DefaultDir, relative to the working directory.
	Dir string
	// APIAddress is where the /v1 API listens. Default DefaultAPIAddress;
	// port 0 picks a free port (Stack.APIURL says which).
	APIAddress string
	// Namespace is the project the API key belongs to. Default
	// DefaultNamespace.
	Namespace string
	// RunnerBinary runs each runner pod. Default bin/runner of the
	// repository (`make build`).
	RunnerBinary string
	// ChromiumPath is the browser the runners launch. Default $CHROMIUM,
	// else chromium on PATH.
	ChromiumPath string
	// AssetsDir holds kube-apiserver, etcd and kubectl. Default
	// $KUBEBUILDER_ASSETS, else what `make envtest` builds.
	AssetsDir string
	// CRDDir holds the CRDs to install. Default config/crd/bases of the
	// repository.
	CRDDir string
	// Logger logs what the stack and its parts do. Default: discard.
	Logger logr.Logger
	// LogOutput, when set, gets the runners' and the control plane's
	// output as well as their files in Dir.
	LogOutput io.Writer
	// ModelBaseURLs are the manager's runner.modelBaseURLs:
	// by provider, the endpoint runners use when a session's model names
	// none (a local Ollama or vLLM, or a scripted model server in tests).
	ModelBaseURLs map[string]string
	// EgressAllowCIDRs are the manager's runner.egress.allowCIDRs
	// settings: the non-public ranges runners may connect to. Default
	// LoopbackEgress, as make dev; a suite that proves the egress gate
	// allows less.
	EgressAllowCIDRs []netip.Prefix
	// SessionSecretWait is the manager's sessions.secretWait. Default
	// the manager's.
	SessionSecretWait time.Duration
	// Quota is the API's and the manager's per-project session quota.
	// Default quota.DefaultConfig().
	Quota *quota.Config
	// OTLPEndpoint is an OpenTelemetry collector's OTLP/HTTP base URL,
	// such as http://127.0.0.1:4318: the API exports the spans of /v1
	// calls there, and the manager's runner.otlpEndpoint sends the
	// runners' there. Empty: runners export nothing, and the API exports
	// as this process's OTEL_* environment says.
	OTLPEndpoint string
	// CacheRedisAddress is the Redis (host:port) of the API's server-side
	// cache and the gateway's budgets (the API's --cache-redis-address).
	// Empty: the API's embedded store.
	CacheRedisAddress string
	// CacheRedisPasswordFile holds that Redis's password; empty: none.
	CacheRedisPasswordFile string
	// CacheEnabled is the API's --cache-enabled: the cache is on for
	// calls that do not say.
	CacheEnabled bool
	// Gateway, when set, runs the API with a model gateway (gateway.go).
	// Default: none.
	Gateway *Gateway
}

// Stack is a running dev stack. Make one with Start, end it with Stop.
type Stack struct {
	opts     Options
	log      logr.Logger
	lock     *os.File
	listener net.Listener
	env      *envtest.Environment
	logFiles []*os.File
	cfg      *rest.Config
	client   client.Client
	apiURL   string
	apiKey   string
	kubelet  *localkubelet.Kubelet
	registry *prometheus.Registry

	// runnerListener is the API's runner listener, on loopback;
	// servicesURL is its base URL, the manager's runner.servicesURL.
	runnerListener net.Listener
	servicesURL    string

	// runnerBinary is what the kubelet runs for runner pods:
	// Options.RunnerBinary, or the copy of it in runnerCopy (see
	// checkRunner).
	runnerBinary, runnerCopy string
	// gatewayKey is the dev key of Options.Gateway's providers.
	gatewayKey string

	// parts run in start order and stop in reverse.
	parts      []*part
	failed     chan error
	failOnce   sync.Once
	stopOnce   sync.Once
	stopResult error
}

// part is one component running in a goroutine until its context ends.
type part struct {
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Start checks the prerequisites, each failing with one line that says how
// to fix it, then brings the stack up and returns once the API answers. ctx
// bounds the start only: the stack runs until Stop. A failed Start leaves
// nothing running.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Stack{opts: opts, log: opts.Logger, failed: make(chan error, 1)}
	if err := s.start(ctx); err != nil {
		if stopErr := s.Stop(); stopErr != nil {
			s.log.Error(stopErr, "cleaning up after a failed start")
		}
		return nil, err
	}
	return s, nil
}

func (o Options) withDefaults() (Options, error) {
	root := repoRoot()
	if o.Dir == "" {
		o.Dir = DefaultDir
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return o, fmt.Errorf("resolving the state directory: %w", err)
	}
	o.Dir = dir
	if o.APIAddress == "" {
		o.APIAddress = DefaultAPIAddress
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.RunnerBinary == "" {
		o.RunnerBinary = filepath.Join(root, "bin", "runner")
	}
	if o.AssetsDir == "" {
		o.AssetsDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if o.AssetsDir == "" {
		o.AssetsDir = filepath.Join(root, "bin", "k8s", fmt.Sprintf("%s-%s-%s", K8sVersion, runtime.GOOS, runtime.GOARCH))
	}
	if o.CRDDir == "" {
		o.CRDDir = filepath.Join(root, "config", "crd", "bases")
	}
	if o.EgressAllowCIDRs == nil {
		o.EgressAllowCIDRs = LoopbackEgress
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.LogOutput != nil {
		// Several processes' output goes there at once.
		o.LogOutput = &lockedWriter{w: o.LogOutput}
	}
	return o, nil
}

// repoRoot is the repository this file is in: the binaries and CRDs are
// built and kept there.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func (s *Stack) start(ctx context.Context) error {
	if err := s.checkPrerequisites(); err != nil {
		return err
	}
	if err := s.startControlPlane(); err != nil {
		return err
	}
	if err := s.prepareState(ctx); err != nil {
		return err
	}
	if err := s.prepareGateway(); err != nil {
		return err
	}
	if err := s.startKubelet(ctx); err != nil {
		return err
	}
	if err := s.startManager(ctx); err != nil {
		return err
	}
	if err := s.startAPI(ctx); err != nil {
		return err
	}
	s.log.Info("dev stack is up", "api", s.apiURL, "dir", s.opts.Dir)
	return nil
}

// APIURL is the base URL of the /v1 API, e.g. http://127.0.0.1:8000.
func (s *Stack) APIURL() string { return s.apiURL }

// APIKey is the project's API key.
func (s *Stack) APIKey() string { return s.apiKey }

// Namespace is the project of APIKey.
func (s *Stack) Namespace() string { return s.opts.Namespace }

// Dir is the absolute state directory.
func (s *Stack) Dir() string { return s.opts.Dir }

// EnvPath is the env file, for `source`.
func (s *Stack) EnvPath() string { return filepath.Join(s.opts.Dir, "env") }

// KubeconfigPath is the cluster-admin kubeconfig.
func (s *Stack) KubeconfigPath() string { return filepath.Join(s.opts.Dir, "kubeconfig") }

// Config reaches the control plane as cluster admin.
func (s *Stack) Config() *rest.Config { return rest.CopyConfig(s.cfg) }

// ServicesURL is the base URL of the API's runner listener, which runners
// get as --services-url.
func (s *Stack) ServicesURL() string { return s.servicesURL }

// Kubelet is the local kubelet: runner processes' PIDs and logs.
func (s *Stack) Kubelet() *localkubelet.Kubelet { return s.kubelet }

// Metrics gathers the API's metrics.
func (s *Stack) Metrics() prometheus.Gatherer { return s.registry }

// Failed delivers the first error of a part that stopped on its own; the
// stack is then broken and should be stopped.
func (s *Stack) Failed() <-chan error { return s.failed }

// Stop stops the API, the manager, the kubelet (which ends every runner
// process and its Chromium) and the control plane, in that order, and
// returns once all are gone. The state in Dir stays. Stop may be called
// more than once.
func (s *Stack) Stop() error {
	s.stopOnce.Do(func() { s.stopResult = s.stop() })
	return s.stopResult
}

// Kill ends the stack at once, for a second Ctrl-C: SIGKILL to its etcd
// and kube-apiserver, which envtest started as children of their own. The
// runner processes need nothing: the kernel kills them when this process
// exits (their parent-death signal). The state in Dir stays as it was.
func (s *Stack) Kill() {
	for _, pid := range strayControlPlane(s.etcdDir()) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func (s *Stack) stop() error {
	var errs []error
	if len(s.parts) > 0 {
		s.log.Info("stopping the dev stack")
	}
	for i := len(s.parts) - 1; i >= 0; i-- {
		p := s.parts[i]
		p.cancel()
		<-p.done
		if p.err != nil && !errors.Is(p.err, context.Canceled) {
			errs = append(errs, fmt.Errorf("stopping the %s: %w", p.name, p.err))
		}
	}
	if s.env != nil {
		if err := s.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the control plane: %w", err))
		}
	}
	if s.listener != nil {
		// Serve closed it already, unless the API never started.
		_ = s.listener.Close()
	}
	if s.runnerListener != nil {
		_ = s.runnerListener.Close()
	}
	for _, f := range s.logFiles {
		_ = f.Close()
	}
	if s.runnerCopy != "" {
		// The kubelet, and every runner with it, stopped above.
		_ = os.RemoveAll(s.runnerCopy)
	}
	if s.lock != nil {
		_ = s.lock.Close() // releases the flock
	}
	if s.env != nil {
		s.log.Info("stopped the dev stack")
	}
	return errors.Join(errs...)
}

// run starts a part; f runs until its context ends.
func (s *Stack) run(name string, f func(context.Context) error) *part {
	ctx, cancel := context.WithCancel(context.Background())
	p := &part{name: name, cancel: cancel, done: make(chan struct{})}
	s.parts = append(s.parts, p)
	go func() {
		defer close(p.done)
		p.err = f(ctx)
		if ctx.Err() == nil {
			err := p.err
			if err == nil {
				err = errors.New("stopped")
			}
			s.fail(fmt.Errorf("the %s stopped on its own: %w", name, err))
		}
	}()
	return p
}

func (s *Stack) fail(err error) {
	s.failOnce.Do(func() { s.failed <- err })
}

// await waits until ready reports true, or fails when p stops first or ctx
// ends or startWait passes.
func await(ctx context.Context, p *part, ready func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if ready(ctx) {
		return nil
	}
	select {
	case <-p.done:
		return fmt.Errorf("the %s stopped while starting: %w", p.name, p.err)
	default:
		return fmt.Errorf("waiting for the %s: %w", p.name, ctx.Err())
	}
}

// pollReady polls url until it answers 200 or ctx ends.
func pollReady(ctx context.Context, url string) bool {
	// No proxy of the environment, no idle connections left behind.
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false
		}
		if resp, err := hc.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// lockedWriter serializes writes from several copiers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
