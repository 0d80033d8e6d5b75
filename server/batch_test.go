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
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// The batch's runs through a session's runner are in the client
// library's integration suite (test/integration/client), on the local
// stack; these specs hold what the API decides before it calls a runner.
var _ = Describe("POST /v1/sessions/{id}/batch", func() {
	const path = "/v1/sessions/%s/batch"
	batchPath := func(id string) string { return strings.Replace(path, "%s", id, 1) }
	conforms := func(status int, raw []byte) {
		GinkgoHelper()
		validator, err := serverv1.NewValidator()
		Expect(err).NotTo(HaveOccurred())
		Expect(validator.ValidateResponse(http.MethodPost, "/v1/sessions/{id}/batch", status, "application/json", raw)).To(Succeed())
	}

	It("refuses a bad body with issues naming every field, before it looks for the session", func(ctx SpecContext) {
		p := newProject(ctx)
		st, raw := callRaw(api, http.MethodPost, batchPath("no-such-session"), p.Key,
			`{"input": 1, "timeout": 600001, "metrics": {"actPromptTokens": 1, "bogus": 2}, "model": "gpt"}`, nil)
		Expect(st).To(Equal(http.StatusBadRequest), "%s", raw)
		Expect(string(raw)).To(MatchJSON(`{"success":false,"code":"INVALID_REQUEST",
			"error":"invalid request body: metrics.bogus: unknown field; model: must be provider-prefixed, <provider>/<model>, for example openai/gpt-4.1-mini; source: is required; timeout: must be at most 600000",
			"issues":[{"path":"metrics.bogus","message":"unknown field"},
				{"path":"model","message":"must be provider-prefixed, <provider>/<model>, for example openai/gpt-4.1-mini, or auto (the model gateway's default model)"},
				{"path":"source","message":"is required"},{"path":"timeout","message":"must be at most 600000"}]}`))
		conforms(st, raw)
	})

	It("refuses a missing key with 401, and another project's session as one that does not exist", func(ctx SpecContext) {
		a, b := newProject(ctx), newProject(ctx)
		body := `{"source": "async () => 1"}`
		st, raw := callRaw(api, http.MethodPost, batchPath("x"), "", body, nil)
		Expect(st).To(Equal(http.StatusUnauthorized))
		Expect(string(raw)).To(MatchJSON(unauthorized))

		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession("theirs", a.Namespace).Obj())).To(Succeed())
		Eventually(func() int {
			st, _ := callRaw(api, http.MethodGet, "/v1/sessions/theirs", a.Key, "", nil)
			return st
		}).Should(Equal(http.StatusOK))
		_, missing := callRaw(api, http.MethodPost, batchPath("missing"), b.Key, body, nil)
		st, raw = callRaw(api, http.MethodPost, batchPath("theirs"), b.Key, body, nil)
		Expect(st).To(Equal(http.StatusNotFound))
		Expect(raw).To(Equal(missing))
		conforms(st, raw)
	})

	It("answers a session that is not ready with 409, without calling a runner", func(ctx SpecContext) {
		p := newProject(ctx)
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession("pending", p.Namespace).Obj())).To(Succeed())
		var st int
		var raw []byte
		Eventually(func() int {
			st, raw = callRaw(api, http.MethodPost, batchPath("pending"), p.Key, `{"source": "async () => 1"}`, nil)
			return st
		}).Should(Equal(http.StatusConflict))
		Expect(string(raw)).To(ContainSubstring(`"code":"SESSION_NOT_READY"`))
		conforms(st, raw)
	})

	It("refuses a body over the API's limit with 413", func(ctx SpecContext) {
		p := newProject(ctx)
		big := `{"source": "async (batch, input) => input", "input": "` + strings.Repeat("a", 1<<20) + `"}`
		st, raw := callRaw(api, http.MethodPost, batchPath("any"), p.Key, big, nil)
		Expect(st).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(string(raw)).To(ContainSubstring(`"code":"PAYLOAD_TOO_LARGE"`))
		conforms(st, raw)
	})
})
