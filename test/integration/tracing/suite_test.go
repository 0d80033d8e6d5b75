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

// Package tracing_test follows OpenTelemetry traces across the stack: the
// stack `make dev` runs (internal/devstack: kube-apiserver and etcd, the
// manager, the /v1 API, a runner process with Debian's Chromium per
// session), exporting over OTLP/HTTP to a receiver on loopback in the test,
// as to a collector. A call with a W3C traceparent must come back as one
// trace: the caller's span, the API's span of the /v1 call as its child,
// the runner's span of the operation as the API's child. Model calls go to
// the scripted model server (engine/llm/llmtest) through the manager's
// runner.modelBaseURLs: these specs prove the propagation, not the AI.
package tracing_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/devstack"
	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/internal/testing/otlptest"
	"github.com/browserfleet/browserfleet/runner/config"
	testpages "github.com/browserfleet/browserfleet/test/util/pages"
)

// modelKey is the model API key sessions start with: it must reach the
// model server only, never a span.
const modelKey = "sk-tracing-7d1e"

var (
	model    *llmtest.Server
	receiver *otlptest.Receiver
	pages    *httptest.Server
	stack    *devstack.Stack
)

func TestTracing(t *testing.T) {
	if _, err := config.FindChromium(); err != nil {
		t.Fatalf("the tracing suite drives a real browser: %v", err)
	}
	model = llmtest.NewServer(t)
	receiver = otlptest.NewReceiver(t)
	RegisterFailHandler(Fail)
	// Each process exports its spans in batches, every 5 s by default.
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	RunSpecs(t, "Tracing Suite")
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
		Dir:           filepath.Join(GinkgoT().TempDir(), ".dev"),
		APIAddress:    "127.0.0.1:0",
		RunnerBinary:  runnerBin,
		Logger:        ctrl.Log.WithName("devstack"),
		ModelBaseURLs: map[string]string{"openai": model.BaseURL(llmtest.OpenAI)},
		OTLPEndpoint:  receiver.URL(),
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(stack.Stop()).To(Succeed()) })
})

var _ = AfterSuite(func() {
	if receiver != nil {
		Expect(receiver.Refused()).To(BeEmpty(), "every export is well-formed OTLP/HTTP")
	}
})

// call makes one /v1 call with the stack's key.
func call(method, path, body string, headers map[string]string) apitest.Response {
	GinkgoHelper()
	return apitest.Do(context.Background(), http.DefaultClient, stack.APIURL(), method, path, stack.APIKey(), body, headers)
}

// startSession starts a session over /v1 on the scripted model and loads
// the sign-up form; it returns the session's id.
func startSession() string {
	GinkgoHelper()
	r := call(http.MethodPost, "/v1/sessions/start", `{"modelName": "openai/gpt-test"}`, map[string]string{"x-model-api-key": modelKey})
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

// randomHex is n random bytes in hex: a trace id (16) or a span id (8) of
// the caller's.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
