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
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/browserfleet/browserfleet/internal/testing/apitest"
	"github.com/browserfleet/browserfleet/server/apikey"
)

var _ = Describe("revoking an API key", func() {
	It("closes the CDP connections and streams it opened within seconds, and its cdpUrls stop working", func(ctx SpecContext) {
		p := newProject(ctx)
		id := startSession(p, "")
		r := do(http.MethodPost, "/v1/sessions/"+id+"/navigate", p.Key, fmt.Sprintf(`{"url": %q}`, pageURL("form.html")), nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		r = do(http.MethodGet, "/v1/sessions/"+id, p.Key, "", nil)
		Expect(r.Status).To(Equal(http.StatusOK), "%s", r.Raw)
		cdpURL := r.Data()["cdpUrl"].(string)
		Expect(cdpURL).To(ContainSubstring("key=" + p.KeyID))

		By("a CDP connection and a streamed act waiting for its model")
		cdp := apitest.DialCDP(ctx, cdpURL)
		Expect(cdp.Call("Target.getTargets", `{}`, "")).To(HaveKey("result"))
		text := pageText(p, id)
		model.Enqueue(actAnswer(elementID(text, "button: Sign up"), "click").WithDelay(5 * time.Minute))
		before := len(model.Requests())
		streamEnded := make(chan string, 1)
		go func() {
			defer GinkgoRecover()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, api.URL+"/v1/sessions/"+id+"/act",
				strings.NewReader(fmt.Sprintf(`{"input": "click sign up", "options": {"model": %s}, "streamResponse": true}`, modelOption())))
			req.Header.Set("x-svc-api-key", p.Key)
			resp, err := api.Client().Do(req)
			Expect(err).NotTo(HaveOccurred())
			raw, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			streamEnded <- string(raw)
		}()
		Eventually(func() int { return len(model.Requests()) }).Should(BeNumerically(">", before))

		By("revoking the key")
		revoked := time.Now()
		Expect(apikey.Revoke(ctx, k8sClient, p.Namespace, p.KeyID)).To(Succeed())

		var stream string
		Eventually(streamEnded, 10*time.Second).Should(Receive(&stream))
		Expect(stream).To(ContainSubstring("event: starting"))
		Expect(stream).NotTo(ContainSubstring("event: finished"))
		readCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, _, err := cdp.Conn().Read(readCtx)
		Expect(err).To(HaveOccurred())
		Expect(readCtx.Err()).NotTo(HaveOccurred(), "the CDP connection was closed, not timed out")
		GinkgoWriter.Printf("stream and CDP connection closed %s after the revocation\n", time.Since(revoked))

		By("the cdpUrl and the key no longer work")
		_, resp, err := websocket.Dial(ctx, cdpURL, nil)
		Expect(err).To(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
		Expect(do(http.MethodGet, "/v1/sessions/"+id, p.Key, "", nil).Status).To(Equal(http.StatusUnauthorized))
	})
})
