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
	"fmt"
	"io"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// The server-side cache of agent runs, end to end: agentExecute with
// shouldCache on a session whose cache is on stores the run's entry in the
// API's store (through the runner listener), and an identical later call
// is replayed by the runner with no model call.
var _ = Describe("agentExecute with the server-side cache", Ordered, func() {
	var (
		p  project
		id string
	)
	const instruction = "open the list"
	body := func() string { return agentBody(instruction, `, "shouldCache": true`) }
	// atForm puts the session's tab where every run starts: the start URL
	// is part of the run's key.
	atForm := func() {
		GinkgoHelper()
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	}
	scriptRun := func() {
		model.Enqueue(
			toolCall("goto", map[string]any{"url": pageURL("list.html")}).WithUsage(300, 10),
			toolCall("done", map[string]any{"reasoning": "the list is open", "taskComplete": true}).WithUsage(400, 20),
		)
	}
	// taskSpecs are the specs of the project's tasks of these runs.
	taskSpecs := func(ctx context.Context) []v1alpha1.AgentTaskSpec {
		GinkgoHelper()
		var tasks v1alpha1.AgentTaskList
		Expect(k8sClient.List(ctx, &tasks, client.InNamespace(p.Namespace))).To(Succeed())
		var out []v1alpha1.AgentTaskSpec
		for _, t := range tasks.Items {
			if t.Spec.ExecuteOptions.Instruction == instruction {
				out = append(out, t.Spec)
			}
		}
		return out
	}

	BeforeAll(func() {
		p = newProject(context.Background())
		id = startSession(p, `{"modelName": "openai/gpt-test", "cache": true}`)
	})

	It("runs live and stores the entry, then replays it with no model call and reports tokensSaved (scripted model)", func(ctx SpecContext) {
		atForm()
		scriptRun()
		before := len(model.Requests())
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key, body(), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/agentExecute", r)
		Expect(len(model.Requests()) - before).To(Equal(2))
		res := r.Data()["result"].(map[string]any)
		Expect(res["metadata"]).To(HaveKeyWithValue("cache", And(
			HaveKeyWithValue("status", "MISS"),
			HaveKeyWithValue("missReason", "not_cached"),
			HaveKeyWithValue("count", BeNumerically("==", 1)),
			HaveKeyWithValue("threshold", BeNumerically("==", 1)),
		)))
		Expect(r.Data()).To(HaveKey("cacheEntry"))
		// The API wrote the resolved setting into the task.
		Expect(taskSpecs(ctx)).To(ContainElement(HaveField("Cache", And(
			HaveField("Enabled", HaveValue(BeTrue())),
			HaveField("Threshold", HaveValue(BeNumerically("==", 1))),
		))))

		atForm()
		asked := len(model.Requests())
		r = do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key, body(), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/agentExecute", r)
		Expect(model.Requests()).To(HaveLen(asked), "the replay asked the model")
		res = r.Data()["result"].(map[string]any)
		Expect(res).To(HaveKeyWithValue("success", true))
		Expect(res["actions"]).To(HaveExactElements(HaveKeyWithValue("type", "goto"), HaveKeyWithValue("type", "done")))
		Expect(res["usage"]).To(HaveKeyWithValue("input_tokens", BeNumerically("==", 0)))
		Expect(res["metadata"]).To(HaveKeyWithValue("cache", And(
			HaveKeyWithValue("status", "HIT"),
			HaveKeyWithValue("count", BeNumerically("==", 2)),
			HaveKeyWithValue("tokensSaved", And(
				HaveKeyWithValue("inputTokens", BeNumerically("==", 700)),
				HaveKeyWithValue("outputTokens", BeNumerically("==", 30)),
				HaveKeyWithValue("totalTokens", BeNumerically("==", 730)),
			)),
		)))
		// The replay went where the live run went.
		page := do(http.MethodPost, "/v1/sessions/"+id+"/extract", p.Key, `{}`, nil)
		Expect(page.Status).To(Equal(http.StatusOK), "%s", page.Raw)
		Expect(string(page.Raw)).To(ContainSubstring("Catalogue"))
	})

	It("carries the report in the streamed finished frame (scripted model)", func(ctx SpecContext) {
		atForm()
		asked := len(model.Requests())
		resp, err := streamAgent(ctx, p.Key, id, body())
		Expect(err).NotTo(HaveOccurred())
		raw, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		Expect(err).NotTo(HaveOccurred())
		fs := frames(raw)
		Expect(fs).NotTo(BeEmpty())
		last := fs[len(fs)-1]
		Expect(last.Event).To(Equal("finished"), "%s", raw)
		res := last.Data.Data["result"].(map[string]any)
		Expect(res["metadata"]).To(HaveKeyWithValue("cache", And(
			HaveKeyWithValue("status", "HIT"),
			HaveKeyWithValue("count", BeNumerically("==", 3)),
		)))
		Expect(model.Requests()).To(HaveLen(asked))
	})

	It("runs live, DISABLED, with the bypass header, and writes the task's cache off (scripted model)", func(ctx SpecContext) {
		atForm()
		scriptRun()
		before := len(model.Requests())
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key, body(), map[string]string{"x-cache-bypass": "true"})
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		Expect(len(model.Requests()) - before).To(Equal(2))
		res := r.Data()["result"].(map[string]any)
		Expect(res["metadata"]).To(HaveKeyWithValue("cache", Equal(map[string]any{"status": "DISABLED"})))
		Expect(taskSpecs(ctx)).To(ContainElement(HaveField("Cache", HaveField("Enabled", HaveValue(BeFalse())))))
	})

	It("refuses a bypass header that is neither true nor false, and makes no task", func(ctx SpecContext) {
		n := len(taskSpecs(ctx))
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key, body(), map[string]string{"x-cache-bypass": "maybe"})
		Expect(r.Status).To(Equal(http.StatusBadRequest), "%s", r.Raw)
		Expect(string(r.Raw)).To(ContainSubstring("x-cache-bypass"))
		Expect(taskSpecs(ctx)).To(HaveLen(n))
	})
})

// An AgentTask made with kubectl (here, with the client) takes its own
// spec.cache: the manager puts it in the runner's request, and a replayed
// run says so in the task's status message.
var _ = Describe("an AgentTask of its own with spec.cache", Ordered, func() {
	var (
		p  project
		id string
	)
	const instruction = "open the list, as kubectl asked"

	BeforeAll(func(ctx SpecContext) {
		p = newProject(ctx)
		// The session's cache is the project's default: off.
		id = startSession(p, "")
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "model", Namespace: p.Namespace,
				Labels: map[string]string{v1alpha1.LabelSessionSecret: v1alpha1.SessionSecretAny}},
			StringData: map[string]string{"apiKey": "sk-test-key"},
		})).To(Succeed())
	})

	// runTask makes a task from the form page and waits for its end.
	runTask := func(ctx context.Context, name string) *v1alpha1.AgentTask {
		GinkgoHelper()
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		t := &v1alpha1.AgentTask{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace},
			Spec: v1alpha1.AgentTaskSpec{
				SessionRef: v1alpha1.SessionReference{Name: id},
				AgentConfig: v1alpha1.AgentConfig{Model: &v1alpha1.ModelSpec{
					Name: "openai/gpt-test", BaseURL: model.BaseURL(llmtest.OpenAI),
					APIKeySecretRef: &v1alpha1.SecretKeyReference{Name: "model", Key: "apiKey"},
				}},
				ExecuteOptions: v1alpha1.ExecuteOptions{Instruction: instruction, MaxSteps: 5},
				ShouldCache:    ptr.To(true),
				Cache:          &v1alpha1.CacheSpec{Enabled: ptr.To(true)},
			},
		}
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		Eventually(func(g Gomega) v1alpha1.AgentTaskPhase {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
			return t.Status.Phase
		}).Should(Equal(v1alpha1.AgentTaskSucceeded), "the task's status: %+v", &t.Status)
		return t
	}

	It("is stored when live, then replayed with no model call (scripted model)", func(ctx SpecContext) {
		model.Enqueue(
			toolCall("goto", map[string]any{"url": pageURL("list.html")}).WithUsage(300, 10),
			toolCall("done", map[string]any{"reasoning": "the list is open", "taskComplete": true}).WithUsage(400, 20),
		)
		before := len(model.Requests())
		first := runTask(ctx, "live")
		Expect(len(model.Requests()) - before).To(Equal(2))
		Expect(first.Status.Message).To(Equal("the agent finished: the list is open"))

		asked := len(model.Requests())
		second := runTask(ctx, "replayed")
		Expect(model.Requests()).To(HaveLen(asked), "the replay asked the model")
		Expect(second.Status.Message).To(Equal("the agent finished, replayed from the server-side cache with no model call: the list is open"))
		Expect(second.Status.Usage).To(Or(BeNil(), HaveField("InputTokens", BeZero())))
		Expect(second.Status.Actions).To(HaveExactElements(HaveField("Type", "goto"), HaveField("Type", "done")))
	})
})
