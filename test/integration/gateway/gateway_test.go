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

package gateway_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	bfclient "github.com/browserfleet/browserfleet/client"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/gateway"
	"github.com/browserfleet/browserfleet/internal/testing/procs"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// actThroughGateway acts by instruction in session id, the scripted model
// answering, and returns the request the model got.
func actThroughGateway(id string) llmtest.Request {
	GinkgoHelper()
	text := pageText(id)
	before := len(model.Requests())
	model.Enqueue(actAnswer(elementID(text, "button: Sign up"), "click").WithUsage(900, 20))
	r := call(http.MethodPost, "/v1/sessions/"+id+"/act", `{"input": "click the sign-up button"}`, nil)
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	Expect(r.Data()["result"].(map[string]any)["success"]).To(BeTrue(), "%s", r.Raw)
	reqs := model.Requests()[before:]
	Expect(reqs).To(HaveLen(1), "one model call")
	return reqs[0]
}

// gatewayTokens is browserfleet_gateway_tokens_total of the labels.
func gatewayTokens(project, modelName, kind string) float64 {
	GinkgoHelper()
	families, err := stack.Metrics().Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "browserfleet_gateway_tokens_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if labels(m) == fmt.Sprintf("kind=%s,model=%s,project=%s", kind, modelName, project) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func labels(m *dto.Metric) string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName()+"="+l.GetValue())
	}
	return strings.Join(out, ",")
}

var _ = Describe("the model gateway", Ordered, func() {
	It("serves a session with no model key: the act's model call goes through the API with the operator's key (scripted AI)", func() {
		id := startSession(`{"modelName": "openai/gpt-test"}`, nil)
		req := actThroughGateway(id)
		Expect(req.Header.Get("Authorization")).To(Equal("Bearer "+stack.GatewayKey()), "the operator's key, which the runner never had")
		Expect(req.Model).To(Equal("gpt-test"))
	})

	It("serves a session with no model at all with the default model; the session shows auto (scripted AI)", func() {
		id := startSession(`{}`, nil)
		r := call(http.MethodGet, "/v1/sessions/"+id, "", nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		Expect(r.Data()["modelName"]).To(Equal("auto"))
		req := actThroughGateway(id)
		Expect(req.Header.Get("Authorization")).To(Equal("Bearer " + stack.GatewayKey()))
		Expect(req.Model).To(Equal(strings.TrimPrefix(defaultModel, "openai/")))
	})

	It("leaves a call's model with its own key and endpoint to call its provider itself (scripted AI)", func() {
		id := startSession(`{}`, nil)
		text := pageText(id)
		before := len(model.Requests())
		model.Enqueue(actAnswer(elementID(text, "button: Sign up"), "click").WithUsage(10, 2))
		body := fmt.Sprintf(`{"input": "click the sign-up button", "options": {"model": {"modelName": "openai/gpt-own", "apiKey": "sk-call-own-3c9a", "baseURL": %q}}}`, model.BaseURL(llmtest.OpenAI))
		r := call(http.MethodPost, "/v1/sessions/"+id+"/act", body, nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		reqs := model.Requests()[before:]
		Expect(reqs).To(HaveLen(1))
		Expect(reqs[0].Header.Get("Authorization")).To(Equal("Bearer sk-call-own-3c9a"))
	})

	It("answers /v1/models/generate for the project key, and refuses a call without one (scripted AI)", func() {
		body := `{"model": "auto", "request": {"messages": [{"role": "user", "parts": [{"text": "say hi"}]}]}}`
		before := len(model.Requests())
		model.Enqueue(llmtest.Text("hi").WithUsage(7, 1))
		r := call(http.MethodPost, "/v1/models/generate", body, nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		Expect(r.JSON()["model"]).To(Equal(defaultModel))
		resp := r.JSON()["response"].(map[string]any)
		Expect(resp["text"]).To(Equal("hi"))
		Expect(resp["usage"]).To(HaveKeyWithValue("inputTokens", BeNumerically("==", 7)))
		reqs := model.Requests()[before:]
		Expect(reqs).To(HaveLen(1))
		Expect(reqs[0].Header.Get("Authorization")).To(Equal("Bearer " + stack.GatewayKey()))
		Expect(reqs[0].Text).To(ContainSubstring("say hi"))

		Expect(apiCallWithoutKey(body)).To(Equal(http.StatusUnauthorized))
		By("the runner path takes a session's runner token only")
		req, err := http.NewRequest(http.MethodPost, stack.ServicesURL()+gateway.RunnerPathGenerate, strings.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set(rpc.HeaderRunnerSession, stack.Namespace()+"/no-such-session")
		req.Header.Set("Authorization", rpc.AuthorizationScheme+" not-a-token")
		refused, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		_ = refused.Body.Close()
		Expect(refused.StatusCode).To(Equal(http.StatusUnauthorized))
		Expect(model.Requests()).To(HaveLen(before+1), "a refused call reaches no model")
	})

	It("counts tokens by project and model", func() {
		Expect(gatewayTokens(stack.Namespace(), defaultModel, "input")).To(BeNumerically(">=", 900))
		Expect(gatewayTokens(stack.Namespace(), "openai/other", "input")).To(BeNumerically(">=", 900), "gpt-test, which the operator did not list, under openai/other")
	})

	It("refuses the cua mode through the gateway before its first step, saying why", func() {
		id := startSession(`{}`, nil)
		before := len(model.Requests())
		r := call(http.MethodPost, "/v1/sessions/"+id+"/agentExecute", `{"agentConfig": {"mode": "cua"}, "executeOptions": {"instruction": "sign up"}}`, nil)
		Expect(r.Status).To(BeElementOf(http.StatusBadRequest, http.StatusUnprocessableEntity), "%s", r.Raw)
		Expect(string(r.Raw)).To(ContainSubstring("computer-use loop, which the model gateway does not carry"))
		Expect(model.Requests()).To(HaveLen(before), "no model call")
	})

	It("keeps the provider key out of runner processes, runner logs, Events, Secrets, sessions, tasks, pods and ConfigMaps", func(ctx SpecContext) {
		key := stack.GatewayKey()
		Expect(key).NotTo(BeEmpty())
		// A runner that is running now and has called the gateway: the
		// earlier specs' sessions may have ended, their processes gone.
		actThroughGateway(startSession(`{}`, nil))
		var sessions v1alpha1.BrowserSessionList
		Expect(k8sClient.List(ctx, &sessions)).To(Succeed())
		Expect(sessions.Items).NotTo(BeEmpty())
		scanned, logsScanned := 0, 0
		for _, bs := range sessions.Items {
			podKey := types.NamespacedName{Namespace: bs.Namespace, Name: v1alpha1.RunnerPodName(bs.Name)}
			if pid, ok := stack.Kubelet().PID(podKey); ok {
				pids := append([]int{pid}, procs.SessionMembers(pid)...)
				for _, p := range pids {
					for _, file := range []string{"environ", "cmdline"} {
						b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", p, file))
						if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH) {
							continue // a browser process that has exited
						}
						Expect(err).NotTo(HaveOccurred())
						Expect(string(b)).NotTo(ContainSubstring(key), "/proc/%d/%s of session %s", p, file, bs.Name)
						scanned++
					}
				}
			}
			logs, err := os.ReadFile(stack.Kubelet().LogPath(podKey, "runner"))
			if err == nil {
				Expect(string(logs)).NotTo(ContainSubstring(key), "the runner log of session %s", bs.Name)
				logsScanned++
			}
		}
		Expect(scanned).To(BeNumerically(">", 0), "runner processes were scanned")
		Expect(logsScanned).To(BeNumerically(">", 0), "runner logs were scanned")
		lists := map[string]client.ObjectList{
			"Events": &corev1.EventList{}, "Secrets": &corev1.SecretList{}, "Pods": &corev1.PodList{}, "ConfigMaps": &corev1.ConfigMapList{},
			"BrowserSessions": &v1alpha1.BrowserSessionList{}, "AgentTasks": &v1alpha1.AgentTaskList{},
		}
		for kind, list := range lists {
			Expect(k8sClient.List(ctx, list)).To(Succeed())
			raw, err := json.Marshal(list)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(raw)).NotTo(ContainSubstring(key), "the %s", kind)
		}
	})

	It("serves a local handle with only the project key: its act asks the gateway's default model with the operator's key (scripted AI)", func(ctx SpecContext) {
		c, _ := localInstance(bfclient.CreateOptions{})
		id := localElementID(ctx, c, "button: Sign up")
		before := len(model.Requests())
		model.Enqueue(actAnswer(id, "click").WithUsage(500, 10))
		res, err := c.Act(ctx, bfclient.ActInstruction("click the sign-up button"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Data.Success).To(BeTrue(), res.Data.Message)
		Expect(res.Metadata.Usage.InputTokens).To(BeEquivalentTo(500))
		reqs := model.Requests()[before:]
		Expect(reqs).To(HaveLen(1), "one model call")
		Expect(reqs[0].Header.Get("Authorization")).To(Equal("Bearer "+stack.GatewayKey()), "the operator's key, which the caller never had")
		Expect(reqs[0].Model).To(Equal(strings.TrimPrefix(defaultModel, "openai/")))
	}, NodeTimeout(3*time.Minute))

	It("serves a local handle's repeated act from the server-side cache: MISS, then HIT with no model call and the tokens saved (scripted AI)", func(ctx SpecContext) {
		c, p := localInstance(bfclient.CreateOptions{Cache: bfclient.CacheEnabled(true)})
		id := localElementID(ctx, c, "button: Sign up")
		before := len(model.Requests())
		model.Enqueue(actAnswer(id, "click").WithUsage(640, 30))
		first, err := c.Act(ctx, bfclient.ActInstruction("press the sign-up button"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(first.Data.Success).To(BeTrue(), first.Data.Message)
		Expect(first.Metadata.Cache.Status).To(Equal(bfclient.CacheStatusMISS))
		Expect(first.Metadata.Cache.MissReason).To(Equal("not_cached"))
		Expect(model.Requests()).To(HaveLen(before + 1))
		metrics, err := c.Metrics(ctx)
		Expect(err).NotTo(HaveOccurred())

		// The same content again: the page loaded anew.
		Expect(p.Goto(ctx, pages.URL+"/form.html")).To(Succeed())
		second, err := c.Act(ctx, bfclient.ActInstruction("press the sign-up button"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(second.Data.Success).To(BeTrue(), second.Data.Message)
		Expect(second.Metadata.Cache.Status).To(Equal(bfclient.CacheStatusHIT))
		Expect(second.Metadata.Cache.Count).To(Equal(2))
		Expect(second.Metadata.Cache.TokensSaved).To(Equal(&bfclient.TokensSaved{InputTokens: 640, OutputTokens: 30, TotalTokens: 670}))
		Expect(second.Metadata.Usage).To(BeZero())
		Expect(model.Requests()).To(HaveLen(before+1), "the hit asked no model")
		Expect(c.Metrics(ctx)).To(Equal(metrics), "a hit leaves the metrics as they were")
	}, NodeTimeout(3*time.Minute))

	// Last: it spends the project's budget.
	It("answers act, observe, extract, agentExecute and generate over the project's budget 429 BUDGET_EXCEEDED, with no model call (scripted AI)", func() {
		id := startSession(`{}`, nil)
		text := pageText(id)
		model.Enqueue(actAnswer(elementID(text, "button: Sign up"), "click").WithUsage(budget, 1))
		r := call(http.MethodPost, "/v1/sessions/"+id+"/act", `{"input": "click the sign-up button"}`, nil)
		Expect(r.Status).To(Equal(http.StatusOK), "the budget was not spent before this call: %s", r.Raw)

		before := len(model.Requests())
		r = call(http.MethodPost, "/v1/sessions/"+id+"/act", `{"input": "click the sign-up button"}`, nil)
		Expect(r.Status).To(Equal(http.StatusTooManyRequests), "%s", r.Raw)
		Expect(r.JSON()["code"]).To(Equal("BUDGET_EXCEEDED"))
		Expect(r.JSON()["error"]).To(ContainSubstring("budget of %d tokens", budget))
		Expect(model.Requests()).To(HaveLen(before), "no model call")

		r = call(http.MethodPost, "/v1/models/generate", `{"request": {"messages": [{"role": "user", "parts": [{"text": "x"}]}]}}`, nil)
		Expect(r.Status).To(Equal(http.StatusTooManyRequests), "%s", r.Raw)
		Expect(r.JSON()["code"]).To(Equal("BUDGET_EXCEEDED"))

		for _, op := range []struct{ path, body string }{
			{"observe", `{"instruction": "find the sign-up button"}`},
			{"extract", `{"instruction": "the page's title"}`},
			{"agentExecute", `{"agentConfig": {}, "executeOptions": {"instruction": "sign up", "maxSteps": 3}}`},
		} {
			r = call(http.MethodPost, "/v1/sessions/"+id+"/"+op.path, op.body, nil)
			Expect(r.Status).To(Equal(http.StatusTooManyRequests), "%s: %s", op.path, r.Raw)
			Expect(r.JSON()["code"]).To(Equal("BUDGET_EXCEEDED"), op.path)
		}
		Expect(model.Requests()).To(HaveLen(before), "no model call")
	})
})

// apiCallWithoutKey posts body to /v1/models/generate with no key and
// returns the status.
func apiCallWithoutKey(body string) int {
	GinkgoHelper()
	resp, err := http.Post(stack.APIURL()+"/v1/models/generate", "application/json", strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	return resp.StatusCode
}
