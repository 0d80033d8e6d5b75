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

package server_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/browserfleet/browserfleet/server"
	"github.com/browserfleet/browserfleet/server/metrics"
	"github.com/browserfleet/browserfleet/startlatency"
)

var _ = Describe("the start latency the API's callers see", func() {
	It("counts one cold first_answer per successful start, and none for a failed one or a resume", func(ctx SpecContext) {
		reg := prometheus.NewPedanticRegistry()
		m, err := metrics.New(reg, nil)
		Expect(err).NotTo(HaveOccurred())
		apiM := httptest.NewServer(newServer(func(o *server.Options) { o.Metrics = m }))
		DeferCleanup(apiM.Close)
		// The API's metrics as the manager-style endpoint serves them.
		scrape := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		DeferCleanup(scrape.Close)
		count := func(start string) int {
			GinkgoHelper()
			return histogramCount(ctx, scrape.URL, startlatency.PhaseFirstAnswer, start)
		}
		Expect(count(startlatency.Cold)).To(Equal(0))

		p := newProject(ctx)
		// A start whose runner fails answers no session: not observed.
		failed := startAsync(apiM, p.Key, startBody, nil)
		Expect(kubelet.Exit(ctx, runnerPod(ctx, p.Namespace), 1, "Error", "")).To(Succeed())
		var r reply
		Eventually(failed).Should(Receive(&r))
		Expect(r.status).To(Equal(http.StatusBadGateway), "%v", r.body)
		Expect(count(startlatency.Cold)).To(Equal(0))

		done := startAsync(apiM, p.Key, startBody, nil)
		Expect(kubelet.Run(ctx, runnerPod(ctx, p.Namespace), true)).To(Succeed())
		Eventually(done).Should(Receive(&r))
		Expect(r.status).To(Equal(http.StatusOK), "%v", r.body)
		Expect(count(startlatency.Cold)).To(Equal(1))
		Expect(count(startlatency.Warm)).To(Equal(0), "no pool: the start is cold")

		// Resuming the session starts none.
		id := r.body["data"].(map[string]any)["sessionId"].(string)
		st, body := call(apiM, http.MethodPost, "/v1/sessions/start", p.Key, `{"modelName": "openai/gpt-4.1-mini", "cloudSessionID": "`+id+`"}`, nil)
		Expect(st).To(Equal(http.StatusOK), "%v", body)
		Expect(count(startlatency.Cold)).To(Equal(1))
	})
})

// histogramCount scrapes the metrics at url and returns the sample count of
// the start latency histogram's series {phase, start}; 0 when it has none.
func histogramCount(ctx context.Context, url, phase, start string) int {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
	prefix := startlatency.Name + `_count{phase="` + phase + `",start="` + start + `"} `
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			n, err := strconv.Atoi(v)
			Expect(err).NotTo(HaveOccurred(), "sample %q", sc.Text())
			return n
		}
	}
	Expect(sc.Err()).NotTo(HaveOccurred())
	return 0
}
