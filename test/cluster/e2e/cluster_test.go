//go:build cluster

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

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/browserfleet/browserfleet/internal/testing/apitest"
)

const (
	pageURL = "http://pages.bf-fixtures.svc/form.html"
	// The Services' fixed addresses (testdata/fixtures.yaml).
	pagesIP    = "10.96.200.10"
	metadataIP = "10.96.200.12"
)

func call(method, path, body string) apitest.Response {
	GinkgoHelper()
	return apitest.Do(context.Background(), http.DefaultClient, apiURL, method, path, key, body, nil)
}

// ok makes a call that must succeed and returns its data.
func ok(method, path, body string) map[string]any {
	GinkgoHelper()
	r := call(method, path, body)
	Expect(r.Status).To(Equal(http.StatusOK), "%s %s: %s", method, path, r.Raw)
	Expect(r.JSON()).To(HaveKeyWithValue("success", true), "%s %s: %s", method, path, r.Raw)
	return r.Data()
}

func start() string {
	GinkgoHelper()
	r := apitest.Do(context.Background(), http.DefaultClient, apiURL, "POST", "/v1/sessions/start", key,
		`{"modelName": "openai/gpt-test"}`, map[string]string{"x-model-api-key": "sk-cluster"})
	Expect(r.Status).To(Equal(http.StatusOK), "start: %s", r.Raw)
	return r.Data()["sessionId"].(string)
}

func end(id string) {
	GinkgoHelper()
	r := call("POST", "/v1/sessions/"+id+"/end", "")
	Expect(r.Status).To(Equal(http.StatusOK), "end: %s", r.Raw)
	Expect(r.JSON()).To(HaveKeyWithValue("success", true), "end: %s", r.Raw)
}

func pageText(id string) string {
	GinkgoHelper()
	return ok("POST", "/v1/sessions/"+id+"/extract", `{}`)["result"].(map[string]any)["pageText"].(string)
}

func navigate(id, url string) apitest.Response {
	GinkgoHelper()
	return call("POST", "/v1/sessions/"+id+"/navigate", fmt.Sprintf(`{"url": %q}`, url))
}

// script enqueues the scripted model's next replies.
func script(replies ...string) {
	GinkgoHelper()
	r := apitest.Do(context.Background(), http.DefaultClient, modelURL, "POST", "/script", "", "["+strings.Join(replies, ",")+"]", nil)
	Expect(r.Status).To(Equal(http.StatusOK), "script: %s", r.Raw)
}

func elementID(text, line string) string {
	GinkgoHelper()
	m := regexp.MustCompile(`\[(\d+-\d+)\] ` + regexp.QuoteMeta(line)).FindStringSubmatch(text)
	Expect(m).NotTo(BeNil(), "no %q in the snapshot:\n%s", line, text)
	return m[1]
}

func runnerPod(id string) string { return id + "-runner" }

// podField is a jsonpath of a pod of the release namespace; "" when the
// pod is gone.
func podField(name, jsonpath string) string {
	out, err := run(time.Minute, "kubectl", "-n", ns, "get", "pod", name, "-o", "jsonpath="+jsonpath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// sessionWorks drives the session through the page: navigate, fill by an
// Action object, click by selector.
func sessionWorks(id string) {
	GinkgoHelper()
	r := navigate(id, pageURL)
	Expect(r.Status).To(Equal(http.StatusOK), "navigate: %s", r.Raw)
	ok("POST", "/v1/sessions/"+id+"/act", `{"input": {"selector": "#email", "method": "fill", "arguments": ["ada@example.com"], "description": "type the email"}}`)
	ok("POST", "/v1/sessions/"+id+"/act", `{"input": {"selector": "#submit", "method": "click", "arguments": [], "description": "sign up"}}`)
	Expect(pageText(id)).To(ContainSubstring("signed up ada@example.com"))
}

var _ = Describe("the chart on a real node", Ordered, ContinueOnFailure, func() {
	It("serves a session end to end: a page in the cluster, an Action object, an instruction to the scripted model, end", func() {
		id := start()
		Expect(podField(runnerPod(id), "{.status.phase}")).To(Equal("Running"))
		sessionWorks(id)

		// By instruction: the runner asks the scripted model in the cluster
		// (runner.modelBaseURLs) which element to click.
		text := pageText(id)
		script(fmt.Sprintf(`{"elementId": %q, "method": "click", "arguments": [], "description": "the catalogue link", "twoStep": false}`, elementID(text, "link: See the catalogue")))
		ok("POST", "/v1/sessions/"+id+"/act", `{"input": "open the catalogue"}`)
		Expect(pageText(id)).To(ContainSubstring("heading: Catalogue"))

		end(id)
		Eventually(func() string { return podField(runnerPod(id), "{.metadata.name}") }, 60*time.Second).Should(BeEmpty(), "the runner pod is gone after end")
	})

	Describe("the runner's confinement", Ordered, func() {
		var id, otherRunner, metadataPod string
		BeforeAll(func() {
			id = start()
			other := start()
			DeferCleanup(func() { end(id); end(other) })
			otherRunner = podField(runnerPod(other), "{.status.podIP}")
			Expect(otherRunner).NotTo(BeEmpty())
			metadataPod = strings.TrimSpace(kubectl("-n", fixtureNS, "get", "pod", "metadata", "-o", "jsonpath={.status.podIP}"))
		})

		// What the browser itself may open: the runner's egress gate
		// refuses every address of the cluster but the two it is allowed.
		It("the browser reaches the page, and not the API server, another runner or the metadata stand-in", func() {
			Expect(navigate(id, pageURL).Status).To(Equal(http.StatusOK))
			for _, url := range []string{
				"https://10.96.0.1/", // the kubernetes Service
				"https://kubernetes.default.svc/",
				"https://10.250.0.2:6443/", // the node's API server
				"http://" + otherRunner + ":8080/",
				"http://" + metadataIP + "/meta-data/",
				"http://metadata.bf-fixtures.svc/meta-data/",
				"http://" + metadataPod + ":8080/meta-data/",
			} {
				r := navigate(id, url)
				Expect(string(r.Raw)).To(ContainSubstring(`"code":"EGRESS_DENIED"`), "%s: %s", url, r.Raw)
			}
		})

		// Below the gate: the chart's NetworkPolicy, enforced by
		// kube-router, for any process of a pod carrying the runner pods'
		// labels, against a control pod without them.
		It("a pod with the runner's labels cannot open a connection to them either; one without can", func() {
			probe := func(name, labels string) {
				manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s, labels: {%s}}
spec:
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: probe
    image: %s
    imagePullPolicy: Never
    args: [pages, ":8080"]
    readinessProbe: {httpGet: {path: /form.html, port: 8080}, periodSeconds: 1}
    securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`, name, ns, labels, fixture)
				step(time.Minute, "bash", "-c", "kubectl apply -f - <<'EOF'\n"+manifest+"EOF\n")
				DeferCleanup(func() { kubectl("-n", ns, "delete", "pod", name, "--wait=false") })
			}
			probe("probe-runner", "app.kubernetes.io/component: runner, app.kubernetes.io/managed-by: browserfleet")
			probe("probe-control", "browserfleet.test/probe: control")
			kubectl("-n", ns, "wait", "--for=condition=Ready", "pod/probe-runner", "pod/probe-control", "--timeout=2m")
			dial := func(pod, addr string) bool {
				_, err := run(time.Minute, "kubectl", "-n", ns, "exec", pod, "--", "/fixture", "dial", addr)
				return err == nil
			}
			// kube-router writes a new pod's rules some moments after it
			// starts: wait until the allowed page is the only way out.
			Eventually(func() bool { return dial("probe-runner", metadataIP+":80") }).Should(BeFalse(), "the runner policy never applied to the probe")
			Expect(dial("probe-runner", pagesIP+":80")).To(BeTrue(), "the page, allowed")
			for _, addr := range []string{"10.96.0.1:443", "10.250.0.2:6443", metadataIP + ":80", metadataPod + ":8080", otherRunner + ":8080"} {
				Expect(dial("probe-runner", addr)).To(BeFalse(), "a runner-labelled pod reached %s", addr)
			}
			for _, addr := range []string{"10.96.0.1:443", "10.250.0.2:6443", metadataIP + ":80", metadataPod + ":8080"} {
				Expect(dial("probe-control", addr)).To(BeTrue(), "the control pod did not reach %s", addr)
			}
			// Another runner takes connections from the API and the manager
			// only (its own ingress rule), so the control pod fails too.
			Expect(dial("probe-control", otherRunner+":8080")).To(BeFalse())
		})
	})

	It("fails the session with the reason when the runner's container is killed", func() {
		id := start()
		container := strings.TrimPrefix(podField(runnerPod(id), "{.status.containerStatuses[0].containerID}"), "containerd://")
		Expect(container).NotTo(BeEmpty())
		step(time.Minute, "ctr", "--address", ".cluster/containerd/containerd.sock", "-n", "k8s.io", "task", "kill", "-s", "KILL", container)
		Eventually(func() string {
			return call("GET", "/v1/sessions/"+id, "").Data()["phase"].(string)
		}).Should(Equal("Failed"))
		Expect(call("GET", "/v1/sessions/"+id, "").Data()["message"]).To(ContainSubstring("container runner exited with code 137"))
		r := navigate(id, pageURL)
		Expect(string(r.Raw)).To(ContainSubstring(`"code":"SESSION_ENDED"`))
	})

	It("keeps a session usable through the other API replica when an API pod is deleted", func() {
		id := start()
		runnerUID := podField(runnerPod(id), "{.metadata.uid}")
		pods := strings.Fields(kubectl("-n", ns, "get", "pod", "-l", "app.kubernetes.io/component=api", "-o", "jsonpath={.items[*].metadata.name}"))
		Expect(pods).To(HaveLen(2))
		kubectl("-n", ns, "delete", "pod", pods[0], "--wait=false")
		// A port-forward holds one pod; take a new one, as a client's next
		// connection through a Service would.
		apiURL = "http://" + forward("api", ns, "svc/browserfleet-api", 80)
		sessionWorks(id)
		Expect(podField(runnerPod(id), "{.metadata.uid}")).To(Equal(runnerUID))
		end(id)
		kubectl("-n", ns, "rollout", "status", "deploy/browserfleet-api", "--timeout=3m")
	})

	It("changes nothing a user sees when the manager's leader is deleted mid-session", func() {
		id := start()
		runnerUID := podField(runnerPod(id), "{.metadata.uid}")
		holder := kubectl("-n", ns, "get", "lease", "-o", "jsonpath={.items[*].spec.holderIdentity}")
		leader := ""
		for _, p := range strings.Fields(kubectl("-n", ns, "get", "pod", "-l", "app.kubernetes.io/component=manager", "-o", "jsonpath={.items[*].metadata.name}")) {
			if strings.Contains(holder, p) {
				leader = p
			}
		}
		Expect(leader).NotTo(BeEmpty(), "no manager pod holds a lease: %s", holder)
		kubectl("-n", ns, "delete", "pod", leader, "--wait=false")
		sessionWorks(id)
		Expect(call("GET", "/v1/sessions/"+id, "").Data()["phase"]).To(Equal("Ready"))
		kubectl("-n", ns, "rollout", "status", "deploy/browserfleet-manager", "--timeout=3m")
		sessionWorks(id)
		Expect(podField(runnerPod(id), "{.metadata.uid}")).To(Equal(runnerUID))
		end(id)
	})

	It("reports the figures: cold start p50 and an idle session's memory on the kubelet", func() {
		var starts []time.Duration
		for range 10 {
			t := time.Now()
			id := start()
			starts = append(starts, time.Since(t))
			end(id)
			Eventually(func() string { return podField(runnerPod(id), "{.metadata.name}") }, 60*time.Second).Should(BeEmpty())
		}
		sorted := slices.Clone(starts)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		p50 := (sorted[4] + sorted[5]) / 2

		id := start()
		defer end(id)
		Eventually(func() float64 { return podMemory(runnerPod(id)) }, 2*time.Minute, 2*time.Second).Should(BeNumerically(">", 0))
		// Idle: let Chromium settle before the reading that counts.
		time.Sleep(20 * time.Second)
		working := podMemory(runnerPod(id))

		report := fmt.Sprintf("figures on the one-node cluster: cold start p50 %s (ten sequential starts, start to answer: %v); an idle session's runner pod working set %.0f MiB (kubelet /stats/summary)",
			p50.Round(time.Millisecond), starts, working/(1<<20))
		AddReportEntry("figures", report)
		GinkgoWriter.Println(report)
		fmt.Println(report)
	})
})

// podMemory is a pod's memory working set as the kubelet's summary API
// reports it (0 before its first reading).
func podMemory(name string) float64 {
	GinkgoHelper()
	raw := kubectl("get", "--raw", "/api/v1/nodes/bf-node/proxy/stats/summary")
	var summary struct {
		Pods []struct {
			PodRef struct{ Name, Namespace string } `json:"podRef"`
			Memory struct {
				WorkingSetBytes float64 `json:"workingSetBytes"`
			} `json:"memory"`
		} `json:"pods"`
	}
	Expect(json.Unmarshal([]byte(raw), &summary)).To(Succeed())
	for _, p := range summary.Pods {
		if p.PodRef.Namespace == ns && p.PodRef.Name == name {
			return p.Memory.WorkingSetBytes
		}
	}
	return 0
}
