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
	"encoding/json"
	"fmt"
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
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	. "github.com/browserfleet/browserfleet/internal/testing/matchers"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
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
		Entry("cdpUrlSecretRef with a cloud browser", session+`  model: {name: openai/gpt-4o}
  browser: {type: cloud, cdpUrlSecretRef: {name: attach, key: url}}`, BeInvalidError("spec.browser.cdpUrlSecretRef", "cdpUrlSecretRef requires type local")),
		Entry("a cdpUrl given inline: it is a secret", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, cdpUrl: "wss://browser.example/?apiKey=secret"}`, BeUnknownFieldError("spec.browser.cdpUrl")),
		Entry("cdpHeaders given inline", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {cdpHeaders: {Authorization: "Bearer secret"}}}`, BeUnknownFieldError("spec.browser.launchOptions.cdpHeaders")),
		Entry("cdpHeadersSecretRef without cdpUrlSecretRef", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {cdpHeadersSecretRef: {name: attach, key: headers}}}`,
			BeInvalidError("spec.browser.launchOptions.cdpHeadersSecretRef", "requires cdpUrlSecretRef")),
		Entry("a launch proxy server with credentials", session+`  model: {name: openai/gpt-4o}
  browser: {type: local, launchOptions: {proxy: {server: "http://me:hunter2@proxy:3128"}}}`,
			BeInvalidError("spec.browser.launchOptions.proxy.server", "server must not carry credentials")),
		Entry("a cloud proxy server with credentials", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {proxies: [{type: external, server: "me:hunter2@proxy:3128"}]}`,
			BeInvalidError("spec.cloudSessionCreateParams.proxies[0].server", "server must not carry credentials")),
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
  cloudSessionCreateParams: {timeoutSeconds: -5}`, BeInvalidError("spec.cloudSessionCreateParams.timeoutSeconds", "greater than or equal to 1")),
		Entry("an unknown os", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {os: beos}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.os", `Unsupported value: "beos"`)),
		Entry("a captcha image without its answer field", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {solveCaptchas: true, captchaImageSelector: "#captcha"}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.captchaInputSelector", "captchaInputSelector is required with captchaImageSelector")),
		Entry("a captcha answer field without its image", session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams: {browserSettings: {captchaInputSelector: "#answer"}}`,
			BeInvalidError("spec.cloudSessionCreateParams.browserSettings.captchaImageSelector", "captchaImageSelector is required with captchaInputSelector")),
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
  executeOptions: {instruction: go, toolTimeoutMs: -1}`, BeInvalidError("spec.executeOptions.toolTimeoutMs", "greater than or equal to 0")),
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

	It("accepts the captcha's two selectors, with or without solveCaptchas", func(ctx SpecContext) {
		Expect(apply(ctx, ns, session+`  model: {name: openai/gpt-4o}
  cloudSessionCreateParams:
    browserSettings: {solveCaptchas: true, captchaImageSelector: "#captcha", captchaInputSelector: "xpath=//input[@name='answer']"}`)).To(Succeed())
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

// localSession is a session manifest with a local browser and these launch
// options (a YAML flow mapping).
func localSession(launchOptions string) string {
	return session + "  model: {name: openai/gpt-4o}\n  browser: {type: local, launchOptions: " + launchOptions + "}"
}

// withArgs is a local session manifest with these launch switches.
func withArgs(args ...string) string {
	raw, err := json.Marshal(args)
	Expect(err).NotTo(HaveOccurred())
	return localSession("{args: " + string(raw) + "}")
}

var _ = Describe("Launch options", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	refused := func(ctx context.Context, manifest string, match gtypes.GomegaMatcher) {
		GinkgoHelper()
		Expect(apply(ctx, ns, manifest)).To(match)
		var sessions v1alpha1.BrowserSessionList
		Expect(k8sClient.List(ctx, &sessions, client.InNamespace(ns))).To(Succeed())
		Expect(sessions.Items).To(BeEmpty(), "a refused manifest creates nothing")
	}

	DescribeTable("refuses a switch off the allowlist, or a value it does not allow, naming the item",
		func(ctx SpecContext, arg, message string) {
			// Allowed switches before it, so that the index shows.
			refused(ctx, withArgs("--mute-audio", "--lang=de-DE", "--hide-scrollbars", arg),
				BeInvalidError("spec.browser.launchOptions.args[3]", message))
		},
		Entry("the issue's command execution", `--renderer-cmd-prefix=/bin/sh -c id>/tmp/out;exec${IFS}"$0"${IFS}"$@"`, "is not an allowed Chromium switch"),
		Entry("--utility-cmd-prefix", "--utility-cmd-prefix=/bin/sh", "is not an allowed Chromium switch"),
		Entry("--gpu-launcher", "--gpu-launcher=/bin/sh -c id", "is not an allowed Chromium switch"),
		Entry("--browser-subprocess-path", "--browser-subprocess-path=/bin/sh", "is not an allowed Chromium switch"),
		Entry("--disable-web-security", "--disable-web-security", "is not an allowed Chromium switch"),
		Entry("--remote-allow-origins", "--remote-allow-origins=*", "is not an allowed Chromium switch"),
		Entry("--load-extension", "--load-extension=/tmp/ext", "is not an allowed Chromium switch"),
		Entry("--remote-debugging-port", "--remote-debugging-port=9222", "is not an allowed Chromium switch"),
		Entry("--remote-debugging-address", "--remote-debugging-address=0.0.0.0", "is not an allowed Chromium switch"),
		Entry("--remote-debugging-pipe", "--remote-debugging-pipe", "is not an allowed Chromium switch"),
		Entry("--user-data-dir", "--user-data-dir=/etc", "is not an allowed Chromium switch"),
		Entry("--proxy-server", "--proxy-server=http://127.0.0.1:3128", "is not an allowed Chromium switch"),
		Entry("--proxy-pac-url", "--proxy-pac-url=http://127.0.0.1/p.pac", "is not an allowed Chromium switch"),
		Entry("--proxy-bypass-list", "--proxy-bypass-list=*", "is not an allowed Chromium switch"),
		Entry("--no-proxy-server", "--no-proxy-server", "is not an allowed Chromium switch"),
		Entry("--host-resolver-rules", "--host-resolver-rules=MAP * 127.0.0.1", "is not an allowed Chromium switch"),
		Entry("--host-rules", "--host-rules=MAP * 127.0.0.1", "is not an allowed Chromium switch"),
		Entry("--log-file", "--log-file=/etc/passwd", "is not an allowed Chromium switch"),
		Entry("--enable-logging", "--enable-logging=stderr", "is not an allowed Chromium switch"),
		Entry("--js-flags", "--js-flags=--allow-natives-syntax", "is not an allowed Chromium switch"),
		Entry("--use-file-for-fake-video-capture", "--use-file-for-fake-video-capture=/etc/shadow", "is not an allowed Chromium switch"),
		Entry("--use-file-for-fake-audio-capture", "--use-file-for-fake-audio-capture=/etc/shadow", "is not an allowed Chromium switch"),
		Entry("--disk-cache-dir", "--disk-cache-dir=/etc", "is not an allowed Chromium switch"),
		Entry("--ignore-certificate-errors", "--ignore-certificate-errors", "is not an allowed Chromium switch"),
		Entry("a single-dash spelling", "-renderer-cmd-prefix=/bin/sh", "is not an allowed Chromium switch"),
		Entry("a positional argument", "https://example.com", "is not an allowed Chromium switch"),
		Entry("a value for a switch that takes none", "--disable-gpu=1", "gives a value to a switch that takes none"),
		Entry("a switch without its value", "--lang", "--lang takes a locale"),
		Entry("a path for a locale", "--lang=../../etc/passwd", "--lang takes a locale"),
		Entry("a control character in the user agent", "--user-agent=a\nb", "--user-agent takes"),
		Entry("a feature off the list", "--disable-features=Translate,IsolateOrigins", "--disable-features takes a comma-separated list"),
		Entry("an enabled feature off the list", "--enable-features=NetworkServiceInProcess", "--enable-features takes"),
		Entry("a blink feature off the list", "--disable-blink-features=AutomationControlled,Foo", "--disable-blink-features takes"),
	)

	It("accepts every switch of the allowlist", func(ctx SpecContext) {
		var args []string
		for _, f := range v1alpha1.LaunchSwitchFamilies() {
			for _, s := range f.Switches {
				args = append(args, s.ExampleArg())
			}
		}
		Expect(len(args)).To(BeNumerically("<=", 64))
		Expect(apply(ctx, ns, withArgs(args...))).To(Succeed())
	})

	It("checks 64 switches of up to 1024 characters within the API server's CEL budget", func(ctx SpecContext) {
		args := make([]string, 64)
		// Refused for its value: every rule ran over every item.
		for i := range args {
			args[i] = "--user-agent=" + strings.Repeat("M", 1024-len("--user-agent="))
		}
		refused(ctx, withArgs(args...), BeInvalidError("spec.browser.launchOptions.args[63]", "--user-agent takes"))

		long := strings.TrimSuffix("--disable-features="+strings.Repeat("CertificateTransparencyComponentUpdater,", 25), ",")
		Expect(len(long)).To(BeNumerically(">", 1000))
		for i := range args {
			args[i] = long
		}
		Expect(apply(ctx, ns, withArgs(args...))).To(Succeed())
	})

	DescribeTable("refuses a directory that is not a plain name",
		func(ctx SpecContext, field, value string) {
			refused(ctx, localSession(fmt.Sprintf("{%s: %q}", field, value)),
				BeInvalidError("spec.browser.launchOptions."+field, "should match"))
		},
		Entry("an absolute userDataDir", "userDataDir", "/etc"),
		Entry("a userDataDir that climbs", "userDataDir", ".."),
		Entry("a userDataDir of two segments", "userDataDir", "profiles/a"),
		Entry("the current directory as userDataDir", "userDataDir", "."),
		Entry("an absolute downloadsPath", "downloadsPath", "/tmp/downloads"),
		Entry("a downloadsPath that climbs", "downloadsPath", "../../etc"),
	)

	It("accepts directory names", func(ctx SpecContext) {
		Expect(apply(ctx, ns, localSession(`{userDataDir: profile-1, preserveUserDataDir: true, downloadsPath: dl.2026}`))).To(Succeed())
	})
})

var _ = Describe("BrowserPool validation", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })
	pool := func(name, spec string) string {
		return "apiVersion: browserfleet.io/v1alpha1\nkind: BrowserPool\nmetadata: {name: " + name + "}\nspec: " + spec + "\n"
	}

	It("defaults replicas to 1", func(ctx SpecContext) {
		Expect(apply(ctx, ns, pool("p", "{template: {}}"))).To(Succeed())
		got := &v1alpha1.BrowserPool{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p"}, got)).To(Succeed())
		Expect(got.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)))
	})

	DescribeTable("refuses, naming the field,",
		func(ctx SpecContext, name, spec, field, message string) {
			err := apply(ctx, ns, pool(name, spec))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(And(ContainSubstring(field), ContainSubstring(message)))
		},
		Entry("a session's timeout", "p", "{template: {cloudSessionCreateParams: {timeoutSeconds: 60}}}", "spec.template.cloudSessionCreateParams.timeoutSeconds", "the session's own"),
		Entry("keepAlive", "p", "{template: {cloudSessionCreateParams: {keepAlive: true}}}", "spec.template.cloudSessionCreateParams.keepAlive", "the session's own"),
		Entry("a browser to attach to", "p", "{template: {browser: {type: local, cdpUrlSecretRef: {name: s, key: k}}}}", "spec.template.browser.cdpUrlSecretRef", "never claims"),
		Entry("a persistent context", "p", "{template: {cloudSessionCreateParams: {browserSettings: {context: {id: c}}}}}", "spec.template.cloudSessionCreateParams.browserSettings.context", "start cold"),
		Entry("more than 100 replicas", "p", "{replicas: 101}", "spec.replicas", "less than or equal to 100"),
		Entry("a name that cannot label its runners", strings.Repeat("p", 58), "{replicas: 1}", "metadata.name", "at most 57 characters"),
	)
})

var _ = Describe("kubectl", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("applies every sample and lists sessions and tasks with their columns", func() {
		samples := filepath.Join(framework.RepoRoot(), "config", "samples")
		out, errOut, err := fw.Kubectl("apply", "-n", ns, "-f", samples)
		Expect(err).NotTo(HaveOccurred(), errOut)
		manifests, err := filepath.Glob(filepath.Join(samples, "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(out, " created")).To(Equal(len(manifests)), out)

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

	It("applies the pool sample and lists pools, and sessions with their pool, with their columns", func() {
		out, errOut, err := fw.Kubectl("apply", "-n", ns, "-f", filepath.Join(framework.RepoRoot(), "config", "samples", "pools"))
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(out).To(ContainSubstring("browserpool.browserfleet.io/warm created"))
		out, errOut, err = fw.Kubectl("get", "browserpools", "-n", ns)
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(strings.Fields(strings.SplitN(out, "\n", 2)[0])).To(Equal([]string{"NAME", "REPLICAS", "READY", "CLAIMED", "AGE"}))
		Expect(strings.Fields(strings.SplitN(out, "\n", 3)[1])[:2]).To(Equal([]string{"warm", "2"}))
		_, errOut, err = fw.Kubectl("apply", "-n", ns, "-f", filepath.Join(framework.RepoRoot(), "config", "samples", "browsersession-minimal.yaml"))
		Expect(err).NotTo(HaveOccurred(), errOut)
		out, errOut, err = fw.Kubectl("get", "bs", "-o", "wide", "-n", ns)
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(strings.Fields(strings.SplitN(out, "\n", 2)[0])).To(Equal([]string{"NAME", "PHASE", "MODEL", "POD", "POOL", "EXPIRES", "MESSAGE", "AGE"}))
	})

	It("applies the README's session manifest", func() {
		raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "README.md"))
		Expect(err).NotTo(HaveOccurred())
		_, rest, ok := strings.Cut(string(raw), "\n```yaml\n")
		Expect(ok).To(BeTrue(), "the README has no yaml block")
		manifest, _, _ := strings.Cut(rest, "\n```")
		Expect(manifest).To(ContainSubstring("kind: BrowserSession"))
		path := filepath.Join(GinkgoT().TempDir(), "readme.yaml")
		Expect(os.WriteFile(path, []byte(manifest), 0o600)).To(Succeed())
		_, errOut, err := fw.Kubectl("apply", "--dry-run=server", "-n", ns, "-f", path)
		Expect(err).NotTo(HaveOccurred(), errOut)
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

	It("refuses a launch switch off the allowlist with the item named", func() {
		path := filepath.Join(GinkgoT().TempDir(), "exec.yaml")
		Expect(os.WriteFile(path, []byte(withArgs("--lang=fr", `--renderer-cmd-prefix=/bin/sh -c id>/tmp/out;exec${IFS}"$0"${IFS}"$@"`)), 0o600)).To(Succeed())
		_, errOut, err := fw.Kubectl("apply", "-n", ns, "-f", path)
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring("spec.browser.launchOptions.args[1]: Invalid value"))
		Expect(errOut).To(ContainSubstring("is not an allowed Chromium switch"))
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
		out, errOut, err := fw.Kubectl("explain", "bs.spec.cloudSessionCreateParams.timeoutSeconds")
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(out).To(ContainSubstring("timeoutSeconds is the session's lifetime in seconds"))
	})
})
