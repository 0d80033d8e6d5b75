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

// Package apiserver_test holds the /v1 API to its contract end to end: the
// real API server and manager against envtest's kube-apiserver, each runner
// pod run as a real runner process with Debian's Chromium by the local
// kubelet stand-in, and the scripted model server for model calls.
package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/browserfleet/browserfleet/controllers"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/devstack"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/internal/testing/redistest"
	"github.com/browserfleet/browserfleet/internal/testing/searchtest"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/search"
	"github.com/browserfleet/browserfleet/server"
	"github.com/browserfleet/browserfleet/server/apikey"
	"github.com/browserfleet/browserfleet/server/cdptoken"
	"github.com/browserfleet/browserfleet/server/metrics"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
	"github.com/browserfleet/browserfleet/store"
	testpages "github.com/browserfleet/browserfleet/test/util/pages"
)

// runnerImage is the runner pods' image; the local kubelet runs the runner
// binary the suite builds for it.
const runnerImage = "registry.test/browserfleet/runner:test"

var (
	fw        = &framework.Framework{}
	k8sClient client.Client
	model     *llmtest.Server
	api       *httptest.Server
	apiServer *server.Server
	registry  *prometheus.Registry
	validator *serverv1.Validator
	// pages serves the test pages that sessions browse.
	pages *httptest.Server
	// kubeletStateDir is the local kubelet's state directory: pods/ links
	// each pod's directory.
	kubeletStateDir string
	// newAPIServer makes another API server over the same cache, for specs
	// that stop theirs; apiOptions are its options.
	newAPIServer func() *server.Server
	apiOptions   server.Options

	// brave stands in for the operator's search provider, which the API
	// calls for the runners' search relay (relay).
	brave *searchtest.Brave
	// relay is the API's runner listener, which the runners reach by the
	// URL the manager gives them (the search relay, the cache's runner
	// paths); runnerListener is the API server's handler it serves, which
	// a spec may swap for another replica's.
	relay          *httptest.Server
	runnerListener atomic.Pointer[http.Handler]
	// redisServer holds the server-side cache's entries: a real
	// redis-server, which every API replica of the suite shares.
	redisServer *redistest.Server

	stopAPI     context.CancelFunc
	stopKubelet func()
	apiDone     = make(chan struct{})
)

// braveKey is the search provider's key, which only the API holds.
const braveKey = "brave-subscription-token-9c1e"

func TestAPIServer(t *testing.T) {
	if _, err := config.FindChromium(); err != nil {
		t.Fatalf("these tests drive a real browser: %v", err)
	}
	// The scripted model server needs the *testing.T: it fails the test on
	// a request it has no reply for.
	model = llmtest.NewServer(t)
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	RunSpecs(t, "API Server Suite")
}

var _ = BeforeSuite(func() {
	dir := GinkgoT().TempDir()
	kubeletStateDir = filepath.Join(dir, "kubelet")

	cfg := fw.Start()
	k8sClient = framework.Client(cfg)

	// The search provider, and the API's runner listener, which the
	// runners reach by the URL the manager gives them; it serves once the
	// API server exists.
	brave = searchtest.NewBrave(GinkgoT(), braveKey)
	relay = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := runnerListener.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "not yet", http.StatusServiceUnavailable)
	}))
	provider, err := search.New(search.Config{Provider: search.ProviderBrave, Endpoint: brave.URL, APIKey: braveKey})
	Expect(err).NotTo(HaveOccurred())

	// The manager pod, as in a cluster.
	opts := controllers.DefaultOptions()
	opts.Runner.SearchURL = relay.URL + search.RelayPath
	opts.Runner.ServicesURL = relay.URL
	opts.Runner.Image = runnerImage
	// The test pages and the scripted model server are on loopback, which
	// the runners' egress gate allows here as make dev does.
	opts.Runner.EgressAllowCIDRs = devstack.LoopbackEgress
	fw.StartManager(cfg, ctrl.Options{Cache: controllers.CacheOptions()}, func(ctx context.Context, mgr ctrl.Manager) error {
		return controllers.SetupWithManager(ctx, mgr, opts)
	})

	// The kubelet's part: each runner pod becomes a runner process.
	_, stopKubelet = framework.StartRunnerKubelet(cfg, kubeletStateDir, runnerImage)

	// The API pod, with the cache and wiring of cmd/api.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 framework.Scheme(),
		Cache:                  server.CacheOptions(nil),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	stopAPI = cancel
	auth, err := apikey.NewAuthenticator(ctx, mgr.GetFieldIndexer(), mgr.GetClient())
	Expect(err).NotTo(HaveOccurred())
	key, err := cdptoken.GenerateKey()
	Expect(err).NotTo(HaveOccurred())
	signer, err := cdptoken.NewSigner(key)
	Expect(err).NotTo(HaveOccurred())
	redisServer = redistest.Start(GinkgoT(), redistest.Options{})
	registry = prometheus.NewRegistry()
	m, err := metrics.New(registry, mgr.GetClient())
	Expect(err).NotTo(HaveOccurred())
	apiOptions = server.Options{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		Cache:         mgr.GetCache(),
		Authenticator: auth,
		Logger:        ctrl.Log.WithName("http"),
		Metrics:       m,
		CDPSigner:     signer,
		Search:        provider,
		// The cache is off unless a session or call turns it on, so that
		// the other specs' identical calls all run live.
		Store: redisStore(),
	}
	newAPIServer = func() *server.Server {
		s, err := server.New(apiOptions)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		return s
	}
	apiServer = newAPIServer()
	h, err := apiServer.RunnerHandler()
	Expect(err).NotTo(HaveOccurred())
	runnerListener.Store(&h)
	api = httptest.NewServer(apiServer)
	go func() {
		defer GinkgoRecover()
		defer close(apiDone)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue())

	validator, err = serverv1.NewValidator()
	Expect(err).NotTo(HaveOccurred())
	pages = testpages.Serve()
})

var _ = AfterSuite(func() {
	if api != nil {
		api.Close()
	}
	if relay != nil {
		relay.Close()
	}
	if pages != nil {
		pages.Close()
	}
	if stopAPI != nil {
		stopAPI()
		<-apiDone
	}
	if stopKubelet != nil {
		// Every runner process and its Chromium go with the kubelet.
		stopKubelet()
	}
	fw.Stop()
})

// redisStore is a store of its own (its own connections) on the suite's
// Redis, as each API replica has.
func redisStore() *store.Redis {
	GinkgoHelper()
	st, err := store.NewRedis(store.RedisOptions{Address: redisServer.Address})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(st.Close)
	return st
}

// project is a namespace with an API key.
type project = apitest.Project

// newProject makes a project and waits until the API accepts its key.
func newProject(ctx context.Context) project {
	GinkgoHelper()
	return apitest.NewProject(ctx, k8sClient, api.Client(), api.URL)
}

// response is a finished request.
type response = apitest.Response

// do makes one request.
func do(method, path, key, body string, headers map[string]string) response {
	GinkgoHelper()
	return apitest.Do(context.Background(), api.Client(), api.URL, method, path, key, body, headers)
}

func doCtx(ctx context.Context, method, path, key, body string, headers map[string]string) response {
	GinkgoHelper()
	return apitest.Do(ctx, api.Client(), api.URL, method, path, key, body, headers)
}

// documented checks a reply against the OpenAPI document: the handlers may
// answer only what it says they answer.
func documented(method, pattern string, r response) {
	ExpectWithOffset(1, validator.ValidateResponse(method, pattern, r.Status, r.ContentType, r.Raw)).
		To(Succeed(), "%s %s answered %d %s", method, pattern, r.Status, r.Raw)
}

// frame is one SSE frame.
type frame struct {
	Event string
	Data  struct {
		Data map[string]any `json:"data"`
		Type string         `json:"type"`
		ID   string         `json:"id"`
	}
}

// frames parses an SSE body, skipping comments.
func frames(raw []byte) []frame {
	var out []frame
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var f frame
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			f.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ExpectWithOffset(1, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &f.Data)).To(Succeed(), "frame %q", line)
		case line == "" && f.Event != "":
			out = append(out, f)
			f = frame{}
		}
	}
	return out
}

// events lists the frames' event names.
func events(fs []frame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Event
	}
	return out
}

// startSession starts a session over /v1 and returns its id.
func startSession(p project, body string) string {
	if body == "" {
		body = `{"modelName": "openai/gpt-test"}`
	}
	r := do(http.MethodPost, "/v1/sessions/start", p.Key, body, nil)
	ExpectWithOffset(1, r.Status).To(Equal(http.StatusOK), "start: %s", r.Raw)
	return r.Data()["sessionId"].(string)
}

// modelOption is a per-call model config that reaches the scripted server.
func modelOption() string {
	return fmt.Sprintf(`{"modelName": "openai/gpt-test", "baseURL": %q, "apiKey": "sk-test-key"}`, model.BaseURL(llmtest.OpenAI))
}

// pageURL is the URL of a test page.
func pageURL(name string) string { return pages.URL + "/" + name }

var _ = os.Getenv
