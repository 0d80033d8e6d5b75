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

// Package gateway_test runs the model gateway on the stack `make dev` runs
// (internal/devstack: kube-apiserver and etcd, the manager, the /v1 API
// with its runner listener, a runner process with Debian's Chromium per
// session). The gateway's provider is the scripted model server
// (engine/llm/llmtest), reached with a dev key only the API holds: these
// specs prove where calls go, which key they carry, and where it never
// is, not the AI.
package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/devstack"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/runner/config"
	testpages "github.com/browserfleet/browserfleet/test/util/pages"
)

// defaultModel is what the model auto means on this stack.
const defaultModel = "openai/gpt-default"

// budget is the project's token budget: the specs spend far less, until
// the last one spends it all.
const budget = 100_000

var (
	model     *llmtest.Server
	pages     *httptest.Server
	stack     *devstack.Stack
	k8sClient client.Client
)

func TestGateway(t *testing.T) {
	if _, err := config.FindChromium(); err != nil {
		t.Fatalf("the gateway suite drives a real browser: %v", err)
	}
	model = llmtest.NewServer(t)
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	RunSpecs(t, "Gateway Suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	runnerBin := framework.BuildRunner()
	pages = testpages.Serve()
	DeferCleanup(pages.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	stack, err = devstack.Start(ctx, devstack.Options{
		Dir:          filepath.Join(GinkgoT().TempDir(), ".dev"),
		APIAddress:   "127.0.0.1:0",
		RunnerBinary: runnerBin,
		Logger:       ctrl.Log.WithName("devstack"),
		Gateway: &devstack.Gateway{
			BaseURLs:       map[string]string{"openai": model.BaseURL(llmtest.OpenAI)},
			DefaultModel:   defaultModel,
			ProjectBudgets: map[string]int64{devstack.DefaultNamespace: budget},
		},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(stack.Stop()).To(Succeed()) })
	k8sClient, err = client.New(stack.Config(), client.Options{Scheme: framework.Scheme()})
	Expect(err).NotTo(HaveOccurred())
})

// call makes one /v1 call with the stack's key.
func call(method, path, body string, headers map[string]string) apitest.Response {
	GinkgoHelper()
	return apitest.Do(context.Background(), http.DefaultClient, stack.APIURL(), method, path, stack.APIKey(), body, headers)
}

// startSession starts a session with body and loads the sign-up form; it
// returns the session's id.
func startSession(body string, headers map[string]string) string {
	GinkgoHelper()
	r := call(http.MethodPost, "/v1/sessions/start", body, headers)
	Expect(r.Status).To(Equal(http.StatusOK), "start: %s", r.Raw)
	id := r.Data()["sessionId"].(string)
	DeferCleanup(func() { call(http.MethodPost, "/v1/sessions/"+id+"/end", "", nil) })
	b, _ := json.Marshal(map[string]string{"url": pages.URL + "/form.html"})
	r = call(http.MethodPost, "/v1/sessions/"+id+"/navigate", string(b), nil)
	Expect(r.Status).To(Equal(http.StatusOK), "navigate: %s", r.Raw)
	return id
}

// pageText is the session's page snapshot.
func pageText(id string) string {
	GinkgoHelper()
	r := call(http.MethodPost, "/v1/sessions/"+id+"/extract", `{}`, nil)
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	return r.Data()["result"].(map[string]any)["pageText"].(string)
}

// elementID finds the id of the snapshot line "role: name", as a model
// would read it.
func elementID(text, line string) string {
	GinkgoHelper()
	m := regexp.MustCompile(`\[(\d+-\d+)\] ` + regexp.QuoteMeta(line)).FindStringSubmatch(text)
	Expect(m).NotTo(BeNil(), "no %q in the snapshot:\n%s", line, text)
	return m[1]
}

// actAnswer is the scripted model's answer to an act: method on the
// element id.
func actAnswer(id, method string) llmtest.Reply {
	b, _ := json.Marshal(map[string]any{"elementId": id, "method": method, "arguments": []string{}, "description": method + " " + id, "twoStep": false})
	return llmtest.JSON(string(b))
}
