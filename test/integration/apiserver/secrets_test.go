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
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// remoteBrowser is a Chromium of the test's own behind a gate that, as a
// hosted browser's front does, lets through only requests that carry its
// token in the query and its key in a header.
type remoteBrowser struct {
	// wsPath is the browser's DevTools WebSocket path.
	wsPath string
	gate   *httptest.Server
	mu     sync.Mutex
	// admitted counts the requests the gate let through.
	admitted int
}

func startRemoteBrowser(token, headerName, headerValue string) *remoteBrowser {
	GinkgoHelper()
	path, err := config.FindChromium()
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--remote-debugging-port=0",
		"--remote-debugging-address=127.0.0.1", "--user-data-dir="+GinkgoT().TempDir(),
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--disable-quic", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "DevTools listening on "); ok {
				found <- strings.TrimSpace(rest)
			}
		}
	}()
	var ws *url.URL
	Eventually(found, time.Minute).Should(Receive(WithTransform(func(s string) error {
		ws, err = url.Parse(s)
		return err
	}, Succeed())))

	b := &remoteBrowser{wsPath: ws.Path}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = "http", ws.Host, ws.Host
		pr.Out.URL.RawQuery = ""
	}}
	b.gate = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("apiKey") != token || r.Header.Get(headerName) != headerValue {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		b.mu.Lock()
		b.admitted++
		b.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	DeferCleanup(b.gate.Close)
	return b
}

func (b *remoteBrowser) admittedRequests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.admitted
}

// runnerPod is the session's runner pod.
func runnerPod(ctx context.Context, p project, id string) *corev1.Pod {
	GinkgoHelper()
	pod := &corev1.Pod{}
	Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: v1alpha1.RunnerPodName(id)}, pod)).To(Succeed())
	return pod
}

var _ = Describe("a start's secrets", func() {
	var p project
	BeforeEach(func(ctx SpecContext) { p = newProject(ctx) })

	// expectKeptAway: none of secrets is in the session, its pod's spec or
	// the environment of the pod's first process (PID 1 of a container;
	// the local kubelet runs the runner itself there, where a cluster runs
	// tini, which keeps the environment it was given for the pod's life).
	// The pod takes its secrets as files of a 0400 projected volume.
	expectKeptAway := func(ctx context.Context, id string, secrets ...string) {
		GinkgoHelper()
		bs := &v1alpha1.BrowserSession{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: id}, bs)).To(Succeed())
		pod := runnerPod(ctx, p, id)
		rawSession, err := json.Marshal(bs)
		Expect(err).NotTo(HaveOccurred())
		rawPod, err := json.Marshal(pod)
		Expect(err).NotTo(HaveOccurred())

		c := pod.Spec.Containers[0]
		Expect(c.EnvFrom).To(BeEmpty())
		for _, e := range c.Env {
			Expect(e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil).To(BeTrue(), "variable %s comes from a Secret", e.Name)
		}
		var files *corev1.ProjectedVolumeSource
		for _, v := range pod.Spec.Volumes {
			if v.Projected != nil {
				files = v.Projected
			}
		}
		Expect(files).NotTo(BeNil(), "the pod has a projected volume of secret files")
		Expect(files.DefaultMode).To(HaveValue(Equal(int32(0o400))))

		Expect(pod.Status.ContainerStatuses).NotTo(BeEmpty())
		pid, err := strconv.Atoi(strings.TrimPrefix(pod.Status.ContainerStatuses[0].ContainerID, "local://"))
		Expect(err).NotTo(HaveOccurred(), "container id %q", pod.Status.ContainerStatuses[0].ContainerID)
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(environ)).To(ContainSubstring(rpc.EnvSecretsDir+"="), "the runner is told where its secret files are")

		for _, secret := range secrets {
			Expect(string(rawSession)).NotTo(ContainSubstring(secret), "the BrowserSession holds a secret")
			Expect(string(rawPod)).NotTo(ContainSubstring(secret), "the pod holds a secret")
			Expect(string(environ)).NotTo(ContainSubstring(secret), "the environment of the pod's first process holds a secret")
		}

		// The local kubelet writes the volume into the pod's directory.
		dir, err := os.Readlink(filepath.Join(kubeletStateDir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID)))
		Expect(err).NotTo(HaveOccurred())
		tokenFile, err := os.Stat(filepath.Join(dir, "volumes", "secrets", rpc.FileToken))
		Expect(err).NotTo(HaveOccurred())
		Expect(tokenFile.Mode().Perm()).To(Equal(os.FileMode(0o400)))
		if os.Geteuid() == 0 {
			Expect(tokenFile.Sys().(*syscall.Stat_t).Uid).To(BeEquivalentTo(*pod.Spec.SecurityContext.RunAsUser), "the runner's own")
		}
	}

	It("attaches with the cdpUrl and cdpHeaders the runner reads from its files, and keeps them out of the session, the pod and its environment", func(ctx SpecContext) {
		const token, key, modelKey = "cdp-token-5f4dcc3b", "hdr-key-e99a18c4", "sk-model-0cc175b9"
		remote := startRemoteBrowser(token, "X-Fleet-Key", key)
		body := fmt.Sprintf(`{"modelName":"openai/gpt-test","browser":{"type":"local",
			"cdpUrl":"ws://%s%s?apiKey=%s","launchOptions":{"cdpHeaders":{"X-Fleet-Key":%q}}}}`,
			strings.TrimPrefix(remote.gate.URL, "http://"), remote.wsPath, token, key)
		r := do(http.MethodPost, "/v1/sessions/start", p.Key, body, map[string]string{"x-model-api-key": modelKey})
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		id := r.Data()["sessionId"].(string)
		Expect(remote.admittedRequests()).To(BeNumerically(">", 0), "the runner reached the browser with its token and header")

		r = do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)

		expectKeptAway(ctx, id, token, key, modelKey)
		Expect(do(http.MethodPost, "/v1/sessions/"+id+"/end", p.Key, "", nil).Status).To(Equal(http.StatusOK))
	})

	It("keeps a launch proxy's password out of the session, the pod and its environment", func(ctx SpecContext) {
		const password = "proxy-pw-92eb5ffe"
		id := startSession(p, fmt.Sprintf(`{"modelName":"openai/gpt-test","browser":{"type":"local",
			"launchOptions":{"proxy":{"server":"http://127.0.0.1:9","username":"fleet","password":%q}}}}`, password))
		expectKeptAway(ctx, id, password)
		Expect(do(http.MethodPost, "/v1/sessions/"+id+"/end", p.Key, "", nil).Status).To(Equal(http.StatusOK))
	})
})
