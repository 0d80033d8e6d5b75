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

package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// rssInterval is how often memory is sampled while the load runs.
const rssInterval = 250 * time.Millisecond

// actsResult is the acts scenario's figures.
type actsResult struct {
	Sessions       int    `json:"sessions"`
	ActsPerSession int    `json:"actsPerSession"`
	Acts           int    `json:"acts"`
	Errors         int    `json:"errors"`
	FirstError     string `json:"firstError,omitempty"`
	// ActsPerSecond is the acts of every session over the acting's wall
	// time.
	ActsPerSecond float64   `json:"actsPerSecond"`
	Latency       latencies `json:"latency"`
	Memory        memory    `json:"memory"`
}

// memory is the process's RSS, in KiB, around a load: with no session of
// this run, once the sessions are up, the most while the load ran, once it
// is over, and once the sessions are gone.
type memory struct {
	IdleKiB      int64 `json:"idleKiB"`
	BeforeKiB    int64 `json:"beforeKiB"`
	DuringMaxKiB int64 `json:"duringMaxKiB"`
	AfterKiB     int64 `json:"afterKiB"`
	EndedKiB     int64 `json:"endedKiB"`
}

func runActs(ctx context.Context, e *env, cfg config) (*actsResult, error) {
	res := &actsResult{Sessions: cfg.sessions, ActsPerSession: cfg.acts}
	var err error
	if res.Memory.IdleKiB, err = rssKiB(e.proc.PID); err != nil {
		return res, err
	}
	e.logf("acts: starting %d sessions on %s", cfg.sessions, e.pages.url("/act"))
	ids, err := e.startAll(ctx, cfg.sessions, e.pages.url("/act"))
	defer func() {
		e.endAll(ids)
		if qerr := e.quiesce(ctx, ids); qerr == nil {
			res.Memory.EndedKiB, _ = rssKiB(e.proc.PID)
		}
	}()
	if err != nil {
		return res, err
	}
	if res.Memory.BeforeKiB, err = rssKiB(e.proc.PID); err != nil {
		return res, err
	}

	e.logf("acts: %d sessions acting %d times each", len(ids), cfg.acts)
	sampler := sampleRSS(ctx, e.proc.PID, rssInterval)
	took := make([][]time.Duration, len(ids))
	errs := make([]error, len(ids))
	failed := make([]int, len(ids))
	began := time.Now()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			for range cfg.acts {
				t0 := time.Now()
				err := e.api.act(ctx, id, actSelector)
				if err != nil {
					failed[i]++
					if errs[i] == nil {
						errs[i] = fmt.Errorf("session %s: %w", id, err)
					}
					if ctx.Err() != nil {
						return
					}
					continue
				}
				took[i] = append(took[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	wall := time.Since(began)
	if res.Memory.DuringMaxKiB, err = sampler.Stop(); err != nil {
		return res, err
	}
	if res.Memory.AfterKiB, err = rssKiB(e.proc.PID); err != nil {
		return res, err
	}
	var all []time.Duration
	for i := range ids {
		all = append(all, took[i]...)
		res.Errors += failed[i]
		if errs[i] != nil && res.FirstError == "" {
			res.FirstError = errs[i].Error()
		}
	}
	res.Acts = len(all) + res.Errors
	res.Latency = summarise(all)
	res.ActsPerSecond = float64(len(all)) / wall.Seconds()
	return res, ctx.Err()
}

// setupStarts is how many sessions startAll starts at once: fifty
// Chromiums starting together on two cores take longer than the API's
// start timeout (60 s), and how fast they start is the starts scenario's
// business, not this.
const setupStarts = 10

// startAll starts n sessions, setupStarts at a time, and navigates each to
// url. It returns the sessions it started, also on an error, so that they
// can be ended.
func (e *env) startAll(ctx context.Context, n int, url string) ([]string, error) {
	ids := make([]string, n)
	errs := make([]error, n)
	slots := make(chan struct{}, setupStarts)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			id, _, err := e.api.start(ctx)
			if err != nil {
				errs[i] = fmt.Errorf("starting a session: %w%s", err, quotaHint(err))
				return
			}
			ids[i] = id
			if url != "" {
				if err := e.api.navigate(ctx, id, url); err != nil {
					errs[i] = fmt.Errorf("session %s: navigating to %s: %w", id, url, err)
				}
			}
		})
	}
	wg.Wait()
	var started []string
	var first error
	for i := range n {
		if ids[i] != "" {
			started = append(started, ids[i])
		}
		if errs[i] != nil && first == nil {
			first = errs[i]
		}
	}
	return started, first
}

func (r *actsResult) print(w io.Writer) {
	table(w, fmt.Sprintf("acts: %d sessions x %d deterministic acts (a click by selector, no model), at once", r.Sessions, r.ActsPerSession),
		[]string{"acts", "errors", "acts/s", "p50 ms", "p95 ms", "max ms"},
		[]string{strconv.Itoa(r.Acts), strconv.Itoa(r.Errors), f2(r.ActsPerSecond), f2(r.Latency.P50ms), f2(r.Latency.P95ms), f2(r.Latency.MaxMs)})
	if r.FirstError != "" {
		fmt.Fprintf(w, "  first error: %s\n\n", r.FirstError)
	}
	m := r.Memory
	table(w, "acts: RSS of the API's process, MiB",
		[]string{"idle", "sessions up", "acting (max)", "acts done", "sessions ended"},
		[]string{mib(m.IdleKiB), mib(m.BeforeKiB), mib(m.DuringMaxKiB), mib(m.AfterKiB), mib(m.EndedKiB)})
}
