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
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/browserfleet/browserfleet/api/config/v1alpha1"
	"github.com/browserfleet/browserfleet/controllers"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
)

// kustomize renders a directory of config/ with the control plane's
// kubectl, which has kustomize built in.
func kustomize(dir string) []*unstructured.Unstructured {
	GinkgoHelper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(filepath.Join(framework.AssetsDir(), "kubectl"), "kustomize", filepath.Join(framework.RepoRoot(), "config", dir))
	cmd.Stdout, cmd.Stderr = &out, &errOut
	Expect(cmd.Run()).To(Succeed(), "kubectl kustomize config/%s: %s", dir, errOut.String())
	objs, err := Decode(out.Bytes())
	Expect(err).NotTo(HaveOccurred())
	return objs
}

// inNamespace sets the namespace of every object, as `kubectl apply -n`
// does for objects that name none.
func inNamespace(objs []*unstructured.Unstructured, ns string) []*unstructured.Unstructured {
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	return objs
}

var _ = Describe("kustomize", func() {
	It("config/default applies to the API server", func(ctx SpecContext) {
		objs := kustomize("default")
		Expect(kindCount(objs)).To(Equal(map[string]int{
			"Namespace":                1,
			"CustomResourceDefinition": 3,
			"ServiceAccount":           2,
			"ClusterRole":              3,
			"ClusterRoleBinding":       2,
			"Role":                     2,
			"RoleBinding":              2,
			"Deployment":               2,
			"Service":                  4, // the API's, its runners', two metrics Services
			"PodDisruptionBudget":      2,
			"ConfigMap":                1,
		}), "%v", Kinds(objs))
		for _, o := range objs {
			namespaced, err := k8sClient.IsObjectNamespaced(o)
			Expect(err).NotTo(HaveOccurred())
			if namespaced {
				Expect(o.GetNamespace()).To(Equal("browserfleet-system"), "%s %s", o.GetKind(), o.GetName())
			}
		}
		dryRunApply(ctx, objs)
	})

	It("config/networkpolicy applies in a project namespace, and so do the samples, as `kubectl apply -f config/samples/` reads them", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		policies := inNamespace(kustomize("networkpolicy"), ns)
		Expect(Kinds(policies)).To(Equal([]string{"NetworkPolicy/" + ns + "/browserfleet-runner"}))
		dryRunApply(ctx, policies)
		// No kustomization in config/samples: kubectl apply -f of a
		// directory would take it for an object and fail.
		var samples []*unstructured.Unstructured
		files, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "config", "samples", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		for _, f := range files {
			raw, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			objs, err := Decode(raw)
			Expect(err).NotTo(HaveOccurred(), f)
			samples = append(samples, objs...)
		}
		samples = inNamespace(samples, ns)
		Expect(kindCount(samples)).To(Equal(map[string]int{"BrowserSession": 4, "AgentTask": 1}))
		dryRunApply(ctx, samples)
	})

	It("config/crd holds the generated CRDs", func() {
		Expect(Kinds(kustomize("crd"))).To(Equal([]string{
			"CustomResourceDefinition//agenttasks.browserfleet.io",
			"CustomResourceDefinition//browserpools.browserfleet.io",
			"CustomResourceDefinition//browsersessions.browserfleet.io",
		}))
	})

	// config/default is the chart installed as release "browserfleet" in
	// browserfleet-system with default values, minus what needs templating
	// (generated Secrets) and plus the Namespace and CRDs.
	It("matches the chart", func() {
		objs := withoutConfigHash(kustomize("default"))
		r, err := Render("browserfleet", "browserfleet-system", nil)
		Expect(err).NotTo(HaveOccurred())
		chart := withoutConfigChecksum(r.Objects)

		shared := func(objs []*unstructured.Unstructured) []string {
			var out []string
			for _, o := range objs {
				switch o.GetKind() {
				case "Namespace", "CustomResourceDefinition", "Secret", "NetworkPolicy":
				default:
					out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
				}
			}
			return out
		}
		Expect(shared(objs)).To(ConsistOf(shared(chart)))

		for _, o := range objs {
			c := Find(chart, o.GetKind(), o.GetName())
			if c == nil {
				continue
			}
			what := o.GetKind() + " " + o.GetName()
			switch o.GetKind() {
			case "Deployment":
				k, h := toTyped[appsv1.Deployment](o), toTyped[appsv1.Deployment](c)
				Expect(cmp.Diff(h.Spec, k.Spec, quantities)).To(BeEmpty(), "%s (-chart +kustomize)", what)
			case "Service":
				Expect(cmp.Diff(toTyped[corev1.Service](c).Spec, toTyped[corev1.Service](o).Spec)).To(BeEmpty(), "%s (-chart +kustomize)", what)
			case "PodDisruptionBudget":
				Expect(cmp.Diff(toTyped[policyv1.PodDisruptionBudget](c).Spec, toTyped[policyv1.PodDisruptionBudget](o).Spec)).To(BeEmpty(), what)
			case "ClusterRole", "Role":
				Expect(permissions(toTyped[rbacv1.ClusterRole](o).Rules)).To(Equal(permissions(toTyped[rbacv1.ClusterRole](c).Rules)), what)
			case "ClusterRoleBinding", "RoleBinding":
				k, h := toTyped[rbacv1.RoleBinding](o), toTyped[rbacv1.RoleBinding](c)
				Expect(k.RoleRef).To(Equal(h.RoleRef), what)
				Expect(k.Subjects).To(ConsistOf(h.Subjects), what)
			case "ServiceAccount":
				Expect(toTyped[corev1.ServiceAccount](o).AutomountServiceAccountToken).To(Equal(toTyped[corev1.ServiceAccount](c).AutomountServiceAccountToken), what)
			case "ConfigMap":
				// The same Configuration, however written.
				k, err := configv1alpha1.Decode([]byte(toTyped[corev1.ConfigMap](o).Data["config.yaml"]))
				Expect(err).NotTo(HaveOccurred(), what)
				h, err := configv1alpha1.Decode([]byte(toTyped[corev1.ConfigMap](c).Data["config.yaml"]))
				Expect(err).NotTo(HaveOccurred(), what)
				Expect(cmp.Diff(h, k, quantities)).To(BeEmpty(), "%s (-chart +kustomize)", what)
			}
		}

		// The runner policy of config/networkpolicy is the chart's.
		k := toTyped[networkingv1.NetworkPolicy](inNamespace(kustomize("networkpolicy"), "team-a")[0])
		h := toTyped[networkingv1.NetworkPolicy](Find(chart, "NetworkPolicy", "browserfleet-runner"))
		Expect(cmp.Diff(h.Spec, k.Spec)).To(BeEmpty(), "NetworkPolicy (-chart +kustomize)")
	})

	It("runs the manager with the controllers' defaults", func() {
		opts := managerOptionsOf(kustomize("manager"), "browserfleet-manager")
		want := controllers.DefaultOptions()
		// The API's runner listener, which has no default.
		want.Runner.ServicesURL = "http://browserfleet-api-runners.browserfleet-system.svc:8001"
		Expect(cmp.Diff(want, opts.Controllers, quantities)).To(BeEmpty())
		Expect(opts.LeaderElection).To(BeTrue())
	})
})

// generatedConfig is the name of the ConfigMap config/manager generates,
// before kustomize appends the hash of its content.
const generatedConfig = "browserfleet-manager-config"

// withoutConfigHash names the manager's generated ConfigMap as the chart
// does, without its hash, in the ConfigMap and in the volumes that mount it.
func withoutConfigHash(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	GinkgoHelper()
	hashed := regexp.MustCompile("^" + generatedConfig + "-[a-z0-9]{10}$")
	for _, o := range objs {
		switch o.GetKind() {
		case "ConfigMap":
			if hashed.MatchString(o.GetName()) {
				o.SetName(generatedConfig)
			}
		case "Deployment":
			volumes, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "volumes")
			Expect(err).NotTo(HaveOccurred())
			for _, v := range volumes {
				cm, _, _ := unstructured.NestedMap(v.(map[string]any), "configMap")
				if name, _ := cm["name"].(string); hashed.MatchString(name) {
					Expect(unstructured.SetNestedField(v.(map[string]any), generatedConfig, "configMap", "name")).To(Succeed())
				}
			}
			Expect(unstructured.SetNestedSlice(o.Object, volumes, "spec", "template", "spec", "volumes")).To(Succeed())
		}
	}
	return objs
}

// withoutConfigChecksum drops the chart's checksum/config annotation, the
// chart's way to do what the hash in the name does for kustomize.
func withoutConfigChecksum(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		annotations, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "annotations")
		delete(annotations, "checksum/config")
		if len(annotations) == 0 {
			unstructured.RemoveNestedField(o.Object, "spec", "template", "metadata", "annotations")
		} else {
			Expect(unstructured.SetNestedStringMap(o.Object, annotations, "spec", "template", "metadata", "annotations")).To(Succeed())
		}
	}
	return objs
}
