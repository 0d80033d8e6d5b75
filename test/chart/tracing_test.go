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
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/browserfleet/browserfleet/tracing"
)

// apiEnv is the API container's environment: names to values, and the
// Secret keys of those that come from one.
func apiEnv(r *Rendered) (values map[string]string, fromSecret map[string]corev1.SecretKeySelector) {
	GinkgoHelper()
	d := toTyped[appsv1.Deployment](Find(r.Objects, "Deployment", "bf-browserfleet-api"))
	values, fromSecret = map[string]string{}, map[string]corev1.SecretKeySelector{}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "api" {
			continue
		}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
				fromSecret[e.Name] = *e.ValueFrom.SecretKeyRef
			case e.ValueFrom == nil:
				values[e.Name] = e.Value
			}
		}
	}
	return values, fromSecret
}

// collectorRule is the runner NetworkPolicy's egress rule to the
// collector, on port.
func collectorRules(r *Rendered, port int) []networkingv1.NetworkPolicyEgressRule {
	GinkgoHelper()
	np := toTyped[networkingv1.NetworkPolicy](Find(r.Objects, "NetworkPolicy", "bf-browserfleet-runner"))
	var out []networkingv1.NetworkPolicyEgressRule
	for _, rule := range np.Spec.Egress {
		for _, p := range rule.Ports {
			if p.Port != nil && p.Port.IntValue() == port {
				out = append(out, rule)
			}
		}
	}
	return out
}

var _ = Describe("the tracing values", func() {
	collector := []any{map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "observability"}},
		"podSelector":       map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "opentelemetry-collector"}},
	}}
	on := func(extra map[string]any) map[string]any {
		t := map[string]any{
			"endpoint":      "http://otel-collector.observability:4318",
			"samplingRatio": 0.25,
			"headersSecret": map[string]any{"name": "vendor-otlp", "key": "headers"},
			"collector":     collector,
		}
		for k, v := range extra {
			t[k] = v
		}
		return map[string]any{"tracing": t}
	}

	It("trace nothing by default", func() {
		r, err := Render("bf", "bf-system", nil)
		Expect(err).NotTo(HaveOccurred())
		env, secret := apiEnv(r)
		for name := range env {
			Expect(name).NotTo(HavePrefix("OTEL_"))
		}
		Expect(secret).To(BeEmpty())
		Expect(managerOptionsOf(r.Objects, "bf-browserfleet-manager").Controllers.Runner.OTLPEndpoint).To(BeEmpty())
		Expect(collectorRules(r, 4318)).To(BeEmpty())
	})

	It("export the API's spans and the runners' to the collector, which runners may reach", func(ctx context.Context) {
		r, err := Render("bf", "bf-system", on(nil))
		Expect(err).NotTo(HaveOccurred())

		By("the API's OTEL_* environment")
		env, secret := apiEnv(r)
		Expect(env).To(HaveKeyWithValue("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel-collector.observability:4318"))
		Expect(env).To(HaveKeyWithValue("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"))
		Expect(env).To(HaveKeyWithValue("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"))
		Expect(env).To(HaveKeyWithValue("OTEL_TRACES_SAMPLER_ARG", "0.25"))
		Expect(env).To(HaveKeyWithValue("OTEL_RESOURCE_ATTRIBUTES", "k8s.namespace.name=bf-system,k8s.pod.name=$(POD_NAME)"))
		Expect(secret).To(HaveKeyWithValue("OTEL_EXPORTER_OTLP_HEADERS", corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "vendor-otlp"}, Key: "headers",
		}))
		// The API reads it as a pod would get it: export on.
		for name, v := range env {
			GinkgoT().Setenv(name, strings.ReplaceAll(v, "$(POD_NAME)", "bf-browserfleet-api-7c9d"))
		}
		GinkgoT().Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-vendor-key=k")
		tp, err := tracing.New(ctx, tracing.Options{DefaultServiceName: "browserfleet-api"})
		Expect(err).NotTo(HaveOccurred())
		Expect(tp).NotTo(BeNil())
		Expect(tp.Shutdown(ctx)).To(Succeed())

		By("the runners' export, through the manager's Configuration")
		Expect(managerOptionsOf(r.Objects, "bf-browserfleet-manager").Controllers.Runner.OTLPEndpoint).To(Equal("http://otel-collector.observability:4318"))

		By("the runner NetworkPolicy's way to the collector, on the endpoint's port only")
		rules := collectorRules(r, 4318)
		Expect(rules).To(HaveLen(1))
		Expect(rules[0].To).To(HaveLen(1))
		Expect(rules[0].To[0].NamespaceSelector.MatchLabels).To(HaveKeyWithValue("kubernetes.io/metadata.name", "observability"))
		Expect(rules[0].To[0].PodSelector.MatchLabels).To(HaveKeyWithValue("app.kubernetes.io/name", "opentelemetry-collector"))
		Expect(rules[0].Ports).To(HaveLen(1))
	})

	It("open the scheme's port when the endpoint names none", func() {
		r, err := Render("bf", "bf-system", on(map[string]any{"endpoint": "https://otlp.collector.example"}))
		Expect(err).NotTo(HaveOccurred())
		Expect(collectorRules(r, 443)).To(HaveLen(1))
	})

	It("leave the runners out with runners: false", func() {
		r, err := Render("bf", "bf-system", on(map[string]any{"runners": false}))
		Expect(err).NotTo(HaveOccurred())
		env, _ := apiEnv(r)
		Expect(env).To(HaveKey("OTEL_EXPORTER_OTLP_ENDPOINT"))
		Expect(managerOptionsOf(r.Objects, "bf-browserfleet-manager").Controllers.Runner.OTLPEndpoint).To(BeEmpty())
		Expect(collectorRules(r, 4318)).To(BeEmpty())
	})

	DescribeTable("refuse what the API and runners could not use",
		func(extra map[string]any, path string) {
			_, err := Render("bf", "bf-system", on(extra))
			Expect(err).To(MatchError(ContainSubstring("values don't meet the specifications of the schema")))
			Expect(err).To(MatchError(ContainSubstring(path)))
		},
		Entry("an endpoint without scheme", map[string]any{"endpoint": "otel-collector:4318"}, "/tracing/endpoint"),
		Entry("an endpoint with credentials", map[string]any{"endpoint": "http://u:p@otel-collector:4318"}, "/tracing/endpoint"),
		Entry("a ratio above 1", map[string]any{"samplingRatio": 2}, "/tracing/samplingRatio"),
		Entry("an unknown key", map[string]any{"protocol": "grpc"}, "'protocol' not allowed"),
	)
})
