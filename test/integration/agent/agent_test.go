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

package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	apimetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	. "github.com/browserfleet/browserfleet/internal/testing/matchers"
)

var _ = Describe("AgentTask dispatch", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("runs a task applied with kubectl next to its session, and shows steps, actions, result and usage (scripted model)", func(ctx SpecContext) {
		model := newModel()
		model.Enqueue(gotoHome(), readPage(), done("The home page offers a sign-in link."))
		manifest := fmt.Sprintf(`apiVersion: browserfleet.io/v1alpha1
kind: BrowserSession
metadata: {name: browse, namespace: %[1]s}
spec:
  model: {name: %[2]s}
---
apiVersion: browserfleet.io/v1alpha1
kind: AgentTask
metadata: {name: look-around, namespace: %[1]s}
spec:
  sessionRef: {name: browse}
  agentConfig:
    model:
      name: %[2]s
      baseURL: %[3]s
      apiKeySecretRef: {name: model, key: apiKey}
  executeOptions:
    instruction: Tell me what the home page offers.
    maxSteps: 10
`, ns, modelName, model.BaseURL(llmtest.OpenAI))
		path := filepath.Join(GinkgoT().TempDir(), "task.yaml")
		Expect(os.WriteFile(path, []byte(manifest), 0o600)).To(Succeed())
		out, errOut, err := fw.Kubectl("apply", "-f", path)
		Expect(err).NotTo(HaveOccurred(), "%s%s", out, errOut)
		DeferCleanup(endSession, types.NamespacedName{Namespace: ns, Name: "browse"})

		key := types.NamespacedName{Namespace: ns, Name: "look-around"}
		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskSucceeded))
		t := task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionSucceeded, apimetav1.ConditionTrue, v1alpha1.AgentTaskReasonCompleted))
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionRunning, apimetav1.ConditionFalse, v1alpha1.AgentTaskReasonCompleted))
		Expect(t.Status.Steps).To(BeEquivalentTo(3))
		Expect(actionTypes(t)).To(Equal([]string{"goto", "ariaTree", "done"}))
		Expect(t.Status.Actions[0].PageURL).To(Equal("about:blank"))
		Expect(t.Status.Actions[1].PageURL).To(Equal(site.URL + "/"))
		Expect(t.Status.Actions[1].PageText).To(ContainSubstring("Sign in"))
		Expect(t.Status.Result).To(Equal(&v1alpha1.AgentResult{
			Success: ptr.To(true), Completed: ptr.To(true), Message: "The home page offers a sign-in link.",
			Output: `{"answer":"The home page offers a sign-in link."}`,
		}))
		Expect(t.Status.Usage).NotTo(BeNil())
		Expect(t.Status.Usage.InputTokens).To(BeEquivalentTo(300))
		Expect(t.Status.Usage.OutputTokens).To(BeEquivalentTo(30))
		Expect(t.Status.StartTime).NotTo(BeNil())
		Expect(t.Status.CompletionTime).NotTo(BeNil())
		Expect(t.Status.Message).To(Equal("the agent finished: The home page offers a sign-in link."))
		Eventually(taskFinalizers(ctx, key)).Should(BeEmpty(), "a finished task holds nothing back")

		// The task's key, read from its Secret by the manager, reached the
		// model through the runner, and nowhere else.
		for _, r := range model.Requests() {
			Expect(r.Header.Get("Authorization")).To(Equal("Bearer " + modelKey))
		}
		yaml, errOut, err := fw.Kubectl("get", "at", "look-around", "-n", ns, "-o", "yaml")
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(yaml).To(ContainSubstring("phase: Succeeded"))
		Expect(yaml).NotTo(ContainSubstring(modelKey))

		table, errOut, err := fw.Kubectl("get", "at", "-n", ns)
		Expect(err).NotTo(HaveOccurred(), errOut)
		lines := strings.Split(strings.TrimSpace(table), "\n")
		Expect(lines).To(HaveLen(2), table)
		Expect(strings.Fields(lines[0])).To(Equal([]string{"NAME", "SESSION", "PHASE", "STEPS", "AGE"}))
		Expect(strings.Fields(lines[1])[:4]).To(Equal([]string{"look-around", "browse", "Succeeded", "3"}))

		Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElements("Pending", "Running", "Succeeded"))
	})

	It("runs two tasks of one session one after the other: the second waits Pending, then runs (scripted model)", func(ctx SpecContext) {
		model := newModel()
		skey := newSession(ctx, ns, "shared")
		model.Enqueue(gotoHome(), think("a moment").WithDelay(3*time.Second), done("first done"))
		first := newTask(ns, "first", skey.Name, model)
		Expect(k8sClient.Create(ctx, first)).To(Succeed())
		fkey := client.ObjectKeyFromObject(first)
		Eventually(taskPhase(ctx, fkey)).Should(Equal(v1alpha1.AgentTaskRunning))

		model.Enqueue(gotoHome(), done("second done"))
		second := newTask(ns, "second", skey.Name, model)
		Expect(k8sClient.Create(ctx, second)).To(Succeed())
		skey2 := client.ObjectKeyFromObject(second)
		Eventually(func(g Gomega) string { return task(ctx, skey2)(g).Status.Message }).Should(Equal(
			`waiting for AgentTask "first" to finish: one task runs in BrowserSession "shared" at a time, the oldest first`))
		Expect(taskPhase(ctx, skey2)(Default)).To(Equal(v1alpha1.AgentTaskPending))

		Eventually(taskPhase(ctx, fkey)).Should(Equal(v1alpha1.AgentTaskSucceeded))
		Eventually(taskPhase(ctx, skey2)).Should(Equal(v1alpha1.AgentTaskSucceeded))
		f, s := task(ctx, fkey)(Default), task(ctx, skey2)(Default)
		Expect(f.Status.Result.Message).To(Equal("first done"))
		Expect(s.Status.Result.Message).To(Equal("second done"))
		Expect(s.Status.StartTime.Time).NotTo(BeTemporally("<", f.Status.CompletionTime.Time),
			"the second started after the first finished")
		Expect(model.Requests()).To(HaveLen(5))
	})

	It("stops the agent in the runner when its task is deleted mid-run: no further model request (scripted model)", func(ctx SpecContext) {
		model := newModel()
		skey := newSession(ctx, ns, "stop")
		// The second model call is under way when the task is deleted;
		// the third reply must never be asked for.
		model.Enqueue(gotoHome(), think("slowly").WithDelay(2*time.Minute), done("never"))
		t := newTask(ns, "doomed", skey.Name, model)
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(requests(model)).Should(Equal(2))
		Eventually(taskSteps(ctx, key)).Should(BeEquivalentTo(1))
		Expect(task(ctx, key)(Default).Finalizers).To(ContainElement(v1alpha1.FinalizerAgentTask))

		Expect(k8sClient.Delete(ctx, t)).To(Succeed())
		Eventually(taskGone(ctx, key)).Should(BeTrue(), "the task goes once the runner stopped its agent")
		Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElement("Cancelled"))
		Consistently(requests(model)).Should(Equal(2))
		Expect(model.Pending()).To(Equal(1))
	})

	It("re-attaches after a manager restart mid-task: no step lost or run twice (scripted model)", func(ctx SpecContext) {
		model := newModel()
		skey := newSession(ctx, ns, "steady")
		// Steps 2 and 3 take a while: step 2 runs while no manager runs,
		// step 3 while the next one follows.
		model.Enqueue(gotoHome(), think("one"), think("two").WithDelay(3*time.Second), readPage().WithDelay(3*time.Second), done("all done"))
		t := newTask(ns, "steady-task", skey.Name, model)
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(taskSteps(ctx, key)).Should(BeEquivalentTo(2))

		restartManager(func() {
			// The runner goes on without a manager: step 2 is taken.
			Eventually(requests(model)).Should(Equal(4))
			Expect(taskSteps(ctx, key)(Default)).To(BeEquivalentTo(2), "no manager writes while none runs")
		})

		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskSucceeded))
		t = task(ctx, key)(Default)
		Expect(t.Status.Steps).To(BeEquivalentTo(5))
		Expect(actionTypes(t)).To(Equal([]string{"goto", "think", "think", "ariaTree", "done"}))
		Expect(t.Status.Actions[1].Reasoning + t.Status.Actions[2].Reasoning).To(And(ContainSubstring("one"), ContainSubstring("two")))
		Expect(t.Status.Result.Message).To(Equal("all done"))
		Expect(t.Status.Usage.InputTokens).To(BeEquivalentTo(500), "every model call counted once")
		// Five replies, five requests: the runner ran no step again.
		Consistently(requests(model)).Should(Equal(5))
		Expect(model.Pending()).To(Equal(0))
	})

	It("fails a dispatched task AgentUnavailable, saying so, when its runner no longer has it", func(ctx SpecContext) {
		skey := newSession(ctx, ns, "forgetful")
		Eventually(func(g Gomega) v1alpha1.BrowserSessionPhase {
			s := &v1alpha1.BrowserSession{}
			g.Expect(k8sClient.Get(ctx, skey, s)).To(Succeed())
			return s.Status.Phase
		}).Should(Equal(v1alpha1.BrowserSessionReady))
		// A task an earlier manager dispatched to a runner that has
		// restarted since: this runner never had it.
		model := newModel()
		t := newTask(ns, "lost", skey.Name, model)
		t.Finalizers = []string{v1alpha1.FinalizerAgentTask}
		key := client.ObjectKeyFromObject(t)
		restartManager(func() {
			Expect(k8sClient.Create(ctx, t)).To(Succeed())
			t.Status = v1alpha1.AgentTaskStatus{
				Phase: v1alpha1.AgentTaskRunning, Steps: 3, Message: "the agent runs",
				StartTime: &apimetav1.Time{Time: time.Now()},
				Conditions: []apimetav1.Condition{{
					Type: v1alpha1.AgentTaskConditionRunning, Status: apimetav1.ConditionTrue, Reason: v1alpha1.AgentTaskReasonDispatched,
					Message: "the agent runs", LastTransitionTime: apimetav1.Now(),
				}},
			}
			Expect(k8sClient.Status().Update(ctx, t)).To(Succeed())
		})

		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskFailed))
		t = task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, apimetav1.ConditionTrue, v1alpha1.AgentTaskReasonAgentUnavailable))
		Expect(t.Status.Message).To(Equal(`the runner of BrowserSession "forgetful" no longer has the task: it restarted since the task was dispatched, and the agent's work after step 3 is lost`))
		Expect(model.Requests()).To(BeEmpty(), "the task was not started again")
		Eventually(taskFinalizers(ctx, key)).Should(BeEmpty())
	})

	It("fails the task with the session's reason when the runner is killed mid-task (scripted model)", func(ctx SpecContext) {
		model := newModel()
		skey := newSession(ctx, ns, "fragile")
		model.Enqueue(gotoHome(), think("slowly").WithDelay(2*time.Minute))
		t := newTask(ns, "orphaned", skey.Name, model)
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(requests(model)).Should(Equal(2))
		Eventually(taskSteps(ctx, key)).Should(BeEquivalentTo(1))

		pod := types.NamespacedName{Namespace: ns, Name: v1alpha1.RunnerPodName(skey.Name)}
		pid, ok := kubelet.PID(pod)
		Expect(ok).To(BeTrue(), "the runner runs")
		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())

		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskFailed))
		t = task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, apimetav1.ConditionTrue, v1alpha1.AgentTaskReasonSessionFailed))
		s := &v1alpha1.BrowserSession{}
		Expect(k8sClient.Get(ctx, skey, s)).To(Succeed())
		Expect(s.Status.Phase).To(Equal(v1alpha1.BrowserSessionFailed))
		Expect(t.Status.Message).To(Equal(fmt.Sprintf("BrowserSession %q failed: %s", skey.Name, s.Status.Message)))
		Expect(t.Status.Steps).To(BeEquivalentTo(1), "the step taken before stays in the status")
		Eventually(taskFinalizers(ctx, key)).Should(BeEmpty())
	})

	It("fails the task DeadlineExceeded when its deadline passes (scripted model)", func(ctx SpecContext) {
		model := newModel()
		skey := newSession(ctx, ns, "patient")
		model.Enqueue(gotoHome(), think("too slowly").WithDelay(2*time.Minute))
		t := newTask(ns, "late", skey.Name, model)
		t.Spec.ActiveDeadlineSeconds = 4
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)

		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskFailed))
		t = task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, apimetav1.ConditionTrue, v1alpha1.AgentTaskReasonDeadlineExceeded))
		Expect(t.Status.Message).To(Equal("the task ran past its deadline of 4s (spec.activeDeadlineSeconds); the runner stopped the agent after 1 steps"))
		c := meta.FindStatusCondition(t.Status.Conditions, v1alpha1.AgentTaskConditionRunning)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(apimetav1.ConditionFalse))
		Expect(t.Status.CompletionTime.Sub(t.Status.StartTime.Time)).To(BeNumerically(">=", 3*time.Second))
		Consistently(requests(model)).Should(Equal(2))
	})
})
