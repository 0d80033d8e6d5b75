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
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// agentBody is an agentExecute body whose agent model is the scripted one.
func agentBody(instruction, extra string) string {
	return fmt.Sprintf(`{"agentConfig": {"model": %s}, "executeOptions": {"instruction": %q, "maxSteps": 5}%s}`, modelOption(), instruction, extra)
}

// toolCall is a scripted model turn that calls one tool.
func toolCall(name string, args any) llmtest.Reply {
	b, err := json.Marshal(args)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return llmtest.ToolCalls(llmtest.Call(name, string(b)))
}

var _ = Describe("agentExecute", Ordered, func() {
	var (
		p  project
		id string
	)

	BeforeAll(func() {
		p = newProject(context.Background())
		id = startSession(p, "")
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	})

	It("streams each step as it happens, then answers every step (scripted model)", func(ctx SpecContext) {
		// The model's second turn waits for the test: the first step must
		// reach the caller while the agent still runs.
		release := make(chan struct{})
		model.Enqueue(
			toolCall("ariaTree", map[string]any{}).WithUsage(300, 10),
			toolCall("done", map[string]any{"reasoning": "the form is there", "taskComplete": true}).WithUsage(400, 20).WithRelease(release),
		)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.URL+"/v1/sessions/"+id+"/agentExecute",
			strings.NewReader(agentBody("say whether the page has a sign-up form", "")))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("x-svc-api-key", p.Key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-stream-response", "true")
		resp, err := api.Client().Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))

		var raw strings.Builder
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		readUntil := func(marker string) {
			GinkgoHelper()
			for sc.Scan() {
				raw.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), marker) {
					return
				}
			}
			Fail(fmt.Sprintf("the stream ended without %q: %s", marker, raw.String()))
		}
		readUntil("step 1: ariaTree")
		close(release)
		readUntil(`"status":"finished"`)
		readUntil("") // the frame's blank line

		fs := frames([]byte(raw.String()))
		Expect(events(fs)).To(HaveExactElements(append(append([]string{"starting", "connected"}, repeat("running", len(fs)-3)...), "finished")))
		var steps []string
		for _, f := range fs {
			if f.Event == "running" {
				msg := f.Data.Data["message"].(map[string]any)
				if strings.HasPrefix(msg["message"].(string), "step ") {
					steps = append(steps, msg["message"].(string))
					Expect(msg["auxiliary"]).To(HaveKey("step"))
				}
			}
		}
		Expect(steps).To(HaveExactElements(HavePrefix("step 1: ariaTree"), HavePrefix("step 2: done")))
		res := fs[len(fs)-1].Data.Data["result"].(map[string]any)
		Expect(res).To(HaveKeyWithValue("success", true))
		Expect(res).To(HaveKeyWithValue("completed", true))
		Expect(res["actions"]).To(HaveLen(2))
		Expect(res["usage"]).To(HaveKeyWithValue("input_tokens", BeNumerically("==", 700)))
		Expect(res["usage"]).To(HaveKeyWithValue("output_tokens", BeNumerically("==", 30)))
		// The task is the record, as kubectl shows it.
		Eventually(func(g Gomega) {
			var tasks v1alpha1.AgentTaskList
			g.Expect(k8sClient.List(ctx, &tasks, client.InNamespace(p.Namespace))).To(Succeed())
			g.Expect(tasks.Items).To(ContainElement(And(
				HaveField("Status.Phase", v1alpha1.AgentTaskSucceeded),
				HaveField("Status.Steps", BeNumerically("==", 2)),
			)))
		}).Should(Succeed())
	})

	It("answers the cache entry it was asked for, documented (scripted model)", func() {
		model.Enqueue(
			toolCall("goto", map[string]any{"url": pageURL("form.html")}),
			toolCall("done", map[string]any{"reasoning": "loaded", "taskComplete": true}),
		)
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key, agentBody("open the form", `, "shouldCache": true`), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/agentExecute", r)
		Expect(keys(r.Data())).To(ConsistOf("result", "cacheEntry"))
		entry := r.Data()["cacheEntry"].(map[string]any)
		Expect(entry["cacheKey"]).NotTo(BeEmpty())
		b, err := json.Marshal(entry["entry"])
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(ContainSubstring(pageURL("form.html")))
	})

	It("answers 422 saying what failed when the model cannot be called (scripted model)", func() {
		model.Enqueue(llmtest.Status(http.StatusUnauthorized).WithMessage("invalid api key"))
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key, agentBody("open the form", ""), nil)
		Expect(r.Status).To(Equal(http.StatusUnprocessableEntity), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/agentExecute", r)
		Expect(r.JSON()).To(HaveKeyWithValue("code", "AGENT_FAILED"))
		Expect(r.JSON()["error"]).To(And(ContainSubstring("401"), ContainSubstring("invalid api key")))
		Expect(string(r.Raw)).NotTo(ContainSubstring("sk-test-key"))
	})

	It("refuses useSearch, naming the field, and makes no task", func(ctx SpecContext) {
		var before v1alpha1.AgentTaskList
		Expect(k8sClient.List(ctx, &before, client.InNamespace(p.Namespace))).To(Succeed())
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key,
			`{"agentConfig": {}, "executeOptions": {"instruction": "search", "useSearch": true}}`, nil)
		Expect(r.Status).To(Equal(http.StatusBadRequest), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/agentExecute", r)
		Expect(string(r.Raw)).To(ContainSubstring("executeOptions.useSearch"))
		Consistently(func(g Gomega) {
			var after v1alpha1.AgentTaskList
			g.Expect(k8sClient.List(ctx, &after, client.InNamespace(p.Namespace))).To(Succeed())
			g.Expect(after.Items).To(HaveLen(len(before.Items)))
		}, "1s").Should(Succeed())
	})
})

func repeat(s string, n int) []string {
	out := make([]string, 0, n)
	for range n {
		out = append(out, s)
	}
	return out
}
