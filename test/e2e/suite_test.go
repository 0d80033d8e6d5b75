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

// Package e2e_test drives the whole stack as a user would: the same stack
// `make dev` runs (internal/devstack: kube-apiserver and etcd, the manager, the
// /v1 API, and a runner process with Debian's Chromium for each session),
// reached over HTTP with curl and the README's own commands, and with the
// control plane's kubectl. Model calls go to the scripted model server
// (engine/llm/llmtest) through the manager's runner.modelBaseURLs.
package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/devstack"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/runner/config"
	testpages "github.com/browserfleet/browserfleet/test/util/pages"
)

var (
	model *llmtest.Server
	pages *httptest.Server
	// work is the directory the README's commands run in: the stack's
	// state is its .dev, as with `make dev` in a clone.
	work      string
	runnerBin string
	stack     *devstack.Stack
	k8s       client.Client
)

func TestE2E(t *testing.T) {
	if _, err := config.FindChromium(); err != nil {
		t.Fatalf("the end-to-end suite drives a real browser: %v", err)
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's commands need %s: apt-get install -y %s", tool, tool)
		}
	}
	model = llmtest.NewServer(t)
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "End-to-end Suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	work = GinkgoT().TempDir()
	runnerBin = framework.BuildRunner()
	pages = testpages.Serve()
	startStack()
})

var _ = AfterSuite(func() {
	if stack != nil {
		Expect(stack.Stop()).To(Succeed())
	}
	if pages != nil {
		pages.Close()
	}
})

// startStack starts the dev stack on the suite's state directory, on a free
// port, its runners' OpenAI endpoint the scripted model server.
func startStack() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	stack, err = devstack.Start(ctx, devstack.Options{
		Dir:           filepath.Join(work, ".dev"),
		APIAddress:    "127.0.0.1:0",
		RunnerBinary:  runnerBin,
		Logger:        ctrl.Log.WithName("devstack"),
		ModelBaseURLs: map[string]string{"openai": model.BaseURL(llmtest.OpenAI)},
	})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	k8s = framework.Client(stack.Config())
}

// response is a finished HTTP call.
type response = apitest.Response

// call makes one /v1 call with the stack's key.
func call(method, path, body string, headers map[string]string) response {
	GinkgoHelper()
	return apitest.Do(context.Background(), http.DefaultClient, stack.APIURL(), method, path, stack.APIKey(), body, headers)
}

// startSession starts a session over /v1 and returns its id.
func startSession() string {
	r := call(http.MethodPost, "/v1/sessions/start", `{"modelName": "openai/gpt-test"}`, map[string]string{"x-model-api-key": "sk-e2e"})
	ExpectWithOffset(1, r.Status).To(Equal(http.StatusOK), "start: %s", r.Raw)
	return r.Data()["sessionId"].(string)
}

// session reads a session through the stack's kubeconfig.
func session(ctx context.Context, id string) *v1alpha1.BrowserSession {
	bs := &v1alpha1.BrowserSession{}
	ExpectWithOffset(1, k8s.Get(ctx, types.NamespacedName{Namespace: stack.Namespace(), Name: id}, bs)).To(Succeed())
	return bs
}

// runnerPID is the process of the session's runner pod.
func runnerPID(id string) int {
	var pid int
	EventuallyWithOffset(1, func() bool {
		var ok bool
		pid, ok = stack.Kubelet().PID(types.NamespacedName{Namespace: stack.Namespace(), Name: v1alpha1.RunnerPodName(id)})
		return ok
	}).Should(BeTrue(), "no runner process for session %s", id)
	return pid
}

// kubectl runs the control plane's kubectl with the stack's kubeconfig.
func kubectl(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(framework.AssetsDir(), "kubectl"), append([]string{"--kubeconfig", stack.KubeconfigPath()}, args...)...)
	cmd.Dir = framework.RepoRoot()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, errOut.String())
	}
	return out.String(), err
}

// pageURL is the URL of a test page.
func pageURL(name string) string { return pages.URL + "/" + name }
