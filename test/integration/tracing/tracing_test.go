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

package tracing_test

import (
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/browserfleet/browserfleet/internal/testing/otlptest"
)

// Names of the services and spans a user sees in a trace viewer.
const (
	apiService    = "browserfleet-api"
	runnerService = "browserfleet-runner"
)

// spanOf finds the span of service named name among spans.
func spanOf(spans []otlptest.Span, service, name string) (otlptest.Span, bool) {
	for _, s := range spans {
		if s.Service == service && s.Name == name {
			return s, true
		}
	}
	return otlptest.Span{}, false
}

// operationSpans waits for the API's and the runner's spans of one call in
// the trace traceID.
func operationSpans(traceID, apiName, runnerName string) (api, runner otlptest.Span) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		spans := receiver.Trace(traceID)
		var ok bool
		api, ok = spanOf(spans, apiService, apiName)
		g.Expect(ok).To(BeTrue(), "no span %q of the API in trace %s: %+v", apiName, traceID, spans)
		runner, ok = spanOf(spans, runnerService, runnerName)
		g.Expect(ok).To(BeTrue(), "no span %q of the runner in trace %s: %+v", runnerName, traceID, spans)
	}).Should(Succeed())
	return api, runner
}

var _ = Describe("a /v1 call with a traceparent", func() {
	It("comes back as one trace: the API's span a child of the caller's, the runner's a child of the API's (scripted model)", func() {
		id := startSession()
		text := pageText(id)
		model.Enqueue(actAnswer(elementID(text, "button: Sign up"), "click").WithUsage(900, 20))

		traceID, callerSpan := randomHex(16), randomHex(8)
		r := call(http.MethodPost, "/v1/sessions/"+id+"/act", `{"input": "click the sign-up button"}`,
			map[string]string{"traceparent": fmt.Sprintf("00-%s-%s-01", traceID, callerSpan)})
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		actionID := r.Data()["actionId"].(string)

		api, runner := operationSpans(traceID, "POST /v1/sessions/{id}/act", "POST /v1/act")
		By("the API's span: the caller's child, named for the route")
		Expect(api.ParentSpanID).To(Equal(callerSpan))
		Expect(api.Kind).To(Equal("server"))
		Expect(api.Attributes).To(HaveKeyWithValue("http.route", "/v1/sessions/{id}/act"))
		Expect(api.Attributes).To(HaveKeyWithValue("http.response.status_code", int64(200)))
		Expect(api.StatusCode).To(Equal("unset"))

		By("the runner's span: the API's child, with the call's action id and the session on its resource")
		Expect(runner.ParentSpanID).To(Equal(api.SpanID))
		Expect(runner.Kind).To(Equal("server"))
		Expect(runner.Attributes).To(HaveKeyWithValue("http.route", "/v1/act"))
		Expect(runner.Attributes).To(HaveKeyWithValue("browserfleet.action_id", actionID))
		Expect(runner.Resource).To(HaveKeyWithValue("browserfleet.session.id", id))
		Expect(runner.Resource).To(HaveKeyWithValue("k8s.namespace.name", stack.Namespace()))
	})

	It("is not recorded when the caller does not sample it, by the API nor by the runner", func() {
		id := startSession()
		unsampled, sampled := randomHex(16), randomHex(16)
		body := fmt.Sprintf(`{"url": %q}`, pages.URL+"/list.html")
		r := call(http.MethodPost, "/v1/sessions/"+id+"/navigate", body,
			map[string]string{"traceparent": fmt.Sprintf("00-%s-%s-00", unsampled, randomHex(8))})
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		// A sampled call after it: once its spans are in, the unsampled
		// call's would be too, since each process exports its spans in the
		// order they end.
		r = call(http.MethodPost, "/v1/sessions/"+id+"/navigate", body,
			map[string]string{"traceparent": fmt.Sprintf("00-%s-%s-01", sampled, randomHex(8))})
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		operationSpans(sampled, "POST /v1/sessions/{id}/navigate", "POST /v1/navigate")
		Expect(receiver.Trace(unsampled)).To(BeEmpty())
	})
})

var _ = Describe("a /v1 call without a traceparent", func() {
	It("starts a trace at the API, which the runner continues", func() {
		id := startSession()
		var api otlptest.Span
		Eventually(func(g Gomega) {
			var ok bool
			for _, s := range receiver.Spans() {
				if s.Service == apiService && s.Attributes["url.path"] == "/v1/sessions/"+id+"/navigate" {
					api, ok = s, true
				}
			}
			g.Expect(ok).To(BeTrue(), "no span of the API for the session's navigate")
		}).Should(Succeed())
		Expect(api.ParentSpanID).To(BeEmpty(), "a root span")
		Expect(api.Name).To(Equal("POST /v1/sessions/{id}/navigate"))
		_, runner := operationSpans(api.TraceID, api.Name, "POST /v1/navigate")
		Expect(runner.ParentSpanID).To(Equal(api.SpanID))
	})
})

var _ = Describe("the spans", func() {
	It("carry no key, no request body and no header", func() {
		id := startSession()
		traceID := randomHex(16)
		r := call(http.MethodPost, "/v1/sessions/"+id+"/navigate", fmt.Sprintf(`{"url": %q}`, pages.URL+"/form.html?secret-marker"),
			map[string]string{"traceparent": fmt.Sprintf("00-%s-%s-01", traceID, randomHex(8)), "x-custom-header": "header-marker"})
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		operationSpans(traceID, "POST /v1/sessions/{id}/navigate", "POST /v1/navigate")
		for _, s := range receiver.Spans() {
			for k, v := range s.Attributes {
				text := fmt.Sprint(v)
				for _, secret := range []string{stack.APIKey(), modelKey, "secret-marker", "header-marker"} {
					Expect(strings.Contains(text, secret)).To(BeFalse(), "%s of span %q (%s) holds %q", k, s.Name, s.Service, secret)
				}
			}
		}
	})
})
