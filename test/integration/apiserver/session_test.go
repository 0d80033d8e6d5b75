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
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// actAnswer is a model's answer to act: use this element this way.
func actAnswer(id, method string, args ...string) llmtest.Reply {
	if args == nil {
		args = []string{}
	}
	b, _ := json.Marshal(map[string]any{"elementId": id, "method": method, "arguments": args, "description": method + " " + id, "twoStep": false})
	return llmtest.JSON(string(b))
}

// elementID finds the id of the snapshot line "role: name" in pageText, as a
// model would read it.
func elementID(pageText, line string) string {
	m := regexp.MustCompile(`\[(\d+-\d+)\] ` + regexp.QuoteMeta(line)).FindStringSubmatch(pageText)
	ExpectWithOffset(1, m).NotTo(BeNil(), "no %q in the snapshot:\n%s", line, pageText)
	return m[1]
}

// pageText is the page snapshot that extract with no arguments answers.
func pageText(p project, id string) string {
	r := do(http.MethodPost, "/v1/sessions/"+id+"/extract", p.Key, `{}`, nil)
	ExpectWithOffset(1, r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	return r.Data()["result"].(map[string]any)["pageText"].(string)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

var uuidPattern = `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`

var _ = Describe("a session driven over /v1", Ordered, func() {
	var (
		p  project
		id string
	)
	BeforeAll(func(ctx SpecContext) {
		p = newProject(ctx)
	})

	It("starts, answering exactly sessionId, cdpUrl and available", func() {
		r := do(http.MethodPost, "/v1/sessions/start", p.Key, `{"modelName": "openai/gpt-test"}`, nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/start", r)
		Expect(keys(r.JSON())).To(ConsistOf("success", "data"))
		d := r.Data()
		Expect(keys(d)).To(ConsistOf("sessionId", "cdpUrl", "available"))
		Expect(d["available"]).To(BeTrue())
		Expect(d["cdpUrl"]).To(HavePrefix("ws://"))
		id = d["sessionId"].(string)
		Expect(id).To(MatchRegexp(uuidPattern))
	})

	It("navigates", func() {
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/navigate", r)
		Expect(keys(r.Data())).To(ConsistOf("result", "actionId"))
		Expect(r.Data()["actionId"]).To(MatchRegexp(uuidPattern))
		Expect(r.Data()["result"]).To(HaveKeyWithValue("url", pageURL("form.html")))
		Expect(r.Data()["result"]).To(HaveKeyWithValue("ok", true))
	})

	It("acts with an Action object without asking the model", func() {
		before := len(model.Requests())
		r := do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key,
			`{"input": {"selector": "#email", "method": "fill", "arguments": ["ada@example.com"], "description": "type the email"}}`, nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/act", r)
		res := r.Data()["result"].(map[string]any)
		Expect(keys(res)).To(ConsistOf("success", "message", "actionDescription", "actions"))
		Expect(res["success"]).To(BeTrue())
		Expect(model.Requests()).To(HaveLen(before))
	})

	It("acts by instruction through the model", func() {
		button := elementID(pageText(p, id), "button: Sign up")
		model.Enqueue(actAnswer(button, "click").WithUsage(1200, 30))
		r := do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key,
			fmt.Sprintf(`{"input": "click the sign-up button", "options": {"model": %s}}`, modelOption()), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/act", r)
		Expect(r.Data()["result"]).To(HaveKeyWithValue("success", true))
		Expect(pageText(p, id)).To(ContainSubstring("signed up ada@example.com"))
		// The key reached the model, and nothing else did.
		reqs := model.Requests()
		Expect(reqs[len(reqs)-1].Header.Get("Authorization")).To(Equal("Bearer sk-test-key"))
	})

	It("observes", func() {
		link := elementID(pageText(p, id), "link: See the catalogue")
		model.Enqueue(llmtest.JSON(fmt.Sprintf(`{"elements": [{"elementId": %q, "description": "the catalogue link", "method": "click", "arguments": []}]}`, link)).WithUsage(900, 40))
		r := do(http.MethodPost, "/v1/sessions/"+id+"/observe", p.Key,
			fmt.Sprintf(`{"instruction": "find the link to the catalogue", "options": {"model": %s}}`, modelOption()), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/observe", r)
		actions := r.Data()["result"].([]any)
		Expect(actions).To(HaveLen(1))
		Expect(actions[0]).To(HaveKeyWithValue("selector", HavePrefix("xpath=")))
		Expect(actions[0]).To(HaveKeyWithValue("method", "click"))
	})

	It("extracts with a schema", func() {
		model.Enqueue(llmtest.JSON(`{"heading": "Sign up"}`).WithUsage(700, 8))
		r := do(http.MethodPost, "/v1/sessions/"+id+"/extract", p.Key,
			fmt.Sprintf(`{"instruction": "the page's heading", "schema": {"type": "object", "properties": {"heading": {"type": "string"}}, "required": ["heading"]}, "options": {"model": %s}}`, modelOption()), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/extract", r)
		Expect(r.Data()["result"]).To(Equal(map[string]any{"heading": "Sign up"}))
	})

	It("replays each call with its token usage", func() {
		r := do(http.MethodGet, "/v1/sessions/"+id+"/replay", p.Key, "", nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodGet, "/v1/sessions/{id}/replay", r)
		pages := r.Data()["pages"].([]any)
		Expect(pages).To(HaveLen(1))
		page := pages[0].(map[string]any)
		Expect(page["url"]).To(Equal(pageURL("form.html")))
		var methods []string
		var input float64
		for _, a := range page["actions"].([]any) {
			a := a.(map[string]any)
			methods = append(methods, a["method"].(string))
			input += a["tokenUsage"].(map[string]any)["inputTokens"].(float64)
			// No secret is recorded.
			Expect(fmt.Sprint(a)).NotTo(ContainSubstring("sk-test-key"))
		}
		Expect(methods).To(Equal([]string{"navigate", "act", "extract", "act", "extract", "extract", "observe", "extract"}))
		Expect(input).To(BeEquivalentTo(1200 + 900 + 700))
	})

	It("counts requests, operations and tokens in its metrics", func() {
		families, err := registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		byName := map[string]*dto.MetricFamily{}
		for _, f := range families {
			byName[f.GetName()] = f
		}
		Expect(byName).To(HaveKey("browserfleet_model_tokens_total"))
		var input float64
		for _, m := range byName["browserfleet_model_tokens_total"].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["model"] == "openai/gpt-test" && labels["kind"] == "input" {
				input = m.GetCounter().GetValue()
			}
		}
		Expect(input).To(BeNumerically(">=", 1200+900+700))
		Expect(byName).To(HaveKey("browserfleet_api_request_duration_seconds"))
		Expect(byName).To(HaveKey("browserfleet_operation_duration_seconds"))
		Expect(byName).To(HaveKey("browserfleet_sessions"))
	})

	It("hands out a cdpUrl that chromedp drives as given", func(ctx SpecContext) {
		r := do(http.MethodGet, "/v1/sessions/"+id, p.Key, "", nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodGet, "/v1/sessions/{id}", r)
		cdpURL := r.Data()["cdpUrl"].(string)

		actx, cancelAlloc := chromedp.NewRemoteAllocator(ctx, cdpURL)
		defer cancelAlloc()
		bctx, cancelBrowser := chromedp.NewContext(actx)
		defer cancelBrowser()
		var title string
		Expect(chromedp.Run(bctx, chromedp.Navigate(pageURL("list.html")), chromedp.Title(&title))).To(Succeed())
		Expect(title).To(Equal("Catalogue"))
	})

	It("filters what a client sends through the cdpUrl: a file: navigation gets an error reply, and the connection goes on", func(ctx SpecContext) {
		r := do(http.MethodGet, "/v1/sessions/"+id, p.Key, "", nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		cdp := apitest.DialCDP(ctx, r.Data()["cdpUrl"].(string))
		call := cdp.Call
		sid := cdp.OpenTab()

		Expect(call("Page.navigate", `{"url":"file:///etc/passwd"}`, sid)).To(And(
			HaveKeyWithValue("sessionId", sid),
			HaveKeyWithValue("error", map[string]any{
				"code":    float64(-32000),
				"message": "browserfleet: Page.navigate: url must not be a file: URL: it would read the runner's files",
			}),
		))
		evaluated := call("Runtime.evaluate", `{"expression":"location.href","returnByValue":true}`, sid)
		Expect(evaluated).To(HaveKey("result"), "%v", evaluated)
		Expect(evaluated["result"].(map[string]any)["result"].(map[string]any)["value"]).To(Equal("about:blank"))
	})

	It("refuses a cdpUrl whose token was tampered with, or that names another project", func() {
		r := do(http.MethodGet, "/v1/sessions/"+id, p.Key, "", nil)
		u, err := url.Parse(r.Data()["cdpUrl"].(string))
		Expect(err).NotTo(HaveOccurred())
		tampered := *u
		tampered.Path = tampered.Path[:len(tampered.Path)-2] + "xx"
		other := *u
		other.RawQuery = url.Values{"project": {"default"}}.Encode()
		for _, bad := range []url.URL{tampered, other} {
			resp := do(http.MethodGet, bad.RequestURI(), "", "", map[string]string{"Upgrade": "websocket", "Connection": "Upgrade"})
			Expect(resp.Status).To(Equal(http.StatusUnauthorized), "%s: %s", bad.String(), resp.Raw)
			documented(http.MethodGet, "/v1/sessions/{id}/devtools/browser/{token}", resp)
		}
	})

	It("ends idempotently, and refuses calls afterwards", func() {
		for range 2 {
			r := do(http.MethodPost, "/v1/sessions/"+id+"/end", p.Key, "", nil)
			Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
			documented(http.MethodPost, "/v1/sessions/{id}/end", r)
			Expect(r.JSON()).To(Equal(map[string]any{"success": true}))
		}
		r := do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key, `{"input": {"selector": "#email", "method": "click", "description": "x"}}`, nil)
		Expect(r.Status).To(Equal(http.StatusConflict), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/act", r)
		Expect(r.JSON()).To(HaveKeyWithValue("code", "SESSION_ENDED"))
	})
})

var _ = Describe("streaming", Ordered, func() {
	var (
		p  project
		id string
	)
	BeforeAll(func(ctx SpecContext) {
		p = newProject(ctx)
		id = startSession(p, "")
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	})

	// streamed checks the frames of a streamed call: starting, connected,
	// running log lines, then exactly one finished or error, last.
	streamed := func(r response, pattern string) []frame {
		ExpectWithOffset(1, r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		ExpectWithOffset(1, r.ContentType).To(Equal("text/event-stream"))
		documented(http.MethodPost, pattern, r)
		fs := frames(r.Raw)
		ExpectWithOffset(1, len(fs)).To(BeNumerically(">=", 3), "%s", r.Raw)
		names := events(fs)
		ExpectWithOffset(1, names[:2]).To(Equal([]string{"starting", "connected"}))
		for _, n := range names[2 : len(names)-1] {
			ExpectWithOffset(1, n).To(Equal("running"), "%v", names)
		}
		ExpectWithOffset(1, names[len(names)-1]).To(BeElementOf("finished", "error"))
		for _, f := range fs {
			ExpectWithOffset(1, f.Data.ID).To(MatchRegexp(uuidPattern))
			ExpectWithOffset(1, f.Data.Data["status"]).To(Equal(f.Event))
			if f.Event == "running" {
				ExpectWithOffset(1, f.Data.Type).To(Equal("log"))
				ExpectWithOffset(1, f.Data.Data["message"]).To(HaveKey("message"))
			} else {
				ExpectWithOffset(1, f.Data.Type).To(Equal("system"))
			}
		}
		return fs
	}

	It("streams navigate when the body asks, with the plain call's result", func() {
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q, "streamResponse": true}`, pageURL("list.html")), nil)
		fs := streamed(r, "/v1/sessions/{id}/navigate")
		last := fs[len(fs)-1]
		Expect(last.Event).To(Equal("finished"))
		Expect(last.Data.Data["result"]).To(HaveKeyWithValue("url", pageURL("list.html")))
		Expect(last.Data.Data["actionId"]).To(MatchRegexp(uuidPattern))
	})

	It("streams act when the header asks", func() {
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		r = do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key,
			`{"input": {"selector": "#email", "method": "fill", "arguments": ["grace@example.com"], "description": "type"}}`,
			map[string]string{"x-stream-response": "true"})
		fs := streamed(r, "/v1/sessions/{id}/act")
		Expect(fs[len(fs)-1].Data.Data["result"]).To(HaveKeyWithValue("success", true))
	})

	It("does not stream when the body says false, whatever the header", func() {
		r := do(http.MethodPost, "/v1/sessions/"+id+"/extract", p.Key, `{"streamResponse": false}`, map[string]string{"x-stream-response": "true"})
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		Expect(r.ContentType).To(Equal("application/json"))
	})

	It("streams observe and extract, with the model's progress as running events", func() {
		text := pageText(p, id)
		model.Enqueue(llmtest.JSON(fmt.Sprintf(`{"elements": [{"elementId": %q, "description": "the email box", "method": "fill", "arguments": ["x"]}]}`, elementID(text, "textbox: Email"))))
		r := do(http.MethodPost, "/v1/sessions/"+id+"/observe", p.Key,
			fmt.Sprintf(`{"instruction": "the email box", "options": {"model": %s}, "streamResponse": true}`, modelOption()), nil)
		fs := streamed(r, "/v1/sessions/{id}/observe")
		Expect(fs[len(fs)-1].Data.Data["result"]).To(HaveLen(1))

		model.Enqueue(llmtest.JSON(`{"extraction": "a sign-up form"}`))
		r = do(http.MethodPost, "/v1/sessions/"+id+"/extract", p.Key,
			fmt.Sprintf(`{"instruction": "what is this page", "options": {"model": %s}, "streamResponse": true}`, modelOption()), nil)
		fs = streamed(r, "/v1/sessions/{id}/extract")
		Expect(fs[len(fs)-1].Data.Data["result"]).To(Equal(map[string]any{"extraction": "a sign-up form"}))
	})

	It("ends a failed streamed call with one error frame", func() {
		r := do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key,
			`{"input": {"selector": "#no-such-element", "method": "click", "description": "x"}, "options": {"timeout": 1500}, "streamResponse": true}`, nil)
		fs := streamed(r, "/v1/sessions/{id}/act")
		last := fs[len(fs)-1]
		if last.Event == "finished" {
			// An act that finds nothing may report it in its result.
			Expect(last.Data.Data["result"]).To(HaveKeyWithValue("success", false))
			return
		}
		Expect(last.Data.Data["error"]).NotTo(BeEmpty())
	})

	It("streams start when the header asks, reporting the session's phases", func() {
		r := do(http.MethodPost, "/v1/sessions/start", p.Key, `{"modelName": "openai/gpt-test"}`, map[string]string{"x-stream-response": "true"})
		fs := streamed(r, "/v1/sessions/start")
		last := fs[len(fs)-1]
		Expect(last.Event).To(Equal("finished"))
		Expect(keys(last.Data.Data["result"].(map[string]any))).To(ConsistOf("sessionId", "cdpUrl", "available"))
		var logs []string
		for _, f := range fs {
			if f.Event == "running" {
				logs = append(logs, f.Data.Data["message"].(map[string]any)["message"].(string))
			}
		}
		Expect(logs).To(ContainElement(HavePrefix("session is Ready")))
	})

	It("streams start with a line for each setting this installation does not honour, first", func() {
		r := do(http.MethodPost, "/v1/sessions/start", p.Key,
			`{"modelName": "openai/gpt-test", "cloudSessionCreateParams": {"browserSettings": {"recordSession": true, "verified": true}}}`,
			map[string]string{"x-stream-response": "true"})
		fs := streamed(r, "/v1/sessions/start")
		Expect(fs[len(fs)-1].Event).To(Equal("finished"))
		var logs []string
		for _, f := range fs {
			if f.Event == "running" {
				logs = append(logs, f.Data.Data["message"].(map[string]any)["message"].(string))
			}
		}
		Expect(len(logs)).To(BeNumerically(">=", 3))
		Expect(logs[:2]).To(ConsistOf(
			HavePrefix("unsupported setting: cloudSessionCreateParams.browserSettings.recordSession: "),
			HavePrefix("unsupported setting: cloudSessionCreateParams.browserSettings.verified: ")))
	})

	It("cancels the operation when the client goes away", func(ctx SpecContext) {
		text := pageText(p, id)
		model.Enqueue(actAnswer(elementID(text, "button: Sign up"), "click").WithDelay(5 * time.Minute))
		before := len(model.Requests())
		callCtx, cancel := context.WithCancel(ctx)
		done := make(chan response, 1)
		go func() {
			defer GinkgoRecover()
			req, _ := http.NewRequestWithContext(callCtx, http.MethodPost, api.URL+"/v1/sessions/"+id+"/act",
				strings.NewReader(fmt.Sprintf(`{"input": "click sign up", "options": {"model": %s}, "streamResponse": true}`, modelOption())))
			req.Header.Set("x-svc-api-key", p.Key)
			resp, err := api.Client().Do(req)
			if err == nil {
				// Read the stream until the client goes away.
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			done <- response{}
		}()
		// The act is waiting for the model.
		Eventually(func() int { return len(model.Requests()) }).Should(BeNumerically(">", before))
		cancel()
		Eventually(done).Should(Receive())
		// The runner runs one operation at a time: if the act were still
		// waiting for its model, this would wait minutes behind it.
		quick, cancelQuick := context.WithTimeout(ctx, 20*time.Second)
		defer cancelQuick()
		r := doCtx(quick, http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("list.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	})
})

var _ = Describe("shutdown", func() {
	It("drains readiness, then ends a running stream with an error frame and a plain call with 503", func(ctx SpecContext) {
		p := newProject(ctx)
		id := startSession(p, "")
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		button := elementID(pageText(p, id), "button: Sign up")

		srv := newAPIServer()
		stopping := httptest.NewServer(srv)
		defer stopping.Close()
		call := func(body string) <-chan *http.Response {
			out := make(chan *http.Response, 1)
			go func() {
				defer GinkgoRecover()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, stopping.URL+"/v1/sessions/"+id+"/act", strings.NewReader(body))
				req.Header.Set("x-svc-api-key", p.Key)
				resp, err := stopping.Client().Do(req)
				Expect(err).NotTo(HaveOccurred())
				out <- resp
			}()
			return out
		}
		model.Enqueue(actAnswer(button, "click").WithDelay(5 * time.Minute))
		before := len(model.Requests())
		streamed := call(fmt.Sprintf(`{"input": "click sign up", "options": {"model": %s}, "streamResponse": true}`, modelOption()))
		Eventually(func() int { return len(model.Requests()) }).Should(BeNumerically(">", before))
		// A plain call queued behind it on the runner.
		plainCall := call(`{"input": {"selector": "#email", "method": "click", "description": "x"}}`)

		srv.Drain()
		ready, err := stopping.Client().Get(stopping.URL + "/readyz")
		Expect(err).NotTo(HaveOccurred())
		Expect(ready.StatusCode).To(Equal(http.StatusServiceUnavailable))
		_ = ready.Body.Close()

		srv.Abort()
		var resp *http.Response
		Eventually(streamed).Should(Receive(&resp))
		raw, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		fs := frames(raw)
		names := events(fs)
		Expect(names[:2]).To(Equal([]string{"starting", "connected"}), "%s", raw)
		Expect(names[len(names)-1]).To(Equal("error"), "%s", raw)
		Expect(fs[len(fs)-1].Data.Data["error"]).To(ContainSubstring("shutting down"))

		Eventually(plainCall).Should(Receive(&resp))
		raw, err = io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusServiceUnavailable), "%s", raw)
		Expect(string(raw)).To(ContainSubstring("UNAVAILABLE"))

		// The runner let both go: the session serves the next call at once.
		quick, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		r = doCtx(quick, http.MethodPost, "/v1/sessions/"+id+"/extract", p.Key, `{}`, nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	})
})

var _ = Describe("the runners' egress gate over /v1", func() {
	It("refuses a navigation it denies with 403 EGRESS_DENIED, naming the host", func(ctx SpecContext) {
		p := newProject(ctx)
		id := startSession(p, "")
		// The runner's own RPC is on loopback, which this stack allows,
		// and is refused all the same: no packet leaves the machine.
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: v1alpha1.RunnerPodName(id)}, pod)).To(Succeed())
		Expect(pod.Status.PodIP).NotTo(BeEmpty())
		target := fmt.Sprintf("http://%s:%d/healthz", pod.Status.PodIP, rpc.Port)
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, target), nil)
		Expect(r.Status).To(Equal(http.StatusForbidden), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/navigate", r)
		Expect(r.JSON()).To(HaveKeyWithValue("code", "EGRESS_DENIED"))
		Expect(r.JSON()).To(HaveKeyWithValue("error", "the egress policy refuses connections to "+pod.Status.PodIP+" (a port of the runner itself)"))
	})
})
