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
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/internal/testing/searchtest"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/search"
	"github.com/browserfleet/browserfleet/server"
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

// streamAgent starts a streamed agentExecute whose body the caller reads
// as it comes.
func streamAgent(ctx context.Context, key, session, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.URL+"/v1/sessions/"+session+"/agentExecute", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-svc-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-stream-response", "true")
	return api.Client().Do(req)
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
		resp, err := streamAgent(ctx, p.Key, id, agentBody("say whether the page has a sign-up form", ""))
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
		Expect(events(fs)).To(HaveExactElements(append(append([]string{"starting", "connected"}, slices.Repeat([]string{"running"}, len(fs)-3)...), "finished")))
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

	It("stops the agent when its caller goes away: the task is deleted, and the model is asked nothing more (scripted model)", func(ctx SpecContext) {
		// The second answer is held for as long as the spec runs: the agent
		// is mid-step when its caller goes away.
		release := make(chan struct{})
		defer close(release)
		model.Enqueue(
			toolCall("think", map[string]any{"reasoning": "first"}),
			toolCall("think", map[string]any{"reasoning": "second"}).WithRelease(release),
		)
		before := len(model.Requests())
		callCtx, hangUp := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			resp, err := streamAgent(callCtx, p.Key, id, agentBody("think twice", ""))
			if err == nil {
				// Read until the hang-up cuts the stream.
				_, err = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			done <- err
		}()
		Eventually(func() int { return len(model.Requests()) }).Should(BeNumerically(">=", before+2))
		var task v1alpha1.AgentTask
		Eventually(func(g Gomega) {
			var tasks v1alpha1.AgentTaskList
			g.Expect(k8sClient.List(ctx, &tasks, client.InNamespace(p.Namespace))).To(Succeed())
			found := false
			for _, t := range tasks.Items {
				if t.Spec.ExecuteOptions.Instruction == "think twice" {
					task, found = t, true
				}
			}
			g.Expect(found).To(BeTrue())
		}).Should(Succeed())
		hangUp()
		Eventually(func() bool {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(&task), &v1alpha1.AgentTask{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "the task outlived its caller")
		// The runner stopped the agent mid-step, and its history says so.
		Eventually(func() string {
			r := do(http.MethodGet, "/v1/sessions/"+id+"/replay", p.Key, "", nil)
			return strings.ToLower(string(r.Raw))
		}).Should(And(ContainSubstring(`"method":"agentexecute"`), ContainSubstring("cancel")))
		asked := len(model.Requests())
		Consistently(func() int { return len(model.Requests()) }, "2s").Should(Equal(asked))
		Expect(model.Pending()).To(BeZero())
		Eventually(done).Should(Receive(MatchError(context.Canceled)))
	})

	It("tells the model a variable's name and description, never its value (scripted model)", func() {
		before := len(model.Requests())
		model.Enqueue(toolCall("done", map[string]any{"reasoning": "nothing to type", "taskComplete": true}))
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key,
			fmt.Sprintf(`{"agentConfig": {"model": %s}, "executeOptions": {"instruction": "sign in with %%password%%", "maxSteps": 5,
				"variables": {"password": {"value": "s3cret-9f2c", "description": "the account's password"}}}}`, modelOption()), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		reqs := model.Requests()[before:]
		Expect(reqs).To(HaveLen(1))
		Expect(reqs[0].Text).To(And(ContainSubstring("password"), ContainSubstring("the account's password")))
		Expect(string(reqs[0].Body)).NotTo(ContainSubstring("s3cret-9f2c"))
		Expect(string(r.Raw)).NotTo(ContainSubstring("s3cret-9f2c"))
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

	It("answers 422 saying what failed when the model cannot be called, and keeps the model key out of the task (scripted model)", func(ctx SpecContext) {
		model.Enqueue(llmtest.Status(http.StatusUnauthorized).WithMessage("invalid api key"))
		body := fmt.Sprintf(`{"agentConfig": {"model": {"modelName": "openai/gpt-test", "baseURL": %q, "apiKey": "sk-agent-secret"}}, "executeOptions": {"instruction": "sign up", "maxSteps": 5}}`,
			model.BaseURL(llmtest.OpenAI))
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key, body, nil)
		Expect(r.Status).To(Equal(http.StatusUnprocessableEntity), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/agentExecute", r)
		Expect(r.JSON()).To(HaveKeyWithValue("code", "AGENT_FAILED"))
		Expect(r.JSON()["error"]).To(And(ContainSubstring("401"), ContainSubstring("invalid api key")))
		Expect(string(r.Raw)).NotTo(ContainSubstring("sk-agent-secret"))
		reqs := model.Requests()
		Expect(reqs[len(reqs)-1].Header.Get("Authorization")).To(Equal("Bearer sk-agent-secret"))

		var tasks v1alpha1.AgentTaskList
		Expect(k8sClient.List(ctx, &tasks, client.InNamespace(p.Namespace))).To(Succeed())
		Expect(tasks.Items).NotTo(BeEmpty())
		for _, t := range tasks.Items {
			Expect(t.Spec.SessionRef.Name).To(Equal(id))
			raw, err := json.Marshal(t)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(raw)).NotTo(ContainSubstring("sk-agent-secret"))
		}

		// Streamed, the failure is the last frame.
		model.Enqueue(llmtest.Status(http.StatusUnauthorized).WithMessage("invalid api key"))
		r = do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key, body, map[string]string{"x-stream-response": "true"})
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/agentExecute", r)
		fs := frames(r.Raw)
		Expect(events(fs)[:2]).To(Equal([]string{"starting", "connected"}))
		Expect(fs[len(fs)-1].Event).To(Equal("error"))
		Expect(fs[len(fs)-1].Data.Data["error"]).To(ContainSubstring("invalid api key"))
	})

	It("searches the web through the API's relay, whose provider key never reaches the runner (scripted model)", func(ctx SpecContext) {
		brave.Answer("browserfleet operator", searchtest.Hit{Title: "<strong>browserfleet</strong> on GitHub", URL: "https://github.com/browserfleet/browserfleet", Description: "AI browser automation on Kubernetes"})
		before, searches := len(model.Requests()), len(brave.Requests())
		model.Enqueue(
			toolCall("search", map[string]any{"query": "browserfleet operator"}),
			toolCall("done", map[string]any{"reasoning": "found its repository", "taskComplete": true, "output": map[string]any{"repository": "https://github.com/browserfleet/browserfleet"}}),
		)
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key, fmt.Sprintf(`{"agentConfig": {"model": %s}, "executeOptions": {"instruction": "find the project's repository", "maxSteps": 5, "useSearch": true}}`, modelOption()), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		res := r.Data()["result"].(map[string]any)
		Expect(res["actions"]).To(ContainElement(And(HaveKeyWithValue("type", "search"), HaveKeyWithValue("instruction", "browserfleet operator"))))
		// done's output object, which the spec's result has no field for.
		Expect(res["metadata"]).To(HaveKeyWithValue("output", HaveKeyWithValue("repository", "https://github.com/browserfleet/browserfleet")))
		Expect(brave.Requests()[searches:]).To(HaveExactElements(searchtest.Request{Query: "browserfleet operator", Count: search.DefaultResults, KeyOK: true}))
		reqs := model.Requests()[before:]
		Expect(reqs).To(HaveLen(2))
		Expect(reqs[0].Tools).To(ContainElement("search"))
		Expect(reqs[1].ToolResults).To(HaveExactElements(HaveField("Text", And(ContainSubstring("browserfleet on GitHub"), ContainSubstring("https://github.com/browserfleet/browserfleet")))))

		// The runner has the relay's address, and nothing of the provider.
		var pod corev1.Pod
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: v1alpha1.RunnerPodName(id)}, &pod)).To(Succeed())
		Expect(pod.Spec.Containers[0].Args).To(ContainElement("--" + rpc.FlagSearchURL + "=" + relay.URL + search.RelayPath))
		b, err := json.Marshal(pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).NotTo(ContainSubstring(braveKey))
		Expect(string(r.Raw)).NotTo(ContainSubstring(braveKey))
	})

	It("serves the search relay to a session's runner only, by its token", func(ctx SpecContext) {
		var secret corev1.Secret
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: v1alpha1.RunnerTokenSecretName(id)}, &secret)).To(Succeed())
		token := string(secret.Data[rpc.TokenSecretKey])
		other := newProject(ctx)
		otherID := startSession(other, "")
		brave.Answer("relay check", searchtest.Hit{Title: "hit", URL: "https://example.com/"})
		searches := len(brave.Requests())
		try := func(session, token string) error {
			c, err := search.NewRelayClient(relay.URL+search.RelayPath, session, token, nil)
			Expect(err).NotTo(HaveOccurred())
			_, err = c.Search(ctx, "relay check")
			return err
		}
		Expect(try(p.Namespace+"/"+id, token)).To(Succeed())
		Expect(try(p.Namespace+"/"+id, token+"x")).To(MatchError(ContainSubstring("serves runners only")))
		Expect(try(other.Namespace+"/"+otherID, token)).To(MatchError(ContainSubstring("serves runners only")), "another session's name with this session's token")
		Expect(try(p.Namespace+"/no-such-session", token)).To(MatchError(ContainSubstring("serves runners only")))
		Expect(brave.Requests()[searches:]).To(HaveLen(1), "refused callers never reach the provider")
	})

	It("refuses useSearch with mode cua, naming the field, and makes no task", func(ctx SpecContext) {
		var before v1alpha1.AgentTaskList
		Expect(k8sClient.List(ctx, &before, client.InNamespace(p.Namespace))).To(Succeed())
		r := do(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key,
			`{"agentConfig": {"cua": true}, "executeOptions": {"instruction": "search", "useSearch": true}}`, nil)
		Expect(r.Status).To(Equal(http.StatusBadRequest), "%s", r.Raw)
		documented(http.MethodPost, "/v1/sessions/{id}/agentExecute", r)
		Expect(string(r.Raw)).To(ContainSubstring("executeOptions.useSearch: mode cua"))
		Consistently(func(g Gomega) {
			var after v1alpha1.AgentTaskList
			g.Expect(k8sClient.List(ctx, &after, client.InNamespace(p.Namespace))).To(Succeed())
			g.Expect(after.Items).To(HaveLen(len(before.Items)))
		}, "1s").Should(Succeed())
	})

	It("refuses useSearch where the operator configured no search provider, naming the field", func() {
		opts := apiOptions
		opts.Search = nil
		s, err := server.New(opts)
		Expect(err).NotTo(HaveOccurred())
		plain := httptest.NewServer(s)
		defer plain.Close()
		r := apitest.Do(context.Background(), plain.Client(), plain.URL, http.MethodPost, "/v1/sessions/"+id+"/agentExecute", p.Key,
			`{"agentConfig": {}, "executeOptions": {"instruction": "search", "useSearch": true}}`, nil)
		Expect(r.Status).To(Equal(http.StatusBadRequest), "%s", r.Raw)
		Expect(string(r.Raw)).To(And(ContainSubstring("executeOptions.useSearch"), ContainSubstring("no search provider configured")))
	})
})
