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

package v1alpha1_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	gtypes "github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/test/framework"
	. "github.com/browserfleet/browserfleet/test/matchers"
	"github.com/browserfleet/browserfleet/test/wrappers"
)

var (
	fw        = &framework.Framework{}
	k8sClient client.Client
)

func TestAPI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "API Validation Suite")
}

var _ = BeforeSuite(func() {
	k8sClient = framework.Client(fw.Start())
})

var _ = AfterSuite(func() { fw.Stop() })

func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "api-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// apply creates the manifest in ns, refusing unknown fields as kubectl does.
func apply(ctx context.Context, ns, manifest string) error {
	u := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(manifest), &u.Object)).To(Succeed())
	u.SetNamespace(ns)
	return k8sClient.Create(ctx, u)
}

const session = `
apiVersion: browserfleet.io/v1alpha1
kind: BrowserSession
metadata: {name: s}
spec:
`

const task = `
apiVersion: browserfleet.io/v1alpha1
kind: AgentTask
metadata: {name: t}
spec:
`

var _ = Describe("CRD validation", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	DescribeTable("refuses a bad manifest and names the field",
		func(ctx SpecContext, manifest string, match gtypes.GomegaMatcher) {
			Expect(apply(ctx, ns, manifest)).To(match)
			var sessions v1alpha1.BrowserSessionList
			Expect(k8sClient.List(ctx, &sessions, client.InNamespace(ns))).To(Succeed())
			Expect(sessions.Items).To(BeEmpty(), "a refused manifest creates nothing")
		},
		Entry("a session without a model", session+`  verbose: 1`,
			BeInvalidError("spec.model", "Required value")),
		Entry("a model name without its provider", session+`  model: {name: gpt-4o}`,
			BeInvalidError("spec.model.name", "should match")),
		Entry("a model API key given inline", session+`  model: {name: openai/gpt-4o, apiKey: sk-secret}`,
			BeUnknownFieldError("spec.model.apiKey")),
		Entry("verbose out of 0..2", session+`  model: {name: openai/gpt-4o}
  verbose: 3`, BeInvalidError("spec.verbose", "Unsupported value: 3")),
		Entry("a negative DOM settle timeout", session+`  model: {name: openai/gpt-4o}
  domSettleTimeoutMs: -1`, BeInvalidError("spec.domSettleTimeoutMs", "greater than or equal to 0")),
		Entry("an unknown browser type", session+`  model: {name: openai/gpt-4o}
  browser: {type: remote}`, BeInvalidError("spec.browser.type", `Unsupported value: "remote"`)),
		Entry("cdpUrl with a cloud browser", session+`  model: {name: openai/gpt-4o}
  browser: {type: cloud, cdpUrl: "ws://chrome:9222"}`, BeInvalidError("spec.browser.cdpUrl", "cdpUrl requires type local")),
		Entry("launch options with a cloud browser", session+`  model: {name: openai/gpt-4o}
  browser: {launchOptions: {headless: true}}`, BeInvalidError("spec.browser.launchOptions", "launchOptions requires type local")),
		Entry("cloud params with a local browser", session+`  model: {name: openai/gpt-4o}
  browser: {type: local}
  cloudSessionCreateParams: {region: us-east-1}`, BeInvalidError("spec.cloudSessionCreateParams", "requires browser.type cloud")),
		Entry("an unknown launch option", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {headless: true, turbo: true}}`, BeUnknownFieldError("spec.browser.launchOptions.turbo")),
		Entry("a negative viewport", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {viewport: {width: -1, height: 600}}}`,
			BeInvalidError("spec.browser.launchOptions.viewport.width", "greater than or equal to 1")),
		Entry("a viewport without its height", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {viewport: {width: 800}}}`,
			BeInvalidError("spec.browser.launchOptions.viewport.height", "Required value")),
		Entry("a launch proxy without a server", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {proxy: {username: u}}}`,
			BeInvalidError("spec.browser.launchOptions.proxy.server", "Required value")),
		Entry("a proxy password given inline", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {proxy: {server: "http://p:1", password: hunter2}}}`,
			BeUnknownFieldError("spec.browser.launchOptions.proxy.password")),
		Entry("preserveUserDataDir without userDataDir", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {preserveUserDataDir: true}}`,
			BeInvalidError("spec.browser.launchOptions.preserveUserDataDir", "requires userDataDir")),
		Entry("a port out of range", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {port: 70000}}`,
			BeInvalidError("spec.browser.launchOptions.port", "less than or equal to 65535")),
		Entry("an unknown region", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {region: mars-1}`, BeInvalidError("spec.cloudSessionCreateParams.region", `Unsupported value: "mars-1"`)),
		Entry("a negative timeout", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {timeout: -5}`, BeInvalidError("spec.cloudSessionCreateParams.timeout", "greater than or equal to 1")),
		Entry("an unknown os", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {os: beos}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.os", `Unsupported value: "beos"`)),
		Entry("a fingerprint browser outside the enum", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {fingerprint: {browsers: [chrome, opera]}}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.fingerprint.browsers[1]", `Unsupported value: "opera"`)),
		Entry("a fingerprint device outside the enum", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {fingerprint: {devices: [watch]}}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.fingerprint.devices[0]", `Unsupported value: "watch"`)),
		Entry("a fingerprint OS outside the enum", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {fingerprint: {operatingSystems: [plan9]}}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.fingerprint.operatingSystems[0]", `Unsupported value: "plan9"`)),
		Entry("an HTTP version outside the enum", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {fingerprint: {httpVersion: "3"}}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.fingerprint.httpVersion", `Unsupported value: "3"`)),
		Entry("a screen whose minimum exceeds its maximum", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {fingerprint: {screen: {minWidth: 1920, maxWidth: 1280}}}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.fingerprint.screen.minWidth", "must not exceed maxWidth")),
		Entry("a context without its id", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {context: {persist: true}}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.context.id", "Required value")),
		Entry("a proxy without its type", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {proxies: [{server: "http://p:1"}]}`,
			BeInvalidError("spec.cloudSessionCreateParams.proxies[0].type", "Required value")),
		Entry("a cloud proxy geolocation without its country", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {proxies: [{type: cloud, geolocation: {city: Berlin}}]}`,
			BeInvalidError("spec.cloudSessionCreateParams.proxies[0].geolocation.country", "Required value")),
		Entry("an external proxy without its server", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {proxies: [{type: cloud}, {type: external, username: u}]}`,
			BeInvalidError("spec.cloudSessionCreateParams.proxies[1].server", "server is required for an external proxy")),
		Entry("a cloud proxy with a server", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {proxies: [{type: cloud, server: "http://p:1"}]}`,
			BeInvalidError("spec.cloudSessionCreateParams.proxies[0].server", "server applies only to an external proxy")),
		Entry("an external proxy with a geolocation", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {proxies: [{type: external, server: "http://p:1", geolocation: {country: US}}]}`,
			BeInvalidError("spec.cloudSessionCreateParams.proxies[0].geolocation", "geolocation applies only to a cloud proxy")),
		Entry("an unknown proxy type", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {proxies: [{type: socks}]}`,
			BeInvalidError("spec.cloudSessionCreateParams.proxies[0].type", `Unsupported value: "socks"`)),
		Entry("a negative TTL", session+`  model: {name: openai/gpt-4o}
  ttlSecondsAfterEnded: -1`, BeInvalidError("spec.ttlSecondsAfterEnded", "greater than or equal to 0")),
		Entry("a session name too long for its pod's labels", `
apiVersion: browserfleet.io/v1alpha1
kind: BrowserSession
metadata: {name: `+strings.Repeat("a", 64)+`}
spec:
  model: {name: openai/gpt-4o}`, BeInvalidError("metadata.name must be at most 63 characters")),
		Entry("a task without its session", task+`  executeOptions: {instruction: go}`,
			BeInvalidError("spec.sessionRef", "Required value")),
		Entry("a task without an instruction", task+`  sessionRef: {name: s}
  executeOptions: {maxSteps: 3}`, BeInvalidError("spec.executeOptions.instruction", "Required value")),
		Entry("an unknown agent mode", task+`  sessionRef: {name: s}
  agentConfig: {mode: autopilot}
  executeOptions: {instruction: go}`, BeInvalidError("spec.agentConfig.mode", `Unsupported value: "autopilot"`)),
		Entry("zero max steps", task+`  sessionRef: {name: s}
  executeOptions: {instruction: go, maxSteps: 0}`, BeInvalidError("spec.executeOptions.maxSteps", "greater than or equal to 1")),
		Entry("a negative tool timeout", task+`  sessionRef: {name: s}
  executeOptions: {instruction: go, toolTimeout: -1}`, BeInvalidError("spec.executeOptions.toolTimeout", "greater than or equal to 0")),
		Entry("an agent model key given inline", task+`  sessionRef: {name: s}
  agentConfig: {model: {name: openai/gpt-4o, apiKey: sk-secret}}
  executeOptions: {instruction: go}`, BeUnknownFieldError("spec.agentConfig.model.apiKey")),
	)

	It("defaults the browser type to cloud and the agent mode to dom", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("defaults", ns).Browser(&v1alpha1.BrowserConfig{}).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		Expect(s.Spec.Browser.Type).To(Equal(v1alpha1.BrowserTypeCloud))
		t := wrappers.MakeAgentTask("defaults", ns, "defaults").Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		Expect(t.Spec.AgentConfig.Mode).To(Equal(v1alpha1.AgentModeDOM))
	})

	It("keeps any JSON value in userMetadata", func(ctx SpecContext) {
		Expect(apply(ctx, ns, session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams:
    userMetadata: {team: growth, n: 3, ok: true, tags: [a, b], nested: {x: null}}`)).To(Succeed())
		s := &v1alpha1.BrowserSession{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "s"}, s)).To(Succeed())
		Expect(string(s.Spec.CloudSessionCreateParams.UserMetadata["tags"].Raw)).To(Equal(`["a","b"]`))
		Expect(string(s.Spec.CloudSessionCreateParams.UserMetadata["nested"].Raw)).To(Equal(`{"x":null}`))
	})
})

var _ = Describe("kubectl", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("applies every sample and lists sessions and tasks with their columns", func() {
		samples := filepath.Join(framework.RepoRoot(), "config", "samples")
		out, errOut, err := fw.Kubectl("apply", "-n", ns, "-f", samples)
		Expect(err).NotTo(HaveOccurred(), errOut)
		entries, err := os.ReadDir(samples)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(out, " created")).To(Equal(len(entries)), out)

		out, errOut, err = fw.Kubectl("get", "bs", "-n", ns)
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(strings.Fields(strings.SplitN(out, "\n", 2)[0])).To(Equal([]string{"NAME", "PHASE", "MODEL", "POD", "AGE"}))
		Expect(out).To(ContainSubstring("openai/gpt-4.1-mini"))
		Expect(out).To(ContainSubstring("anthropic/claude-sonnet-4-5"))

		out, errOut, err = fw.Kubectl("get", "at", "-n", ns)
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(strings.Fields(strings.SplitN(out, "\n", 2)[0])).To(Equal([]string{"NAME", "SESSION", "PHASE", "STEPS", "AGE"}))
		Expect(out).To(ContainSubstring("example-minimal"))
	})

	It("refuses a bad manifest with the field named", func() {
		path := filepath.Join(GinkgoT().TempDir(), "bad.yaml")
		Expect(os.WriteFile(path, []byte(session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams:
    region: moon-base-1
    proxies: [{type: cloud, geolocation: {city: Paris}}]`), 0o600)).To(Succeed())
		_, errOut, err := fw.Kubectl("apply", "-n", ns, "-f", path)
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring(`spec.cloudSessionCreateParams.region: Unsupported value: "moon-base-1"`))
		Expect(errOut).To(ContainSubstring("spec.cloudSessionCreateParams.proxies[0].geolocation.country: Required value"))
	})

	It("refuses an unknown field, as strict validation does by default", func() {
		path := filepath.Join(GinkgoT().TempDir(), "typo.yaml")
		Expect(os.WriteFile(path, []byte(session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {headles: true}}`), 0o600)).To(Succeed())
		_, errOut, err := fw.Kubectl("apply", "-n", ns, "-f", path)
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring(`unknown field "spec.browser.launchOptions.headles"`))
	})

	It("explains the fields from their doc comments", func() {
		out, errOut, err := fw.Kubectl("explain", "bs.spec.cloudSessionCreateParams.timeout")
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(out).To(ContainSubstring("timeout is the session's lifetime in seconds"))
	})
})
