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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpcserver"
)

// The streams. A runner lets one operation run on its page and
// rpcserver.DefaultMaxQueuedOperations wait (make dev has no knob for the
// runner's --max-queued-operations), so a session holds at most
// opStreamsPerSession streamed operations, and a thousand take 59
// sessions (-stream-sessions 59). By default two sessions hold them, and
// the rest are streamed starts that resume a session which waits for its
// Secret: the API holds each until the session is Ready, with nothing in
// any runner.
const (
	opStreamsPerSession = 1 + rpcserver.DefaultMaxQueuedOperations
	// holdOpenWait bounds the opening of the start streams: the held
	// session waits for its Secret the manager's sessions.secretWait
	// (30 s by default) from its creation, then fails.
	holdOpenWait = 20 * time.Second
	// openers is how many streams are opened at once.
	openers = 100
	// streamEndWait bounds the wait for every stream's last frame once
	// released.
	streamEndWait = 2 * time.Minute
	// slowNavigateTimeoutMs is the held navigates' options.timeout: more
	// than the slow page holds them (maxHold).
	slowNavigateTimeoutMs = 200_000
)

// sseResult is the sse scenario's figures.
type sseResult struct {
	Streams int `json:"streams"`
	// OpStreams are streamed navigates to the slow page, held by their
	// sessions' runners; StartStreams streamed starts (resumes) of a
	// session that waits for its Secret.
	OpStreams    int `json:"opStreams"`
	StartStreams int `json:"startStreams"`
	// Held is how many were open at once when counted; Finished how many
	// ended with a finished frame once released.
	Held       int     `json:"held"`
	Finished   int     `json:"finished"`
	Failed     int     `json:"failed"`
	FirstError string  `json:"firstError,omitempty"`
	OpenSecs   float64 `json:"openSeconds"`
	Memory     struct {
		IdleKiB int64 `json:"idleKiB"`
		// HeldKiB is the RSS with every stream open; MaxKiB the most
		// seen from the first stream to the last one's end.
		HeldKiB  int64 `json:"heldKiB"`
		MaxKiB   int64 `json:"maxKiB"`
		AfterKiB int64 `json:"afterKiB"`
	} `json:"memory"`
}

// streams tracks the open streams and how they ended.
type streams struct {
	open     atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	finished int
	failed   int
	first    string
}

// follow reads st to its end in the background, counting it open until
// then.
func (s *streams) follow(st *eventStream) {
	s.open.Add(1)
	s.wg.Go(func() {
		defer st.close()
		ok, last, err := st.until("finished")
		s.open.Add(-1)
		s.mu.Lock()
		defer s.mu.Unlock()
		if ok {
			s.finished++
			return
		}
		s.failed++
		if s.first == "" {
			if err != nil {
				last = err.Error()
			}
			s.first = last
		}
	})
}

// fail counts a stream that did not open.
func (s *streams) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed++
	if s.first == "" {
		s.first = err.Error()
	}
}

func runSSE(ctx context.Context, e *env, cfg config) (*sseResult, error) {
	res := &sseResult{Streams: cfg.streams}
	res.OpStreams = min(cfg.streams, cfg.streamSessions*opStreamsPerSession)
	res.StartStreams = cfg.streams - res.OpStreams
	var err error
	if res.Memory.IdleKiB, err = rssKiB(e.proc.PID); err != nil {
		return res, err
	}
	sessions := (res.OpStreams + opStreamsPerSession - 1) / opStreamsPerSession
	e.logf("sse: %d streamed navigates over %d sessions, %d streamed starts", res.OpStreams, sessions, res.StartStreams)
	ids, err := e.startAll(ctx, sessions, "")
	var hold string
	defer func() {
		e.pages.release()
		if hold != "" {
			ids = append(ids, hold)
		}
		e.endAll(ids)
		_ = e.quiesce(ctx, ids)
	}()
	if err != nil {
		return res, err
	}

	sampler := sampleRSS(ctx, e.proc.PID, rssInterval)
	var ss streams
	began := time.Now()
	// The operations first: each session's first navigate runs (the slow
	// page holds it), the others wait in its runner's queue behind it.
	left := res.OpStreams
	for i, id := range ids {
		n := min(left, opStreamsPerSession)
		left -= n
		if err := e.openOpStreams(ctx, &ss, id, i, n); err != nil {
			return res, err
		}
	}
	if res.StartStreams > 0 {
		if hold, err = e.createHeldSession(ctx); err != nil {
			return res, err
		}
		e.openStartStreams(ctx, &ss, hold, res.StartStreams)
	}
	res.OpenSecs = time.Since(began).Seconds()
	res.Held = int(ss.open.Load())
	if res.Memory.HeldKiB, err = rssKiB(e.proc.PID); err != nil {
		return res, err
	}
	e.logf("sse: %d streams open after %.1fs; releasing them", res.Held, res.OpenSecs)

	e.pages.release()
	if hold != "" {
		if err := e.releaseHeldSession(ctx, hold); err != nil {
			return res, err
		}
	}
	ended := make(chan struct{})
	go func() { ss.wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(streamEndWait):
		e.logf("sse: %d streams still open %s after their release", ss.open.Load(), streamEndWait)
	case <-ctx.Done():
	}
	if res.Memory.MaxKiB, err = sampler.Stop(); err != nil {
		return res, err
	}
	res.Memory.AfterKiB, _ = rssKiB(e.proc.PID)
	ss.mu.Lock()
	res.Finished, res.Failed, res.FirstError = ss.finished, ss.failed, ss.first
	ss.mu.Unlock()
	return res, ctx.Err()
}

// openOpStreams opens n streamed navigates to the slow page on session id
// (the i-th): the first, which the page holds, then the rest, which queue
// behind it.
func (e *env) openOpStreams(ctx context.Context, ss *streams, id string, i, n int) error {
	open := func(k int) error {
		body, _ := json.Marshal(map[string]any{
			"url":     e.pages.url(fmt.Sprintf("/slow?session=%d&call=%d", i, k)),
			"options": map[string]any{"timeout": slowNavigateTimeoutMs},
		})
		st, err := e.api.openStream(ctx, "/v1/sessions/"+id+"/navigate", string(body))
		if err != nil {
			ss.fail(err)
			return nil
		}
		if ok, last, err := st.until("connected"); !ok {
			st.close()
			ss.fail(errors.Join(err, errors.New(last)))
			return nil
		}
		ss.follow(st)
		return nil
	}
	if n == 0 {
		return nil
	}
	before := e.pages.arrived.Load()
	_ = open(0)
	// Held by the page: the runner's page operation is busy.
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := e.pages.waitArrived(wait, before+1); err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	var wg sync.WaitGroup
	for k := 1; k < n; k++ {
		wg.Go(func() { _ = open(k) })
	}
	wg.Wait()
	return nil
}

// createHeldSession creates a session as the API would for startBody with
// a model key, but not its Secret: the manager holds it Pending until the
// Secret comes (releaseHeldSession).
func (e *env) createHeldSession(ctx context.Context) (string, error) {
	req, err := defaultStart()
	if err != nil {
		return "", err
	}
	req.ModelAPIKey = "load-unused"
	name := uuid.NewString()
	bs, _, err := req.ToSession(name, e.namespace)
	if err != nil {
		return "", fmt.Errorf("mapping the held session: %w", err)
	}
	metav1.SetMetaDataLabel(&bs.ObjectMeta, "browserfleet.io/load", "held")
	if err := e.kube.Create(ctx, bs); err != nil {
		return "", fmt.Errorf("creating the held session: %w", err)
	}
	return name, nil
}

// releaseHeldSession creates the held session's Secret, owned by it: the
// session starts, and its streamed starts finish.
func (e *env) releaseHeldSession(ctx context.Context, name string) error {
	var bs v1alpha1.BrowserSession
	if err := e.kube.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: name}, &bs); err != nil {
		return fmt.Errorf("reading the held session: %w", err)
	}
	req, err := defaultStart()
	if err != nil {
		return err
	}
	req.ModelAPIKey = "load-unused"
	_, secret, err := req.ToSession(name, e.namespace)
	if err != nil || secret == nil {
		return fmt.Errorf("mapping the held session's Secret: %w", errors.Join(err, errors.New("no Secret")))
	}
	secret.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: "BrowserSession", Name: name, UID: bs.UID,
	}}
	if err := e.kube.Create(ctx, secret); err != nil {
		return fmt.Errorf("creating the held session's Secret: %w", err)
	}
	return nil
}

// openStartStreams opens n streamed starts that resume the held session,
// openers at a time, within holdOpenWait.
func (e *env) openStartStreams(ctx context.Context, ss *streams, hold string, n int) {
	body, _ := json.Marshal(map[string]any{"modelName": "openai/gpt-4.1-mini", "cloudSessionID": hold})
	wait, cancel := context.WithTimeout(ctx, holdOpenWait)
	defer cancel()
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	for range min(openers, n) {
		wg.Go(func() {
			for range jobs {
				// The stream outlives wait: it is read on ctx.
				st, err := e.api.openStream(ctx, "/v1/sessions/start", string(body))
				if err != nil {
					ss.fail(err)
					continue
				}
				if ok, last, err := st.until("connected"); !ok {
					st.close()
					ss.fail(errors.Join(err, errors.New(last)))
					continue
				}
				ss.follow(st)
			}
		})
	}
	sent := 0
feed:
	for sent < n {
		select {
		case jobs <- struct{}{}:
			sent++
		case <-wait.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if sent < n {
		e.logf("sse: opened %d of %d start streams within %s", sent, n, holdOpenWait)
		for range n - sent {
			ss.fail(fmt.Errorf("not opened within %s", holdOpenWait))
		}
	}
}

func (r *sseResult) print(w io.Writer) {
	table(w, fmt.Sprintf("sse: %d streams held open at once by one API process", r.Streams),
		[]string{"streams", "navigates (runner queues)", "starts (session waiting)", "held at once", "finished", "failed", "open s"},
		[]string{strconv.Itoa(r.Streams), strconv.Itoa(r.OpStreams), strconv.Itoa(r.StartStreams), strconv.Itoa(r.Held),
			strconv.Itoa(r.Finished), strconv.Itoa(r.Failed), f2(r.OpenSecs)})
	if r.FirstError != "" {
		fmt.Fprintf(w, "  first error: %s\n\n", r.FirstError)
	}
	m := r.Memory
	table(w, "sse: RSS of the API's process, MiB",
		[]string{"idle", "streams open", "max", "after"},
		[]string{mib(m.IdleKiB), mib(m.HeldKiB), mib(m.MaxKiB), mib(m.AfterKiB)})
}
