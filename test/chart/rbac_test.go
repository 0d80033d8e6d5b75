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

package chart_test

import (
	"os"
	"path/filepath"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// permissions flattens RBAC rules into "group/resource verb" (and
// "url verb") strings, so that rules split or ordered differently compare
// equal.
func permissions(rules []rbacv1.PolicyRule) []string {
	set := map[string]bool{}
	for _, r := range rules {
		for _, v := range r.Verbs {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					set[g+"/"+res+" "+v] = true
				}
			}
			for _, u := range r.NonResourceURLs {
				set[u+" "+v] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func clusterRole(objs []*unstructured.Unstructured, name string) *rbacv1.ClusterRole {
	GinkgoHelper()
	return toTyped[rbacv1.ClusterRole](Find(objs, "ClusterRole", name))
}

var _ = Describe("RBAC", func() {
	It("gives the manager the ClusterRole controller-gen makes", func() {
		b, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "rbac", "role.yaml"))
		Expect(err).NotTo(HaveOccurred())
		generated, err := Decode(b)
		Expect(err).NotTo(HaveOccurred())
		r, err := Render("bf", "bf-system", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(permissions(clusterRole(r.Objects, "bf-browserfleet-manager").Rules)).
			To(Equal(permissions(clusterRole(generated, "browserfleet-manager").Rules)), "run make manifests and update templates/manager-rbac.yaml")
	})

	It("binds roles to the manager and the API only, never to runners", func() {
		r, err := Render("bf", "bf-system", nil)
		Expect(err).NotTo(HaveOccurred())
		for _, o := range r.Objects {
			switch o.GetKind() {
			case "ClusterRoleBinding", "RoleBinding":
				b := toTyped[rbacv1.RoleBinding](o)
				for _, s := range b.Subjects {
					Expect(s).To(BeElementOf(
						rbacv1.Subject{Kind: "ServiceAccount", Name: "bf-browserfleet-manager", Namespace: "bf-system"},
						rbacv1.Subject{Kind: "ServiceAccount", Name: "bf-browserfleet-api", Namespace: "bf-system"},
					), o.GetName())
				}
			case "ServiceAccount":
				Expect(o.GetName()).To(BeElementOf("bf-browserfleet-manager", "bf-browserfleet-api"))
			}
		}
	})

	It("lets each component do what it needs and nothing more", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		project := newNamespace(ctx, "")
		other := newNamespace(ctx, "")
		r, err := Render("rbac", ns, map[string]any{
			"projects": map[string]any{"namespaces": []any{project}},
			"apiKeys":  map[string]any{"bootstrap": map[string]any{"namespace": project}},
		})
		Expect(err).NotTo(HaveOccurred())
		for _, o := range r.Objects {
			switch o.GetKind() {
			case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
				create(ctx, o)
			}
		}
		manager := "system:serviceaccount:" + ns + ":rbac-browserfleet-manager"
		api := "system:serviceaccount:" + ns + ":rbac-browserfleet-api"
		// Runner pods run as their namespace's default service account,
		// without its token; even so it has no role.
		runner := "system:serviceaccount:" + project + ":default"
		type check struct {
			user, namespace, verb, group, resource, subresource string
			allowed                                             bool
		}
		checks := []check{
			// The manager: pods and runner token Secrets in every project.
			{manager, project, "create", "", "pods", "", true},
			{manager, project, "watch", "", "pods", "", true},
			{manager, project, "create", "", "secrets", "", true},
			// The metadata of Secrets opted in to sessions: the cache
			// selects the label; RBAC cannot say "metadata only".
			{manager, project, "get", "", "secrets", "", true},
			{manager, project, "watch", "", "secrets", "", true},
			{manager, project, "update", "", "secrets", "", false},
			{manager, project, "delete", "", "secrets", "", false},
			{manager, project, "update", "browserfleet.io", "browsersessions", "status", true},
			{manager, project, "update", "browserfleet.io", "browsersessions", "finalizers", true},
			{manager, project, "create", "browserfleet.io", "browsersessions", "", false},
			{manager, project, "patch", "browserfleet.io", "agenttasks", "status", true},
			{manager, project, "create", "events.k8s.io", "events", "", true},
			// Pods: patched only to let a stopped runner's pod go once its
			// summary is in the session's status.
			{manager, project, "patch", "", "pods", "", true},
			{manager, project, "update", "", "pods", "", true}, // a session claims a pool\'s warm runner,
			{manager, project, "create", "", "configmaps", "", false},
			// Nodes' labels, for the sessions' regions; never a change.
			{manager, "", "watch", "", "nodes", "", true},
			{manager, "", "patch", "", "nodes", "", false},
			{api, "", "list", "", "nodes", "", false},
			{runner, "", "list", "", "nodes", "", false},
			// Its lease, only in its own namespace.
			{manager, ns, "update", "coordination.k8s.io", "leases", "", true},
			{manager, project, "update", "coordination.k8s.io", "leases", "", false},
			// The API: keys, sessions, tasks; no ConfigMap (the replay is
			// the runner's).
			{api, project, "watch", "", "secrets", "", true},
			{api, project, "create", "", "secrets", "", true},
			{api, project, "delete", "", "secrets", "", true},
			{api, project, "update", "", "secrets", "", false},
			{api, project, "create", "browserfleet.io", "browsersessions", "", true},
			{api, project, "patch", "browserfleet.io", "browsersessions", "", true},
			{api, project, "delete", "browserfleet.io", "browsersessions", "", false},
			{api, project, "update", "browserfleet.io", "browsersessions", "status", false},
			{api, project, "create", "browserfleet.io", "agenttasks", "", true},
			{api, project, "delete", "browserfleet.io", "agenttasks", "", true},
			{api, project, "create", "", "configmaps", "", false},
			{api, project, "patch", "", "configmaps", "", false},
			{api, project, "update", "", "configmaps", "", false},
			{api, project, "get", "", "configmaps", "", false},
			{api, project, "list", "", "pods", "", false},
			{api, ns, "update", "coordination.k8s.io", "leases", "", false},
			{api, project, "list", "rbac.authorization.k8s.io", "rolebindings", "", true},
			{api, project, "create", "rbac.authorization.k8s.io", "rolebindings", "", false},
			// The API: nothing outside its projects, its own namespace
			// included.
			{api, other, "get", "", "secrets", "", false},
			{api, other, "list", "", "secrets", "", false},
			{api, other, "create", "", "secrets", "", false},
			{api, other, "update", "", "configmaps", "", false},
			{api, other, "create", "browserfleet.io", "browsersessions", "", false},
			{api, ns, "list", "", "secrets", "", false},
			{api, "", "list", "", "secrets", "", false},
			{api, "", "list", "browserfleet.io", "browsersessions", "", false},
			// Runners: nothing.
			{runner, project, "get", "browserfleet.io", "browsersessions", "", false},
			{runner, project, "get", "", "secrets", "", false},
			{runner, project, "list", "", "pods", "", false},
		}
		for _, c := range checks {
			Eventually(func() (bool, error) {
				sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: c.user,
					ResourceAttributes: &authorizationv1.ResourceAttributes{
						Namespace: c.namespace, Verb: c.verb, Group: c.group, Resource: c.resource, Subresource: c.subresource,
					},
				}}
				err := k8sClient.Create(ctx, sar)
				return sar.Status.Allowed, err
			}).Should(Equal(c.allowed), "%s %s %s/%s/%s in %s", c.user, c.verb, c.group, c.resource, c.subresource, c.namespace)
		}
	})
})

var _ = Describe("the runner NetworkPolicy", func() {
	podLabels := func(objs []*unstructured.Unstructured, name string) labels.Set {
		GinkgoHelper()
		return toTyped[appsv1.Deployment](Find(objs, "Deployment", name)).Spec.Template.Labels
	}
	selects := func(sel *metav1.LabelSelector, set labels.Set) bool {
		GinkgoHelper()
		s, err := metav1.LabelSelectorAsSelector(sel)
		Expect(err).NotTo(HaveOccurred())
		return s.Matches(set)
	}

	It("selects runner pods and admits only the API and the manager, on the runner port", func() {
		r, err := Render("bf", "bf-system", nil)
		Expect(err).NotTo(HaveOccurred())
		np := toTyped[networkingv1.NetworkPolicy](Find(r.Objects, "NetworkPolicy", "bf-browserfleet-runner"))
		Expect(np.Namespace).To(Equal("bf-system"))
		Expect(np.Spec.PolicyTypes).To(ConsistOf(networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress))

		// The labels the manager puts on runner pods.
		runner := labels.Set{v1alpha1.LabelManagedBy: v1alpha1.ManagedBy, v1alpha1.LabelComponent: v1alpha1.ComponentRunner, v1alpha1.LabelSession: "s"}
		Expect(selects(&np.Spec.PodSelector, runner)).To(BeTrue())
		api, manager := podLabels(r.Objects, "bf-browserfleet-api"), podLabels(r.Objects, "bf-browserfleet-manager")
		Expect(selects(&np.Spec.PodSelector, api)).To(BeFalse())
		Expect(selects(&np.Spec.PodSelector, manager)).To(BeFalse())

		Expect(np.Spec.Ingress).To(HaveLen(1))
		in := np.Spec.Ingress[0]
		Expect(in.Ports).To(HaveLen(1))
		Expect(*in.Ports[0].Port).To(Equal(intstr.FromInt32(rpc.Port)))
		Expect(in.From).To(HaveLen(2))
		releaseNS := labels.Set{"kubernetes.io/metadata.name": "bf-system"}
		for _, peer := range in.From {
			Expect(peer.IPBlock).To(BeNil())
			Expect(selects(peer.NamespaceSelector, releaseNS)).To(BeTrue())
			Expect(selects(peer.NamespaceSelector, labels.Set{"kubernetes.io/metadata.name": "elsewhere"})).To(BeFalse())
			Expect(selects(peer.PodSelector, runner)).To(BeFalse(), "runners must not reach each other")
		}
		Expect(selects(in.From[0].PodSelector, api)).To(BeTrue())
		Expect(selects(in.From[1].PodSelector, manager)).To(BeTrue())
	})

	It("lets runners reach DNS, the internet and the allowed ranges, but not private, metadata or cluster ranges", func() {
		vals, err := ValuesFile("values-all.yaml")
		Expect(err).NotTo(HaveOccurred())
		vals["projects"] = map[string]any{"namespaces": []any{"team-a"}}
		r, err := Render("bf", "bf-system", vals)
		Expect(err).NotTo(HaveOccurred())
		np := toTyped[networkingv1.NetworkPolicy](Find(r.Objects, "NetworkPolicy", "bf-browserfleet-runner"))
		Expect(np.Namespace).To(Equal("team-a"))
		Expect(np.Spec.Egress).To(HaveLen(5))

		dns := np.Spec.Egress[0]
		Expect(dns.To).To(HaveLen(1))
		Expect(selects(dns.To[0].NamespaceSelector, labels.Set{"kubernetes.io/metadata.name": "kube-system"})).To(BeTrue())
		Expect(selects(dns.To[0].PodSelector, labels.Set{"k8s-app": "kube-dns"})).To(BeTrue())
		for _, p := range dns.Ports {
			Expect(p.Port.IntValue()).To(Equal(53))
		}

		internet := np.Spec.Egress[1]
		Expect(internet.Ports).To(BeEmpty())
		Expect(internet.To).To(ConsistOf(
			networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{
				"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10",
				"168.63.129.16/32", "100.100.100.200/32", "203.0.113.0/24",
			}}},
			networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: []string{
				"fc00::/7", "fe80::/10", "2001:db8:42::/56",
			}}},
		))

		// What runner.egress.allowCIDRs opens in the runner's gate, the
		// policy admits too.
		allowed := np.Spec.Egress[2]
		Expect(allowed.To).To(ConsistOf(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.20.0.0/16"}}))

		// The API's search relay, on its runner port only.
		relay := np.Spec.Egress[3]
		Expect(relay.To).To(HaveLen(1))
		Expect(selects(relay.To[0].NamespaceSelector, labels.Set{"kubernetes.io/metadata.name": "bf-system"})).To(BeTrue())
		Expect(selects(relay.To[0].PodSelector, podLabels(r.Objects, "bf-browserfleet-api"))).To(BeTrue())
		Expect(relay.Ports).To(HaveLen(1))
		Expect(relay.Ports[0].Port.IntValue()).To(Equal(8011))

		extra := np.Spec.Egress[4]
		Expect(selects(extra.To[0].PodSelector, labels.Set{"app": "vllm"})).To(BeTrue())
	})

	It("can deny the internet", func() {
		r, err := Render("bf", "bf-system", map[string]any{"networkPolicy": map[string]any{"runner": map[string]any{"egress": map[string]any{
			"internet": map[string]any{"enabled": false},
		}}}})
		Expect(err).NotTo(HaveOccurred())
		np := toTyped[networkingv1.NetworkPolicy](Find(r.Objects, "NetworkPolicy", "bf-browserfleet-runner"))
		Expect(np.Spec.Egress).To(HaveLen(2), "DNS and the API's runner listener only")
		Expect(np.Spec.Egress[0].To[0].IPBlock).To(BeNil())
		Expect(np.Spec.Egress[1].To[0].IPBlock).To(BeNil())
		Expect(np.Spec.Egress[1].Ports).To(ConsistOf(HaveField("Port.IntVal", BeEquivalentTo(8001))))
	})
})
