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
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

var _ = Describe("ExperimentalBatch on a cloud handle", Ordered, func() {
	var (
		c    *client.Client
		b    *client.Browser
		form *client.Page
	)

	BeforeAll(func(ctx SpecContext) {
		c, b = newCloudInstance(client.CreateOptions{})
		var err error
		form, err = b.Context().NewPage(ctx, pageURL("form.html"))
		Expect(err).NotTo(HaveOccurred())
	})

	It("runs the script's operations in the session's runner, in one call, and counts their usage (scripted model)", func(ctx SpecContext) {
		before, err := c.Metrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		text := pageText(b, form)
		model.Enqueue(
			actAnswer(elementID(text, "textbox: Email"), "fill", "ada@example.com").WithUsage(500, 20),
			llmtest.JSON(`{"heading": "Sign up"}`).WithUsage(300, 10),
		)
		var got struct {
			Typed     bool     `json:"typed"`
			Heading   string   `json:"heading"`
			Title     string   `json:"title"`
			ActionIDs []string `json:"actionIds"`
			Tokens    float64  `json:"tokens"`
		}
		err = c.ExperimentalBatch(ctx, `async (batch, input) => {
			const typed = await batch.act("type " + input.email + " into the email field");
			await batch.act({selector: "#submit", method: "click", description: "the sign-up button"});
			const h = await batch.extract("the page's heading", {type: "object", properties: {heading: {type: "string"}}, required: ["heading"]});
			return {typed: typed.data.success, heading: h.data.heading, title: await batch.page.title(),
				actionIds: [typed.metadata.actionId, h.metadata.actionId], tokens: (await batch.metrics()).totalPromptTokens};
		}`, map[string]string{"email": "ada@example.com"}, &got, &client.BatchOptions{Page: form})
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Typed).To(BeTrue())
		Expect(got.Heading).To(Equal("Sign up"))
		Expect(got.Title).To(Equal("Sign up"))
		Expect(got.Tokens).To(BeEquivalentTo(before.TotalPromptTokens + 800))
		Expect(pageText(b, form)).To(ContainSubstring("signed up ada@example.com"), "the runner acted on the form's tab")

		replay := replayOf(b.SessionID())
		for _, id := range got.ActionIDs {
			Expect(replay).To(HaveKey(id), "each operation of the batch is in the session's replay under its own id")
		}
		Expect(replay).To(ContainElement(HaveKeyWithValue("method", "batch")))

		m, err := c.Metrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.ActPromptTokens - before.ActPromptTokens).To(BeEquivalentTo(500))
		Expect(m.ActCompletionTokens - before.ActCompletionTokens).To(BeEquivalentTo(20))
		Expect(m.ExtractPromptTokens - before.ExtractPromptTokens).To(BeEquivalentTo(300))
		Expect(m.TotalPromptTokens - before.TotalPromptTokens).To(BeEquivalentTo(800))
	})

	It("gives undefined as null and nil input as undefined", func(ctx SpecContext) {
		var kinds []string
		Expect(c.ExperimentalBatch(ctx, `async (batch, input) => [typeof input]`, nil, &kinds, nil)).To(Succeed())
		Expect(kinds).To(Equal([]string{"undefined"}))
		s := "before"
		out := &s
		Expect(c.ExperimentalBatch(ctx, `async () => undefined`, nil, &out, nil)).To(Succeed())
		Expect(out).To(BeNil())
		var v any
		err := c.ExperimentalBatch(ctx, `() => 1`, nil, v, nil)
		Expect(err).To(MatchError(client.ErrInvalidArgument), "result must be a non-nil pointer")
	})

	It("surfaces an exception with its message and stack, a refused source, and the deadline, and counts nothing", func(ctx SpecContext) {
		before, _ := c.Metrics(ctx)
		var v any
		err := c.ExperimentalBatch(ctx, "async (batch) => {\n  await batch.page.title();\n  throw new RangeError('too far');\n}", nil, &v, nil)
		var be *client.BatchError
		Expect(errors.As(err, &be)).To(BeTrue(), "%v", err)
		Expect(be.Message).To(Equal("RangeError: too far"))
		Expect(be.Stack).To(ContainSubstring("batch.js:3"))

		err = c.ExperimentalBatch(ctx, `async (batch) => { await batch.page.goto("file:///etc/passwd"); }`, nil, &v, nil)
		Expect(errors.As(err, &be)).To(BeTrue(), "%v", err)
		Expect(be.Message).To(HavePrefix("Error: page.goto: BAD_REQUEST: url"))

		err = c.ExperimentalBatch(ctx, `async (batch) => {`, nil, &v, nil)
		Expect(err).To(MatchError(client.ErrInvalidArgument))
		var apiErr *client.APIError
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.StatusCode).To(Equal(http.StatusBadRequest))

		err = c.ExperimentalBatch(ctx, `async (batch) => { await batch.page.title(); for (;;) {} }`, nil, &v, &client.BatchOptions{Timeout: 500 * time.Millisecond})
		Expect(err).To(MatchError(client.ErrBatchDeadline))
		Expect(err.Error()).To(ContainSubstring("500ms"))
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.StatusCode).To(Equal(http.StatusGatewayTimeout))

		after, _ := c.Metrics(ctx)
		Expect(after).To(Equal(before))
	})

	It("targets batch.page, the active page and a page it opens, and the handle adopts the active page at the end", func(ctx SpecContext) {
		var got struct {
			Page, Fresh, FreshTitle string
			Listed                  bool
		}
		err := c.ExperimentalBatch(ctx, `async (batch, input) => {
			const fresh = await batch.context.newPage(input.url);
			await batch.context.setActivePage(batch.page);
			await batch.context.setActivePage(fresh);
			return {page: batch.page.id, fresh: fresh.id, freshTitle: await fresh.title(),
				listed: (await batch.context.pages()).includes(fresh)};
		}`, map[string]string{"url": pageURL("list.html")}, &got, &client.BatchOptions{Page: form})
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Page).To(Equal(form.ID()))
		Expect(got.FreshTitle).To(Equal("Catalogue"))
		Expect(got.Listed).To(BeTrue())
		active, err := b.Context().ActivePage(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(active.ID()).To(Equal(got.Fresh), "the batch's active page is the handle's")
		Expect(pageText(b, active)).To(ContainSubstring("Teapot"))
	})

	It("cancels the batch in the runner when its context ends (scripted model)", func(ctx SpecContext) {
		release := make(chan struct{})
		DeferCleanup(func() { close(release) })
		asked := len(model.Requests())
		model.Enqueue(llmtest.JSON(`{"extraction": "never read"}`).WithRelease(release))
		bctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			var v any
			done <- c.ExperimentalBatch(bctx, `async (batch) => { await batch.extract("anything"); await batch.act("never"); }`, nil, &v, &client.BatchOptions{Page: form})
		}()
		Eventually(func() int { return len(model.Requests()) }).Should(Equal(asked+1), "the batch's extract waits for the model")
		cancel()
		Eventually(done).Should(Receive(MatchError(context.Canceled)))
		// The runner let the batch go: the next operation runs.
		var title string
		Expect(c.ExperimentalBatch(ctx, `async (batch) => await batch.page.title()`, nil, &title, &client.BatchOptions{Page: form})).To(Succeed())
		Expect(title).To(Equal("Sign up"))
		Expect(len(model.Requests())).To(Equal(asked+1), "the act after the cancelled extract never ran")
	})

	It("answers curl: POST /v1/sessions/{id}/batch takes and gives the documented bodies", func() {
		v, err := serverv1.NewValidator()
		Expect(err).NotTo(HaveOccurred())
		path := "/v1/sessions/" + b.SessionID() + "/batch"
		body := `{"source": "async (batch, input) => ({title: await batch.page.title(), n: input.n})", "input": {"n": 2}, "pageId": "` + form.ID() + `"}`
		r := call(http.MethodPost, path, body)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		Expect(v.ValidateResponse(http.MethodPost, "/v1/sessions/{id}/batch", r.Status, r.ContentType, r.Raw)).To(Succeed())
		Expect(r.Data()["result"]).To(Equal(map[string]any{"title": "Sign up", "n": 2.0}))

		r = call(http.MethodPost, path, `{"source": "async () => { throw new Error('nope'); }"}`)
		Expect(r.Status).To(Equal(http.StatusUnprocessableEntity), "%s", r.Raw)
		Expect(v.ValidateResponse(http.MethodPost, "/v1/sessions/{id}/batch", r.Status, r.ContentType, r.Raw)).To(Succeed())
		Expect(r.JSON()).To(HaveKeyWithValue("code", "BATCH_SCRIPT_ERROR"))
		Expect(r.JSON()).To(HaveKeyWithValue("stack", ContainSubstring("batch.js")))
	})
})
