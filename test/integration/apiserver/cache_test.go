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

package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/server"
)

// The server-side cache through /v1: real runner processes and Chromium,
// the suite's real redis-server as the store, and the scripted model,
// which counts the requests a hit spares.

// signUp is the instruction the cache specs act with on form.html.
const signUp = "click the sign-up button"

// actBody is an act body with the scripted model and, unless empty, the
// options.cache and more body fields.
func actBody(instruction, cacheOption, more string) string {
	opts := `"model": ` + modelOption()
	if cacheOption != "" {
		opts += `, "cache": ` + cacheOption
	}
	return fmt.Sprintf(`{"input": %q, "options": {%s}%s}`, instruction, opts, more)
}

// cachedAct acts on the session through the API at baseURL and checks
// the reply against the document.
func cachedAct(api *httptest.Server, p project, id, body string, headers map[string]string) response {
	GinkgoHelper()
	r := apitest.Do(context.Background(), api.Client(), api.URL, http.MethodPost, "/v1/sessions/"+id+"/act", p.Key, body, headers)
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	documented(http.MethodPost, "/v1/sessions/{id}/act", r)
	Expect(r.Data()["result"]).To(HaveKeyWithValue("success", true), "%s", r.Raw)
	return r
}

// metadataOf is a reply's data.metadata.
func metadataOf(r response) map[string]any {
	GinkgoHelper()
	md, ok := r.Data()["metadata"].(map[string]any)
	Expect(ok).To(BeTrue(), "no metadata in %s", r.Raw)
	return md
}

// cacheOf is a reply's data.metadata.cache.
func cacheOf(r response) map[string]any {
	GinkgoHelper()
	return metadataOf(r)["cache"].(map[string]any)
}

// miss and hit are the cache reports of a MISS and of a HIT.
func miss(count, threshold int, reason string) map[string]any {
	return map[string]any{"status": "MISS", "count": float64(count), "threshold": float64(threshold), "missReason": reason}
}

func hit(count, threshold int, in, out int64) map[string]any {
	return map[string]any{"status": "HIT", "count": float64(count), "threshold": float64(threshold),
		"tokensSaved": map[string]any{"inputTokens": float64(in), "outputTokens": float64(out), "totalTokens": float64(in + out)}}
}

var disabled = map[string]any{"status": "DISABLED"}

// noUsage is the usage of a call that asked no model.
var noUsage = map[string]any{"inputTokens": float64(0), "outputTokens": float64(0), "reasoningTokens": float64(0), "cachedInputTokens": float64(0), "inferenceTimeMs": float64(0)}

// loadOn (re)loads url in the session through the API at baseURL: the
// same content rendered anew, with new node ids.
func loadOn(api *httptest.Server, p project, id, url string) {
	GinkgoHelper()
	r := apitest.Do(context.Background(), api.Client(), api.URL, http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, url), nil)
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
}

// enqueueSignUp scripts the model's answer to signUp on form.html as the
// session shows it, with the usage it reports.
func enqueueSignUp(p project, id string, in, out int64) {
	GinkgoHelper()
	model.Enqueue(actAnswer(elementID(pageText(p, id), "button: Sign up"), "click").WithUsage(in, out))
}

// signedUp reports whether the form was submitted: the act, live or
// replayed, reached the page.
func signedUp(p project, id string) bool {
	GinkgoHelper()
	return strings.Contains(pageText(p, id), "signed up")
}

// withoutNodeIDs is a list of actions without their backendNodeIds: the
// ids of one render, which a cached result served on another render does
// not carry.
func withoutNodeIDs(actions any) []any {
	GinkgoHelper()
	list, ok := actions.([]any)
	Expect(ok).To(BeTrue(), "not a list of actions: %v", actions)
	for _, a := range list {
		delete(a.(map[string]any), "backendNodeId")
	}
	return list
}

var _ = Describe("the server-side cache over /v1 (the AI is scripted)", Ordered, func() {
	var (
		p  project
		id string
	)
	BeforeAll(func(ctx SpecContext) {
		p = newProject(ctx)
		id = startSession(p, "")
	})

	It("misses, then serves the second identical act at threshold 1 with no model call, saving the first call's tokens", func() {
		loadOn(api, p, id, pageURL("form.html"))
		enqueueSignUp(p, id, 1200, 30)
		before := len(model.Requests())
		first := cachedAct(api, p, id, actBody(signUp, "true", ""), nil)
		Expect(cacheOf(first)).To(Equal(miss(1, 1, cache.MissNotCached)))
		Expect(metadataOf(first)["usage"]).To(HaveKeyWithValue("inputTokens", float64(1200)))
		Expect(model.Requests()).To(HaveLen(before + 1))
		Expect(signedUp(p, id)).To(BeTrue())

		// A reload renders the same content: the same key.
		loadOn(api, p, id, pageURL("form.html"))
		Expect(signedUp(p, id)).To(BeFalse())
		second := cachedAct(api, p, id, actBody(signUp, "true", ""), nil)
		Expect(cacheOf(second)).To(Equal(hit(2, 1, 1200, 30)))
		Expect(metadataOf(second)["usage"]).To(Equal(noUsage))
		Expect(model.Requests()).To(HaveLen(before+1), "a hit asks no model")
		// The stored actions replayed on the page.
		Expect(signedUp(p, id)).To(BeTrue())
		Expect(second.Data()["result"].(map[string]any)["actions"]).To(Equal(withoutNodeIDs(first.Data()["result"].(map[string]any)["actions"])))
	})

	It("streams the cache's report in the finished frame", func() {
		loadOn(api, p, id, pageURL("form.html"))
		before := len(model.Requests())
		r := do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key, actBody(signUp, "true", `, "streamResponse": true`), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/act", r)
		fs := frames(r.Raw)
		Expect(len(fs)).To(BeNumerically(">=", 3))
		Expect(events(fs)[:2]).To(Equal([]string{"starting", "connected"}))
		last := fs[len(fs)-1]
		Expect(last.Event).To(Equal("finished"))
		md := last.Data.Data["metadata"].(map[string]any)
		Expect(md["cache"]).To(Equal(hit(3, 1, 1200, 30)))
		Expect(md["usage"]).To(Equal(noUsage))
		Expect(model.Requests()).To(HaveLen(before))
	})

	It("skips the cache for a call with x-cache-bypass: true, whatever the call asks", func() {
		loadOn(api, p, id, pageURL("form.html"))
		enqueueSignUp(p, id, 1100, 20)
		before := len(model.Requests())
		r := cachedAct(api, p, id, actBody(signUp, `{"threshold": 1}`, ""), map[string]string{cache.HeaderBypass: "true"})
		Expect(cacheOf(r)).To(Equal(disabled))
		Expect(model.Requests()).To(HaveLen(before + 1))
		Expect(metadataOf(r)["usage"]).To(HaveKeyWithValue("inputTokens", float64(1100)))
	})

	It("refuses an x-cache-bypass that is neither true nor false, naming the header, with no model call", func() {
		before := len(model.Requests())
		r := do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key, actBody(signUp, "true", ""), map[string]string{cache.HeaderBypass: "please"})
		Expect(r.Status).To(Equal(http.StatusBadRequest), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/act", r)
		Expect(r.JSON()["issues"]).To(Equal([]any{map[string]any{"path": "x-cache-bypass", "message": `header must be "true" or "false"`}}))
		Expect(model.Requests()).To(HaveLen(before))
	})

	It("answers DISABLED for a call that does not ask, the project's default being off", func() {
		loadOn(api, p, id, pageURL("form.html"))
		enqueueSignUp(p, id, 1000, 10)
		before := len(model.Requests())
		r := cachedAct(api, p, id, actBody(signUp, "", ""), nil)
		Expect(cacheOf(r)).To(Equal(disabled))
		Expect(model.Requests()).To(HaveLen(before + 1))
	})

	It("serves a key at {threshold: 3} on its fourth identical call", func() {
		const instruction = "press the button that signs me up"
		before := len(model.Requests())
		for n := 1; n <= 3; n++ {
			loadOn(api, p, id, pageURL("form.html"))
			enqueueSignUp(p, id, 500, 5)
			r := cachedAct(api, p, id, actBody(instruction, `{"threshold": 3}`, ""), nil)
			reason := cache.MissBelowThreshold
			if n == 1 {
				reason = cache.MissNotCached
			}
			Expect(cacheOf(r)).To(Equal(miss(n, 3, reason)), "call %d", n)
		}
		Expect(model.Requests()).To(HaveLen(before + 3))
		loadOn(api, p, id, pageURL("form.html"))
		r := cachedAct(api, p, id, actBody(instruction, `{"threshold": 3}`, ""), nil)
		Expect(cacheOf(r)).To(Equal(hit(4, 3, 500, 5)))
		Expect(model.Requests()).To(HaveLen(before + 3))
		Expect(signedUp(p, id)).To(BeTrue())
	})

	It("serves observe and extract from the cache, the stored value as it was", func() {
		loadOn(api, p, id, pageURL("form.html"))
		link := elementID(pageText(p, id), "link: See the catalogue")
		model.Enqueue(llmtest.JSON(fmt.Sprintf(`{"elements": [{"elementId": %q, "description": "the catalogue link", "method": "click", "arguments": []}]}`, link)).WithUsage(900, 40))
		model.Enqueue(llmtest.JSON(`{"heading": "Sign up"}`).WithUsage(700, 8))
		before := len(model.Requests())
		observe := fmt.Sprintf(`{"instruction": "find the link to the catalogue", "options": {"model": %s, "cache": true}}`, modelOption())
		extract := fmt.Sprintf(`{"instruction": "the page's heading", "schema": {"type": "object", "properties": {"heading": {"type": "string"}}, "required": ["heading"]}, "options": {"model": %s, "cache": true}}`, modelOption())
		call := func(op, body string) response {
			GinkgoHelper()
			r := do(http.MethodPost, "/v1/sessions/"+id+"/"+op, p.Key, body, nil)
			Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
			documented(http.MethodPost, "/v1/sessions/{id}/"+op, r)
			return r
		}
		observed, extracted := call("observe", observe), call("extract", extract)
		Expect(cacheOf(observed)).To(Equal(miss(1, 1, cache.MissNotCached)))
		Expect(cacheOf(extracted)).To(Equal(miss(1, 1, cache.MissNotCached)))
		Expect(model.Requests()).To(HaveLen(before + 2))

		again, reextracted := call("observe", observe), call("extract", extract)
		Expect(cacheOf(again)).To(Equal(hit(2, 1, 900, 40)))
		Expect(again.Data()["result"]).To(Equal(withoutNodeIDs(observed.Data()["result"])))
		Expect(cacheOf(reextracted)).To(Equal(hit(2, 1, 700, 8)))
		Expect(reextracted.Data()["result"]).To(Equal(map[string]any{"heading": "Sign up"}))
		Expect(model.Requests()).To(HaveLen(before + 2))
	})
})

var _ = Describe("the server-side cache and the page (the AI is scripted)", Ordered, func() {
	var (
		p  project
		id string
		// offer serves one page whose content the specs change under the
		// same URL.
		offer   *httptest.Server
		variant atomic.Int32
	)
	BeforeAll(func(ctx SpecContext) {
		p = newProject(ctx)
		id = startSession(p, "")
		offer = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			note := ""
			if variant.Load() == 1 {
				note = "<p>Only three left</p>"
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>Offer</title></head><body><h1>Offer</h1>%s
<button id="buy" onclick="document.getElementById('out').textContent = 'bought'">Buy</button><p id="out"></p></body></html>`, note)
		}))
		DeferCleanup(offer.Close)
	})

	buy := func() response {
		GinkgoHelper()
		return cachedAct(api, p, id, actBody("buy it", "true", ""), nil)
	}
	enqueueBuy := func() {
		GinkgoHelper()
		model.Enqueue(actAnswer(elementID(pageText(p, id), "button: Buy"), "click").WithUsage(300, 6))
	}

	It("misses when the page's content changed under the same URL, and serves the first content again", func() {
		variant.Store(0)
		loadOn(api, p, id, offer.URL)
		enqueueBuy()
		before := len(model.Requests())
		Expect(cacheOf(buy())).To(Equal(miss(1, 1, cache.MissNotCached)))

		variant.Store(1)
		loadOn(api, p, id, offer.URL)
		enqueueBuy()
		Expect(cacheOf(buy())).To(Equal(miss(1, 1, cache.MissNotCached)), "another content is another key")
		Expect(model.Requests()).To(HaveLen(before + 2))

		variant.Store(0)
		loadOn(api, p, id, offer.URL)
		Expect(cacheOf(buy())).To(Equal(hit(2, 1, 300, 6)))
		Expect(model.Requests()).To(HaveLen(before + 2))
		Expect(pageText(p, id)).To(ContainSubstring("bought"))
	})

	It("runs live when the stored actions no longer replay (replay_failed), and the live result replaces the entry", func(ctx SpecContext) {
		// A project of its own, whose one entry is buy's.
		p = newProject(ctx)
		id = startSession(p, "")
		variant.Store(0)
		loadOn(api, p, id, offer.URL)
		enqueueBuy()
		Expect(cacheOf(buy())).To(Equal(miss(1, 1, cache.MissNotCached)))

		// Make the entry's actions stale, through the cache's own endpoint.
		rdb := redis.NewClient(&redis.Options{Addr: redisServer.Address})
		DeferCleanup(rdb.Close)
		key, entry := onlyEntry(ctx, rdb, p.Namespace)
		value := entry["value"].(map[string]any)
		for _, a := range value["actions"].([]any) {
			a.(map[string]any)["selector"] = "xpath=/html/body/nav[7]"
		}
		body, err := json.Marshal(map[string]any{"key": key, "entry": entry})
		Expect(err).NotTo(HaveOccurred())
		set := do(http.MethodPost, cache.PathSet, p.Key, string(body), nil)
		Expect(set.Status).To(Equal(http.StatusOK), "%s", set.Raw)
		documented(http.MethodPost, cache.PathSet, set)

		loadOn(api, p, id, offer.URL)
		enqueueBuy()
		before := len(model.Requests())
		r := buy()
		Expect(cacheOf(r)).To(Equal(miss(2, 1, cache.MissReplayFailed)))
		Expect(model.Requests()).To(HaveLen(before + 1))
		Expect(pageText(p, id)).To(ContainSubstring("bought"))

		loadOn(api, p, id, offer.URL)
		Expect(cacheOf(buy())).To(Equal(hit(3, 1, 300, 6)))
		Expect(model.Requests()).To(HaveLen(before + 1))
	})
})

// onlyEntry reads, straight from Redis, the one act entry the project has:
// its key and the entry as JSON.
func onlyEntry(ctx context.Context, rdb *redis.Client, project string) (string, map[string]any) {
	GinkgoHelper()
	prefix := "bf:{" + project + "}:v:cache."
	names, err := rdb.Keys(ctx, prefix+"*").Result()
	Expect(err).NotTo(HaveOccurred())
	var found []string
	var entry map[string]any
	for _, name := range names {
		raw, err := rdb.Get(ctx, name).Bytes()
		Expect(err).NotTo(HaveOccurred())
		var e map[string]any
		Expect(json.Unmarshal(raw, &e)).To(Succeed())
		if e["method"] == "act" {
			found, entry = append(found, strings.TrimPrefix(name, prefix)), e
		}
	}
	Expect(found).To(HaveLen(1), "the project's act entries")
	return found[0], entry
}

var _ = Describe("the server-side cache across projects and replicas (the AI is scripted)", Ordered, func() {
	It("takes a session's default from the start's cache, stored as spec.cache, and a call's own setting over it", func(ctx SpecContext) {
		p := newProject(ctx)
		id := startSession(p, `{"modelName": "openai/gpt-test", "cache": {"threshold": 2}}`)
		var bs v1alpha1.BrowserSession
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: id}, &bs)).To(Succeed())
		Expect(bs.Spec.Cache).To(Equal(&v1alpha1.CacheSpec{Enabled: ptr.To(true), Threshold: 2}))

		before := len(model.Requests())
		for n, want := range []map[string]any{miss(1, 2, cache.MissNotCached), miss(2, 2, cache.MissBelowThreshold)} {
			loadOn(api, p, id, pageURL("form.html"))
			enqueueSignUp(p, id, 400, 4)
			Expect(cacheOf(cachedAct(api, p, id, actBody(signUp, "", ""), nil))).To(Equal(want), "call %d", n+1)
		}
		loadOn(api, p, id, pageURL("form.html"))
		Expect(cacheOf(cachedAct(api, p, id, actBody(signUp, "", ""), nil))).To(Equal(hit(3, 2, 400, 4)))
		Expect(model.Requests()).To(HaveLen(before + 2))

		loadOn(api, p, id, pageURL("form.html"))
		enqueueSignUp(p, id, 400, 4)
		Expect(cacheOf(cachedAct(api, p, id, actBody(signUp, "false", ""), nil))).To(Equal(disabled))
		Expect(model.Requests()).To(HaveLen(before + 3))
	})

	It("answers the cache endpoints as the document says", func(ctx SpecContext) {
		p := newProject(ctx)
		key := strings.Repeat("c0", 32)
		get := func(body string) response {
			GinkgoHelper()
			r := do(http.MethodPost, cache.PathGet, p.Key, body, nil)
			documented(http.MethodPost, cache.PathGet, r)
			return r
		}
		Expect(get(fmt.Sprintf(`{"key": %q, "threshold": 1}`, key)).JSON()).To(Equal(map[string]any{
			"count": float64(1), "threshold": float64(1), "hit": false, "missReason": cache.MissNotCached}))
		set := do(http.MethodPost, cache.PathSet, p.Key, fmt.Sprintf(`{"key": %q, "entry": {"method": "extract", "value": {"heading": "Sign up"}, "usage": {"inputTokens": 7, "outputTokens": 1}}}`, key), nil)
		Expect(set.Status).To(Equal(http.StatusOK), "%s", set.Raw)
		documented(http.MethodPost, cache.PathSet, set)
		Expect(get(fmt.Sprintf(`{"key": %q, "threshold": 1}`, key)).JSON()).To(Equal(map[string]any{
			"count": float64(2), "threshold": float64(1), "hit": true,
			"entry": map[string]any{"method": "extract", "value": map[string]any{"heading": "Sign up"}, "usage": map[string]any{"inputTokens": float64(7), "outputTokens": float64(1)}}}))
		refused := get(`{"key": "nope", "threshold": 1}`)
		Expect(refused.Status).To(Equal(http.StatusBadRequest), "%s", refused.Raw)
	})

	It("never serves one project's entry to another", func(ctx SpecContext) {
		p, q := newProject(ctx), newProject(ctx)
		pid, qid := startSession(p, ""), startSession(q, "")
		loadOn(api, p, pid, pageURL("form.html"))
		enqueueSignUp(p, pid, 600, 6)
		Expect(cacheOf(cachedAct(api, p, pid, actBody(signUp, "true", ""), nil))).To(Equal(miss(1, 1, cache.MissNotCached)))

		// The same call on the same page, in another project: its first.
		loadOn(api, q, qid, pageURL("form.html"))
		enqueueSignUp(q, qid, 600, 6)
		before := len(model.Requests())
		Expect(cacheOf(cachedAct(api, q, qid, actBody(signUp, "true", ""), nil))).To(Equal(miss(1, 1, cache.MissNotCached)))
		Expect(model.Requests()).To(HaveLen(before + 1))

		// Each project is served its own.
		for _, c := range []struct {
			p  project
			id string
		}{{p, pid}, {q, qid}} {
			loadOn(api, c.p, c.id, pageURL("form.html"))
			Expect(cacheOf(cachedAct(api, c.p, c.id, actBody(signUp, "true", ""), nil))).To(Equal(hit(2, 1, 600, 6)))
		}
		Expect(model.Requests()).To(HaveLen(before + 1))
	})

	It("serves, on one API replica, the entry another replica stored, through their one Redis", func(ctx SpecContext) {
		// Replica B: another API server with its own connections to the
		// same Redis, its own /v1 address and its own runner listener.
		opts := apiOptions
		opts.Store = redisStore()
		b, err := server.New(opts)
		Expect(err).NotTo(HaveOccurred())
		apiB := httptest.NewServer(b)
		DeferCleanup(apiB.Close)
		runnersB, err := b.RunnerHandler()
		Expect(err).NotTo(HaveOccurred())
		runnersA := runnerListener.Load()
		DeferCleanup(func() { runnerListener.Store(runnersA) })

		p := newProject(ctx)
		id := startSession(p, "")
		loadOn(api, p, id, pageURL("form.html"))
		enqueueSignUp(p, id, 800, 8)
		before := len(model.Requests())
		Expect(cacheOf(cachedAct(api, p, id, actBody(signUp, "true", ""), nil))).To(Equal(miss(1, 1, cache.MissNotCached)))

		// The runner's cache calls now reach replica B, and so do the
		// caller's.
		runnerListener.Store(&runnersB)
		loadOn(apiB, p, id, pageURL("form.html"))
		Expect(cacheOf(cachedAct(apiB, p, id, actBody(signUp, "true", ""), nil))).To(Equal(hit(2, 1, 800, 8)))
		Expect(model.Requests()).To(HaveLen(before + 1))
	})
})
