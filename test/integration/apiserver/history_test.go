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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// configMaps is every ConfigMap of a namespace with its resource version:
// a write to any changes it.
func configMaps(ctx context.Context, namespace string) map[string]string {
	GinkgoHelper()
	var list corev1.ConfigMapList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	out := map[string]string{}
	for _, cm := range list.Items {
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

var _ = Describe("the history of a session's calls", Ordered, func() {
	const password, variable = "hunter2-0c1f", "var-value-77ab"
	var (
		p       project
		id      string
		before  map[string]string
		actions []string
	)
	BeforeAll(func(ctx SpecContext) {
		p = newProject(ctx)
		id = startSession(p, "")
		before = configMaps(ctx, p.Namespace)
	})

	// call makes an operation call that answers want (0: any failure).
	call := func(op, body string, want int) {
		GinkgoHelper()
		r := do(http.MethodPost, "/v1/sessions/"+id+"/"+op, p.Key, body, nil)
		if want == 0 {
			Expect(r.Status).NotTo(Equal(http.StatusOK), "%s %s: %s", op, body, r.Raw)
			return
		}
		Expect(r.Status).To(Equal(want), "%s %s: %s", op, body, r.Raw)
		if want == http.StatusOK {
			actions = append(actions, r.Data()["actionId"].(string))
		}
	}

	It("is kept by the runner, redacted, and served while the session runs", func() {
		call("navigate", fmt.Sprintf(`{"url": %q}`, pageURL("form.html?token=s3cret#otp")), http.StatusOK)
		// Before anything is typed: the page's text is the page's, and
		// would show what a field holds.
		call("extract", `{}`, http.StatusOK)
		call("act", fmt.Sprintf(`{"input": {"selector": "#email", "method": "fill", "arguments": [%q], "description": "the password"}}`, password), http.StatusOK)
		call("act", fmt.Sprintf(`{"input": {"selector": "#email", "method": "fill", "arguments": ["%%name%%"]}, "options": {"variables": {"name": %q}}}`, variable), http.StatusOK)
		model.Enqueue(llmtest.JSON(`{"elements": []}`).WithUsage(300, 12))
		call("observe", fmt.Sprintf(`{"instruction": "find nothing", "options": {"model": %s}}`, modelOption()), http.StatusOK)
		// A failed call is recorded too.
		model.Enqueue(llmtest.JSON(`{"heading": 3}`).WithUsage(200, 4))
		call("extract", fmt.Sprintf(`{"instruction": "the heading", "schema": {"type": "object", "properties": {"heading": {"type": "string"}}, "required": ["heading"]}, "options": {"model": %s}}`, modelOption()), 0)

		r := do(http.MethodGet, "/v1/sessions/"+id+"/replay", p.Key, "", nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodGet, "/v1/sessions/{id}/replay", r)
		Expect(keys(r.Data())).To(ConsistOf("pages"), "a live session's replay has no summary")
		for _, secret := range []string{password, variable, "s3cret", "otp", "sk-test-key"} {
			Expect(string(r.Raw)).NotTo(ContainSubstring(secret))
		}
		pages := r.Data()["pages"].([]any)
		Expect(pages).To(HaveLen(1), "the navigated page: %s", r.Raw)
		Expect(pages[0].(map[string]any)["url"]).To(Equal(pageURL("form.html") + "?token=%5Bredacted%5D"))
		var methods, ids []string
		var failed map[string]any
		for _, pg := range pages {
			for _, a := range pg.(map[string]any)["actions"].([]any) {
				a := a.(map[string]any)
				methods = append(methods, a["method"].(string))
				ids = append(ids, a["actionId"].(string))
				if res, ok := a["result"].(map[string]any); ok && res["code"] != nil {
					failed = res
				}
			}
		}
		Expect(methods).To(Equal([]string{"navigate", "extract", "act", "act", "observe", "extract"}))
		Expect(ids[:len(actions)]).To(Equal(actions), "each call under the id its caller got")
		Expect(failed).To(HaveKey("error"))
		act := pages[0].(map[string]any)["actions"].([]any)[2].(map[string]any)
		Expect(act["parameters"]).To(HaveKeyWithValue("input", HaveKeyWithValue("arguments", []any{"[redacted]"})))
	})

	It("writes no ConfigMap", func(ctx SpecContext) {
		Expect(configMaps(ctx, p.Namespace)).To(Equal(before))
	})

	It("answers the summary in the session's status once the session ended", func(ctx SpecContext) {
		Expect(do(http.MethodPost, "/v1/sessions/"+id+"/end", p.Key, "", nil).Status).To(Equal(http.StatusOK))
		Eventually(func(g Gomega) {
			bs := &v1alpha1.BrowserSession{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: id}, bs)).To(Succeed())
			g.Expect(bs.Status.Phase).To(Equal(v1alpha1.BrowserSessionEnded))
			g.Expect(bs.Status.History).NotTo(BeNil())
		}).Should(Succeed())

		r := do(http.MethodGet, "/v1/sessions/"+id+"/replay", p.Key, "", nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodGet, "/v1/sessions/{id}/replay", r)
		Expect(r.Data()["pages"]).To(BeEmpty())
		var got struct {
			Calls      int64            `json:"calls"`
			Failed     int64            `json:"failed"`
			ByMethod   map[string]int64 `json:"byMethod"`
			TokenUsage map[string]int64 `json:"tokenUsage"`
		}
		raw, err := json.Marshal(r.Data()["summary"])
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(raw, &got)).To(Succeed())
		Expect(got.Calls).To(BeEquivalentTo(6))
		Expect(got.Failed).To(BeEquivalentTo(1))
		Expect(got.ByMethod).To(Equal(map[string]int64{"navigate": 1, "act": 2, "observe": 1, "extract": 2}))
		Expect(got.TokenUsage).To(HaveKeyWithValue("inputTokens", BeEquivalentTo(300)), "the calls that answered: observe")
		Expect(configMaps(ctx, p.Namespace)).To(Equal(before), "nor at the end")
	})
})
