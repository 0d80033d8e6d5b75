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

// Package client_test holds the Go client library to issue 13 against the
// stack `make dev` runs (internal/devstack: kube-apiserver and etcd, the
// manager, the /v1 API, and a runner process with Debian's Chromium for
// each session): cloud handles start and connect to sessions of it, and
// reach their pages through the sessions' cdpUrl. Model calls go to the
// scripted model server (engine/llm/llmtest) through the manager's
// runner.modelBaseURLs; specs that use it say "(scripted model)": they
// prove our side of the wire, not the AI.
//
// The helpers here are the suite's API for its spec files: stack, model
// and pages; launchCloud and newCloudInstance make handles and instances
// that the spec's end closes; call, pageText, elementID, actAnswer and
// replayOf read the service as a test needs to.
package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/browserfleet/browserfleet/client"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/devstack"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/runner/config"
	testpages "github.com/browserfleet/browserfleet/test/util/pages"
)

// modelName is the sessions' model: OpenAI's protocol, answered by the
// scripted model server.
const modelName = "openai/gpt-test"

var (
	// stack is the dev stack the cloud handles use.
	stack *devstack.Stack
	// model is the scripted model server every runner's OpenAI calls
	// reach.
	model *llmtest.Server
	// pages serves test/util/pages: form.html and list.html.
	pages *httptest.Server
)

func TestClient(t *testing.T) {
	if _, err := config.FindChromium(); err != nil {
		t.Fatalf("the client suite drives a real browser: %v", err)
	}
	model = llmtest.NewServer(t)
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "Client Library Suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	runnerBin := framework.BuildRunner()
	pages = testpages.Serve()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	stack, err = devstack.Start(ctx, devstack.Options{
		Dir:           filepath.Join(GinkgoT().TempDir(), ".dev"),
		APIAddress:    "127.0.0.1:0",
		RunnerBinary:  runnerBin,
		Logger:        ctrl.Log.WithName("devstack"),
		ModelBaseURLs: map[string]string{"openai": model.BaseURL(llmtest.OpenAI)},
	})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if stack != nil {
		Expect(stack.Stop()).To(Succeed())
	}
	if pages != nil {
		pages.Close()
	}
})

// pageURL is the URL of a test page.
func pageURL(name string) string { return pages.URL + "/" + name }

// launchOptions are the options of a cloud handle on the stack.
func launchOptions() client.CloudBrowserLaunchOptions {
	return client.CloudBrowserLaunchOptions{APIURL: stack.APIURL(), APIKey: stack.APIKey(), ModelName: modelName}
}

// opCtx bounds one call of a spec.
func opCtx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	DeferCleanup(cancel)
	return ctx
}

// launchCloud launches a cloud handle on the stack with opts (launchOptions
// when none), closed when the spec ends.
func launchCloud(opts ...client.CloudBrowserLaunchOptions) *client.Browser {
	GinkgoHelper()
	o := launchOptions()
	if len(opts) > 0 {
		o = opts[0]
	}
	b, err := client.LaunchCloudBrowser(opCtx(), o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { _ = b.Close(ctx) }, NodeTimeout(time.Minute))
	return b
}

// newCloudInstance launches a cloud handle and creates an instance on it
// with opts (its Browser set to the handle); both are closed when the spec
// ends.
func newCloudInstance(opts client.CreateOptions) (*client.Client, *client.Browser) {
	GinkgoHelper()
	b := launchCloud()
	opts.Browser = b
	c, err := client.Create(opCtx(), opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { _ = c.Close(ctx) }, NodeTimeout(time.Minute))
	return c, b
}

// call makes one /v1 call with the stack's key.
func call(method, path, body string) apitest.Response {
	GinkgoHelper()
	return apitest.Do(opCtx(), http.DefaultClient, stack.APIURL(), method, path, stack.APIKey(), body, nil)
}

// pageText is p's snapshot as a model reads it: what an extract with no
// instruction answers, through /v1 with p's id as frameId.
func pageText(b *client.Browser, p *client.Page) string {
	GinkgoHelper()
	r := call(http.MethodPost, "/v1/sessions/"+b.SessionID()+"/extract", fmt.Sprintf(`{"frameId": %q}`, p.ID()))
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	return r.Data()["result"].(map[string]any)["pageText"].(string)
}

// elementID is the id of the snapshot line "role: name" in text, as a model
// would read it.
func elementID(text, line string) string {
	GinkgoHelper()
	m := regexp.MustCompile(`\[(\d+-\d+)\] ` + regexp.QuoteMeta(line)).FindStringSubmatch(text)
	Expect(m).NotTo(BeNil(), "no %q in the snapshot:\n%s", line, text)
	return m[1]
}

// actAnswer is the model's answer to an act: method on element id.
func actAnswer(id, method string, args ...string) llmtest.Reply {
	if args == nil {
		args = []string{}
	}
	b, _ := json.Marshal(map[string]any{"elementId": id, "method": method, "arguments": args, "description": method + " " + id, "twoStep": false})
	return llmtest.JSON(string(b))
}

// observeAnswer is the model's answer to an observe: one action on id.
func observeAnswer(id, method, description string) llmtest.Reply {
	b, _ := json.Marshal(map[string]any{"elements": []map[string]any{
		{"elementId": id, "description": description, "method": method, "arguments": []string{}},
	}})
	return llmtest.JSON(string(b))
}

// replayOf is the calls of the session's replay, by action id.
func replayOf(sessionID string) map[string]map[string]any {
	GinkgoHelper()
	r := call(http.MethodGet, "/v1/sessions/"+sessionID+"/replay", "")
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	out := map[string]map[string]any{}
	for _, p := range r.Data()["pages"].([]any) {
		for _, a := range p.(map[string]any)["actions"].([]any) {
			am := a.(map[string]any)
			id, _ := am["actionId"].(string)
			out[id] = am
		}
	}
	return out
}

// sessionPhase is the session's phase as GET /v1/sessions/{id} says.
func sessionPhase(id string) string {
	GinkgoHelper()
	r := call(http.MethodGet, "/v1/sessions/"+id, "")
	Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
	return r.Data()["phase"].(string)
}

// lastRequest is the model's latest request.
func lastRequest() llmtest.Request {
	GinkgoHelper()
	reqs := model.Requests()
	Expect(reqs).NotTo(BeEmpty())
	return reqs[len(reqs)-1]
}
