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

package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/browserfleet/browserfleet/controllers"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/server"
	"github.com/browserfleet/browserfleet/server/apikey"
	"github.com/browserfleet/browserfleet/server/cdptoken"
)

// shortStartTimeout is the start timeout of the second server, which no
// kubelet ever satisfies.
const shortStartTimeout = time.Second

// theProject is the one project namespace of apiProjects.
const theProject = "bf-the-project"

var (
	fw        = &framework.Framework{}
	k8sClient client.Client
	kubelet   framework.Kubelet
	// api serves server.New as the API pod would; apiShort is the same
	// server with shortStartTimeout.
	api, apiShort *httptest.Server
	// apiFaulty's client fails creates as faults says.
	apiFaulty *httptest.Server
	faults    faultyCreates
	// apiProjects serves only theProject, and waits a second for a body.
	apiProjects *httptest.Server
	// apiCDP signs cdpUrls; apiReads counts its reads past the cache.
	apiCDP   *httptest.Server
	apiReads countingReader
	stopAPI  context.CancelFunc
	apiDone  = make(chan struct{})
	// newServer makes one more API server, as api is with the options
	// more changes, on the same cache.
	newServer func(more ...func(*server.Options)) *server.Server
)

func TestServer(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	SetDefaultConsistentlyDuration(time.Second)
	RunSpecs(t, "Server Suite")
}

var _ = BeforeSuite(func() {
	cfg := fw.Start()
	k8sClient = framework.Client(cfg)
	kubelet = framework.Kubelet{Client: k8sClient}

	// The manager pod: the real session controller.
	opts := controllers.DefaultOptions()
	opts.Runner.Image = "registry.test/browserfleet/runner:test"
	fw.StartManager(cfg, ctrl.Options{Cache: controllers.CacheOptions()}, func(ctx context.Context, mgr ctrl.Manager) error {
		return controllers.SetupWithManager(ctx, mgr, opts)
	})

	// The API pod: a manager of its own with the API's cache, as cmd/api
	// builds it, so that the specs exercise that cache's selection.
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
	newHandler := func(startTimeout time.Duration, c client.Client, more ...func(*server.Options)) *server.Server {
		opts := server.Options{
			Client:        c,
			APIReader:     mgr.GetAPIReader(),
			Cache:         mgr.GetCache(),
			Authenticator: auth,
			StartTimeout:  startTimeout,
			Logger:        ctrl.Log.WithName("http"),
		}
		for _, m := range more {
			m(&opts)
		}
		h, err := server.New(opts)
		Expect(err).NotTo(HaveOccurred())
		return h
	}
	newServer = func(more ...func(*server.Options)) *server.Server {
		return newHandler(0, mgr.GetClient(), more...)
	}
	api = httptest.NewServer(newHandler(0, mgr.GetClient()))
	apiShort = httptest.NewServer(newHandler(shortStartTimeout, mgr.GetClient()))
	apiFaulty = httptest.NewServer(newHandler(shortStartTimeout, faultyClient{Client: mgr.GetClient(), faults: &faults}))
	signingKey, err := cdptoken.GenerateKey()
	Expect(err).NotTo(HaveOccurred())
	signer, err := cdptoken.NewSigner(signingKey)
	Expect(err).NotTo(HaveOccurred())
	apiProjects = httptest.NewServer(newHandler(0, mgr.GetClient(), func(o *server.Options) {
		o.Projects = []string{theProject}
		o.BodyReadTimeout = time.Second
	}))
	apiCDP = httptest.NewServer(newHandler(0, mgr.GetClient(), func(o *server.Options) {
		o.CDPSigner = signer
		o.APIReader = &apiReads
		apiReads.Reader = mgr.GetAPIReader()
	}))
	go func() {
		defer GinkgoRecover()
		defer close(apiDone)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue())
})

var _ = AfterSuite(func() {
	if api != nil {
		api.Close()
		apiShort.Close()
		apiFaulty.Close()
		apiCDP.Close()
		apiProjects.Close()
	}
	if stopAPI != nil {
		stopAPI()
		<-apiDone
	}
	fw.Stop()
})

// project is a namespace with an API key.
type project = apitest.Project

// newProject makes a project and waits until the API accepts its key.
func newProject(ctx context.Context) project {
	GinkgoHelper()
	return apitest.NewProject(ctx, k8sClient, api.Client(), api.URL)
}

// call makes one request and decodes the JSON reply into a map.
func call(srv *httptest.Server, method, path, key, body string, headers map[string]string) (int, map[string]any) {
	status, raw := callRaw(srv, method, path, key, body, headers)
	var m map[string]any
	ExpectWithOffset(2, json.Unmarshal(raw, &m)).To(Succeed(), "reply %q", raw)
	return status, m
}

// callRaw makes one request and returns the reply's status and bytes.
func callRaw(srv *httptest.Server, method, path, key, body string, headers map[string]string) (int, []byte) {
	status, raw, _ := callFull(srv, method, path, key, body, headers)
	return status, raw
}

// callFull makes one request and returns the reply's status, bytes and
// headers.
func callFull(srv *httptest.Server, method, path, key, body string, headers map[string]string) (int, []byte, http.Header) {
	req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+path, bytes.NewBufferString(body))
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	if key != "" {
		req.Header.Set("x-svc-api-key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	ExpectWithOffset(2, resp.Header.Get("Content-Type")).To(Equal("application/json"))
	return resp.StatusCode, raw, resp.Header
}

// reply is a finished request of startAsync.
type reply struct {
	status int
	body   map[string]any
}

// startAsync starts a session in the background: start only answers once
// the test has played the kubelet.
func startAsync(srv *httptest.Server, key, body string, headers map[string]string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		defer GinkgoRecover()
		st, m := call(srv, http.MethodPost, "/v1/sessions/start", key, body, headers)
		out <- reply{st, m}
	}()
	return out
}

// runnerPod waits for the project's one runner pod that the kubelet has not
// run yet, and returns its key.
func runnerPod(ctx context.Context, ns string) types.NamespacedName {
	var fresh []corev1.Pod
	EventuallyWithOffset(1, func(g Gomega) {
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
		fresh = nil
		for _, pod := range pods.Items {
			if pod.Status.Phase == "" || pod.Status.Phase == corev1.PodPending {
				fresh = append(fresh, pod)
			}
		}
		g.Expect(fresh).To(HaveLen(1))
	}).Should(Succeed())
	return client.ObjectKeyFromObject(&fresh[0])
}

// startReady starts a session and plays the kubelet until it is Ready; it
// returns the session id.
func startReady(ctx context.Context, p project, body string, headers map[string]string) string {
	done := startAsync(api, p.Key, body, headers)
	ExpectWithOffset(1, kubelet.Run(ctx, runnerPod(ctx, p.Namespace), true)).To(Succeed())
	var r reply
	EventuallyWithOffset(1, done).Should(Receive(&r))
	ExpectWithOffset(1, r.status).To(Equal(http.StatusOK), "%v", r.body)
	return r.body["data"].(map[string]any)["sessionId"].(string)
}

// faultyCreates holds the fault of the next creates of apiFaulty's client:
// given the object and the real create, what the API server is to answer.
type faultyCreates struct {
	mu    sync.Mutex
	fault func(ctx context.Context, obj client.Object, create func() error) error
}

func (f *faultyCreates) set(fault func(ctx context.Context, obj client.Object, create func() error) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fault
}

// faultyClient is a client whose creates fail as its faults say.
type faultyClient struct {
	client.Client
	faults *faultyCreates
}

func (c faultyClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.faults.mu.Lock()
	fault := c.faults.fault
	c.faults.mu.Unlock()
	create := func() error { return c.Client.Create(ctx, obj, opts...) }
	if fault == nil {
		return create()
	}
	return fault(ctx, obj, create)
}

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	n atomic.Int64
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.n.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.n.Add(1)
	return c.Reader.List(ctx, list, opts...)
}
