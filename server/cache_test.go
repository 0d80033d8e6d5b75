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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/internal/testing/redistest"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/runnertoken"
	"github.com/browserfleet/browserfleet/server"
	"github.com/browserfleet/browserfleet/server/metrics"
	"github.com/browserfleet/browserfleet/store"
)

// cacheKey is a key as engine/cached makes them: a hex SHA-256.
func cacheKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func getBody(key string, threshold int64) string {
	return fmt.Sprintf(`{"key":%q,"threshold":%d}`, key, threshold)
}

func setBody(key, method, value string) string {
	return fmt.Sprintf(`{"key":%q,"entry":{"method":%q,"value":%s,"usage":{"inputTokens":120,"outputTokens":30}}}`, key, method, value)
}

// getReply decodes a cache get's 200.
func getReply(raw []byte) cache.GetResponse {
	GinkgoHelper()
	var r cache.GetResponse
	Expect(json.Unmarshal(raw, &r)).To(Succeed(), "%s", raw)
	return r
}

// cacheGet asks srv's cache with key.
func cacheGet(srv *httptest.Server, apiKey, key string, threshold int64) cache.GetResponse {
	GinkgoHelper()
	st, raw := callRaw(srv, http.MethodPost, cache.PathGet, apiKey, getBody(key, threshold), nil)
	Expect(st).To(Equal(http.StatusOK), "%s", raw)
	return getReply(raw)
}

// cacheSet stores an act entry under key.
func cacheSet(srv *httptest.Server, apiKey, key, value string) {
	GinkgoHelper()
	st, raw := callRaw(srv, http.MethodPost, cache.PathSet, apiKey, setBody(key, "act", value), nil)
	Expect(st).To(Equal(http.StatusOK), "%s", raw)
	Expect(strings.TrimSpace(string(raw))).To(Equal(`{"success":true}`))
}

var notCached = func(count int64) cache.GetResponse {
	return cache.GetResponse{Count: count, Threshold: 1, MissReason: cache.MissNotCached}
}

var _ = Describe("the cache endpoints", Ordered, func() {
	var (
		redis *redistest.Server
		// apiA and apiB are two replicas on one Redis; apiMem has the
		// embedded store, apiDead a Redis nobody serves.
		apiA, apiB, apiMem, apiDead *httptest.Server
		// runnersA is apiA's runner listener.
		runnersA *httptest.Server
		regA     *prometheus.Registry
	)

	serve := func(s *server.Server) *httptest.Server {
		srv := httptest.NewServer(s)
		DeferCleanup(srv.Close)
		return srv
	}
	withStore := func(st store.Store, reg prometheus.Registerer) func(*server.Options) {
		return func(o *server.Options) {
			o.Store = st
			if reg != nil {
				m, err := metrics.New(reg, nil)
				Expect(err).NotTo(HaveOccurred())
				o.Metrics = m
			}
		}
	}
	newRedis := func(addr string) store.Store {
		st, err := store.NewRedis(store.RedisOptions{Address: addr})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		return st
	}

	BeforeAll(func() {
		redis = redistest.Start(GinkgoT(), redistest.Options{})
		regA = prometheus.NewRegistry()
		sA := newServer(withStore(newRedis(redis.Address), regA))
		apiA = serve(sA)
		apiB = serve(newServer(withStore(newRedis(redis.Address), nil)))
		apiMem = serve(newServer(withStore(store.NewMemory(store.MemoryOptions{}), nil)))
		// A port nobody listens on: taken, then given back.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		dead := l.Addr().String()
		Expect(l.Close()).To(Succeed())
		apiDead = serve(newServer(withStore(newRedis(dead), nil)))
		h, err := sA.RunnerHandler()
		Expect(err).NotTo(HaveOccurred())
		runnersA = httptest.NewServer(h)
		DeferCleanup(runnersA.Close)
	})

	It("misses, then hits once the key has been seen threshold times, on either store", func(ctx SpecContext) {
		for _, srv := range []*httptest.Server{apiA, apiMem} {
			p := newProject(ctx)
			k := cacheKey("act " + p.Namespace)
			Expect(cmp.Diff(notCached(1), cacheGet(srv, p.Key, k, 1))).To(BeEmpty())
			cacheSet(srv, p.Key, k, `[{"selector":"xpath=/html/body/button","method":"click"}]`)
			Expect(cmp.Diff(cache.GetResponse{Count: 2, Threshold: 3, MissReason: cache.MissBelowThreshold}, cacheGet(srv, p.Key, k, 3))).To(BeEmpty())
			got := cacheGet(srv, p.Key, k, 2)
			Expect(got.Hit).To(BeTrue())
			Expect(got.Count).To(BeEquivalentTo(3))
			Expect(got.Entry).NotTo(BeNil())
			Expect(got.Entry.Method).To(Equal("act"))
			Expect(string(got.Entry.Value)).To(MatchJSON(`[{"selector":"xpath=/html/body/button","method":"click"}]`))
			Expect(got.Entry.Usage).To(Equal(cache.Usage{InputTokens: 120, OutputTokens: 30}))
		}
	})

	It("keeps projects apart", func(ctx SpecContext) {
		p1, p2 := newProject(ctx), newProject(ctx)
		k := cacheKey("shared instruction")
		cacheSet(apiA, p1.Key, k, `{"answer":"p1's"}`)
		Expect(cmp.Diff(notCached(1), cacheGet(apiA, p2.Key, k, 1))).To(BeEmpty(), "another project's entry")
		Expect(cacheGet(apiA, p1.Key, k, 1).Hit).To(BeFalse(), "p2's lookup did not count for p1")
		Expect(cacheGet(apiA, p1.Key, k, 1).Hit).To(BeTrue())
	})

	It("serves, from one Redis, every replica the same counts and entries", func(ctx SpecContext) {
		p := newProject(ctx)
		k := cacheKey("replicas")
		Expect(cmp.Diff(notCached(1), cacheGet(apiA, p.Key, k, 1))).To(BeEmpty())
		cacheSet(apiA, p.Key, k, `["x"]`)
		got := cacheGet(apiB, p.Key, k, 1)
		Expect(got.Hit).To(BeTrue(), "replica B serves A's entry")
		Expect(got.Count).To(BeEquivalentTo(2), "and counts on from A's count")
		// The embedded store is this process's only.
		Expect(cmp.Diff(notCached(1), cacheGet(apiMem, p.Key, k, 1))).To(BeEmpty())
	})

	It("refuses a bad body with a 400 naming the field, and changes nothing", func(ctx SpecContext) {
		p := newProject(ctx)
		k := cacheKey("refused")
		for _, tc := range []struct {
			path, body, issuePath string
		}{
			{cache.PathGet, `{"key":"abc","threshold":1}`, "key"},
			{cache.PathGet, fmt.Sprintf(`{"key":%q,"threshold":0}`, k), "threshold"},
			{cache.PathGet, fmt.Sprintf(`{"key":%q,"threshold":1001}`, k), "threshold"},
			{cache.PathGet, fmt.Sprintf(`{"key":%q,"threshold":"1"}`, k), "threshold"},
			{cache.PathGet, fmt.Sprintf(`{"key":%q,"threshold":1,"model":"x"}`, k), "model"},
			{cache.PathGet, fmt.Sprintf(`{"Key":%q,"threshold":1}`, k), "Key"},
			{cache.PathGet, fmt.Sprintf(`{"key":%q,"key":%q,"threshold":1}`, k, k), ""},
			{cache.PathGet, ``, ""},
			{cache.PathGet, `[]`, ""},
			{cache.PathSet, setBody(strings.ToUpper(k), "act", `[1]`), "key"},
			{cache.PathSet, setBody(k, "navigate", `[1]`), "entry.method"},
			{cache.PathSet, setBody(k, "act", `null`), "entry.value"},
			{cache.PathSet, fmt.Sprintf(`{"key":%q,"entry":{"method":"act"}}`, k), "entry.value"},
			{cache.PathSet, fmt.Sprintf(`{"key":%q,"entry":{"method":"act","value":[1],"usage":{"inputTokens":-1}}}`, k), "entry.usage.inputTokens"},
			{cache.PathSet, fmt.Sprintf(`{"key":%q,"entry":{"method":"act","value":[1],"usage":{"inputTokens":1.5}}}`, k), "entry.usage.inputTokens"},
			{cache.PathSet, fmt.Sprintf(`{"key":%q,"entry":{"method":"act","value":[1],"extra":1}}`, k), "entry.extra"},
			{cache.PathSet, fmt.Sprintf(`{"key":%q,"entry":{"method":"act","value":[1]},"threshold":1}`, k), "threshold"},
		} {
			st, body := call(apiA, http.MethodPost, tc.path, p.Key, tc.body, nil)
			Expect(st).To(Equal(http.StatusBadRequest), "%s %s: %v", tc.path, tc.body, body)
			Expect(body).To(HaveKeyWithValue("code", server.CodeInvalidRequest))
			Expect(body["issues"]).To(ContainElement(HaveKeyWithValue("path", tc.issuePath)), "%s %s: %v", tc.path, tc.body, body)
		}
		Expect(cmp.Diff(notCached(1), cacheGet(apiA, p.Key, k, 1))).To(BeEmpty(), "no refused get counted, no refused set stored")
	})

	It("refuses an entry over the bound with a 413, and keeps the entry it had", func(ctx SpecContext) {
		p := newProject(ctx)
		k := cacheKey("large")
		Expect(cmp.Diff(notCached(1), cacheGet(apiA, p.Key, k, 1))).To(BeEmpty())
		cacheSet(apiA, p.Key, k, `"small"`)
		// An entry over the bound in a body under the endpoint's.
		value := `"` + strings.Repeat("x", cache.MaxEntryBytes) + `"`
		st, body := call(apiA, http.MethodPost, cache.PathSet, p.Key, setBody(k, "extract", value), nil)
		Expect(st).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(body).To(HaveKeyWithValue("code", server.CodePayloadTooLarge))
		Expect(body["error"]).To(ContainSubstring(fmt.Sprint(cache.MaxEntryBytes)))
		// A body over the endpoint's bound.
		value = `"` + strings.Repeat("x", cache.MaxBodyBytes) + `"`
		st, body = call(apiA, http.MethodPost, cache.PathSet, p.Key, setBody(k, "extract", value), nil)
		Expect(st).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(body).To(HaveKeyWithValue("code", server.CodePayloadTooLarge))

		got := cacheGet(apiA, p.Key, k, 1)
		Expect(got.Hit).To(BeTrue())
		Expect(string(got.Entry.Value)).To(Equal(`"small"`))
	})

	It("takes an entry of the bound, though the API's own body bound is smaller", func(ctx SpecContext) {
		p := newProject(ctx)
		k := cacheKey("at the bound")
		// The entry's JSON is exactly cache.MaxEntryBytes.
		shell := len(fmt.Sprintf(`{"method":"extract","value":"","usage":{"inputTokens":120,"outputTokens":30}}`))
		value := `"` + strings.Repeat("y", cache.MaxEntryBytes-shell) + `"`
		st, raw := callRaw(apiA, http.MethodPost, cache.PathSet, p.Key, setBody(k, "extract", value), nil)
		Expect(st).To(Equal(http.StatusOK), "%.300s", raw)
	})

	It("answers 401 to a missing or wrong key, and changes nothing", func(ctx SpecContext) {
		p := newProject(ctx)
		k := cacheKey("401")
		for _, key := range []string{"", "bf_wrong"} {
			st, raw := callRaw(apiA, http.MethodPost, cache.PathSet, key, setBody(k, "act", `[1]`), nil)
			Expect(st).To(Equal(http.StatusUnauthorized))
			Expect(strings.TrimSpace(string(raw))).To(Equal(unauthorized))
			st, _ = callRaw(apiA, http.MethodPost, cache.PathGet, key, getBody(k, 1), nil)
			Expect(st).To(Equal(http.StatusUnauthorized))
		}
		Expect(cmp.Diff(notCached(1), cacheGet(apiA, p.Key, k, 1))).To(BeEmpty())
	})

	It("answers 503 CACHE_UNAVAILABLE without a store, and when the store does not answer", func(ctx SpecContext) {
		p := newProject(ctx)
		k := cacheKey("503")
		for _, tc := range []struct {
			srv     *httptest.Server
			message string
		}{
			{api, "the server-side cache is not configured"},
			{apiDead, "the cache's store did not answer; run live and retry later"},
		} {
			for _, req := range [][2]string{{cache.PathGet, getBody(k, 1)}, {cache.PathSet, setBody(k, "act", `[1]`)}} {
				st, body := call(tc.srv, http.MethodPost, req[0], p.Key, req[1], nil)
				Expect(st).To(Equal(http.StatusServiceUnavailable))
				Expect(body).To(Equal(map[string]any{"success": false, "code": server.CodeCacheUnavailable, "error": tc.message}))
			}
		}
	})

	Context("on the runner listener", func() {
		It("writes into the session's project with its runner's token, and refuses any other caller", func(ctx SpecContext) {
			p, other := newProject(ctx), newProject(ctx)
			id := startReady(ctx, p, startBody, nil)
			token, err := runnertoken.Read(ctx, k8sClient, session(ctx, p.Namespace, id))
			Expect(err).NotTo(HaveOccurred())
			runner := func(sessionName, tok, path, body string) (int, map[string]any) {
				return call(runnersA, http.MethodPost, path, "", body, map[string]string{
					rpc.HeaderRunnerSession: sessionName,
					"Authorization":         rpc.AuthorizationScheme + " " + tok,
				})
			}
			k := cacheKey("runner")

			// Refused: a wrong token, another project's name with this
			// token, an unknown session, no token.
			for _, c := range [][2]string{
				{p.Namespace + "/" + id, token + "x"},
				{other.Namespace + "/" + id, token},
				{p.Namespace + "/no-such-session", token},
				{p.Namespace + "/" + id, ""},
			} {
				st, body := runner(c[0], c[1], cache.RunnerPathSet, setBody(k, "act", `["wrong"]`))
				Expect(st).To(Equal(http.StatusUnauthorized), "%v", c)
				Expect(body).To(HaveKeyWithValue("code", server.CodeUnauthorized))
				Expect(body["error"]).To(ContainSubstring("serves runners only"))
			}
			Expect(cmp.Diff(notCached(1), cacheGet(apiA, p.Key, k, 1))).To(BeEmpty(), "a refused runner call stored nothing")

			st, body := runner(p.Namespace+"/"+id, token, cache.RunnerPathSet, setBody(k, "act", `["right"]`))
			Expect(st).To(Equal(http.StatusOK), "%v", body)
			st, body = runner(p.Namespace+"/"+id, token, cache.RunnerPathGet, getBody(k, 1))
			Expect(st).To(Equal(http.StatusOK), "%v", body)
			Expect(body).To(HaveKeyWithValue("hit", true))
			Expect(body).To(HaveKeyWithValue("count", BeEquivalentTo(2)), "the runner counts on the project's count")
			// The project's key sees what its runner wrote; the other
			// project does not.
			got := cacheGet(apiA, p.Key, k, 1)
			Expect(got.Hit).To(BeTrue())
			Expect(string(got.Entry.Value)).To(Equal(`["right"]`))
			Expect(cmp.Diff(notCached(1), cacheGet(apiA, other.Key, k, 1))).To(BeEmpty())

			// A bad body is the same 400 as on /v1.
			st, body = runner(p.Namespace+"/"+id, token, cache.RunnerPathGet, getBody("nope", 1))
			Expect(st).To(Equal(http.StatusBadRequest))
			Expect(body["issues"]).To(ContainElement(HaveKeyWithValue("path", "key")))
		})
	})

	It("counts requests by operation and outcome", func() {
		// What the specs above did on apiA (runner listener included),
		// as browserfleet_cache_requests_total.
		n := func(op, outcome string) float64 {
			GinkgoHelper()
			mfs, err := regA.Gather()
			Expect(err).NotTo(HaveOccurred())
			for _, mf := range mfs {
				if mf.GetName() != "browserfleet_cache_requests_total" {
					continue
				}
				for _, m := range mf.GetMetric() {
					labels := map[string]string{}
					for _, l := range m.GetLabel() {
						labels[l.GetName()] = l.GetValue()
					}
					if labels["operation"] == op && labels["outcome"] == outcome {
						return m.GetCounter().GetValue()
					}
				}
			}
			return 0
		}
		Expect(n(metrics.CacheGet, metrics.CacheHit)).To(BeNumerically(">=", 4))
		Expect(n(metrics.CacheGet, metrics.CacheMiss)).To(BeNumerically(">=", 6))
		Expect(n(metrics.CacheGet, metrics.CacheRefused)).To(BeNumerically("==", 10))
		Expect(n(metrics.CacheSet, metrics.CacheStored)).To(BeNumerically(">=", 5))
		Expect(n(metrics.CacheSet, metrics.CacheRefused)).To(BeNumerically("==", 10))
		Expect(testutil.CollectAndCount(regA, "browserfleet_cache_requests_total")).To(Equal(5), "get hit, miss, refused; set stored, refused")
	})
})
