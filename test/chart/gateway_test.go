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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

var _ = Describe("the gateway values", func() {
	on := func() map[string]any {
		return map[string]any{"gateway": map[string]any{
			"providers": map[string]any{
				"openai":    map[string]any{"existingSecret": "openai-key", "secretKey": "token", "models": []any{"gpt-4.1-mini", "gpt-4.1"}},
				"anthropic": map[string]any{"baseURL": "http://litellm.models:4000"},
			},
			"defaultModel": "openai/gpt-4.1-mini",
			"budget":       map[string]any{"tokens": 1000000, "window": "1h", "projects": map[string]any{"team-a": 5000}},
		}}
	}

	It("run no gateway by default: runners call models directly (the runner port serves the cache)", func() {
		opts, r := apiOptions(nil)
		Expect(opts.Gateway.Providers).To(HaveKeyWithValue("openai", HaveField("APIKeyFile", "")))
		Expect(managerOptionsOf(r.Objects, "bf-browserfleet-manager").Controllers.Runner.ModelGateway).To(BeFalse())
	})

	It("give the API its providers' keys as files of their Secrets, and runners the API's runner port", func() {
		opts, r := apiOptions(on())
		api := Find(r.Objects, "Deployment", "bf-browserfleet-api")

		By("the flags, as cmd/api parses them")
		Expect(*opts.Gateway.Providers["openai"]).To(HaveField("APIKeyFile", "/etc/browserfleet/gateway/openai/key"))
		Expect(opts.Gateway.Providers["openai"].Models).To(Equal("gpt-4.1-mini,gpt-4.1"))
		Expect(*opts.Gateway.Providers["anthropic"]).To(HaveField("BaseURL", "http://litellm.models:4000"))
		Expect(opts.Gateway.Providers["anthropic"].APIKeyFile).To(BeEmpty())
		Expect(opts.Gateway.Providers["google"].APIKeyFile).To(BeEmpty())
		Expect(opts.Gateway.DefaultModel).To(Equal("openai/gpt-4.1-mini"))
		Expect(opts.Gateway.BudgetTokens).To(BeEquivalentTo(1000000))
		Expect(opts.Gateway.BudgetWindow).To(Equal(time.Hour))
		Expect(opts.Gateway.ProjectBudgets).To(Equal(map[string]int64{"team-a": 5000}))
		Expect(opts.RunnerListenAddress).To(Equal(":8001"))

		By("the key mounted from its Secret into the API pod only")
		Expect(mountedFile(api, "api", "/etc/browserfleet/gateway/openai/key")).To(Equal("openai-key/token"))
		manager := toTyped[appsv1.Deployment](Find(r.Objects, "Deployment", "bf-browserfleet-manager"))
		for _, v := range manager.Spec.Template.Spec.Volumes {
			Expect(v.Secret == nil || v.Secret.SecretName != "openai-key").To(BeTrue(), "the manager mounts the provider's Secret")
		}

		By("runners told where the API's runner port is, and let through to it")
		Expect(managerOptionsOf(r.Objects, "bf-browserfleet-manager").Controllers.Runner.ServicesURL).To(Equal("http://bf-browserfleet-api-runners.bf-system.svc:8001"))
		Expect(managerOptionsOf(r.Objects, "bf-browserfleet-manager").Controllers.Runner.ModelGateway).To(BeTrue())
		Expect(Find(r.Objects, "Service", "bf-browserfleet-api-runners")).NotTo(BeNil())
		np := toTyped[networkingv1.NetworkPolicy](Find(r.Objects, "NetworkPolicy", "bf-browserfleet-runner"))
		found := false
		for _, rule := range np.Spec.Egress {
			for _, p := range rule.Ports {
				if p.Port != nil && p.Port.IntValue() == 8001 {
					found = true
				}
			}
		}
		Expect(found).To(BeTrue(), "the runner NetworkPolicy opens the API's runner port")
	})

	DescribeTable("refuse what the API could not use",
		func(mutate func(g map[string]any), path string) {
			vals := on()
			mutate(vals["gateway"].(map[string]any))
			_, err := Render("bf", "bf-system", vals)
			Expect(err).To(MatchError(ContainSubstring("values don't meet the specifications of the schema")))
			Expect(err).To(MatchError(ContainSubstring(path)))
		},
		Entry("an unknown provider", func(g map[string]any) {
			g["providers"].(map[string]any)["acme"] = map[string]any{"existingSecret": "k"}
		}, "'acme' not allowed"),
		Entry("a base URL with credentials", func(g map[string]any) {
			g["providers"].(map[string]any)["anthropic"] = map[string]any{"baseURL": "http://u:p@litellm:4000"}
		}, "/gateway/providers/anthropic/baseURL"),
		Entry("a default model without a provider", func(g map[string]any) { g["defaultModel"] = "gpt-4.1" }, "/gateway/defaultModel"),
		Entry("a negative budget", func(g map[string]any) { g["budget"].(map[string]any)["tokens"] = -1 }, "/gateway/budget/tokens"),
		Entry("a window that is no duration", func(g map[string]any) { g["budget"].(map[string]any)["window"] = "daily" }, "/gateway/budget/window"),
		Entry("a project that is no namespace", func(g map[string]any) {
			g["budget"].(map[string]any)["projects"] = map[string]any{"Team_A": 5}
		}, "invalid propertyName 'Team_A'"),
	)
})
