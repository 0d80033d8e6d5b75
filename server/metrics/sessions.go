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

package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// defaultListTimeout bounds a scrape's list of sessions: the cache answers
// in microseconds once synced, and Prometheus's default scrape timeout is
// 10s, which the rest of the scrape needs too.
const defaultListTimeout = 3 * time.Second

// phases are the values of the phase label, all emitted on every scrape.
var phases = []v1alpha1.BrowserSessionPhase{
	v1alpha1.BrowserSessionPending,
	v1alpha1.BrowserSessionStarting,
	v1alpha1.BrowserSessionReady,
	v1alpha1.BrowserSessionEnding,
	v1alpha1.BrowserSessionEnded,
	v1alpha1.BrowserSessionFailed,
}

// sessionCollector counts BrowserSessions by phase, across all namespaces,
// at scrape time.
type sessionCollector struct {
	reader     client.Reader
	timeout    time.Duration
	sessions   *prometheus.Desc
	listErrors prometheus.Counter
}

func newSessionCollector(reader client.Reader, timeout time.Duration) *sessionCollector {
	return &sessionCollector{
		reader:  reader,
		timeout: timeout,
		sessions: prometheus.NewDesc("browserfleet_sessions",
			"BrowserSessions by phase, across all namespaces, as the API pod's cache sees them.",
			[]string{"phase"}, nil),
		listErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "browserfleet_sessions_list_errors_total",
			Help: "Scrapes whose list of BrowserSessions failed or timed out; browserfleet_sessions is missing from those scrapes.",
		}),
	}
}

// Describe implements prometheus.Collector.
func (c *sessionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.sessions
	c.listErrors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *sessionCollector) Collect(ch chan<- prometheus.Metric) {
	defer c.listErrors.Collect(ch)
	counts, err := c.count()
	if err != nil {
		// Not an invalid metric: that would fail the whole scrape (see the
		// package doc). The counter says it happened.
		c.listErrors.Inc()
		return
	}
	for _, p := range phases {
		ch <- prometheus.MustNewConstMetric(c.sessions, prometheus.GaugeValue, float64(counts[p]), string(p))
	}
}

// count lists the sessions and counts them by phase. Phases outside the
// six (the CRD forbids them) are not counted.
func (c *sessionCollector) count() (map[v1alpha1.BrowserSessionPhase]int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var list v1alpha1.BrowserSessionList
	// Only the phase is read, so the cache's objects need not be copied.
	if err := c.reader.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing BrowserSessions: %w", err)
	}
	counts := make(map[v1alpha1.BrowserSessionPhase]int, len(phases))
	for i := range list.Items {
		p := list.Items[i].Status.Phase
		if p == "" {
			p = v1alpha1.BrowserSessionPending
		}
		counts[p]++
	}
	return counts, nil
}
