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
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// route is one /v1 endpoint with a body it accepts.
type route struct {
	method, pattern, body string
}

func (r route) path(id string) string { return strings.ReplaceAll(r.pattern, "{id}", id) }

var sessionRoutes = []route{
	{http.MethodPost, "/v1/sessions/{id}/act", `{"input": {"selector": "body", "method": "click", "description": "x"}}`},
	{http.MethodPost, "/v1/sessions/{id}/observe", `{}`},
	{http.MethodPost, "/v1/sessions/{id}/extract", `{}`},
	{http.MethodPost, "/v1/sessions/{id}/navigate", `{"url": "about:blank"}`},
	{http.MethodPost, "/v1/sessions/{id}/agentExecute", `{"agentConfig": {}, "executeOptions": {"instruction": "x"}}`},
	{http.MethodPost, "/v1/sessions/{id}/end", ``},
	{http.MethodGet, "/v1/sessions/{id}/replay", ``},
	{http.MethodGet, "/v1/sessions/{id}", ``},
}

var _ = Describe("authentication and projects", Ordered, func() {
	var (
		a, b project
		id   string
	)
	BeforeAll(func(ctx SpecContext) {
		a, b = newProject(ctx), newProject(ctx)
		id = startSession(a, "")
	})

	It("refuses every endpoint without a key, or with a wrong one, with the same 401", func() {
		all := append([]route{
			{http.MethodPost, "/v1/sessions/start", `{"modelName": "openai/gpt-test"}`},
			{http.MethodGet, "/v1/sessions", ``},
		}, sessionRoutes...)
		for _, rt := range all {
			for _, key := range []string{"", "bfk_wrong", a.Key + "x"} {
				r := do(rt.method, rt.path(id), key, rt.body, nil)
				Expect(r.Status).To(Equal(http.StatusUnauthorized), "%s %s with key %q: %s", rt.method, rt.pattern, key, r.Raw)
				documented(rt.method, rt.pattern, r)
				Expect(r.JSON()).To(Equal(map[string]any{"success": false, "code": "UNAUTHORIZED", "error": r.JSON()["error"]}))
			}
		}
	})

	It("answers another project's session with 404, and changes nothing of it", func(ctx SpecContext) {
		for _, rt := range sessionRoutes {
			r := do(rt.method, rt.path(id), b.Key, rt.body, nil)
			Expect(r.Status).To(Equal(http.StatusNotFound), "%s %s: %s", rt.method, rt.pattern, r.Raw)
			documented(rt.method, rt.pattern, r)
			Expect(r.JSON()).To(HaveKeyWithValue("code", "SESSION_NOT_FOUND"))
		}
		r := do(http.MethodGet, "/v1/sessions", b.Key, "", nil)
		Expect(r.Data()["sessions"]).To(BeEmpty())
		// Still A's, still Ready, no task made for it.
		r = do(http.MethodGet, "/v1/sessions/"+id, a.Key, "", nil)
		Expect(r.Data()).To(HaveKeyWithValue("phase", "Ready"))
		var tasks v1alpha1.AgentTaskList
		Expect(k8sClient.List(ctx, &tasks, client.InNamespace(a.Namespace))).To(Succeed())
		Expect(tasks.Items).To(BeEmpty())
	})

	It("accepts x-svc-project-id and ignores it", func() {
		r := do(http.MethodGet, "/v1/sessions/"+id, a.Key, "", map[string]string{"x-svc-project-id": b.Namespace})
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	})
})

var _ = Describe("validation", Ordered, func() {
	var (
		p  project
		id string
	)
	BeforeAll(func(ctx SpecContext) {
		p = newProject(ctx)
		id = startSession(p, "")
	})

	replayLen := func() int {
		r := do(http.MethodGet, "/v1/sessions/"+id+"/replay", p.Key, "", nil)
		n := 0
		for _, page := range r.Data()["pages"].([]any) {
			n += len(page.(map[string]any)["actions"].([]any))
		}
		return n
	}

	DescribeTable("refuses a bad body with 400 and issues naming each field, and runs nothing",
		func(ctx SpecContext, pattern, body string, paths ...string) {
			before := replayLen()
			r := do(http.MethodPost, strings.ReplaceAll(pattern, "{id}", id), p.Key, body, nil)
			Expect(r.Status).To(Equal(http.StatusBadRequest), "%s", r.Raw)
			documented(http.MethodPost, pattern, r)
			Expect(r.JSON()).To(HaveKeyWithValue("code", "INVALID_REQUEST"))
			var got []string
			for _, is := range r.JSON()["issues"].([]any) {
				got = append(got, is.(map[string]any)["path"].(string))
			}
			Expect(got).To(ConsistOf(paths), "%s", r.Raw)
			Expect(replayLen()).To(Equal(before))
			var tasks v1alpha1.AgentTaskList
			Expect(k8sClient.List(ctx, &tasks, client.InNamespace(p.Namespace))).To(Succeed())
			Expect(tasks.Items).To(BeEmpty())
		},
		Entry("act: no input", "/v1/sessions/{id}/act", `{}`, "input"),
		Entry("act: input of the wrong type", "/v1/sessions/{id}/act", `{"input": 3}`, "input"),
		Entry("act: timeout not a number", "/v1/sessions/{id}/act", `{"input": "x", "options": {"timeout": "soon"}}`, "options.timeout"),
		Entry("act: model name without provider", "/v1/sessions/{id}/act", `{"input": "x", "options": {"model": "gpt"}}`, "options.model"),
		Entry("act: streamResponse not a boolean", "/v1/sessions/{id}/act", `{"input": "x", "streamResponse": "yes"}`, "streamResponse"),
		Entry("observe: ignoreSelectors not an array", "/v1/sessions/{id}/observe", `{"options": {"ignoreSelectors": "nav"}}`, "options.ignoreSelectors"),
		Entry("extract: schema without instruction", "/v1/sessions/{id}/extract", `{"schema": {"type": "object"}}`, "schema"),
		Entry("extract: schema that is no schema", "/v1/sessions/{id}/extract", `{"instruction": "x", "schema": {"type": 12}}`, "schema"),
		Entry("navigate: no url", "/v1/sessions/{id}/navigate", `{}`, "url"),
		Entry("navigate: unknown waitUntil", "/v1/sessions/{id}/navigate", `{"url": "https://example.com", "options": {"waitUntil": "idle"}}`, "options.waitUntil"),
		Entry("navigate: a javascript: url", "/v1/sessions/{id}/navigate", `{"url": "javascript:alert(1)"}`, "url"),
		Entry("navigate: a file: url", "/v1/sessions/{id}/navigate", `{"url": "file:///etc/passwd"}`, "url"),
		Entry("navigate: a chrome: url", "/v1/sessions/{id}/navigate", `{"url": "chrome://settings"}`, "url"),
		Entry("navigate: a chrome-extension: url", "/v1/sessions/{id}/navigate", `{"url": "chrome-extension://abcdefghijklmnop/x.html"}`, "url"),
		Entry("navigate: a devtools: url", "/v1/sessions/{id}/navigate", `{"url": "devtools://devtools/bundled/inspector.html"}`, "url"),
		Entry("navigate: a view-source: url", "/v1/sessions/{id}/navigate", `{"url": "view-source:https://example.com/"}`, "url"),
		Entry("navigate: about:version", "/v1/sessions/{id}/navigate", `{"url": "about:version"}`, "url"),
		Entry("agentExecute: no instruction", "/v1/sessions/{id}/agentExecute", `{"agentConfig": {}, "executeOptions": {}}`, "executeOptions.instruction"),
		Entry("agentExecute: maxSteps out of range", "/v1/sessions/{id}/agentExecute", `{"agentConfig": {}, "executeOptions": {"instruction": "x", "maxSteps": 0}}`, "executeOptions.maxSteps"),
		Entry("agentExecute: unknown mode", "/v1/sessions/{id}/agentExecute", `{"agentConfig": {"mode": "telepathy"}, "executeOptions": {"instruction": "x"}}`, "agentConfig.mode"),
		Entry("end: a body", "/v1/sessions/{id}/end", `{"reason": "done"}`, ""),
		Entry("not JSON", "/v1/sessions/{id}/act", `{"input": `, ""),
	)

	It("refuses an x-stream-response that is neither true nor false", func() {
		r := do(http.MethodPost, "/v1/sessions/"+id+"/extract", p.Key, `{}`, map[string]string{"x-stream-response": "yes"})
		Expect(r.Status).To(Equal(http.StatusBadRequest), "%s", r.Raw)
		Expect(fmt.Sprint(r.JSON()["issues"])).To(ContainSubstring("x-stream-response"))
	})

	It("refuses a body over the limit with 413", func() {
		big := fmt.Sprintf(`{"input": %q}`, strings.Repeat("a", 2<<20))
		r := do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key, big, nil)
		Expect(r.Status).To(Equal(http.StatusRequestEntityTooLarge), "%s", r.Raw[:min(len(r.Raw), 200)])
		documented(http.MethodPost, "/v1/sessions/{id}/act", r)
	})

	It("answers a session that is not ready yet with 409", func(ctx SpecContext) {
		// A session made with kubectl whose cdpUrl Secret does not exist
		// never becomes Ready.
		bs := &v1alpha1.BrowserSession{}
		bs.Namespace, bs.Name = p.Namespace, "never-ready"
		bs.Spec.Model.Name = "openai/gpt-test"
		bs.Spec.Browser = &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, CDPURLSecretRef: &v1alpha1.SecretKeyReference{Name: "missing", Key: "cdp-url"}}
		Expect(k8sClient.Create(ctx, bs)).To(Succeed())
		r := do(http.MethodPost, "/v1/sessions/never-ready/extract", p.Key, `{}`, nil)
		Expect(r.Status).To(Equal(http.StatusConflict), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/extract", r)
		Expect(r.JSON()).To(HaveKeyWithValue("code", BeElementOf("SESSION_NOT_READY", "SESSION_ENDED")))
	})
})

var _ = Describe("the OpenAPI document", func() {
	It("is served without a key, as OpenAPI 3.1 with version label 3.1.0", func() {
		r := do(http.MethodGet, "/v1/openapi.json", "", "", nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(r.JSON()).To(HaveKeyWithValue("openapi", HavePrefix("3.1")))
		Expect(r.JSON()["info"]).To(HaveKeyWithValue("version", "3.1.0"))
	})
})
