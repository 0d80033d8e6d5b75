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

// Package attack_test plays a tenant who attacks the service with an
// ordinary project key, as issue 10 found it could: on the stack `make dev`
// runs (internal/devstack: kube-apiserver and etcd, the manager, the /v1 API,
// and a runner process with Debian's Chromium for each session), over /v1
// and with kubectl. Each finding of the issue is one entry of a table; each
// attack is refused or converges, and a refused request creates and changes
// nothing.
//
// Network: every address is this machine's loopback. The runners may reach
// only pageIP, where the suite's pages and scripted model server listen; the
// canaries listen on other loopback addresses and must see nothing. The
// metadata and private ranges are covered by unit tests of the address
// check (runner/egress), never by sending them a packet.
package attack_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/devstack"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/runner/config"
)

const (
	// pageIP is the one address the runners may reach: the suite's pages
	// and its model server.
	pageIP = "127.0.0.2"
	// canaryIP is where "localhost" leads (/etc/hosts, no DNS query).
	canaryIP = "127.0.0.1"
)

var (
	model  *llmtest.Server
	stack  *devstack.Stack
	k8s    client.Client
	pages  *pageServer
	canary *tcpCanary
)

func TestAttacks(t *testing.T) {
	if _, err := config.FindChromium(); err != nil {
		t.Fatalf("the attack suite drives a real browser: %v", err)
	}
	model = llmtest.NewServerOn(t, pageIP+":0")
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "Attack Suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	canary = newTCPCanary(canaryIP)
	pages = newPageServer(pageIP)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	stack, err = devstack.Start(ctx, devstack.Options{
		Dir:              filepath.Join(GinkgoT().TempDir(), ".dev"),
		APIAddress:       "127.0.0.1:0",
		RunnerBinary:     framework.BuildRunner(),
		Logger:           ctrl.Log.WithName("devstack"),
		LogOutput:        GinkgoWriter,
		ModelBaseURLs:    map[string]string{llmtest.OpenAI: model.BaseURL(llmtest.OpenAI)},
		EgressAllowCIDRs: []netip.Prefix{netip.MustParsePrefix(pageIP + "/32")},
		// A refused Secret reference fails after this wait.
		SessionSecretWait: 10 * time.Second,
		Quota:             &attackQuota,
	})
	Expect(err).NotTo(HaveOccurred())
	k8s = framework.Client(stack.Config())
})

var _ = AfterSuite(func() {
	if stack != nil {
		Expect(stack.Stop()).To(Succeed())
	}
	if pages != nil {
		pages.Close()
	}
	if canary != nil {
		canary.Close()
	}
})

// do makes one /v1 call with key.
func do(method, path, key, body string, headers map[string]string) apitest.Response {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return apitest.Do(ctx, http.DefaultClient, stack.APIURL(), method, path, key, body, headers)
}

// attackQuota is the stack's quota: small, so that an attack fills it.
var attackQuota = quota.Config{Default: quota.Limits{ConcurrentSessions: 6, LiveSessions: 12}}

// project is the attacker's: the dev stack's namespace and its key.
func project() apitest.Project {
	return apitest.Project{Namespace: stack.Namespace(), Key: stack.APIKey()}
}

// tcpCanary is a loopback server that must never be reached: it counts the
// connections it accepts.
type tcpCanary struct {
	ln       net.Listener
	accepted atomic.Int64
}

func newTCPCanary(ip string) *tcpCanary {
	GinkgoHelper()
	ln, err := net.Listen("tcp", ip+":0")
	Expect(err).NotTo(HaveOccurred())
	c := &tcpCanary{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.accepted.Add(1)
			_ = conn.Close()
		}
	}()
	return c
}

// hostPort is the canary's address, host:port.
func (c *tcpCanary) hostPort() string { return c.ln.Addr().String() }

// port is the canary's port.
func (c *tcpCanary) port() string {
	_, p, _ := net.SplitHostPort(c.ln.Addr().String())
	return p
}

func (c *tcpCanary) Close() { _ = c.ln.Close() }

// untouched says the canary has accepted no connection yet.
func (c *tcpCanary) untouched() {
	GinkgoHelper()
	Expect(c.accepted.Load()).To(BeZero(), "the canary at %s was reached", c.hostPort())
}

// closedPort is a port on ip where nothing listens.
func closedPort(ip string) string {
	GinkgoHelper()
	ln, err := net.Listen("tcp", ip+":0")
	Expect(err).NotTo(HaveOccurred())
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	Expect(ln.Close()).To(Succeed())
	return p
}

// pageServer serves the attack pages on pageIP; handlers are added per
// attack under their own path.
type pageServer struct {
	*http.Server
	ln  net.Listener
	mu  sync.Mutex
	mux *http.ServeMux
}

func newPageServer(ip string) *pageServer {
	GinkgoHelper()
	ln, err := net.Listen("tcp", ip+":0")
	Expect(err).NotTo(HaveOccurred())
	ps := &pageServer{ln: ln, mux: http.NewServeMux()}
	ps.Server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		mux := ps.mux
		ps.mu.Unlock()
		mux.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = ps.Serve(ln) }()
	return ps
}

// handle serves h at path (a pattern of http.ServeMux) from now on.
func (ps *pageServer) handle(path string, h http.HandlerFunc) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.mux.HandleFunc(path, h)
}

// url is the page server's URL for path.
func (ps *pageServer) url(path string) string { return "http://" + ps.ln.Addr().String() + path }
