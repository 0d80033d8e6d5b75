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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"

	"github.com/browserfleet/browserfleet/internal/testing/framework"
)

var _ = Describe("helm lint", func() {
	DescribeTable("passes, warnings included",
		func(valuesFile string) {
			vals := map[string]any{}
			if valuesFile != "" {
				var err error
				vals, err = ValuesFile(valuesFile)
				Expect(err).NotTo(HaveOccurred())
			}
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = "browserfleet-system"
			kv, err := common.ParseKubeVersion("v" + framework.K8sVersion)
			Expect(err).NotTo(HaveOccurred())
			lint.KubeVersion = kv
			result := lint.Run([]string{ChartDir()}, vals)
			for _, m := range result.Messages {
				GinkgoWriter.Println(m.Error())
			}
			Expect(result.Errors).To(BeEmpty())
			Expect(result.TotalChartsLinted).To(Equal(1))
		},
		Entry("default values", ""),
		Entry("every option on", "values-all.yaml"),
		Entry("every option off", "values-minimal.yaml"),
		Entry("runner settings", "values-runner.yaml"),
	)
})

var _ = Describe("values.schema.json", func() {
	// Each file of testdata/bad is one mistake; its first line says which.
	// Rendering must fail on the schema, naming the offending value.
	want := map[string]string{
		"unknown-key.yaml":                      "'runnr' not allowed",
		"bad-quantity.yaml":                     "/runner/resources/requests/cpu",
		"resource-name.yaml":                    "invalid propertyName 'ephemeral storage'",
		"timeout-without-unit.yaml":             "/sessions/maxTimeout",
		"replicas-without-leader-election.yaml": "/manager/replicas",
		"pull-policy.yaml":                      "/runner/image/pullPolicy",
		"model-base-url-provider.yaml":          "/runner/modelBaseURLs",
		"relative-executable.yaml":              "/runner/allowedExecutables/0",
		"climbing-executable.yaml":              "/runner/allowedExecutables/1",
		"unknown-region.yaml":                   "/runner/regions/accepted/1",
		"malformed-key.yaml":                    "/apiKeys/bootstrap/key",
		"key-and-hash.yaml":                     "/apiKeys/bootstrap",
		"cidr-without-prefix.yaml":              "/runner/egress/clusterCIDRs/0",
		"root-runner.yaml":                      "/runner/runAsUser",
		"metrics-port-clash.yaml":               "/metrics/port",
		"toleration-operator.yaml":              "/runner/tolerations/0/operator",
		"replicas-string.yaml":                  "/api/replicas",
		"cache-threshold.yaml":                  "/cache/threshold",
		"cache-redis-deploy-and-address.yaml":   "/cache/redis/address",
		"cache-secret-without-redis.yaml":       "/cache/redis/existingSecret",
	}

	It("has a case for every bad values file", func() {
		files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, f := range files {
			names = append(names, filepath.Base(f))
		}
		Expect(names).To(HaveLen(len(want)))
		for name := range want {
			Expect(names).To(ContainElement(name))
		}
	})

	for name, msg := range want {
		It("refuses "+name, func() {
			vals, err := ValuesFile(filepath.Join("bad", name))
			Expect(err).NotTo(HaveOccurred())
			_, err = Render("bf", "bf-system", vals)
			Expect(err).To(MatchError(ContainSubstring("values don't meet the specifications of the schema")))
			Expect(err).To(MatchError(ContainSubstring(msg)))
		})
	}

	It("accepts the chart's own values and every test's", func() {
		for _, f := range []string{"", "values-all.yaml", "values-minimal.yaml", "values-runner.yaml"} {
			vals := map[string]any{}
			if f != "" {
				var err error
				vals, err = ValuesFile(f)
				Expect(err).NotTo(HaveOccurred())
			}
			_, err := Render("bf", "bf-system", vals)
			Expect(err).NotTo(HaveOccurred(), f)
		}
	})
})

var _ = Describe("the chart's CRDs", func() {
	It("are the generated ones of config/crd/bases", func() {
		generated, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "config", "crd", "bases", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		shipped, err := filepath.Glob(filepath.Join(ChartDir(), "crds", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(generated).NotTo(BeEmpty())
		Expect(len(shipped)).To(Equal(len(generated)), "charts/browserfleet/crds holds other files than config/crd/bases")
		for _, g := range generated {
			want, err := os.ReadFile(g)
			Expect(err).NotTo(HaveOccurred())
			got, err := os.ReadFile(filepath.Join(ChartDir(), "crds", filepath.Base(g)))
			Expect(err).NotTo(HaveOccurred(), "copy config/crd/bases into charts/browserfleet/crds")
			Expect(string(got)).To(Equal(string(want)), "charts/browserfleet/crds/%s is stale: copy config/crd/bases/%s", filepath.Base(g), filepath.Base(g))
		}
	})
})

var _ = Describe("NOTES.txt", func() {
	It("says how to reach the API and read the generated key", func() {
		r, err := Render("bf", "bf-system", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Notes).To(ContainSubstring("kubectl -n bf-system port-forward svc/bf-browserfleet-api 8000:80"))
		Expect(r.Notes).To(ContainSubstring("kubectl -n bf-system get secret bf-browserfleet-bootstrap-api-key -o jsonpath='{.data.key}' | base64 -d"))
		Expect(r.Notes).To(ContainSubstring("bfkeys revoke --namespace bf-system --id bf-browserfleet-bootstrap"))
		Expect(r.Notes).To(ContainSubstring(`-H "x-svc-api-key: $KEY"`))
		Expect(r.Notes).To(ContainSubstring("kubectl apply --server-side --force-conflicts -f <chart>/crds/"))
	})

	It("names the Ingress host, and never the key itself", func() {
		vals, err := ValuesFile("values-all.yaml")
		Expect(err).NotTo(HaveOccurred())
		r, err := Render("bf", "bf-system", vals)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Notes).To(ContainSubstring("URL=https://browserfleet.example.com"))
		Expect(r.Notes).NotTo(ContainSubstring("bfk_"))
	})

	It("does not promise a Secret when the key was given", func() {
		r, err := Render("bf", "bf-system", map[string]any{"apiKeys": map[string]any{"bootstrap": map[string]any{
			"sha256": strings.Repeat("ab", 32),
		}}})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Notes).To(ContainSubstring("only you have it"))
		Expect(r.Notes).NotTo(ContainSubstring("bootstrap-api-key"))
		Expect(Find(r.Objects, "Secret", "bf-browserfleet-bootstrap-api-key")).To(BeNil())
	})
})
