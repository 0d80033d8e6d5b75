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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
)

// The suite's region table (suite_test.go): ap-southeast-1 is not
// accepted, us-west-2 runs on nodes labelled example.com/zone-group=west,
// the others on topology.kubernetes.io/region=<region>. No spec but the
// pool's makes a node of eu-central-1.

// regionNode makes a node with the labels for the spec's life. Nodes are
// the cluster's, not a namespace's.
func regionNode(ctx context.Context, labels map[string]string) {
	GinkgoHelper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "bf-region-", Labels: labels}}
	Expect(k8sClient.Create(ctx, node)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, node))).To(Succeed())
	})
}

// inRegion is a session of the region.
func inRegion(name, ns string, region v1alpha1.Region) *v1alpha1.BrowserSession {
	return wrappers.MakeBrowserSession(name, ns).Cloud(&v1alpha1.CloudSessionCreateParams{Region: region}).Obj()
}

// requiredNodes is the pod's required node affinity as key, operator and
// values.
func requiredNodes(pod *corev1.Pod) []corev1.NodeSelectorRequirement {
	GinkgoHelper()
	Expect(pod.Spec.Affinity).NotTo(BeNil(), "pod %s has no affinity", pod.Name)
	Expect(pod.Spec.Affinity.NodeAffinity).NotTo(BeNil())
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	Expect(terms).NotTo(BeNil())
	Expect(terms.NodeSelectorTerms).To(HaveLen(1))
	return terms.NodeSelectorTerms[0].MatchExpressions
}

func failedWith(ctx context.Context, key types.NamespacedName, reason string) func(Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		for _, c := range conditions(ctx, key)(g) {
			if c.Type == v1alpha1.BrowserSessionConditionFailed && c.Status == metav1.ConditionTrue && c.Reason == reason {
				return &c
			}
		}
		return nil
	}
}

var _ = Describe("Regions", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("places the runner of a served region on the region's nodes", func(ctx SpecContext) {
		regionNode(ctx, map[string]string{corev1.LabelTopologyRegion: "us-east-1"})
		key := startSession(ctx, inRegion("east", ns, v1alpha1.RegionUSEast1))
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, podKey(key), pod)).To(Succeed())
		Expect(requiredNodes(pod)).To(Equal([]corev1.NodeSelectorRequirement{
			{Key: corev1.LabelTopologyRegion, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1"}},
		}))

		By("a session without a region has no affinity")
		key = startSession(ctx, wrappers.MakeBrowserSession("anywhere", ns).Obj())
		Expect(k8sClient.Get(ctx, podKey(key), pod)).To(Succeed())
		Expect(pod.Spec.Affinity).To(BeNil())
	})

	It("places a region on the node label of the operator's table, and checks that label", func(ctx SpecContext) {
		By("a node with the default label does not serve a mapped region")
		regionNode(ctx, map[string]string{corev1.LabelTopologyRegion: "us-west-2"})
		Expect(k8sClient.Create(ctx, inRegion("west-1", ns, v1alpha1.RegionUSWest2))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "west-1"}
		cond := failedWith(ctx, key, v1alpha1.BrowserSessionReasonRegionUnavailable)
		Eventually(cond).ShouldNot(BeNil())
		Expect(cond(Default).Message).To(Equal(`no node serves spec.cloudSessionCreateParams.region "us-west-2": no node matches the label selector "example.com/zone-group in (west)" (the manager's runner.regions and runner.nodeSelector); no runner pod was created`))

		By("a node of the mapped label does")
		regionNode(ctx, map[string]string{"example.com/zone-group": "west"})
		key = startSession(ctx, inRegion("west-2", ns, v1alpha1.RegionUSWest2))
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, podKey(key), pod)).To(Succeed())
		Expect(requiredNodes(pod)).To(Equal([]corev1.NodeSelectorRequirement{
			{Key: "example.com/zone-group", Operator: corev1.NodeSelectorOpIn, Values: []string{"west"}},
		}))
	})

	It("fails a session of a region no node serves at once, naming the region and the selector, without a pod", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, inRegion("nowhere", ns, v1alpha1.RegionEUCentral1))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "nowhere"}
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionFailed))
		s := session(ctx, key)(Default)
		Expect(s.Status.Message).To(Equal(`no node serves spec.cloudSessionCreateParams.region "eu-central-1": no node matches the label selector "topology.kubernetes.io/region in (eu-central-1)" (the manager's runner.regions and runner.nodeSelector); no runner pod was created`))
		Expect(failedWith(ctx, key, v1alpha1.BrowserSessionReasonRegionUnavailable)(Default)).NotTo(BeNil())
		Expect(s.Status.PodName).To(BeEmpty())
		Expect(k8sClient.Get(ctx, podKey(key), &corev1.Pod{})).NotTo(Succeed())
		Eventually(eventReasons(ctx, ns, "nowhere")).Should(ContainElement(string(v1alpha1.BrowserSessionFailed)))
	})

	It("fails a session of a region the operator does not accept, without a pod", func(ctx SpecContext) {
		regionNode(ctx, map[string]string{corev1.LabelTopologyRegion: "ap-southeast-1"})
		Expect(k8sClient.Create(ctx, inRegion("refused", ns, v1alpha1.RegionAPSoutheast1))).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "refused"}
		cond := failedWith(ctx, key, v1alpha1.BrowserSessionReasonRegionNotAllowed)
		Eventually(cond).ShouldNot(BeNil())
		Expect(cond(Default).Message).To(Equal(`spec.cloudSessionCreateParams.region "ap-southeast-1" is not a region this installation accepts (the manager's runner.regions.accepted: us-west-2, us-east-1, eu-central-1); no runner pod was created`))
		Expect(k8sClient.Get(ctx, podKey(key), &corev1.Pod{})).NotTo(Succeed())
	})

	It("keeps a pool of a region warm on the region's nodes once a node serves it, and hands its runners to sessions of that region only", func(ctx SpecContext) {
		p := wrappers.MakeBrowserPool("eu", ns, 1).Cloud(&v1alpha1.CloudSessionCreateParams{Region: v1alpha1.RegionEUCentral1}).Obj()
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		key := client.ObjectKeyFromObject(p)

		By("no node serves it: the template is refused and no runner starts")
		Eventually(func(g Gomega) []metav1.Condition { return pool(ctx, key)(g).Status.Conditions }).Should(ContainElement(And(
			HaveField("Reason", v1alpha1.BrowserPoolReasonTemplateRefused),
			HaveField("Message", ContainSubstring(`no node serves spec.cloudSessionCreateParams.region "eu-central-1"`)))))
		Expect(poolPods(ctx, key)(Default)).To(BeEmpty())

		By("a node of the region comes: the pool starts its runner there")
		regionNode(ctx, map[string]string{corev1.LabelTopologyRegion: "eu-central-1"})
		Eventually(idlePods(ctx, key)).Should(HaveLen(1))
		runner := idlePods(ctx, key)(Default)[0]
		Expect(requiredNodes(runner)).To(Equal([]corev1.NodeSelectorRequirement{
			{Key: corev1.LabelTopologyRegion, Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-central-1"}},
		}))
		e := startClaimEndpoint()
		runAt(ctx, client.ObjectKeyFromObject(runner), e.ip)
		Eventually(func(g Gomega) int32 { return ptr.Deref(pool(ctx, key)(g).Status.ReadyReplicas, 0) }).Should(BeEquivalentTo(1))

		By("a session of another region starts cold, on its own region's nodes")
		regionNode(ctx, map[string]string{corev1.LabelTopologyRegion: "us-east-1"})
		east := startSession(ctx, inRegion("east", ns, v1alpha1.RegionUSEast1))
		Expect(session(ctx, east)(Default).Status.Pool).To(BeEmpty())
		Expect(e.seen()).To(BeEmpty(), "the pool's runner was not offered to another region's session")

		By("a session of the pool's region claims its runner")
		Expect(k8sClient.Create(ctx, inRegion("eu-1", ns, v1alpha1.RegionEUCentral1))).To(Succeed())
		eu := types.NamespacedName{Namespace: ns, Name: "eu-1"}
		Eventually(phase(ctx, eu)).Should(Equal(v1alpha1.BrowserSessionReady))
		Expect(session(ctx, eu)(Default).Status).To(And(HaveField("Pool", "eu"), HaveField("PodName", runner.Name)))
	})
})
