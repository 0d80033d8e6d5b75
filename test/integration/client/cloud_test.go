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

package client_test

import (
	"context"
	"errors"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/browserfleet/browserfleet/client"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// heading is what the specs extract with Extract[T].
type heading struct {
	Heading string `json:"heading" jsonschema:"description=the page's main heading"`
}

var _ = Describe("A cloud handle's lifecycle", Ordered, func() {
	var b *client.Browser

	BeforeAll(func() { b = launchCloud() })

	It("creates an initialized instance, and refuses a second one on the same handle", func(ctx SpecContext) {
		c, err := client.Create(ctx, client.CreateOptions{Browser: b})
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Initialized()).To(BeTrue())
		Expect(c.Browser()).To(BeIdenticalTo(b))
		Expect(sessionPhase(b.SessionID())).To(Equal("Ready"))

		_, err = client.Create(ctx, client.CreateOptions{Browser: b})
		Expect(err).To(MatchError(client.ErrBrowserInUse))

		Expect(c.Close(ctx)).To(Succeed())
		Expect(c.Close(ctx)).To(Succeed(), "a later Close returns the first result")
		Expect(c.Initialized()).To(BeFalse())
		_, err = c.Act(ctx, client.ActInstruction("click"), nil)
		Expect(err).To(MatchError(client.ErrClosed))
		Expect(sessionPhase(b.SessionID())).To(Equal("Ready"), "closing the instance leaves the session running")
	})

	It("refuses Generate: the engine runs in the session's runner", func(ctx SpecContext) {
		_, err := client.Create(ctx, client.CreateOptions{Browser: b,
			Generate: func(context.Context, client.GenerateRequest) (client.GenerateResult, error) {
				return client.GenerateResult{}, nil
			}})
		Expect(err).To(MatchError(client.ErrInvalidArgument))
		Expect(err.Error()).To(ContainSubstring("Generate"))
		// The refusal leaves the handle free for an instance.
		c, err := client.Create(ctx, client.CreateOptions{Browser: b})
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Close(ctx)).To(Succeed())
	})

	It("connects to the running session, and leaves it running at Close (scripted model)", func(ctx SpecContext) {
		connected, err := client.ConnectCloudBrowser(ctx, client.CloudBrowserConnectOptions{
			APIURL: stack.APIURL(), APIKey: stack.APIKey(), SessionID: b.SessionID()})
		Expect(err).NotTo(HaveOccurred())
		Expect(connected.SessionID()).To(Equal(b.SessionID()))
		c, err := client.Create(ctx, client.CreateOptions{Browser: connected})
		Expect(err).NotTo(HaveOccurred())
		p, err := connected.Context().NewPage(ctx, pageURL("form.html"))
		Expect(err).NotTo(HaveOccurred())
		model.Enqueue(llmtest.JSON(`{"heading": "Sign up"}`))
		res, err := client.Extract[heading](ctx, c, "the page's heading", &client.ExtractOptions{Page: p})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Data.Heading).To(Equal("Sign up"))
		Expect(c.Close(ctx)).To(Succeed())
		Expect(connected.Close(ctx)).To(Succeed())
		Expect(sessionPhase(b.SessionID())).To(Equal("Ready"), "a connected handle's Close leaves the session running")
	})

	It("ends a launched session at Close, and is closed for instances then", func(ctx SpecContext) {
		Expect(b.Close(ctx)).To(Succeed())
		Expect(b.Close(ctx)).To(Succeed(), "a later Close returns the first result")
		Eventually(func() string { return sessionPhase(b.SessionID()) }).Should(BeElementOf("Ending", "Ended"))
		_, err := client.Create(ctx, client.CreateOptions{Browser: b})
		Expect(err).To(MatchError(client.ErrBrowserClosed))

		_, err = client.ConnectCloudBrowser(ctx, client.CloudBrowserConnectOptions{
			APIURL: stack.APIURL(), APIKey: stack.APIKey(), SessionID: b.SessionID()})
		Expect(err).To(MatchError(client.ErrInvalidArgument), "a session that is over cannot be connected to")
	})

	It("refuses bad options with typed errors", func(ctx SpecContext) {
		// No model: the service's gateway would pick one, and this stack
		// has none.
		_, err := client.LaunchCloudBrowser(ctx, client.CloudBrowserLaunchOptions{APIURL: stack.APIURL(), APIKey: stack.APIKey()})
		var apiErr *client.APIError
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.StatusCode).To(Equal(http.StatusBadRequest))
		Expect(apiErr.Issues).To(ContainElement(HaveField("Path", "modelName")))
		Expect(apiErr.Message).To(ContainSubstring("no model gateway"))

		o := launchOptions()
		o.Cache = client.CacheWithThreshold(0)
		_, err = client.LaunchCloudBrowser(ctx, o)
		Expect(err).To(MatchError(client.ErrInvalidArgument))
		Expect(err.Error()).To(ContainSubstring("CloudBrowserLaunchOptions.Cache"))

		o = launchOptions()
		o.Region = "mars-1"
		_, err = client.LaunchCloudBrowser(ctx, o)
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.StatusCode).To(Equal(http.StatusBadRequest))
		Expect(apiErr.Issues).To(ContainElement(HaveField("Path", "cloudSessionCreateParams.region")))

		o = launchOptions()
		o.APIKey = "not-a-key"
		_, err = client.LaunchCloudBrowser(ctx, o)
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.StatusCode).To(Equal(http.StatusUnauthorized))
		Expect(err.Error()).NotTo(ContainSubstring("not-a-key"))
	})
})

var _ = Describe("A cloud instance's operations", Ordered, func() {
	var (
		c          *client.Client
		b          *client.Browser
		form, list *client.Page
	)

	BeforeAll(func(ctx SpecContext) {
		c, b = newCloudInstance(client.CreateOptions{})
		var err error
		form, err = b.Context().NewPage(ctx, pageURL("form.html"))
		Expect(err).NotTo(HaveOccurred())
	})

	It("act, observe and extract run in the session's runner and report their metadata and metrics (scripted model)", func(ctx SpecContext) {
		m, err := c.Metrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(client.Metrics{}), "counters start at zero")
		text := pageText(b, form)

		model.Enqueue(observeAnswer(elementID(text, "button: Sign up"), "click", "the sign-up button").WithUsage(900, 40))
		obs, err := c.Observe(ctx, ptrTo("find the sign-up button"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(obs.Data).To(ConsistOf(HaveField("Selector", HavePrefix("xpath="))))
		Expect(obs.Metadata.Cache.Status).To(Equal(client.CacheStatusDISABLED))
		Expect(obs.Metadata.Usage.InputTokens).To(BeEquivalentTo(900))
		Expect(obs.Metadata.Usage.OutputTokens).To(BeEquivalentTo(40))
		Expect(replayOf(b.SessionID())).To(HaveKey(obs.Metadata.ActionID), "the action id is the call's key in the replay")

		model.Enqueue(actAnswer(elementID(text, "textbox: Email"), "fill", "ada@example.com").WithUsage(1200, 30))
		act, err := c.Act(ctx, client.ActInstruction("type ada@example.com into the email field"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(act.Data.Success).To(BeTrue(), act.Data.Message)
		Expect(act.Metadata.Usage.InputTokens).To(BeEquivalentTo(1200))

		model.Enqueue(llmtest.JSON(`{"heading": "Sign up"}`).WithUsage(700, 8))
		ext, err := client.Extract[heading](ctx, c, "the page's heading", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(ext.Data).To(Equal(heading{Heading: "Sign up"}))
		Expect(ext.Metadata.Usage.InputTokens).To(BeEquivalentTo(700))
		Expect(string(lastRequest().Body)).To(ContainSubstring("the page's main heading"), "the model was given the schema derived from T")

		// An observed action runs with no model call: zero usage, and the
		// counters stay.
		before, _ := c.Metrics(ctx)
		requests := len(model.Requests())
		act, err = c.Act(ctx, client.ObservedAction(obs.Data[0]), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(act.Data.Success).To(BeTrue(), act.Data.Message)
		Expect(act.Metadata.Usage).To(Equal(client.Usage{}))
		Expect(act.Metadata.ActionID).NotTo(BeEmpty())
		Expect(model.Requests()).To(HaveLen(requests))

		m, err = c.Metrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(before))
		Expect(m.ObservePromptTokens).To(BeEquivalentTo(900))
		Expect(m.ObserveCompletionTokens).To(BeEquivalentTo(40))
		Expect(m.ActPromptTokens).To(BeEquivalentTo(1200))
		Expect(m.ExtractPromptTokens).To(BeEquivalentTo(700))
		Expect(m.TotalPromptTokens).To(BeEquivalentTo(2800))
		Expect(m.TotalCompletionTokens).To(BeEquivalentTo(78))
		again, _ := c.Metrics(ctx)
		Expect(again).To(Equal(m), "reading does not reset the counters")
	})

	It("counts only successful operations (scripted model)", func(ctx SpecContext) {
		before, _ := c.Metrics(ctx)
		model.Enqueue(llmtest.Status(http.StatusBadRequest).WithMessage("the scripted model refuses"))
		_, err := c.Observe(ctx, ptrTo("anything"), nil)
		var apiErr *client.APIError
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.Code).To(Equal("MODEL_ERROR"))
		after, _ := c.Metrics(ctx)
		Expect(after).To(Equal(before))
	})

	It("takes the call's model, variables and timeout (scripted model)", func(ctx SpecContext) {
		text := pageText(b, form)
		model.Enqueue(actAnswer(elementID(text, "textbox: Email"), "fill", "%email%"))
		act, err := c.Act(ctx, client.ActInstruction("type the email address"), &client.ActOptions{
			Model:     &client.ModelConfig{ModelName: "openai/gpt-per-call", APIKey: "sk-per-call"},
			Variables: client.Variables{"email": {Value: "grace@example.com", Description: "the user's email"}},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(act.Data.Success).To(BeTrue(), act.Data.Message)
		Expect(act.Data.Actions[0].Arguments).To(Equal([]string{"%email%"}), "results keep the variable's name")
		req := lastRequest()
		Expect(req.Model).To(Equal("gpt-per-call"))
		Expect(req.Header.Get("Authorization")).To(Equal("Bearer sk-per-call"))
		Expect(req.Text).To(ContainSubstring("%email%"))
		Expect(req.Text).NotTo(ContainSubstring("grace@example.com"), "a variable's value never reaches the model")

		release := make(chan struct{})
		DeferCleanup(func() { close(release) })
		model.Enqueue(llmtest.JSON(`{"elements": []}`).WithRelease(release))
		_, err = c.Observe(ctx, ptrTo("anything"), &client.ObserveOptions{Timeout: time.Second})
		var apiErr *client.APIError
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.StatusCode).To(Equal(http.StatusGatewayTimeout))
		Expect(apiErr.Code).To(Equal("TIMEOUT"))

		_, err = c.Observe(ctx, ptrTo("anything"), &client.ObserveOptions{Timeout: 11 * time.Minute})
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.Issues).To(ContainElement(HaveField("Path", "options.timeout")))
	})

	It("acts on the page an operation names: a second tab opened with NewPage (scripted model)", func(ctx SpecContext) {
		var err error
		list, err = b.Context().NewPage(ctx, pageURL("list.html"))
		Expect(err).NotTo(HaveOccurred())

		model.Enqueue(llmtest.JSON(`{"elements": []}`))
		_, err = c.Observe(ctx, ptrTo("anything"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(lastRequest().Text).To(ContainSubstring("Catalogue"), "the new page is the active one")
		Expect(lastRequest().Text).NotTo(ContainSubstring("Sign up"))

		model.Enqueue(llmtest.JSON(`{"elements": []}`))
		_, err = c.Observe(ctx, ptrTo("anything"), &client.ObserveOptions{Page: form})
		Expect(err).NotTo(HaveOccurred())
		Expect(lastRequest().Text).To(ContainSubstring("Sign up"), "Page names the form's tab")
		Expect(lastRequest().Text).NotTo(ContainSubstring("Catalogue"))

		model.Enqueue(actAnswer(elementID(pageText(b, form), "button: Sign up"), "click"))
		act, err := c.Act(ctx, client.ActInstruction("sign up"), &client.ActOptions{Page: form})
		Expect(err).NotTo(HaveOccurred())
		Expect(act.Data.Success).To(BeTrue(), act.Data.Message)
		Expect(pageText(b, form)).To(ContainSubstring("signed up"), "the form's tab was acted on")
	})

	It("scopes to locators, leaves out ignored ones, and refuses text= for snapshot scoping (scripted model)", func(ctx SpecContext) {
		model.Enqueue(llmtest.JSON(`{"elements": []}`))
		obs, err := c.Observe(ctx, ptrTo("anything"), &client.ObserveOptions{Locator: form.Locator("#signup")})
		Expect(err).NotTo(HaveOccurred())
		Expect(obs.Metadata.Cache.Status).To(Equal(client.CacheStatusDISABLED), "a scoped call bypasses the cache")
		Expect(lastRequest().Text).To(ContainSubstring("textbox: Email"))
		Expect(lastRequest().Text).NotTo(ContainSubstring("See the catalogue"))

		model.Enqueue(llmtest.JSON(`{"extraction": "the catalogue"}`))
		_, err = client.Extract[map[string]any](ctx, c, "the items", &client.ExtractOptions{
			Page: list, Locator: list.Locator("li.item").Nth(1)})
		Expect(err).NotTo(HaveOccurred())
		Expect(lastRequest().Text).To(ContainSubstring("Kettle"))
		Expect(lastRequest().Text).NotTo(ContainSubstring("Teapot"))

		model.Enqueue(actAnswer(elementID(pageText(b, form), "textbox: Email"), "fill", "x@example.com"))
		_, err = c.Act(ctx, client.ActInstruction("fill the email"), &client.ActOptions{
			Page: form, IgnoreLocators: []*client.Locator{form.Locator("#next")}})
		Expect(err).NotTo(HaveOccurred())
		Expect(lastRequest().Text).To(ContainSubstring("textbox: Email"))
		Expect(lastRequest().Text).NotTo(ContainSubstring("See the catalogue"))

		requests := len(model.Requests())
		_, err = c.Observe(ctx, nil, &client.ObserveOptions{Locator: form.Locator("text=Sign up")})
		Expect(err).To(MatchError(client.ErrInvalidArgument))
		Expect(model.Requests()).To(HaveLen(requests))
	})

	It("cancels the service's operation when ctx is cancelled (scripted model)", func() {
		release := make(chan struct{})
		DeferCleanup(func() { close(release) })
		model.Enqueue(llmtest.JSON(`{"elements": []}`).WithRelease(release))
		requests := len(model.Requests())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			_, err := c.Observe(ctx, ptrTo("held until cancelled"), &client.ObserveOptions{Page: form})
			done <- err
		}()
		Eventually(model.Requests).Should(HaveLen(requests+1), "the model is asked")
		cancel()
		Eventually(done).Should(Receive(MatchError(context.Canceled)))

		// The held model reply is never released: a call that runs now
		// proves the runner's operation ended (operations run one at a
		// time), and the replay says it was cancelled.
		text := pageText(b, form)
		act, err := c.Act(opCtx(), client.ObservedAction(client.Action{
			Selector: "xpath=/html/body/h1", Description: "the heading", Method: "hover"}), &client.ActOptions{Page: form})
		Expect(err).NotTo(HaveOccurred())
		Expect(act.Data.Success).To(BeTrue(), act.Data.Message)
		Expect(text).To(ContainSubstring("Sign up"))
		Eventually(func() []any {
			var codes []any
			for _, a := range replayOf(b.SessionID()) {
				if res, ok := a["result"].(map[string]any); ok && a["method"] == "observe" {
					codes = append(codes, res["code"])
				}
			}
			return codes
		}).Should(ContainElement("CANCELED"))
	})
})

var _ = Describe("A cloud instance's settings", func() {
	It("sends its systemPrompt, selfHeal and domSettleTimeoutMs with each call (scripted model)", func(ctx SpecContext) {
		c, b := newCloudInstance(client.CreateOptions{SystemPrompt: "Answer as a careful tester.", SelfHeal: true, DOMSettleTimeoutMs: 2500})
		form, err := b.Context().NewPage(ctx, pageURL("form.html"))
		Expect(err).NotTo(HaveOccurred())
		text := pageText(b, form)
		model.Enqueue(actAnswer(elementID(text, "textbox: Email"), "fill", "a@example.com"))
		act, err := c.Act(ctx, client.ActInstruction("fill the email"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(lastRequest().Text).To(ContainSubstring("Answer as a careful tester."))
		params := replayOf(b.SessionID())[act.Metadata.ActionID]["parameters"]
		Expect(params).To(HaveKeyWithValue("selfHeal", true))
		Expect(params).To(HaveKeyWithValue("domSettleTimeoutMs", BeEquivalentTo(2500)))

		// SelfHeal: an action whose selector no longer resolves is
		// inferred again from its description, and done.
		model.Enqueue(actAnswer(elementID(text, "button: Sign up"), "click").WithUsage(50, 5))
		act, err = c.Act(ctx, client.ObservedAction(client.Action{
			Selector: "xpath=/html/body/form/button[7]", Description: "the sign-up button", Method: "click"}), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(act.Data.Success).To(BeTrue(), act.Data.Message)
		Expect(act.Metadata.Usage.InputTokens).To(BeEquivalentTo(50), "the healing call's usage")
		Expect(pageText(b, form)).To(ContainSubstring("signed up"))
	})
})

func ptrTo[T any](v T) *T { return &v }
