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

package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/testing/procs"
)

// finalFrame is the last SSE frame of a streamed reply: its event and data.
func finalFrame(raw []byte) (event string, data string) {
	blocks := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	last := blocks[len(blocks)-1]
	for _, line := range strings.Split(last, "\n") {
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = d
		}
	}
	return event, data
}

// uidOf is the Uid line of /proc/<pid>/status: real, effective, saved and
// file system uid.
func uidOf(pid int) []string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(v)
		}
	}
	return nil
}

// operate makes an operation call, plain or streamed, and checks that it
// succeeded; it returns the result's JSON text.
func operate(id, op, body string, stream bool) string {
	headers := map[string]string{}
	if stream {
		headers["x-stream-response"] = "true"
	}
	r := call(http.MethodPost, "/v1/sessions/"+id+"/"+op, body, headers)
	ExpectWithOffset(1, r.Status).To(Equal(http.StatusOK), "%s: %s", op, r.Raw)
	if !stream {
		ExpectWithOffset(1, r.ContentType).To(Equal("application/json"))
		ExpectWithOffset(1, r.JSON()).To(HaveKeyWithValue("success", true))
		return string(r.Raw)
	}
	ExpectWithOffset(1, r.ContentType).To(Equal("text/event-stream"))
	ExpectWithOffset(1, string(r.Raw)).To(HavePrefix("event: starting\n"))
	event, data := finalFrame(r.Raw)
	ExpectWithOffset(1, event).To(Equal("finished"), "%s", r.Raw)
	return data
}

var _ = Describe("a session over /v1", func() {
	DescribeTable("navigates, acts, observes and extracts",
		func(stream bool) {
			id := startSession()
			Expect(session(context.Background(), id).Status.Phase).To(Equal(v1alpha1.BrowserSessionReady))
			Expect(operate(id, "navigate", fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), stream)).To(ContainSubstring(pageURL("form.html")))

			// An action object: no model call.
			before := len(model.Requests())
			operate(id, "act", `{"input": {"selector": "#email", "method": "fill", "arguments": ["ada@example.com"], "description": "type the email"}}`, stream)
			Expect(model.Requests()).To(HaveLen(before))

			text := pageText(id)
			model.Enqueue(actAnswer(elementID(text, "button: Sign up"), "click").WithUsage(900, 20))
			operate(id, "act", `{"input": "click the sign-up button"}`, stream)
			Expect(pageText(id)).To(ContainSubstring("signed up ada@example.com"))

			model.Enqueue(llmtest.JSON(fmt.Sprintf(`{"elements": [{"elementId": %q, "description": "the catalogue link", "method": "click", "arguments": []}]}`, elementID(text, "link: See the catalogue"))))
			Expect(operate(id, "observe", `{"instruction": "the link to the catalogue"}`, stream)).To(ContainSubstring(`"selector":"xpath=`))

			model.Enqueue(llmtest.JSON(`{"message": "signed up ada@example.com"}`))
			Expect(operate(id, "extract", `{"instruction": "the confirmation", "schema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}`, stream)).
				To(ContainSubstring(`"message":"signed up ada@example.com"`))

			r := call(http.MethodPost, "/v1/sessions/"+id+"/end", "", nil)
			Expect(r.Status).To(Equal(http.StatusOK))
		},
		Entry("plain", false),
		Entry("streamed", true),
	)

	It("ends: the pod, the runner process and its Chromium are gone within seconds", func(ctx SpecContext) {
		id := startSession()
		pid := runnerPID(id)
		Expect(len(procs.SessionMembers(pid))).To(BeNumerically(">", 1), "the runner and its Chromium")
		r := call(http.MethodPost, "/v1/sessions/"+id+"/end", "", nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Eventually(func() []int { return procs.SessionMembers(pid) }, 15*time.Second).Should(BeEmpty())
		Eventually(func() bool {
			err := k8s.Get(ctx, types.NamespacedName{Namespace: stack.Namespace(), Name: v1alpha1.RunnerPodName(id)}, &corev1.Pod{})
			return apierrors.IsNotFound(err)
		}, 15*time.Second).Should(BeTrue())
		Eventually(func() v1alpha1.BrowserSessionPhase { return session(ctx, id).Status.Phase }).Should(Equal(v1alpha1.BrowserSessionEnded))
	})

	It("runs the runner and its Chromium as the pod's user, not as the stack's root", func() {
		id := startSession()
		pid := runnerPID(id)
		// The runner pod's runAsUser; a stack that is not root cannot
		// change users, and runs them as itself.
		want := 65532
		if os.Geteuid() != 0 {
			want = os.Geteuid()
		}
		members := procs.SessionMembers(pid)
		Expect(len(members)).To(BeNumerically(">", 1), "the runner and its Chromium")
		for _, p := range members {
			Expect(uidOf(p)).To(Equal([]string{strconv.Itoa(want), strconv.Itoa(want), strconv.Itoa(want), strconv.Itoa(want)}), "real, effective, saved and file system uid of %d", p)
		}
		Expect(call(http.MethodPost, "/v1/sessions/"+id+"/end", "", nil).Status).To(Equal(http.StatusOK))
	})

	It("fails a session whose runner is killed, with a reason, and refuses calls to it clearly", func(ctx SpecContext) {
		id := startSession()
		pid := runnerPID(id)
		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		Eventually(func() v1alpha1.BrowserSessionPhase { return session(ctx, id).Status.Phase }).Should(Equal(v1alpha1.BrowserSessionFailed))
		Expect(session(ctx, id).Status.Message).NotTo(BeEmpty())
		r := call(http.MethodPost, "/v1/sessions/"+id+"/act", `{"input": {"selector": "body", "method": "click", "description": "x"}}`, nil)
		Expect(r.Status).To(Equal(http.StatusConflict), "%s", r.Raw)
		Expect(r.JSON()).To(HaveKeyWithValue("code", "SESSION_ENDED"))
		Expect(r.JSON()["error"]).To(ContainSubstring("failed"))
		// Chromium went with its runner.
		Eventually(func() []int { return procs.SessionMembers(pid) }, 15*time.Second).Should(BeEmpty())
	})

	It("starts ten sessions at once, all Ready, and ends them all cleanly", func(ctx SpecContext) {
		const n = 10
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer GinkgoRecover()
				ids[i] = startSession()
			})
		}
		wg.Wait()
		pids := make([]int, n)
		for i, id := range ids {
			Expect(session(ctx, id).Status.Phase).To(Equal(v1alpha1.BrowserSessionReady))
			pids[i] = runnerPID(id)
			r := call(http.MethodPost, "/v1/sessions/"+id+"/navigate", fmt.Sprintf(`{"url": %q}`, pageURL("list.html")), nil)
			Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		}
		for _, id := range ids {
			wg.Go(func() {
				defer GinkgoRecover()
				r := call(http.MethodPost, "/v1/sessions/"+id+"/end", "", nil)
				Expect(r.Status).To(Equal(http.StatusOK))
			})
		}
		wg.Wait()
		for i, id := range ids {
			Eventually(func() v1alpha1.BrowserSessionPhase { return session(ctx, id).Status.Phase }).Should(Equal(v1alpha1.BrowserSessionEnded))
			Eventually(func() []int { return procs.SessionMembers(pids[i]) }, 20*time.Second).Should(BeEmpty())
		}
	})
})

var _ = Describe("sessions as resources", func() {
	It("kubectl apply -f config/samples/ makes a session that becomes Ready and runs the sample task in it (scripted model), and kubectl delete ends it", func(ctx SpecContext) {
		_, err := kubectl("create", "secret", "generic", "model-keys", "--from-literal=openai=sk-e2e", "--from-literal=anthropic=sk-e2e", "--from-literal=google=sk-e2e")
		Expect(err).NotTo(HaveOccurred())
		// As the samples say: a session may reference only Secrets that
		// opted in.
		_, err = kubectl("label", "secret", "model-keys", v1alpha1.LabelSessionSecret+"=true")
		Expect(err).NotTo(HaveOccurred())
		// The sample task's agent reads the page and finishes at once: no
		// step of it leaves the machine.
		model.Enqueue(llmtest.ToolCalls(llmtest.Call("ariaTree", `{}`)).WithUsage(500, 10),
			llmtest.ToolCalls(llmtest.Call("done", `{"reasoning": "The page is blank: there is no heading to report.", "taskComplete": true}`)).WithUsage(600, 20))
		out, err := kubectl("apply", "-f", "config/samples/")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("browsersession.browserfleet.io/example-minimal created"))
		Expect(out).To(ContainSubstring("agenttask.browserfleet.io/example-agent created"))
		Eventually(func() v1alpha1.BrowserSessionPhase { return session(ctx, "example-minimal").Status.Phase }).Should(Equal(v1alpha1.BrowserSessionReady))
		out, err = kubectl("get", "bs", "example-minimal")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`example-minimal\s+Ready`))
		pid := runnerPID("example-minimal")
		// kubectl get at shows the task's session, phase and steps.
		Eventually(func() (string, error) { return kubectl("get", "at", "example-agent") }).
			Should(MatchRegexp(`example-agent\s+example-minimal\s+Succeeded\s+2\s`))
		out, err = kubectl("get", "at", "example-agent", "-o", "yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("there is no heading to report"))
		Expect(out).To(ContainSubstring("inputTokens: 1100"))

		_, err = kubectl("delete", "-f", "config/samples/", "--wait=true", "--timeout=60s")
		Expect(err).NotTo(HaveOccurred())
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: stack.Namespace(), Name: "example-minimal"}, &v1alpha1.BrowserSession{})).
			To(Satisfy(apierrors.IsNotFound))
		Eventually(func() []int { return procs.SessionMembers(pid) }, 15*time.Second).Should(BeEmpty())
		_, err = kubectl("delete", "secret", "model-keys")
		Expect(err).NotTo(HaveOccurred())
	})
})

var _ = Describe("a restart of the stack", func() {
	It("keeps the sessions' records and the key", func(ctx SpecContext) {
		id := startSession()
		key, env := stack.APIKey(), stack.EnvPath()
		Expect(stack.Stop()).To(Succeed())
		stack = nil
		startStack()
		Expect(stack.APIKey()).To(Equal(key))
		Expect(stack.EnvPath()).To(Equal(env))
		// Its record is there; its browser went with the old stack, so
		// it failed, saying why.
		Eventually(func() v1alpha1.BrowserSessionPhase { return session(ctx, id).Status.Phase }).Should(Equal(v1alpha1.BrowserSessionFailed))
		r := call(http.MethodGet, "/v1/sessions/"+id, "", nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		Expect(r.Data()).To(HaveKeyWithValue("phase", "Failed"))
		// The key still works for new sessions.
		id = startSession()
		r = call(http.MethodPost, "/v1/sessions/"+id+"/end", "", nil)
		Expect(r.Status).To(Equal(http.StatusOK))
	})
})
