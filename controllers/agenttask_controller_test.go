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

package controllers_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	. "github.com/browserfleet/browserfleet/internal/testing/matchers"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
)

// task returns a function that reads the task, for Eventually.
func task(ctx context.Context, key types.NamespacedName) func(Gomega) *v1alpha1.AgentTask {
	return read[v1alpha1.AgentTask](ctx, key)
}

func taskPhase(ctx context.Context, key types.NamespacedName) func(Gomega) v1alpha1.AgentTaskPhase {
	return func(g Gomega) v1alpha1.AgentTaskPhase { return task(ctx, key)(g).Status.Phase }
}

// taskGone says whether the task is gone.
func taskGone(ctx context.Context, key types.NamespacedName) func() bool {
	return func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key, &v1alpha1.AgentTask{})) }
}

// markDispatched writes the status a manager writes when the runner
// accepted the task at started: Running, condition Running reason
// Dispatched.
func markDispatched(ctx context.Context, key types.NamespacedName, started time.Time) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		t := &v1alpha1.AgentTask{}
		if err := k8sClient.Get(ctx, key, t); err != nil {
			return err
		}
		t.Status.Phase = v1alpha1.AgentTaskRunning
		t.Status.Message = "the agent runs"
		t.Status.StartTime = &metav1.Time{Time: started}
		t.Status.Conditions = []metav1.Condition{{
			Type: v1alpha1.AgentTaskConditionRunning, Status: metav1.ConditionTrue, Reason: v1alpha1.AgentTaskReasonDispatched,
			Message: "the agent runs", LastTransitionTime: metav1.Now(),
		}}
		return k8sClient.Status().Update(ctx, t)
	})).To(Succeed())
}

var _ = Describe("AgentTask", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("fails when its session does not exist, after waiting for it a while", func(ctx SpecContext) {
		t := wrappers.MakeAgentTask("orphan", ns, "no-such-session").Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(func(g Gomega) string { return task(ctx, key)(g).Status.Message }).Should(Equal(`waiting for BrowserSession "no-such-session" to exist`))
		Expect(taskPhase(ctx, key)(Default)).To(Equal(v1alpha1.AgentTaskPending))
		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskFailed))
		t = task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, metav1.ConditionTrue, v1alpha1.AgentTaskReasonSessionNotFound))
		Expect(t.Status.Message).To(Equal(`BrowserSession "no-such-session" does not exist`))
		Expect(t.Status.CompletionTime).NotTo(BeNil())
		Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElement("Failed"))
	})

	It("finds a session created after it", func(ctx SpecContext) {
		t := wrappers.MakeAgentTask("early", ns, "later").Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(func(g Gomega) string { return task(ctx, key)(g).Status.Message }).Should(ContainSubstring("to exist"))
		s := wrappers.MakeBrowserSession("later", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Eventually(func(g Gomega) string { return task(ctx, key)(g).Status.Message }).Should(Equal(`waiting for BrowserSession "later" to be ready`))
		Consistently(taskPhase(ctx, key), 2*taskSessionWait).Should(Equal(v1alpha1.AgentTaskPending))
		Expect(task(ctx, key)(Default).OwnerReferences).To(ContainElement(HaveField("Name", "later")))
	})

	It("fails when its session has ended, and belongs to the session", func(ctx SpecContext) {
		skey := startSession(ctx, wrappers.MakeBrowserSession("over", ns).Obj())
		endSession(ctx, skey)
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionEnded))

		t := wrappers.MakeAgentTask("late", ns, skey.Name).Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskFailed))
		t = task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, metav1.ConditionTrue, v1alpha1.AgentTaskReasonSessionEnded))
		Expect(t.Status.Message).To(ContainSubstring(`BrowserSession "over" has ended`))
		Expect(t.OwnerReferences).To(ContainElement(HaveField("UID", session(ctx, skey)(Default).UID)))
	})

	It("fails when its session has failed, with the session's reason", func(ctx SpecContext) {
		skey := startSession(ctx, wrappers.MakeBrowserSession("crashed", ns).Obj())
		Expect(kubelet.Exit(ctx, podKey(skey), 139, "Error", "chromium crashed")).To(Succeed())
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionFailed))

		t := wrappers.MakeAgentTask("doomed", ns, skey.Name).Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskFailed))
		t = task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, metav1.ConditionTrue, v1alpha1.AgentTaskReasonSessionFailed))
		Expect(t.Status.Message).To(ContainSubstring("chromium crashed"))
	})

	It("waits while its session starts, then fails with a clear reason when the runner cannot be reached, after a few attempts", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("starting", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		skey := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionStarting))

		t := wrappers.MakeAgentTask("patient", ns, skey.Name).MaxSteps(5).Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(func(g Gomega) string { return task(ctx, key)(g).Status.Message }).Should(Equal(`waiting for BrowserSession "starting" to be ready`))
		Expect(taskPhase(ctx, key)(Default)).To(Equal(v1alpha1.AgentTaskPending))

		// Ready on a loopback address where nothing listens.
		runAt(ctx, podKey(skey), unreachableIP)
		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskFailed))
		t = task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, metav1.ConditionTrue, v1alpha1.AgentTaskReasonAgentUnavailable))
		Expect(t.Status.Message).To(And(
			ContainSubstring(`the runner of BrowserSession "starting" could not be reached in %d attempts`, runnerAttempts),
			ContainSubstring("RUNNER_UNREACHABLE"),
		))
		Expect(t.Status.StartTime).To(BeNil(), "the agent never started")
		Eventually(func(g Gomega) []string { return task(ctx, key)(g).Finalizers }).Should(BeEmpty(), "a settled task keeps no finalizer")
		Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElement("Failed"))
	})

	It("waits behind an older task of its session, naming it, and goes once that one is gone", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("shared", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		// Created in this order: the older one runs first (by creation
		// time, then by name when they were created in the same second).
		first := wrappers.MakeAgentTask("a-first", ns, s.Name).Obj()
		Expect(k8sClient.Create(ctx, first)).To(Succeed())
		second := wrappers.MakeAgentTask("b-second", ns, s.Name).Obj()
		Expect(k8sClient.Create(ctx, second)).To(Succeed())
		fkey, skey := client.ObjectKeyFromObject(first), client.ObjectKeyFromObject(second)

		Eventually(func(g Gomega) string { return task(ctx, skey)(g).Status.Message }).Should(Equal(
			`waiting for AgentTask "a-first" to finish: one task runs in BrowserSession "shared" at a time, the oldest first`))
		Expect(taskPhase(ctx, skey)(Default)).To(Equal(v1alpha1.AgentTaskPending))
		Eventually(func(g Gomega) string { return task(ctx, fkey)(g).Status.Message }).Should(Equal(`waiting for BrowserSession "shared" to be ready`))

		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		Eventually(func(g Gomega) string { return task(ctx, skey)(g).Status.Message }).Should(Equal(`waiting for BrowserSession "shared" to be ready`))
	})

	It("waits behind a dispatched task of its session, whatever their ages", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("busy", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		older := wrappers.MakeAgentTask("a-older", ns, s.Name).Obj()
		Expect(k8sClient.Create(ctx, older)).To(Succeed())
		running := wrappers.MakeAgentTask("z-running", ns, s.Name).Obj()
		running.Finalizers = []string{v1alpha1.FinalizerAgentTask}
		Expect(k8sClient.Create(ctx, running)).To(Succeed())
		rkey := client.ObjectKeyFromObject(running)
		// As a manager that dispatched it before this one took the lead
		// left it.
		markDispatched(ctx, rkey, time.Now())

		okey := client.ObjectKeyFromObject(older)
		Eventually(func(g Gomega) string { return task(ctx, okey)(g).Status.Message }).Should(HavePrefix(`waiting for AgentTask "z-running" to finish`))
		Consistently(taskPhase(ctx, rkey)).Should(Equal(v1alpha1.AgentTaskRunning))
	})

	It("lets go of a dispatched task's finalizer when its session ends, without calling a runner", func(ctx SpecContext) {
		skey := startSessionAt(ctx, wrappers.MakeBrowserSession("ending", ns).Obj(), unreachableIP)
		Expect(kubelet.Hold(ctx, podKey(skey))).To(Succeed())
		t := wrappers.MakeAgentTask("cut-short", ns, skey.Name).Obj()
		t.Finalizers = []string{v1alpha1.FinalizerAgentTask}
		// Ended before the task exists: nothing may try the runner.
		endSession(ctx, skey)
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionEnding))
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		markDispatched(ctx, key, time.Now())

		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskFailed))
		t = task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, metav1.ConditionTrue, v1alpha1.AgentTaskReasonSessionEnded))
		Eventually(func(g Gomega) []string { return task(ctx, key)(g).Finalizers }).Should(BeEmpty())
		Expect(k8sClient.Delete(ctx, t)).To(Succeed())
		Eventually(taskGone(ctx, key)).Should(BeTrue())
		Expect(kubelet.Release(ctx, podKey(skey))).To(Succeed())
	})

	It("goes at once when deleted while its session has no runner to call", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("stopping", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		skey := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionStarting))
		t := wrappers.MakeAgentTask("dropped", ns, skey.Name).Obj()
		t.Finalizers = []string{v1alpha1.FinalizerAgentTask}
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		markDispatched(ctx, key, time.Now())
		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskRunning))

		// The session has no runner to call: the deletion goes through.
		Expect(k8sClient.Delete(ctx, t)).To(Succeed())
		Eventually(taskGone(ctx, key)).Should(BeTrue())
		Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElement("Cancelled"))
	})

	It("applies the manager's default deadline to a task that sets none", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("slow", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		skey := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionStarting))

		// Both started longer ago than the default deadline, as a manager
		// that dispatched them and went away left them; no runner reports.
		started := time.Now().Add(-defaultTaskDeadline - time.Minute)
		def := wrappers.MakeAgentTask("by-default", ns, skey.Name).Obj()
		Expect(k8sClient.Create(ctx, def)).To(Succeed())
		own := wrappers.MakeAgentTask("own-deadline", ns, skey.Name).Obj()
		own.Spec.ActiveDeadlineSeconds = 86400
		Expect(k8sClient.Create(ctx, own)).To(Succeed())
		dkey, okey := client.ObjectKeyFromObject(def), client.ObjectKeyFromObject(own)
		markDispatched(ctx, dkey, started)
		markDispatched(ctx, okey, started)

		Eventually(taskPhase(ctx, dkey)).Should(Equal(v1alpha1.AgentTaskFailed))
		t := task(ctx, dkey)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, metav1.ConditionTrue, v1alpha1.AgentTaskReasonDeadlineExceeded))
		Expect(t.Status.Message).To(HavePrefix(`the task ran past its deadline of 1h0m0s (the manager's tasks.defaultActiveDeadline), and the runner of BrowserSession "slow" did not report its end`))
		Consistently(taskPhase(ctx, okey)).Should(Equal(v1alpha1.AgentTaskRunning))
	})

	It("fails when it references a Secret that has not opted in, naming the reference, after waiting for it a while", func(ctx SpecContext) {
		sessionSecret(ctx, ns, "signing-key", "")
		sessionSecret(ctx, ns, "for-another", "another")
		s := wrappers.MakeBrowserSession("host", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		t := wrappers.MakeAgentTask("thief", ns, s.Name).ModelAPIKey("for-another", "openai").VariablesSecret("signing-key").Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(func(g Gomega) string { return task(ctx, key)(g).Status.Message }).Should(HavePrefix("waiting until"))
		Expect(taskPhase(ctx, key)(Default)).To(Equal(v1alpha1.AgentTaskPending))
		Eventually(taskPhase(ctx, key), 3*secretWait).Should(Equal(v1alpha1.AgentTaskFailed))
		t = task(ctx, key)(Default)
		Expect(t.Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, metav1.ConditionTrue, v1alpha1.AgentTaskReasonSecretNotAllowed))
		Expect(t.Status.Message).To(ContainSubstring(`spec.agentConfig.model.apiKeySecretRef: Secret "for-another" does not exist or is not labelled browserfleet.io/session-secret=true (or =thief)`))
		Expect(t.Status.Message).To(ContainSubstring(`spec.executeOptions.variablesSecretRef: Secret "signing-key" does not exist`))
	})

	It("goes on once the Secret it waits for opts in", func(ctx SpecContext) {
		secret := sessionSecret(ctx, ns, "vars", "")
		s := wrappers.MakeBrowserSession("host", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		t := wrappers.MakeAgentTask("patient", ns, s.Name).VariablesSecret("vars").Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(func(g Gomega) string { return task(ctx, key)(g).Status.Message }).Should(ContainSubstring(`Secret "vars"`))
		secret.Labels = map[string]string{v1alpha1.LabelSessionSecret: "patient"}
		Expect(k8sClient.Update(ctx, secret)).To(Succeed())
		Eventually(func(g Gomega) string { return task(ctx, key)(g).Status.Message }).Should(Equal(`waiting for BrowserSession "host" to be ready`))
		Consistently(taskPhase(ctx, key), secretWait).Should(Equal(v1alpha1.AgentTaskPending))
	})

	It("refuses changes to its spec", func(ctx SpecContext) {
		t := wrappers.MakeAgentTask("fixed", ns, "whatever").Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		t = task(ctx, key)(Default)
		base := t.DeepCopy()
		t.Spec.ExecuteOptions.Instruction = "something else"
		// A patch without a resourceVersion: the controller's status writes
		// must not turn the refusal into a conflict.
		Expect(k8sClient.Patch(ctx, t, client.MergeFrom(base))).To(BeInvalidError("spec", "spec is immutable"))
	})
})
