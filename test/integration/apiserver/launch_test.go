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

package apiserver_test

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// The issue's request: a renderer command prefix that runs a shell.
const commandExecution = `{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"args":["--renderer-cmd-prefix=/bin/sh -c id>/tmp/out;exec${IFS}\"$0\"${IFS}\"$@\""]}}}`

var _ = Describe("launch options", func() {
	var p project
	BeforeEach(func(ctx SpecContext) { p = newProject(ctx) })

	// nothingCreated: no BrowserSession, and no Secret of a session (the
	// request's model key would have gone into one).
	nothingCreated := func(ctx context.Context) {
		GinkgoHelper()
		var sessions v1alpha1.BrowserSessionList
		Expect(k8sClient.List(ctx, &sessions, client.InNamespace(p.Namespace))).To(Succeed())
		Expect(sessions.Items).To(BeEmpty())
		var secrets corev1.SecretList
		Expect(k8sClient.List(ctx, &secrets, client.InNamespace(p.Namespace), client.HasLabels{v1alpha1.LabelSession})).To(Succeed())
		Expect(secrets.Items).To(BeEmpty())
	}

	DescribeTable("refuses a start with 400 naming the launch option, and creates nothing",
		func(ctx SpecContext, body, path, message string) {
			r := do(http.MethodPost, "/v1/sessions/start", p.Key, body, map[string]string{"x-model-api-key": "sk-never-stored"})
			Expect(r.Status).To(Equal(http.StatusBadRequest), "%s", r.Raw)
			documented(http.MethodPost, "/v1/sessions/start", r)
			Expect(r.JSON()).To(HaveKeyWithValue("code", "INVALID_REQUEST"))
			issues := r.JSON()["issues"].([]any)
			Expect(issues).To(HaveLen(1), "%s", r.Raw)
			Expect(issues[0]).To(HaveKeyWithValue("path", path))
			Expect(issues[0]).To(HaveKeyWithValue("message", ContainSubstring(message)))
			Expect(string(r.Raw)).NotTo(ContainSubstring("hunter2"), "the reply quotes a password")
			nothingCreated(ctx)
		},
		Entry("the issue's command execution", commandExecution,
			"browser.launchOptions.args[0]", "--renderer-cmd-prefix is not an allowed Chromium switch"),
		Entry("a switch that weakens the browser, after allowed ones",
			`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"args":["--mute-audio","--lang=de-DE","--disable-web-security"]}}}`,
			"browser.launchOptions.args[2]", "--disable-web-security is not an allowed Chromium switch"),
		Entry("an executablePath the operator does not allow",
			`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"executablePath":"/bin/sh"}}}`,
			"browser.launchOptions.executablePath", "is not a browser this service allows"),
		Entry("an absolute userDataDir",
			`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"userDataDir":"/etc"}}}`,
			"browser.launchOptions.userDataDir", "must be a directory name, not a path"),
		Entry("a launch proxy server with user info",
			`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"proxy":{"server":"http://me:hunter2@127.0.0.1:3128"}}}}`,
			"browser.launchOptions.proxy.server", "must not carry credentials"),
		Entry("an external proxy server with user info",
			`{"modelName":"openai/x","cloudSessionCreateParams":{"proxies":[{"type":"cloud"},{"type":"external","server":"me:hunter2@127.0.0.1:3128"}]}}`,
			"cloudSessionCreateParams.proxies[1].server", "must not carry credentials"),
		Entry("a downloadsPath that climbs",
			`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"downloadsPath":".."}}}`,
			"browser.launchOptions.downloadsPath", "must be a directory name, not a path"),
	)

	It("starts a session with allowed switches and named directories, and its browser takes them", func() {
		id := startSession(p, `{"modelName":"openai/gpt-test","browser":{"type":"local","launchOptions":{
			"args":["--disable-blink-features=AutomationControlled","--user-agent=FleetBot/1.0 (allowlist test)"],
			"userDataDir":"profile","downloadsPath":"downloads"}}}`)
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key,
			`{"url": "data:text/html,<script>document.write(navigator.userAgent + ' webdriver=' + navigator.webdriver)</script>"}`, nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		r = do(http.MethodPost, "/v1/sessions/"+id+"/extract", p.Key, `{}`, nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		Expect(r.Data()["result"].(map[string]any)["pageText"]).To(ContainSubstring("FleetBot/1.0 (allowlist test) webdriver=false"))
		Expect(do(http.MethodPost, "/v1/sessions/"+id+"/end", p.Key, "", nil).Status).To(Equal(http.StatusOK))
	})
})
