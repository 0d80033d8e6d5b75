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

package controllers

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/startlatency"
)

// startLatency is the manager's start latency histogram, in its /metrics.
var startLatency = startlatency.New()

func init() {
	ctrlmetrics.Registry.MustRegister(startLatency.Collector())
}

// startTracker times the starts of the sessions the manager saw created:
// when each reached each phase. It observes them all once the session is
// Ready, when it is known whether it started cold or warm; a session that
// never gets there is not a start latency. It holds the sessions that are
// starting, and forgets each once it is Ready, over or gone.
type startTracker struct {
	hist *startlatency.Histogram
	mu   sync.Mutex
	runs map[types.UID]*sessionStart
}

type sessionStart struct {
	first  time.Time
	phases map[string]time.Time
}

func newStartTracker(h *startlatency.Histogram) *startTracker {
	return &startTracker{hist: h, runs: map[types.UID]*sessionStart{}}
}

// begin starts timing a session the manager sees for the first time.
func (t *startTracker) begin(s *v1alpha1.BrowserSession, now time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.runs[s.UID]; !ok {
		t.runs[s.UID] = &sessionStart{first: now, phases: map[string]time.Time{}}
	}
}

// mark records the first time the session reached phase.
func (t *startTracker) mark(s *v1alpha1.BrowserSession, phase string, now time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if run, ok := t.runs[s.UID]; ok {
		if _, seen := run.phases[phase]; !seen {
			run.phases[phase] = now
		}
	}
}

// finish observes the session's phases, labelled by how it started.
func (t *startTracker) finish(s *v1alpha1.BrowserSession) {
	if t == nil {
		return
	}
	t.mu.Lock()
	run, ok := t.runs[s.UID]
	delete(t.runs, s.UID)
	t.mu.Unlock()
	if !ok {
		return
	}
	start := startlatency.Start(s.Status.Pool)
	for phase, at := range run.phases {
		t.hist.Observe(phase, start, at.Sub(run.first))
	}
}

// forget drops a session that will not start.
func (t *startTracker) forget(uid types.UID) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.runs, uid)
}

// markStart records the phases the session's pod shows, and observes the
// start once the session is Ready.
func (r *BrowserSessionReconciler) markStart(s *v1alpha1.BrowserSession, pod *corev1.Pod, now time.Time) {
	if pod.Status.Phase == corev1.PodRunning {
		r.starts.mark(s, startlatency.PhasePodRunning, now)
	}
	if meta.IsStatusConditionTrue(s.Status.Conditions, v1alpha1.BrowserSessionConditionReady) {
		r.starts.mark(s, startlatency.PhaseBrowserReady, now)
		r.starts.finish(s)
	}
}
