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
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/browserfleet/browserfleet/client"
	"github.com/browserfleet/browserfleet/internal/testing/otlptest"
)

// clientService is the service name the suite's client instances export
// under.
const clientService = "tracing-suite-client"

var _ = Describe("a client instance on a cloud handle with Telemetry", func() {
	It("exports its act's span, which the API's and the runner's continue, in one trace (scripted model)", func(ctx SpecContext) {
		id := startSession()
		text := pageText(id)
		model.Enqueue(actAnswer(elementID(text, "button: Sign up"), "click").WithUsage(900, 20))

		browser, err := client.ConnectCloudBrowser(ctx, client.CloudBrowserConnectOptions{APIURL: stack.APIURL(), APIKey: stack.APIKey(), SessionID: id})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { _ = browser.Close(ctx) })
		c, err := client.Create(ctx, client.CreateOptions{
			Browser:   browser,
			Telemetry: &client.TelemetryConfig{Endpoint: receiver.TracesURL(), ServiceName: clientService},
		})
		Expect(err).NotTo(HaveOccurred())

		// The application's own span around the call, from its own
		// provider: the instance's span is its child.
		app := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
		appCtx, appSpan := app.Tracer("shop").Start(ctx, "checkout")
		res, err := c.Act(appCtx, client.ActInstruction("click the sign-up button"), nil)
		appSpan.End()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Data.Success).To(BeTrue(), "%+v", res.Data)
		// Close flushes the instance's exporter.
		Expect(c.Close(ctx)).To(Succeed())

		traceID := appSpan.SpanContext().TraceID().String()
		var own otlptest.Span
		Eventually(func(g Gomega) {
			var ok bool
			own, ok = spanOf(receiver.Trace(traceID), clientService, "browserfleet.act")
			g.Expect(ok).To(BeTrue(), "no span of the client in trace %s", traceID)
		}).Should(Succeed())
		api, runner := operationSpans(traceID, "POST /v1/sessions/{id}/act", "POST /v1/act")

		By("the client's span: the application's child, with the call's metadata")
		Expect(own.ParentSpanID).To(Equal(appSpan.SpanContext().SpanID().String()))
		Expect(own.Kind).To(Equal("client"))
		Expect(own.StatusCode).To(Equal("unset"))
		Expect(own.Attributes).To(HaveKeyWithValue("browserfleet.action_id", res.Metadata.ActionID))
		Expect(own.Attributes).To(HaveKeyWithValue("browserfleet.cache.status", string(res.Metadata.Cache.Status)))
		Expect(own.Attributes).To(HaveKeyWithValue("gen_ai.usage.input_tokens", int64(res.Metadata.Usage.InputTokens)))

		By("the API's span: the client's child; the runner's: the API's, for the same action")
		Expect(api.ParentSpanID).To(Equal(own.SpanID))
		Expect(runner.ParentSpanID).To(Equal(api.SpanID))
		Expect(runner.Attributes).To(HaveKeyWithValue("browserfleet.action_id", res.Metadata.ActionID))
	})
	It("exports a batch's span, which the API's and the runner's continue, in one trace", func(ctx SpecContext) {
		id := startSession()
		browser, err := client.ConnectCloudBrowser(ctx, client.CloudBrowserConnectOptions{APIURL: stack.APIURL(), APIKey: stack.APIKey(), SessionID: id})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { _ = browser.Close(ctx) })
		c, err := client.Create(ctx, client.CreateOptions{
			Browser:   browser,
			Telemetry: &client.TelemetryConfig{Endpoint: receiver.TracesURL(), ServiceName: clientService},
		})
		Expect(err).NotTo(HaveOccurred())

		var title string
		Expect(c.ExperimentalBatch(ctx, `async (batch, input) => input.prefix + (await batch.page.title())`,
			map[string]string{"prefix": "page: "}, &title, nil)).To(Succeed())
		Expect(title).To(HavePrefix("page: "))
		Expect(c.Close(ctx)).To(Succeed())

		var own otlptest.Span
		Eventually(func(g Gomega) {
			found := false
			for _, s := range receiver.Spans() {
				if s.Service == clientService && s.Name == "browserfleet.batch" {
					own, found = s, true
				}
			}
			g.Expect(found).To(BeTrue(), "no batch span of the client")
		}).Should(Succeed())
		api, runner := operationSpans(own.TraceID, "POST /v1/sessions/{id}/batch", "POST /v1/batch")
		Expect(own.Kind).To(Equal("client"))
		Expect(api.ParentSpanID).To(Equal(own.SpanID))
		Expect(runner.ParentSpanID).To(Equal(api.SpanID))
	})
})
