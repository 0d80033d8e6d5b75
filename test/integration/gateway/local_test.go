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

package gateway_test

import (
	"context"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	bfclient "github.com/browserfleet/browserfleet/client"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// The client library's local handles with the project's key: the engine
// runs in this process, on a Chromium of its own, and the managed services
// (the gateway, the server-side cache) are the stack's, reached with the
// key alone.

// localInstance launches a local browser, opens the sign-up form in it and
// creates an instance with the stack's key and origin and opts; all closed
// when the spec ends.
func localInstance(opts bfclient.CreateOptions) (*bfclient.Client, *bfclient.Page) {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	DeferCleanup(cancel)
	b, err := bfclient.LaunchLocalBrowser(ctx, bfclient.LocalBrowserLaunchOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { _ = b.Close(ctx) }, NodeTimeout(time.Minute))
	p, err := b.Context().NewPage(ctx, pages.URL+"/form.html")
	Expect(err).NotTo(HaveOccurred())
	opts.Browser, opts.APIKey, opts.APIURL = b, stack.APIKey(), stack.APIURL()
	c, err := bfclient.Create(ctx, opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { _ = c.Close(ctx) }, NodeTimeout(time.Minute))
	return c, p
}

// localElementID reads the id of the snapshot line "role: name" as the
// instance's model reads it: an observe whose scripted answer is empty
// sends the page's snapshot to the model, which the scripted server keeps.
func localElementID(ctx context.Context, c *bfclient.Client, line string) string {
	GinkgoHelper()
	model.Enqueue(llmtest.JSON(`{"elements": []}`))
	_, err := c.Observe(ctx, nil, nil)
	Expect(err).NotTo(HaveOccurred())
	reqs := model.Requests()
	m := regexp.MustCompile(`\[(\d+-\d+)\] ` + regexp.QuoteMeta(line)).FindStringSubmatch(reqs[len(reqs)-1].Text)
	Expect(m).NotTo(BeNil(), "no %q in what the model read", line)
	return m[1]
}
