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

// Package startlatency is the one histogram of how long a session takes to
// start, broken down by phase and labelled cold or warm. The manager
// observes the phases it sees (admitted, pod created, pod running, browser
// ready) and the API the one its callers see (first answer), each in its
// own /metrics, under the same name.
package startlatency

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Name is the histogram's metric name.
const Name = "browserfleet_session_start_seconds"

// Phases, each measured from the moment the session was first seen: by the
// manager, the first reconcile of the BrowserSession; by the API, the
// arrival of the start request.
const (
	// PhaseAdmitted: the session passed its Secret and quota checks.
	PhaseAdmitted = "admitted"
	// PhasePodCreated: its runner pod was created (cold) or claimed from
	// a pool (warm).
	PhasePodCreated = "pod_created"
	// PhasePodRunning: the runner pod runs (a claimed one already did).
	PhasePodRunning = "pod_running"
	// PhaseBrowserReady: the session turned Ready: its browser serves
	// calls.
	PhaseBrowserReady = "browser_ready"
	// PhaseFirstAnswer: the API answered the start request with the
	// session's id.
	PhaseFirstAnswer = "first_answer"
)

// Values of the start label.
const (
	// Cold: the session's runner was started for it.
	Cold = "cold"
	// Warm: the session claimed a runner of a BrowserPool.
	Warm = "warm"
)

// Start is the start label's value for a session claimed from pool
// ("" for none).
func Start(pool string) string {
	if pool != "" {
		return Warm
	}
	return Cold
}

// buckets span a warm start's tens of milliseconds to a cold start on a
// node that pulls the runner image first.
var buckets = []float64{0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 30, 60, 120}

// Histogram is the start latency histogram.
type Histogram struct {
	vec *prometheus.HistogramVec
}

// New returns a histogram to register in one process's registry.
func New() *Histogram {
	return &Histogram{vec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    Name,
		Help:    "Seconds from a session's first sighting to each phase of its start (admitted, pod_created, pod_running, browser_ready from the manager; first_answer from the API), by start cold or warm.",
		Buckets: buckets,
	}, []string{"phase", "start"})}
}

// Collector is the histogram as a prometheus.Collector, to register.
func (h *Histogram) Collector() prometheus.Collector { return h.vec }

// Observe records that a session reached phase d after it was first seen.
func (h *Histogram) Observe(phase, start string, d time.Duration) {
	h.vec.WithLabelValues(phase, start).Observe(d.Seconds())
}
