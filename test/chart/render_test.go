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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kindCount counts the rendered objects by kind.
func kindCount(objs []*unstructured.Unstructured) map[string]int {
	n := map[string]int{}
	for _, o := range objs {
		n[o.GetKind()]++
	}
	return n
}

var _ = Describe("the rendered chart", func() {
	It("applies to the API server with default values", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		r, err := Render("bf", ns, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(kindCount(r.Objects)).To(Equal(map[string]int{
			"ServiceAccount":      2,
			"ClusterRole":         3, // manager, metrics-auth, metrics-reader
			"ClusterRoleBinding":  2,
			"Role":                2, // leader election, the API's in the one project
			"RoleBinding":         2,
			"Deployment":          2,
			"Service":             4, // the API, its runners', two metrics Services
			"PodDisruptionBudget": 2,
			"NetworkPolicy":       1,
			"Secret":              3, // cdpUrl signing key, bootstrap key hash and value
			"ConfigMap":           1, // the manager's Configuration
		}), "%v", Kinds(r.Objects))
		dryRunApply(ctx, r.Objects)
	})

	It("applies with every option on", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		projectA, projectB := newNamespace(ctx, ""), newNamespace(ctx, "")
		vals, err := ValuesFile("values-all.yaml")
		Expect(err).NotTo(HaveOccurred())
		vals["projects"] = map[string]any{"namespaces": []any{projectA, projectB}}
		vals["apiKeys"].(map[string]any)["bootstrap"].(map[string]any)["namespace"] = projectA
		r, err := Render("bf", ns, vals)
		Expect(err).NotTo(HaveOccurred())
		Expect(kindCount(r.Objects)).To(Equal(map[string]int{
			"ServiceAccount":      2,
			"ClusterRole":         3,
			"ClusterRoleBinding":  2,
			"Role":                3, // leader election, the API's in each project
			"RoleBinding":         3,
			"Deployment":          3, // the manager, the API, the cache's Redis
			"Service":             5, // the API's, its runners', the metrics of both, the Redis
			"PodDisruptionBudget": 2,
			"NetworkPolicy":       3, // one per project, the Redis's
			"Secret":              3, // no signing key: an existing Secret is named; the Redis password
			"Ingress":             1,
			"ServiceMonitor":      1,
			"ConfigMap":           1,
		}), "%v", Kinds(r.Objects))
		Expect(Find(r.Objects, "Secret", "bf-apikey-bf-browserfleet-bootstrap").GetNamespace()).To(Equal(projectA))
		for _, o := range r.Objects {
			if o.GetKind() == "NetworkPolicy" && o.GetName() != "bf-browserfleet-redis" {
				Expect(o.GetNamespace()).To(BeElementOf(projectA, projectB))
			}
		}
		dryRunApply(ctx, r.Objects)
	})

	It("applies with every option off", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		vals, err := ValuesFile("values-minimal.yaml")
		Expect(err).NotTo(HaveOccurred())
		r, err := Render("bf", ns, vals)
		Expect(err).NotTo(HaveOccurred())
		Expect(kindCount(r.Objects)).To(Equal(map[string]int{
			"ServiceAccount":     2,
			"ClusterRole":        1,
			"ClusterRoleBinding": 1,
			"Role":               2,
			"RoleBinding":        2,
			"Deployment":         2,
			"Service":            2, // the API's, its runners'
			"Secret":             1, // the signing key
			"ConfigMap":          1,
		}), "%v", Kinds(r.Objects))
		dryRunApply(ctx, r.Objects)
	})

	It("applies with the runner settings of values-runner.yaml", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		vals, err := ValuesFile("values-runner.yaml")
		Expect(err).NotTo(HaveOccurred())
		r, err := Render("bf", ns, vals)
		Expect(err).NotTo(HaveOccurred())
		dryRunApply(ctx, r.Objects)
	})

	It("ships CRDs that apply over the installed ones, as the upgrade path says", func(ctx SpecContext) {
		files, err := filepath.Glob(filepath.Join(ChartDir(), "crds", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(HaveLen(3))
		for _, f := range files {
			b, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			objs, err := Decode(b)
			Expect(err).NotTo(HaveOccurred())
			// envtest installed config/crd/bases: this is
			// `kubectl apply --server-side -f crds/` over an older release.
			dryRunApply(ctx, objs)
		}
	})
})

var _ = Describe("the dry run", func() {
	It("fails on what the API server refuses", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		r, err := Render("bf", ns, nil)
		Expect(err).NotTo(HaveOccurred())
		typo := Find(r.Objects, "Deployment", "bf-browserfleet-api").DeepCopy()
		Expect(unstructured.SetNestedField(typo.Object, int64(2), "spec", "replica")).To(Succeed())
		invalid := Find(r.Objects, "Service", "bf-browserfleet-api").DeepCopy()
		Expect(unstructured.SetNestedField(invalid.Object, "Nowhere", "spec", "type")).To(Succeed())
		missing := Find(r.Objects, "Role", "bf-browserfleet-leader-election").DeepCopy()
		missing.SetNamespace("no-such-namespace")
		failures := InterceptGomegaFailures(func() {
			dryRunApply(ctx, []*unstructured.Unstructured{typo, invalid, missing})
		})
		Expect(failures).To(ContainElement(ContainSubstring(`unknown field "spec.replica"`)))
		Expect(failures).To(ContainElement(ContainSubstring(`spec.type: Unsupported value: "Nowhere"`)))
		Expect(failures).To(ContainElement(ContainSubstring(`namespaces "no-such-namespace" not found`)))
	})
})
