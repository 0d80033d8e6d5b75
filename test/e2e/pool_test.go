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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/procs"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
)

// idleRunners are the pool's unclaimed runner pods that run, by name.
func idleRunners(ctx context.Context, pool string) func(Gomega) []string {
	return func(g Gomega) []string {
		var pods corev1.PodList
		g.Expect(k8s.List(ctx, &pods, client.InNamespace(stack.Namespace()), client.MatchingLabels{v1alpha1.LabelPool: pool})).To(Succeed())
		var names []string
		for _, p := range pods.Items {
			if _, claimed := p.Labels[v1alpha1.LabelSession]; !claimed && p.DeletionTimestamp == nil {
				names = append(names, p.Name)
			}
		}
		return names
	}
}

var _ = Describe("a warm pool", func() {
	It("hands its ready runner to a /v1 start, which then drives the browser the pool launched, and starts another", func(ctx SpecContext) {
		p := wrappers.MakeBrowserPool("warm", stack.Namespace(), 1).Obj()
		Expect(k8s.Create(ctx, p)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			// The pool deletes its unclaimed runners before it goes: the
			// dev stack runs no garbage collector.
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, &v1alpha1.BrowserPool{ObjectMeta: p.ObjectMeta}))).To(Succeed())
			Eventually(idleRunners(ctx, "warm")).Should(BeEmpty())
		})
		readyReplicas := func(g Gomega) int32 {
			got := &v1alpha1.BrowserPool{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
			return ptr.Deref(got.Status.ReadyReplicas, 0)
		}
		Eventually(readyReplicas).Should(BeEquivalentTo(1))
		out, err := kubectl("get", "browserpools", "-n", stack.Namespace())
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(`NAME\s+REPLICAS\s+READY\s+CLAIMED\s+AGE\nwarm\s+1\s+1\s+0\s+`))
		warm := idleRunners(ctx, "warm")(Default)
		Expect(warm).To(HaveLen(1))
		pid, ok := stack.Kubelet().PID(types.NamespacedName{Namespace: stack.Namespace(), Name: warm[0]})
		Expect(ok).To(BeTrue())

		id := startSession()
		s := session(ctx, id)
		Expect(s.Status).To(And(HaveField("Pool", "warm"), HaveField("PodName", warm[0]), HaveField("Phase", v1alpha1.BrowserSessionReady)))
		claimedPID, _ := stack.Kubelet().PID(types.NamespacedName{Namespace: stack.Namespace(), Name: warm[0]})
		Expect(claimedPID).To(Equal(pid), "the session runs in the runner the pool started, not a new one")

		Expect(operate(id, "navigate", fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), false)).To(ContainSubstring(pageURL("form.html")))
		operate(id, "act", `{"input": {"selector": "#email", "method": "fill", "arguments": ["ada@example.com"], "description": "type the email"}}`, false)
		before := len(model.Requests())
		model.Enqueue(actAnswer(elementID(pageText(id), "button: Sign up"), "click"))
		operate(id, "act", `{"input": "click the sign-up button"}`, false)
		Expect(pageText(id)).To(ContainSubstring("signed up ada@example.com"))
		Expect(model.Requests()).To(HaveLen(before + 1))
		Expect(model.Requests()[before].Header.Get("Authorization")).To(Equal("Bearer sk-e2e"), "the runner got the session's key at its claim")

		By("refilling the pool with another runner")
		Eventually(readyReplicas).Should(BeEquivalentTo(1))
		Expect(idleRunners(ctx, "warm")(Default)).NotTo(ContainElement(warm[0]))

		By("ending the session, which ends the claimed runner for good")
		Expect(call(http.MethodPost, "/v1/sessions/"+id+"/end", "", nil).Status).To(Equal(http.StatusOK))
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, types.NamespacedName{Namespace: stack.Namespace(), Name: warm[0]}, &corev1.Pod{}))
		}).Should(BeTrue())
		Eventually(func() v1alpha1.BrowserSessionPhase { return session(ctx, id).Status.Phase }).Should(Equal(v1alpha1.BrowserSessionEnded))

		By("deleting the pool, which stops its unclaimed runner's processes")
		idle := idleRunners(ctx, "warm")(Default)
		Expect(idle).To(HaveLen(1))
		idlePID, ok := stack.Kubelet().PID(types.NamespacedName{Namespace: stack.Namespace(), Name: idle[0]})
		Expect(ok).To(BeTrue())
		Expect(k8s.Delete(ctx, &v1alpha1.BrowserPool{ObjectMeta: p.ObjectMeta})).To(Succeed())
		Eventually(func() []int { return procs.SessionMembers(idlePID) }).Should(BeEmpty())
	})
})
