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
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/startlatency"
)

// Waits of the starts scenario.
const (
	// poolAnswerWait is how long a new pool may show no ready runner
	// before warm concludes that no pool controller runs.
	poolAnswerWait = 2 * time.Minute
	// quiesceWait bounds the wait for ended sessions' runners to be gone,
	// between measurements.
	quiesceWait = 3 * time.Minute
)

// startsRun is one kind of start (cold or warm) at N at once and one at a
// time.
type startsRun struct {
	Start      string       `json:"start"`
	Concurrent startFigures `json:"concurrent"`
	Sequential startFigures `json:"sequential"`
	// Pool is the BrowserPool warm starts claimed from, and how many of
	// its runners were ready when the burst began.
	Pool      string `json:"pool,omitempty"`
	PoolReady int    `json:"poolReady,omitempty"`
	// Skipped says why this kind did not run.
	Skipped string `json:"skipped,omitempty"`
}

// startFigures are the answers of a set of starts.
type startFigures struct {
	Starts int `json:"starts"`
	Errors int `json:"errors"`
	// Warm is how many of the sessions claimed a pool's runner.
	Warm       int    `json:"warm"`
	FirstError string `json:"firstError,omitempty"`
	latencies
}

func runStarts(ctx context.Context, e *env, cfg config) ([]startsRun, error) {
	var runs []startsRun
	if cfg.mode != startlatency.Warm {
		r, err := coldStarts(ctx, e, cfg)
		runs = append(runs, r)
		if err != nil {
			return runs, err
		}
	}
	if cfg.mode != startlatency.Cold {
		r, err := warmStarts(ctx, e, cfg)
		runs = append(runs, r)
		if err != nil {
			return runs, err
		}
	}
	return runs, nil
}

func coldStarts(ctx context.Context, e *env, cfg config) (startsRun, error) {
	run := startsRun{Start: startlatency.Cold}
	e.logf("cold: %d starts at once", cfg.starts)
	var err error
	if run.Concurrent, err = e.burst(ctx, cfg.starts); err != nil {
		return run, err
	}
	e.logf("cold: %d starts one at a time", cfg.sequential)
	run.Sequential, err = e.sequential(ctx, cfg.sequential, nil)
	return run, err
}

func warmStarts(ctx context.Context, e *env, cfg config) (startsRun, error) {
	run := startsRun{Start: startlatency.Warm}
	template, err := poolTemplate(e.namespace)
	if err != nil {
		return run, err
	}
	replicas := int32(cfg.starts)
	pool := &v1alpha1.BrowserPool{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "load-", Namespace: e.namespace},
		Spec:       v1alpha1.BrowserPoolSpec{Replicas: &replicas, Template: &template},
	}
	if err := e.kube.Create(ctx, pool); err != nil {
		return run, fmt.Errorf("creating the pool: %w", err)
	}
	run.Pool = pool.Name
	defer e.deletePool(pool)
	e.logf("warm: pool %s with %d replicas; waiting for its runners", pool.Name, replicas)

	seen := 0
	ready := func(want int32) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			n, err := e.poolReady(ctx, pool)
			seen = int(n)
			return n >= want, err
		}
	}
	ok, err := pollUntil(ctx, poolAnswerWait, time.Second, ready(1))
	if err != nil {
		return run, err
	}
	if !ok {
		run.Skipped = fmt.Sprintf("no pool controller answered (status.readyReplicas stayed 0 for %s)", poolAnswerWait)
		return run, nil
	}
	if _, err := pollUntil(ctx, cfg.poolWait, time.Second, ready(replicas)); err != nil {
		return run, err
	}
	run.PoolReady = seen
	e.logf("warm: %d of %d runners ready; %d starts at once", run.PoolReady, replicas, cfg.starts)
	if run.Concurrent, err = e.burst(ctx, cfg.starts); err != nil {
		return run, err
	}
	e.logf("warm: %d starts one at a time", cfg.sequential)
	full := true
	run.Sequential, err = e.sequential(ctx, cfg.sequential, func(ctx context.Context) error {
		// Each start finds the pool refilled, as a cold one finds the
		// last one's runner gone: no runner starting beside it. A pool
		// that does not refill in time (its quota) need only have one.
		want := int32(1)
		if full {
			want = replicas
		}
		ok, err := pollUntil(ctx, cfg.poolWait, 100*time.Millisecond, ready(want))
		if err == nil && !ok && full {
			e.logf("warm: the pool did not refill to %d within %s (%d ready); the next starts wait for one ready runner only", replicas, cfg.poolWait, seen)
			full = false
		}
		return err
	})
	return run, err
}

// poolTemplate is the template of the sessions this command starts: the
// launch settings (v1alpha1.LaunchSettingsOf) of the spec the API builds
// from startBody, through the API's own decoder and mapping.
func poolTemplate(namespace string) (v1alpha1.BrowserPoolTemplate, error) {
	req, err := defaultStart()
	if err != nil {
		return v1alpha1.BrowserPoolTemplate{}, err
	}
	bs, _, err := req.ToSession("template", namespace)
	if err != nil {
		return v1alpha1.BrowserPoolTemplate{}, fmt.Errorf("mapping the start body: %w", err)
	}
	t, ok := v1alpha1.LaunchSettingsOf(&bs.Spec)
	if !ok {
		return t, errors.New("the start body's sessions can never claim a pooled runner")
	}
	return t, nil
}

// poolReady reads the pool's status.readyReplicas.
func (e *env) poolReady(ctx context.Context, pool *v1alpha1.BrowserPool) (int32, error) {
	var p v1alpha1.BrowserPool
	if err := e.kube.Get(ctx, client.ObjectKeyFromObject(pool), &p); err != nil {
		return 0, fmt.Errorf("reading pool %s: %w", pool.Name, err)
	}
	if p.Status.ReadyReplicas == nil {
		return 0, nil
	}
	return *p.Status.ReadyReplicas, nil
}

// deletePool deletes the pool and waits, a bounded time, until it is gone:
// the pool deletes its unclaimed runners before it goes
// (controllers.PoolRunnersFinalizer). Its token Secret is the garbage
// collector's, which make dev's control plane does not run, so the command
// deletes it. It runs on a context of its own, so that the pool goes even
// when the run's deadline has passed.
func (e *env) deletePool(pool *v1alpha1.BrowserPool) {
	ctx, cancel := context.WithTimeout(context.Background(), quiesceWait)
	defer cancel()
	if err := e.kube.Delete(ctx, pool); client.IgnoreNotFound(err) != nil {
		e.logf("deleting pool %s: %v", pool.Name, err)
		return
	}
	token := &corev1.Secret{}
	if err := e.kube.Get(ctx, types.NamespacedName{Namespace: pool.Namespace, Name: v1alpha1.PoolTokenSecretName(pool.Name)}, token); err == nil && metav1.IsControlledBy(token, pool) {
		if err := e.kube.Delete(ctx, token); client.IgnoreNotFound(err) != nil {
			e.logf("deleting the token of pool %s: %v", pool.Name, err)
		}
	}
	gone, err := pollUntil(ctx, quiesceWait, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		err := e.kube.Get(ctx, client.ObjectKeyFromObject(pool), &v1alpha1.BrowserPool{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil || !gone {
		e.logf("pool %s: not gone within %s (%v)", pool.Name, quiesceWait, err)
	}
}

// burst makes n starts at once, then ends their sessions and waits for
// their runners to be gone.
func (e *env) burst(ctx context.Context, n int) (startFigures, error) {
	type answer struct {
		id   string
		took time.Duration
		err  error
	}
	answers := make([]answer, n)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			<-gate
			id, took, err := e.api.start(ctx)
			answers[i] = answer{id, took, err}
		})
	}
	close(gate)
	wg.Wait()
	var ids []string
	var took []time.Duration
	fig := startFigures{Starts: n}
	for _, a := range answers {
		if a.err != nil {
			fig.Errors++
			if fig.FirstError == "" {
				fig.FirstError = a.err.Error() + quotaHint(a.err)
			}
			continue
		}
		ids = append(ids, a.id)
		took = append(took, a.took)
	}
	fig.latencies = summarise(took)
	var err error
	if fig.Warm, err = e.countWarm(ctx, ids); err != nil {
		return fig, err
	}
	e.endAll(ids)
	return fig, e.quiesce(ctx, ids)
}

// sequential makes n starts one at a time, each ended and its runner gone
// before the next; before, if set, runs before each start.
func (e *env) sequential(ctx context.Context, n int, before func(context.Context) error) (startFigures, error) {
	fig := startFigures{Starts: n}
	var took []time.Duration
	for range n {
		if before != nil {
			if err := before(ctx); err != nil {
				return fig, err
			}
		}
		id, d, err := e.api.start(ctx)
		if err != nil {
			fig.Errors++
			if fig.FirstError == "" {
				fig.FirstError = err.Error() + quotaHint(err)
			}
			if ctx.Err() != nil {
				return fig, ctx.Err()
			}
			continue
		}
		took = append(took, d)
		warm, err := e.countWarm(ctx, []string{id})
		if err != nil {
			return fig, err
		}
		fig.Warm += warm
		e.endAll([]string{id})
		if err := e.quiesce(ctx, []string{id}); err != nil {
			return fig, err
		}
	}
	fig.latencies = summarise(took)
	return fig, nil
}

// countWarm counts the sessions that claimed a pool's runner.
func (e *env) countWarm(ctx context.Context, ids []string) (int, error) {
	warm := 0
	for _, id := range ids {
		var bs v1alpha1.BrowserSession
		if err := e.kube.Get(ctx, types.NamespacedName{Namespace: e.namespace, Name: id}, &bs); err != nil {
			return warm, fmt.Errorf("reading session %s: %w", id, err)
		}
		if bs.Status.Pool != "" {
			warm++
		}
	}
	return warm, nil
}

// endAll ends the sessions, all at once.
func (e *env) endAll(ids []string) {
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			if err := e.api.end(id); err != nil {
				e.logf("ending session %s: %v", id, err)
			}
		})
	}
	wg.Wait()
}

// quiesce waits until the sessions are over and their runner pods gone,
// so that the next measurement has the machine to itself. A wait past
// quiesceWait is logged and the run goes on.
func (e *env) quiesce(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	ours := map[string]bool{}
	for _, id := range ids {
		ours[id] = true
	}
	left := 0
	done, err := pollUntil(ctx, quiesceWait, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		var sessions v1alpha1.BrowserSessionList
		if err := e.kube.List(ctx, &sessions, client.InNamespace(e.namespace)); err != nil {
			return false, fmt.Errorf("listing sessions: %w", err)
		}
		left = 0
		for _, s := range sessions.Items {
			if ours[s.Name] && !s.Status.Finished() {
				left++
			}
		}
		var pods corev1.PodList
		if err := e.kube.List(ctx, &pods, client.InNamespace(e.namespace), client.HasLabels{v1alpha1.LabelSession}); err != nil {
			return false, fmt.Errorf("listing runner pods: %w", err)
		}
		for _, p := range pods.Items {
			if ours[p.Labels[v1alpha1.LabelSession]] {
				left++
			}
		}
		return left == 0, nil
	})
	if err != nil {
		return err
	}
	if !done {
		e.logf("%d of the ended sessions or their runners were still there after %s; going on", left, quiesceWait)
	}
	return nil
}

// quotaHint explains a 429 QUOTA_EXCEEDED.
func quotaHint(err error) string {
	var ae *apiError
	if errors.As(err, &ae) && ae.Code == "QUOTA_EXCEEDED" {
		return " (raise make dev's quota: DEV_QUOTA_CONCURRENT_SESSIONS, docs/local-stack.md)"
	}
	return ""
}

func (r startsRun) print(w io.Writer) {
	if r.Skipped != "" {
		fmt.Fprintf(w, "starts %s: %s\n\n", r.Start, r.Skipped)
		return
	}
	title := "starts " + r.Start + " (time to the start's answer, ms)"
	if r.Pool != "" {
		title += fmt.Sprintf("; pool %s had %d runners ready", r.Pool, r.PoolReady)
	}
	rows := [][]string{{"at once", "starts", "errors", "warm", "p50", "p95", "max"}}
	for _, f := range []struct {
		name string
		fig  startFigures
	}{{strconv.Itoa(r.Concurrent.Starts), r.Concurrent}, {"1 (sequential)", r.Sequential}} {
		rows = append(rows, []string{f.name, strconv.Itoa(f.fig.Starts), strconv.Itoa(f.fig.Errors), strconv.Itoa(f.fig.Warm),
			f2(f.fig.P50ms), f2(f.fig.P95ms), f2(f.fig.MaxMs)})
	}
	table(w, title, rows...)
	for _, f := range []startFigures{r.Concurrent, r.Sequential} {
		if f.FirstError != "" {
			fmt.Fprintf(w, "  first error: %s\n\n", f.FirstError)
		}
	}
}
