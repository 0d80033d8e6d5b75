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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

	It("waits while its session starts, then says plainly that agents cannot run yet", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("starting", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		skey := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionStarting))

		t := wrappers.MakeAgentTask("patient", ns, skey.Name).MaxSteps(5).Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)
		Eventually(func(g Gomega) string { return task(ctx, key)(g).Status.Message }).Should(Equal(`waiting for BrowserSession "starting" to be ready`))
		Expect(taskPhase(ctx, key)(Default)).To(Equal(v1alpha1.AgentTaskPending))

		Expect(kubelet.Run(ctx, podKey(skey), true)).To(Succeed())
		Eventually(taskPhase(ctx, key)).Should(Equal(v1alpha1.AgentTaskFailed))
		Expect(task(ctx, key)(Default).Status.Conditions).To(HaveCondition(v1alpha1.AgentTaskConditionFailed, metav1.ConditionTrue, v1alpha1.AgentTaskReasonAgentUnavailable))
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
