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

package attack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
	"github.com/browserfleet/browserfleet/server/apikey"
)

// The issue's request: a renderer command prefix that runs a shell.
const commandExecution = `{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"args":["--renderer-cmd-prefix=/bin/sh -c id>/tmp/out;exec${IFS}\"$0\"${IFS}\"$@\""]}}}`

// attack is one finding of the issue, tried against the whole stack by the
// key holder of p. It asserts what the service answers; the table checks
// that nothing of the project changed when the attack says it was refused.
type attack func(ctx context.Context, p apitest.Project) (refused bool)

var _ = Describe("a tenant with an ordinary project key", func() {
	DescribeTable("cannot get what the issue found",
		func(ctx SpecContext, try attack) {
			p := project()
			before := settled(ctx, p.Namespace)
			if try(ctx, p) {
				Expect(snapshot(ctx, p.Namespace)).To(Equal(before), "a refused attack changed the project")
			}
			canary.untouched()
		},

		// Command execution from the start request.
		Entry("runs a command through a Chromium switch of the start request", refusedStart(commandExecution,
			"browser.launchOptions.args[0]", "--renderer-cmd-prefix is not an allowed Chromium switch")),
		Entry("launches a program or weakens the browser with other switches", attack(otherSwitches)),
		Entry("names a program as executablePath", refusedStart(
			`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"executablePath":"/bin/sh"}}}`,
			"browser.launchOptions.executablePath", "is not a browser this service allows")),
		Entry("runs a command through kubectl apply", attack(commandExecutionWithKubectl)),

		// Data loss on the host.
		Entry("names /etc as userDataDir to have it deleted", refusedStart(
			`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"userDataDir":"/etc"}}}`,
			"browser.launchOptions.userDataDir", "must be a directory name, not a path")),
		Entry("climbs out of the data directory with downloadsPath", refusedStart(
			`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"downloadsPath":"../.."}}}`,
			"browser.launchOptions.downloadsPath", "must be a directory name, not a path")),
		Entry("names /etc as userDataDir with kubectl", attack(userDataDirWithKubectl)),

		// Reach into the network.
		Entry("navigates to a refused address, open or closed alike", attack(navigateToRefused)),
		Entry("reaches a refused address from a page: subresources, fetch, WebSocket, a name", attack(pageReachesCanary)),
		Entry("is redirected to a refused address", attack(redirectToCanary)),
		Entry("points the model's baseURL at a refused address", attack(modelBaseURLToCanary)),
		Entry("attaches to a cdpUrl at a refused address", attack(cdpURLToCanary)),
		Entry("sends the browser through a proxy at a refused address", attack(proxyToCanary)),

		// No local schemes.
		Entry("navigates to local schemes", attack(localSchemes)),
		Entry("opens local schemes and proxied contexts through the cdpUrl", attack(cdpLocalSchemes)),

		// The API pod's rights.
		Entry("makes a key count in a namespace that is not a project", attack(keyOutsideProjects)),

		// Revocation.
		Entry("keeps using a revoked key's CDP connection and cdpUrl", attack(revokedKeyKeepsCDP)),

		// No limits.
		Entry("floods one session's runner with operations", attack(queueFlood)),
		Entry("starts sessions beyond the project's quota, by /v1 and by kubectl", attack(beyondQuota)),
		Entry("stores 20 KiB of userMetadata", refusedStart(
			`{"modelName":"openai/x","cloudSessionCreateParams":{"userMetadata":{"blob":"`+strings.Repeat("x", 20<<10)+`"}}}`,
			"cloudSessionCreateParams.userMetadata", "at most 16384")),
		Entry("lists every session in one reply", attack(unboundedList)),

		// Orphans.
		Entry("walks away from a start before the browser is ready", attack(abandonedStart)),

		// etcd as a log.
		Entry("fills etcd with cheap navigations", attack(etcdAsALog)),

		// Secrets in plain sight.
		Entry("reads a cdpUrl token, cdpHeaders and a proxy password from the session and its pod", attack(secretsInPlainSight)),

		Entry("reads a typed password and a variable's value from the session's history", attack(passwordInHistory)),

		// Secret references reach any Secret.
		Entry("references a Secret that did not opt in, with kubectl", attack(secretRefToUnlabelled)),
	)
})

// settled is the namespace's snapshot once the earlier attacks' sessions
// have finished ending: unchanged over a second, and no session in between
// phases, so that what a refused attack leaves alone can be told.
func settled(ctx context.Context, namespace string) map[string]string {
	GinkgoHelper()
	var last map[string]string
	Eventually(func(g Gomega) {
		var sessions v1alpha1.BrowserSessionList
		g.Expect(k8s.List(ctx, &sessions, client.InNamespace(namespace))).To(Succeed())
		for _, s := range sessions.Items {
			g.Expect(s.Status.Phase).To(BeElementOf(v1alpha1.BrowserSessionReady, v1alpha1.BrowserSessionEnded, v1alpha1.BrowserSessionFailed), s.Name)
		}
		prev := last
		last = snapshot(ctx, namespace)
		g.Expect(last).To(Equal(prev))
	}, 2*time.Minute, time.Second).Should(Succeed())
	return last
}

// snapshot is every object of namespace the service makes or reads, with
// its resource version: what a refused attack must leave alone.
func snapshot(ctx context.Context, namespace string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	lists := map[string]client.ObjectList{
		"BrowserSession": &v1alpha1.BrowserSessionList{},
		"AgentTask":      &v1alpha1.AgentTaskList{},
		"Secret":         &corev1.SecretList{},
		"ConfigMap":      &corev1.ConfigMapList{},
		"Pod":            &corev1.PodList{},
	}
	for kind, list := range lists {
		Expect(k8s.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		items, err := meta.ExtractList(list)
		Expect(err).NotTo(HaveOccurred())
		for _, o := range items {
			m, err := meta.Accessor(o)
			Expect(err).NotTo(HaveOccurred())
			out[kind+"/"+m.GetName()] = m.GetResourceVersion()
		}
	}
	return out
}

// refusedStart is an attack by start request that must be a 400 whose one
// issue names path with message.
func refusedStart(body, path, message string) attack {
	return func(_ context.Context, p apitest.Project) bool {
		GinkgoHelper()
		expectInvalid(do(http.MethodPost, "/v1/sessions/start", p.Key, body, nil), path, message)
		return true
	}
}

// expectInvalid: r is a 400 INVALID_REQUEST with one issue at path.
func expectInvalid(r apitest.Response, path, message string) {
	GinkgoHelper()
	Expect(r.Status).To(Equal(http.StatusBadRequest), "%s", r.Raw)
	Expect(r.JSON()).To(HaveKeyWithValue("code", "INVALID_REQUEST"))
	issues, _ := r.JSON()["issues"].([]any)
	Expect(issues).To(HaveLen(1), "%s", r.Raw)
	Expect(issues[0]).To(HaveKeyWithValue("path", path))
	Expect(issues[0]).To(HaveKeyWithValue("message", ContainSubstring(message)))
}

func otherSwitches(_ context.Context, p apitest.Project) bool {
	GinkgoHelper()
	for _, arg := range []string{
		"--utility-cmd-prefix=/bin/sh -c id", "--gpu-launcher=/bin/sh", "--browser-subprocess-path=/bin/sh",
		"--disable-web-security", "--remote-allow-origins=*", "--load-extension=/tmp",
		"--proxy-server=direct://", "--host-resolver-rules=MAP * 127.0.0.1", "--remote-debugging-address=0.0.0.0",
	} {
		body := fmt.Sprintf(`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"args":["--mute-audio",%q]}}}`, arg)
		name, _, _ := strings.Cut(arg, "=")
		expectInvalid(do(http.MethodPost, "/v1/sessions/start", p.Key, body, nil),
			"browser.launchOptions.args[1]", name+" is not an allowed Chromium switch")
	}
	return true
}

func commandExecutionWithKubectl(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	s := wrappers.MakeBrowserSession("cmd-prefix", p.Namespace).Local(&v1alpha1.LaunchOptions{
		Args: []v1alpha1.LaunchArg{"--mute-audio", `--renderer-cmd-prefix=/bin/sh -c id`},
	}).Obj()
	err := k8s.Create(ctx, s)
	Expect(err).To(HaveOccurred())
	Expect(err.Error()).To(ContainSubstring("spec.browser.launchOptions.args[1]"))
	Expect(err.Error()).To(ContainSubstring("is not an allowed Chromium switch"))
	return true
}

func userDataDirWithKubectl(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	s := wrappers.MakeBrowserSession("etc-profile", p.Namespace).Local(&v1alpha1.LaunchOptions{UserDataDir: "/etc"}).Obj()
	err := k8s.Create(ctx, s)
	Expect(err).To(HaveOccurred())
	Expect(err.Error()).To(ContainSubstring("spec.browser.launchOptions.userDataDir"))
	return true
}

// startSession starts a session for p with the extra members of the start
// request (JSON object members, or "") and returns its id.
func startSession(p apitest.Project, extra string) string {
	GinkgoHelper()
	body := `{"modelName":"openai/gpt-test"` + prefixComma(extra) + `}`
	r := do(http.MethodPost, "/v1/sessions/start", p.Key, body, map[string]string{"x-model-api-key": "sk-attack"})
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	id, _ := r.Data()["sessionId"].(string)
	Expect(id).NotTo(BeEmpty())
	DeferCleanup(func() { do(http.MethodPost, "/v1/sessions/"+id+"/end", p.Key, "", nil) })
	return id
}

func prefixComma(s string) string {
	if s == "" {
		return ""
	}
	return "," + s
}

// navigate asks session id to load url.
func navigate(p apitest.Project, id, url string) apitest.Response {
	GinkgoHelper()
	return do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, url), nil)
}

// expectEgressDenied: r is the uniform refusal of the egress gate, naming
// host.
func expectEgressDenied(r apitest.Response, host string) {
	GinkgoHelper()
	Expect(r.Status).To(Equal(http.StatusForbidden), "%s", r.Raw)
	Expect(r.JSON()).To(HaveKeyWithValue("code", "EGRESS_DENIED"))
	Expect(r.JSON()).To(HaveKeyWithValue("error", ContainSubstring("the egress policy refuses connections to "+host)))
}

func navigateToRefused(_ context.Context, p apitest.Project) bool {
	GinkgoHelper()
	id := startSession(p, "")
	open := navigate(p, id, "http://"+canary.hostPort()+"/")
	closed := navigate(p, id, "http://"+canaryIP+":"+closedPort(canaryIP)+"/")
	expectEgressDenied(open, canaryIP)
	expectEgressDenied(closed, canaryIP)
	// No port scanner: an open port and a closed one answer alike.
	Expect(open.JSON()["error"]).To(Equal(closed.JSON()["error"]))
	return false
}

// attackPage tries a page's ways to reach the canary and, when all have
// ended, writes how into its body.
const attackPage = `<!doctype html><title>attack</title>
<img id="img" src="http://CANARY/img.png">
<script>
const attempts = {};
const pending = [];
function attempt(name, p) {
  pending.push(Promise.race([p, new Promise(r => setTimeout(() => r("no answer in 20s"), 20000))])
    .then(v => { attempts[name] = "resolved " + v; }, e => { attempts[name] = "rejected"; }));
}
attempt("fetch", fetch("http://CANARY/fetch", {mode: "no-cors"}).then(r => r.type));
attempt("fetch localhost", fetch("http://LOCALHOST/fetch", {mode: "no-cors"}).then(r => r.type));
attempt("img", new Promise((res, rej) => {
  const img = document.getElementById("img");
  if (img.complete) { img.naturalWidth > 0 ? res("loaded") : rej("error"); }
  img.onload = () => res("loaded"); img.onerror = () => rej("error");
}));
attempt("websocket", new Promise((res, rej) => {
  const ws = new WebSocket("ws://CANARY/ws");
  ws.onopen = () => res("open"); ws.onerror = () => rej("error");
}));
Promise.all(pending).then(() => {
  document.body.textContent = "ATTEMPTS " + JSON.stringify(attempts, Object.keys(attempts).sort());
});
</script>`

func pageReachesCanary(_ context.Context, p apitest.Project) bool {
	GinkgoHelper()
	fill := strings.NewReplacer("CANARY", canary.hostPort(), "LOCALHOST", "localhost:"+canary.port())
	pages.handle("/attack", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, fill.Replace(attackPage))
	})
	id := startSession(p, "")
	r := navigate(p, id, pages.url("/attack"))
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	var text string
	Eventually(func() string {
		r := do(http.MethodPost, "/v1/sessions/"+id+"/extract", p.Key, `{}`, nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		text, _ = r.Data()["result"].(map[string]any)["pageText"].(string)
		return text
	}).Should(ContainSubstring("ATTEMPTS"))
	// Every attempt has ended (the table then finds the canary
	// untouched); a fetch gets the gate's 403, which a no-cors fetch
	// resolves with.
	Expect(text).To(ContainSubstring(`"img":"rejected","websocket":"rejected"`))
	return false
}

func redirectToCanary(_ context.Context, p apitest.Project) bool {
	GinkgoHelper()
	pages.handle("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+canary.hostPort()+"/", http.StatusFound)
	})
	id := startSession(p, "")
	expectEgressDenied(navigate(p, id, pages.url("/redirect")), canaryIP)
	// A name that resolves to a refused address is refused as the address.
	expectEgressDenied(navigate(p, id, "http://localhost:"+canary.port()+"/"), "localhost")
	return false
}

func modelBaseURLToCanary(_ context.Context, p apitest.Project) bool {
	GinkgoHelper()
	id := startSession(p, "")
	r := do(http.MethodPost, "/v1/sessions/"+id+"/observe", p.Key,
		fmt.Sprintf(`{"instruction":"find the button","options":{"model":{"modelName":"openai/gpt-test","baseURL":"http://%s/v1"}}}`, canary.hostPort()), nil)
	expectEgressDenied(r, canaryIP)
	return false
}

func cdpURLToCanary(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	body := fmt.Sprintf(`{"modelName":"openai/gpt-test","browser":{"type":"local","cdpUrl":"ws://%s/devtools/browser/x"}}`, canary.hostPort())
	r := do(http.MethodPost, "/v1/sessions/start", p.Key, body, map[string]string{"x-model-api-key": "sk-attack"})
	// The session cannot attach: the start fails, or the session ends
	// without a browser.
	Expect(r.Status).NotTo(Equal(http.StatusOK), "%s", r.Raw)
	Expect(string(r.Raw)).To(ContainSubstring("the egress policy refuses connections to " + canaryIP))
	return false
}

func proxyToCanary(_ context.Context, p apitest.Project) bool {
	GinkgoHelper()
	id := startSession(p, fmt.Sprintf(`"browser":{"type":"local","launchOptions":{"proxy":{"server":"http://%s"}}}`, canary.hostPort()))
	// Loopback hosts never go through the session's proxy, so the page is
	// a name; neither Chromium nor the egress proxy looks it up (the
	// upstream would), and the connection to the upstream is refused
	// first.
	r := navigate(p, id, "http://proxied.invalid/")
	expectEgressDenied(r, "the session's proxy "+canaryIP)
	return false
}

func localSchemes(_ context.Context, p apitest.Project) bool {
	GinkgoHelper()
	id := startSession(p, "")
	for _, u := range []string{
		"file:///etc/passwd", "chrome://version", "chrome-extension://abc/x.html",
		"devtools://devtools/bundled/inspector.html", "view-source:http://" + pageIP + "/",
	} {
		r := navigate(p, id, u)
		Expect(r.Status).To(Equal(http.StatusBadRequest), "%s: %s", u, r.Raw)
	}
	return false
}

// secretRefToUnlabelled: with kubectl, a session references a Secret of the
// namespace that did not opt in (the project's API key Secret, say): it
// fails naming the reference, and no runner ever gets the value.
func secretRefToUnlabelled(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	var keys corev1.SecretList
	Expect(k8s.List(ctx, &keys, client.InNamespace(p.Namespace), client.HasLabels{"browserfleet.io/api-key"})).To(Succeed())
	Expect(keys.Items).NotTo(BeEmpty())
	target := keys.Items[0].Name
	s := wrappers.MakeBrowserSession("secret-thief", p.Namespace).ModelAPIKey(target, "sha256").Obj()
	Expect(k8s.Create(ctx, s)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = k8s.Delete(ctx, s) })
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Status.Phase).To(Equal(v1alpha1.BrowserSessionFailed))
	}).Should(Succeed())
	Expect(s.Status.Message).To(ContainSubstring(`spec.model.apiKeySecretRef: Secret "` + target + `" does not exist or is not labelled browserfleet.io/session-secret=true`))
	Expect(s.Status.PodName).To(BeEmpty(), "no runner pod was made")
	return false
}

// cdpLocalSchemes: through the cdpUrl the API hands out, a client asks the
// browser for local schemes and for a context around the egress proxy;
// each call gets an error reply and nothing reaches the browser.
func cdpLocalSchemes(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	id := startSession(p, "")
	r := do(http.MethodGet, "/v1/sessions/"+id, p.Key, "", nil)
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	cdp := apitest.DialCDP(ctx, r.Data()["cdpUrl"].(string))
	call := cdp.Call
	refused := func(reply map[string]any, message string) {
		GinkgoHelper()
		Expect(reply).To(HaveKey("error"), "%v", reply)
		Expect(reply["error"].(map[string]any)["message"]).To(ContainSubstring(message))
	}
	refused(call("Target.createTarget", `{"url":"file:///etc/passwd"}`, ""), "url must not be a file: URL")
	refused(call("Target.createTarget", `{"url":"chrome://version"}`, ""), "url must not be a chrome: URL")
	refused(call("Target.createBrowserContext", fmt.Sprintf(`{"proxyServer":"http://%s"}`, canary.hostPort()), ""), "proxyServer")
	sid := cdp.OpenTab()
	refused(call("Page.navigate", `{"url":"view-source:http://`+pageIP+`/"}`, sid), "url must not be a view-source: URL")
	refused(call("Page.navigate", `{"url":"devtools://devtools/bundled/inspector.html"}`, sid), "url must not be a devtools: URL")
	refused(call("Page.navigate", `{"url":"chrome-extension://abc/x.html"}`, sid), "url must not be a chrome-extension: URL")
	return false
}

// queueFlood: a client piles operations on one session; beyond the
// runner's bound (16 waiting) each is refused at once with 429
// SESSION_BUSY, and the ones in line still run.
func queueFlood(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	DeferCleanup(release)
	pages.handle("/hold", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, "released")
	})
	id := startSession(p, "")
	const inLine, beyond = 1 + 16, 4 // the running one and the waiting ones; those that find the line full
	results := make(chan apitest.Response, inLine+beyond)
	for i := range inLine + beyond {
		go func() {
			defer GinkgoRecover()
			results <- navigate(p, id, pages.url(fmt.Sprintf("/hold?%d", i)))
		}()
	}
	// Nothing in line can finish before the release: the first answers
	// are the refusals, at once.
	for range beyond {
		var r apitest.Response
		Eventually(results).Should(Receive(&r))
		Expect(r.Status).To(Equal(http.StatusTooManyRequests), "%s", r.Raw)
		Expect(r.JSON()).To(HaveKeyWithValue("code", "SESSION_BUSY"))
	}
	release()
	for range inLine {
		var r apitest.Response
		Eventually(results).Should(Receive(&r))
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	}
	return false
}

// secretsInPlainSight: a start with a cdpUrl carrying a token, cdpHeaders
// and a proxy password leaves none of them in the BrowserSession or the
// runner pod's spec, which a namespace reader sees; a proxy server with user
// info is refused.
func secretsInPlainSight(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	const token, header, password = "cdp-token-d41d8cd9", "Bearer hdr-8f00b204", "proxy-pw-e9800998"
	body := fmt.Sprintf(`{"modelName":"openai/gpt-test","browser":{"type":"local","cdpUrl":"ws://%s/devtools/browser/x?apiKey=%s",
		"launchOptions":{"cdpHeaders":{"Authorization":%q},"proxy":{"server":"http://%s","username":"u","password":%q}}}}`,
		pageIP+":1", token, header, pageIP+":2", password)
	r := do(http.MethodPost, "/v1/sessions/start", p.Key, body, map[string]string{"x-model-api-key": "sk-attack"})
	// The attach fails (nothing listens there); what matters is what was
	// stored on the way.
	Expect(r.Status).NotTo(Equal(http.StatusOK), "%s", r.Raw)
	var sessions v1alpha1.BrowserSessionList
	Expect(k8s.List(ctx, &sessions, client.InNamespace(p.Namespace))).To(Succeed())
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(p.Namespace))).To(Succeed())
	for _, o := range []any{sessions, pods} {
		raw, err := json.Marshal(o)
		Expect(err).NotTo(HaveOccurred())
		for _, secret := range []string{token, header, password} {
			Expect(string(raw)).NotTo(ContainSubstring(secret), "a secret in plain sight")
		}
	}
	expectInvalid(do(http.MethodPost, "/v1/sessions/start", p.Key,
		`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"proxy":{"server":"http://me:hunter2@proxy:3128"}}}}`, nil),
		"browser.launchOptions.proxy.server", "must not carry credentials")
	return false
}

// passwordInHistory: a namespace reader must not find a typed password or a
// variable's value in what the service keeps of a session's calls (the
// replay a key holder reads, which the runner keeps, and whatever is in the
// namespace: ConfigMaps, the session and its status).
func passwordInHistory(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	const password, secretVar = "hunter2-5eb63bbb", "var-value-e0488e11"
	pages.handle("/login", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><title>login</title><input id="pw" type="password"><input id="user">`)
	})
	id := startSession(p, "")
	Expect(navigate(p, id, pages.url("/login?session="+password)).Status).To(Equal(http.StatusOK))
	r := do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key,
		fmt.Sprintf(`{"input":{"selector":"#pw","description":"the password","method":"fill","arguments":[%q]}}`, password), nil)
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	r = do(http.MethodPost, "/v1/sessions/"+id+"/act", p.Key,
		fmt.Sprintf(`{"input":{"selector":"#user","description":"the user","method":"fill","arguments":["%%name%%"]},"options":{"variables":{"name":%q}}}`, secretVar), nil)
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)

	replay := do(http.MethodGet, "/v1/sessions/"+id+"/replay", p.Key, "", nil)
	Expect(replay.Status).To(Equal(http.StatusOK), "%s", replay.Raw)
	Expect(string(replay.Raw)).To(ContainSubstring(`"method":"act"`), "the calls are in the replay")
	var maps corev1.ConfigMapList
	Expect(k8s.List(ctx, &maps, client.InNamespace(p.Namespace))).To(Succeed())
	var sessions v1alpha1.BrowserSessionList
	Expect(k8s.List(ctx, &sessions, client.InNamespace(p.Namespace))).To(Succeed())
	stored, err := json.Marshal([]any{maps, sessions})
	Expect(err).NotTo(HaveOccurred())
	for _, where := range []string{string(replay.Raw), string(stored)} {
		Expect(where).NotTo(ContainSubstring(password))
		Expect(where).NotTo(ContainSubstring(secretVar))
	}
	return false
}

// keyOutsideProjects: a labelled key Secret in a namespace the API does not
// serve authenticates nothing.
func keyOutsideProjects(ctx context.Context, _ apitest.Project) bool {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bf-not-a-project-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	key, _, err := apikey.Create(ctx, k8s, ns.Name, "planted", nil)
	Expect(err).NotTo(HaveOccurred())
	Consistently(func() int { return do(http.MethodGet, "/v1/sessions", key, "", nil).Status }, 2*time.Second).
		Should(Equal(http.StatusUnauthorized))
	return true
}

// revokedKeyKeepsCDP: a second key of the project opens the browser's CDP
// connection; revoking that key closes it, and its cdpUrl stops working.
func revokedKeyKeepsCDP(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	id := startSession(p, "")
	key, keyID, err := apikey.Create(ctx, k8s, p.Namespace, "to be revoked", nil)
	Expect(err).NotTo(HaveOccurred())
	var cdpURL string
	// The API's cache sees the new key within moments.
	Eventually(func() int {
		r := do(http.MethodGet, "/v1/sessions/"+id, key, "", nil)
		if r.Status == http.StatusOK {
			cdpURL, _ = r.Data()["cdpUrl"].(string)
		}
		return r.Status
	}).Should(Equal(http.StatusOK))
	cdp := apitest.DialCDP(ctx, cdpURL)
	Expect(cdp.Call("Target.getTargets", `{}`, "")).To(HaveKey("result"))

	Expect(apikey.Revoke(ctx, k8s, p.Namespace, keyID)).To(Succeed())
	readCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, _, err = cdp.Conn().Read(readCtx)
	Expect(err).To(HaveOccurred())
	Expect(readCtx.Err()).NotTo(HaveOccurred(), "closed by the server, not timed out")
	_, resp, err := websocket.Dial(ctx, cdpURL, nil) //nolint:bodyclose // websocket.Dial closes the handshake's body
	Expect(err).To(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	return false
}

// beyondQuota fills the project's browsers (attackQuota) with sessions
// that wait for a Secret and so hold no browser yet, then asks for one
// more: /v1 answers 429 QUOTA_EXCEEDED and creates nothing; kubectl's
// session waits, QuotaExceeded, without a pod.
func beyondQuota(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	var sessions v1alpha1.BrowserSessionList
	Expect(k8s.List(ctx, &sessions, client.InNamespace(p.Namespace))).To(Succeed())
	live := 0
	for _, s := range sessions.Items {
		if !s.Status.Finished() && !s.Spec.Ended {
			live++
		}
	}
	var made []client.Object
	DeferCleanup(func(ctx context.Context) {
		for _, o := range made {
			_ = k8s.Delete(ctx, o)
		}
	})
	for i := range attackQuota.Default.ConcurrentSessions - live {
		s := wrappers.MakeBrowserSession(fmt.Sprintf("filler-%d", i), p.Namespace).ModelAPIKey("no-such-secret", "openai").Obj()
		Expect(k8s.Create(ctx, s)).To(Succeed())
		made = append(made, s)
	}
	before := slices.Sorted(maps.Keys(snapshot(ctx, p.Namespace)))
	var r apitest.Response
	Eventually(func() int {
		r = do(http.MethodPost, "/v1/sessions/start", p.Key, `{"modelName":"openai/gpt-test"}`, nil)
		return r.Status
	}).Should(Equal(http.StatusTooManyRequests), "%s", r.Raw)
	Expect(r.JSON()).To(HaveKeyWithValue("code", "QUOTA_EXCEEDED"))
	Expect(r.Header.Get("Retry-After")).To(Equal("10"))
	Expect(slices.Sorted(maps.Keys(snapshot(ctx, p.Namespace)))).To(Equal(before), "a refused start created nothing")

	s := wrappers.MakeBrowserSession("one-too-many", p.Namespace).Obj()
	Expect(k8s.Create(ctx, s)).To(Succeed())
	made = append(made, s)
	Eventually(func() []metav1.Condition {
		got := &v1alpha1.BrowserSession{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), got)).To(Succeed())
		return got.Status.Conditions
	}).Should(ContainElement(And(
		HaveField("Type", v1alpha1.BrowserSessionConditionQuotaExceeded),
		HaveField("Status", metav1.ConditionTrue),
	)))
	Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: v1alpha1.RunnerPodName(s.Name)}, &corev1.Pod{}))).To(BeTrue())
	return false
}

// unboundedList: the list is paged; a page larger than its bound is a 400.
func unboundedList(_ context.Context, p apitest.Project) bool {
	GinkgoHelper()
	expectInvalid(do(http.MethodGet, "/v1/sessions?limit=100000", p.Key, "", nil), "limit", "must be one integer from 1 to 500")
	return true
}

// etcdAsALog: a loop of navigations writes nothing to the cluster.
func etcdAsALog(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	pages.handle("/cheap", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><title>cheap</title>`)
	})
	id := startSession(p, "")
	before := settled(ctx, p.Namespace)
	for i := range 20 {
		Expect(navigate(p, id, pages.url(fmt.Sprintf("/cheap?%d", i))).Status).To(Equal(http.StatusOK))
	}
	Expect(snapshot(ctx, p.Namespace)).To(Equal(before), "20 navigations changed or created no object")
	return false
}

// abandonedStart: a client that goes away before its start answers leaves
// no session running: the API ends the one it made. (A start that answers
// before the client goes away is not abandoned; then it tries again.)
func abandonedStart(ctx context.Context, p apitest.Project) bool {
	GinkgoHelper()
	for range 3 {
		if id, answered := startAndWalkAway(ctx, p); !answered {
			Eventually(func() v1alpha1.BrowserSessionPhase {
				s := &v1alpha1.BrowserSession{}
				Expect(k8s.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: id}, s)).To(Succeed())
				return s.Status.Phase
			}, 30*time.Second).Should(Equal(v1alpha1.BrowserSessionEnded), "the abandoned session ends")
			return false
		}
	}
	Fail("every start answered before its client went away")
	return false
}

// startAndWalkAway starts a session and goes away as soon as the session
// exists. It returns the session, and whether the start answered first.
func startAndWalkAway(ctx context.Context, p apitest.Project) (string, bool) {
	GinkgoHelper()
	var before v1alpha1.BrowserSessionList
	Expect(k8s.List(ctx, &before, client.InNamespace(p.Namespace))).To(Succeed())
	known := map[string]bool{}
	for _, s := range before.Items {
		known[s.Name] = true
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	answered := make(chan bool, 1)
	go func() {
		req, _ := http.NewRequestWithContext(callCtx, http.MethodPost, stack.APIURL()+"/v1/sessions/start", strings.NewReader(`{"modelName":"openai/gpt-test"}`))
		req.Header.Set("x-svc-api-key", p.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		answered <- err == nil
	}()
	var id string
	Eventually(func() string {
		var list v1alpha1.BrowserSessionList
		Expect(k8s.List(ctx, &list, client.InNamespace(p.Namespace))).To(Succeed())
		for _, s := range list.Items {
			if !known[s.Name] {
				id = s.Name
			}
		}
		return id
	}, 10*time.Second, 10*time.Millisecond).ShouldNot(BeEmpty())
	cancel()
	var got bool
	Eventually(answered).Should(Receive(&got))
	if got {
		do(http.MethodPost, "/v1/sessions/"+id+"/end", p.Key, "", nil)
	}
	return id, got
}
