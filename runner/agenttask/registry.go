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

package agenttask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Bounds of a Registry.
const (
	// DefaultMaxFinished is how many finished tasks a Registry keeps, the
	// latest ones, for a manager that restarts to read their outcome.
	DefaultMaxFinished = 32
	// DefaultMaxFinishedBytes bounds the encoded states of the finished
	// tasks a Registry keeps; the latest finished task is kept whatever
	// its size.
	DefaultMaxFinishedBytes = 16 << 20
	// MaxStepTextBytes bounds each text of a step (reasoning, action,
	// pageText, instruction, pageUrl) as the Registry keeps it: a step
	// that read a whole page must not make the task's state grow without
	// end. The manager keeps 1024 bytes of each in the AgentTask's status.
	MaxStepTextBytes = 8 << 10
	// MaxSteps bounds the steps a task may ask for, as the AgentTask's
	// spec.executeOptions.maxSteps does.
	MaxSteps = 1000
)

// RunFunc runs a task's agent until it finishes, fails, or ctx ends, and
// calls onStep after each step, from one goroutine, indices counting from
// 0. ctx's cause says why it ended: a *rpc.Error with CANCELED (Cancel),
// TIMEOUT (the deadline) or the cause given to Stop. A failure should be an
// *rpc.Error; any other error fails the task with ENGINE_ERROR. The usage
// is what the run's model calls took, given on failures too.
type RunFunc func(ctx context.Context, onStep func(index int, step rpc.AgentAction, usage rpc.Usage)) (*rpc.AgentResult, rpc.Usage, error)

// Options configure a Registry.
type Options struct {
	// MaxFinished bounds the finished tasks kept; 0 is DefaultMaxFinished.
	MaxFinished int
	// MaxFinishedBytes bounds their encoded states; 0 is
	// DefaultMaxFinishedBytes.
	MaxFinishedBytes int
	// Logger receives a line per task start, step and end; nil discards
	// them. It never receives a task's request.
	Logger *slog.Logger
}

// Registry keeps a session's agent tasks by UID: the one that runs, and
// the latest finished ones. At most one task runs at a time. A task's run
// belongs to the Registry, not to the request that started it: a caller
// that goes away leaves it running. It is safe for concurrent use.
type Registry struct {
	maxFinished, maxFinishedBytes int
	log                           *slog.Logger

	mu    sync.Mutex
	tasks map[string]*task
	// running is the task that runs, nil when none does.
	running *task
	// finished holds the finished tasks kept, oldest first.
	finished []*task
	finBytes int
	// stopped, once set, refuses new tasks with it.
	stopped *rpc.Error
}

// task is one task. Its state is guarded by the Registry's mu.
type task struct {
	state  rpc.AgentTaskState
	cancel context.CancelCauseFunc
	// changed is closed, and replaced, at each step and at the end.
	changed chan struct{}
	// done is closed once the task is over.
	done chan struct{}
	// size is the encoded state's, once the task is over.
	size int
}

// New returns an empty Registry.
func New(opts Options) *Registry {
	r := &Registry{
		maxFinished:      opts.MaxFinished,
		maxFinishedBytes: opts.MaxFinishedBytes,
		log:              opts.Logger,
		tasks:            map[string]*task{},
	}
	if r.maxFinished <= 0 {
		r.maxFinished = DefaultMaxFinished
	}
	if r.maxFinishedBytes <= 0 {
		r.maxFinishedBytes = DefaultMaxFinishedBytes
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// ErrCancelled is the cause of a task's context once Cancel stopped it.
var ErrCancelled = rpc.Errorf(rpc.CodeCanceled, "the agent task was cancelled")

// Start starts the task uid with run, unless the Registry has it already:
// then it answers that task's state and created false, and run is not
// called. While another task runs it fails with AGENT_BUSY, and after Stop
// with Stop's cause. A deadline over 0 ends the run with TIMEOUT once it
// passed, counted from now.
func (r *Registry) Start(uid string, deadline time.Duration, run RunFunc) (state rpc.AgentTaskState, created bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.tasks[uid]; ok {
		return t.snapshot(), false, nil
	}
	if r.stopped != nil {
		return rpc.AgentTaskState{}, false, r.stopped
	}
	if r.running != nil {
		return rpc.AgentTaskState{}, false, rpc.Errorf(rpc.CodeAgentBusy,
			"another agent task (%s) runs in the session; one runs at a time", r.running.state.UID)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	var stopDeadline context.CancelFunc = func() {}
	if deadline > 0 {
		ctx, stopDeadline = context.WithTimeoutCause(ctx, deadline,
			rpc.Errorf(rpc.CodeTimeout, "the agent task did not finish within its deadline of %v", deadline))
	}
	t := &task{
		state: rpc.AgentTaskState{
			UID: uid, Phase: rpc.AgentTaskRunning, Actions: []rpc.AgentAction{}, StartedAt: time.Now().UTC(),
		},
		cancel:  cancel,
		changed: make(chan struct{}),
		done:    make(chan struct{}),
	}
	r.tasks[uid] = t
	r.running = t
	r.log.Info("agent task started", "task", uid, "deadline", deadline.String())
	go func() {
		defer cancel(nil)
		defer stopDeadline()
		res, usage, err := run(ctx, func(index int, step rpc.AgentAction, usage rpc.Usage) {
			r.step(t, index, step, usage)
		})
		r.finish(ctx, t, res, usage, err)
	}()
	return t.snapshot(), true, nil
}

// step adds a step to t.
func (r *Registry) step(t *task, index int, step rpc.AgentAction, usage rpc.Usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.state.Phase.Over() {
		return
	}
	if index != len(t.state.Actions) {
		// The agent numbers its steps itself; a step out of order
		// would make followers that count steps skip or repeat one.
		r.log.Warn("agent step out of order; appended as the next", "task", t.state.UID, "index", index, "next", len(t.state.Actions))
	}
	t.state.Actions = append(t.state.Actions, boundedStep(step))
	t.state.Steps = len(t.state.Actions)
	t.state.Usage = usage
	r.log.Info("agent step", "task", t.state.UID, "index", t.state.Steps-1, "type", truncate(step.Type, 64), "timeMs", step.TimeMs)
	t.broadcast()
}

// finish ends t with its run's outcome.
func (r *Registry) finish(ctx context.Context, t *task, res *rpc.AgentResult, usage rpc.Usage, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &t.state
	s.FinishedAt = time.Now().UTC()
	if usage != (rpc.Usage{}) {
		s.Usage = usage
	}
	switch {
	case err == nil && res == nil:
		s.Phase, s.Error = rpc.AgentTaskFailed, rpc.Errorf(rpc.CodeInternal, "the agent ended without a result")
	case err == nil:
		s.Phase, s.Result = rpc.AgentTaskSucceeded, res
	case errors.Is(context.Cause(ctx), ErrCancelled):
		// Whatever the run made of its cancellation (it may report the
		// cause, or a context error), the task was cancelled.
		s.Phase, s.Error = rpc.AgentTaskCancelled, ErrCancelled
	default:
		var e *rpc.Error
		if !errors.As(err, &e) {
			e = rpc.Errorf(rpc.CodeEngineError, "%s", err.Error())
		}
		s.Phase, s.Error = rpc.AgentTaskFailed, e
	}
	attrs := []any{"task", s.UID, "phase", s.Phase, "steps", s.Steps,
		"durationMs", s.FinishedAt.Sub(s.StartedAt).Milliseconds(),
		"inputTokens", s.Usage.InputTokens, "outputTokens", s.Usage.OutputTokens}
	if s.Error != nil {
		attrs = append(attrs, "code", s.Error.Code, "error", s.Error.Message)
	}
	r.log.Info("agent task over", attrs...)

	if raw, merr := json.Marshal(s); merr == nil {
		t.size = len(raw)
	}
	if r.running == t {
		r.running = nil
	}
	r.finished = append(r.finished, t)
	r.finBytes += t.size
	r.evict()
	t.broadcast()
	close(t.done)
}

// evict drops the oldest finished tasks beyond the bounds; the latest is
// always kept.
func (r *Registry) evict() {
	drop := 0
	for len(r.finished)-drop > 1 && (len(r.finished)-drop > r.maxFinished || r.finBytes > r.maxFinishedBytes) {
		old := r.finished[drop]
		r.finBytes -= old.size
		delete(r.tasks, old.state.UID)
		drop++
	}
	if drop > 0 {
		r.finished = slices.Delete(r.finished, 0, drop)
	}
}

func (t *task) broadcast() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// snapshot is a copy of t's state that later steps leave alone.
func (t *task) snapshot() rpc.AgentTaskState {
	s := t.state
	s.Actions = slices.Clone(s.Actions)
	if s.Actions == nil {
		s.Actions = []rpc.AgentAction{}
	}
	return s
}

// Get returns the state of the task uid.
func (r *Registry) Get(uid string) (rpc.AgentTaskState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tasks[uid]
	if !ok {
		return rpc.AgentTaskState{}, false
	}
	return t.snapshot(), true
}

// errNotFound is what a call about a task the Registry does not have (or
// no longer has) gets.
func errNotFound(uid string) *rpc.Error {
	return rpc.Errorf(rpc.CodeNotFound, "no agent task %s in this runner", uid)
}

// Cancel stops the task uid if it runs, and waits until its run has
// returned or ctx ends; it returns the task's state then. A task that is
// over is left as it is.
func (r *Registry) Cancel(ctx context.Context, uid string) (rpc.AgentTaskState, error) {
	r.mu.Lock()
	t, ok := r.tasks[uid]
	if !ok {
		r.mu.Unlock()
		return rpc.AgentTaskState{}, errNotFound(uid)
	}
	if !t.state.Phase.Over() {
		r.log.Info("agent task cancelled", "task", uid)
		t.cancel(ErrCancelled)
	}
	r.mu.Unlock()
	select {
	case <-t.done:
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.snapshot(), nil
}

// Follow sends the task uid's steps from index from on, each as soon as
// the task has it, then its final state, and returns nil; it returns
// send's error, or ctx's once ctx ends first. The task does not wait for
// its followers.
func (r *Registry) Follow(ctx context.Context, uid string, from int, send func(rpc.AgentTaskEvent) error) error {
	r.mu.Lock()
	t, ok := r.tasks[uid]
	r.mu.Unlock()
	if !ok {
		return errNotFound(uid)
	}
	next := max(from, 0)
	for {
		r.mu.Lock()
		var steps []rpc.AgentAction
		if next < len(t.state.Actions) {
			steps = slices.Clone(t.state.Actions[next:])
		}
		over := t.state.Phase.Over()
		var final rpc.AgentTaskState
		if over {
			final = t.snapshot()
		}
		changed := t.changed
		r.mu.Unlock()

		for i := range steps {
			if err := send(rpc.AgentTaskEvent{Step: &steps[i], Index: next + i}); err != nil {
				return err
			}
		}
		next += len(steps)
		if over {
			return send(rpc.AgentTaskEvent{State: &final, Index: final.Steps})
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("following agent task %s: %w", uid, ctx.Err())
		}
	}
}

// Stop refuses new tasks with cause and stops the one that runs with it.
// It does not wait.
func (r *Registry) Stop(cause *rpc.Error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = cause
	if r.running != nil {
		r.running.cancel(cause)
	}
}

// Wait waits until no task runs, or ctx ends.
func (r *Registry) Wait(ctx context.Context) error {
	r.mu.Lock()
	t := r.running
	r.mu.Unlock()
	if t == nil {
		return nil
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for agent task %s: %w", t.state.UID, ctx.Err())
	}
}

// boundedStep is step with each text at most MaxStepTextBytes.
func boundedStep(s rpc.AgentAction) rpc.AgentAction {
	s.Type = truncate(s.Type, MaxStepTextBytes)
	s.Reasoning = truncate(s.Reasoning, MaxStepTextBytes)
	s.Action = truncate(s.Action, MaxStepTextBytes)
	s.PageText = truncate(s.PageText, MaxStepTextBytes)
	s.PageURL = truncate(s.PageURL, MaxStepTextBytes)
	s.Instruction = truncate(s.Instruction, MaxStepTextBytes)
	return s
}

// truncate cuts s to at most n bytes at a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
