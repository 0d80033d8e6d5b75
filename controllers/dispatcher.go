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
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/runnertoken"
)

// TaskConfig holds the manager's AgentTask settings: the tasks section of
// its Configuration file, and the dispatcher's fixed bounds.
type TaskConfig struct {
	// DefaultActiveDeadline bounds the run of a task whose spec sets no
	// activeDeadlineSeconds.
	DefaultActiveDeadline time.Duration
	// MaxRunning is how many tasks the dispatcher starts and follows at
	// once; more wait for a slot.
	MaxRunning int
	// RunnerAttempts is how many calls in a row may fail to reach a runner
	// (or find it starting or stopping) before the dispatcher gives up on
	// it: the task fails AgentUnavailable, or a cancellation is dropped.
	RunnerAttempts int
	// RetryBackoff is the wait after the first failed attempt; it doubles
	// after each, up to MaxRetryBackoff.
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// CallTimeout bounds each runner call but the follow, which streams
	// for as long as the task runs.
	CallTimeout time.Duration
	// DeadlineGrace is how long past a task's deadline the manager waits
	// for the runner to report the end (the runner stops the agent at the
	// deadline) before it fails the task DeadlineExceeded itself.
	DeadlineGrace time.Duration
	// StatusInterval is the least time between two status writes of a
	// running task that only report progress (steps, actions, usage); a
	// change of phase is written at once.
	StatusInterval time.Duration
}

// The dispatcher's fixed bounds (docs/agent.md, "Dispatch").
const (
	DefaultRunnerAttempts  = 5
	DefaultRetryBackoff    = time.Second
	DefaultMaxRetryBackoff = 15 * time.Second
	// DefaultCallTimeout leaves room for a DELETE, which the runner
	// answers once the run has stopped (within 30 s).
	DefaultCallTimeout    = 45 * time.Second
	DefaultDeadlineGrace  = 30 * time.Second
	DefaultStatusInterval = time.Second
)

// validate checks that every bound is set: a zero one would retry
// forever, or never.
func (c *TaskConfig) validate() error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"DefaultActiveDeadline", c.DefaultActiveDeadline}, {"RetryBackoff", c.RetryBackoff}, {"MaxRetryBackoff", c.MaxRetryBackoff},
		{"CallTimeout", c.CallTimeout}, {"DeadlineGrace", c.DeadlineGrace}, {"StatusInterval", c.StatusInterval},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("tasks: %s %s is not positive", d.name, d.v))
		}
	}
	if c.MaxRunning < 1 {
		errs = append(errs, fmt.Errorf("tasks: MaxRunning %d is below 1", c.MaxRunning))
	}
	if c.RunnerAttempts < 1 {
		errs = append(errs, fmt.Errorf("tasks: RunnerAttempts %d is below 1", c.RunnerAttempts))
	}
	return errors.Join(errs...)
}

// runStage is where the dispatcher stands with one task.
type runStage int

const (
	// stageQueued: no slot is free (TaskConfig.MaxRunning).
	stageQueued runStage = iota
	// stageStarting: reading the task's Secrets and calling the runner.
	stageStarting
	// stageBusy: the runner runs another task; the dispatcher asks again.
	stageBusy
	// stageRunning: the runner has the task; the dispatcher follows it.
	stageRunning
	// stageOver: the runner reported the task's end (taskView.Final).
	stageOver
	// stageFailed: the dispatcher gave up on the task (Reason, Message).
	stageFailed
	// stageCancelled: the runner stopped the task, or never had it.
	stageCancelled
	// stageCancelFailed: the runner could not be told to stop the task.
	stageCancelFailed
)

// taskView is what the dispatcher knows of one task: a copy, for
// Reconcile to write into the status.
type taskView struct {
	Stage runStage
	// Dispatched says the runner has accepted the task.
	Dispatched bool
	StartedAt  time.Time
	// Steps is how many steps the agent has taken.
	Steps int
	// Actions are the latest steps, at most v1alpha1.MaxStatusActions.
	Actions []rpc.AgentAction
	Usage   rpc.Usage
	// Final is the runner's final state (its Actions left out) once the
	// task is over, or once a cancellation answered it.
	Final *rpc.AgentTaskState
	// Reason and Message say why the dispatcher gave up (stageFailed:
	// Reason is a v1alpha1.AgentTaskReason*), could not cancel, or, while
	// it retries, what failed last.
	Reason, Message string
}

// dispatchJob is what the dispatcher needs to run one task.
type dispatchJob struct {
	task    *v1alpha1.AgentTask
	session *v1alpha1.BrowserSession
	// attach says the task's status has it dispatched: the dispatcher
	// follows it and never starts it (a runner that lost it would run it
	// again from the start).
	attach bool
	// deadline is the task's active deadline.
	deadline time.Duration
}

// taskRun is the dispatcher's record of one task.
type taskRun struct {
	key types.NamespacedName
	uid types.UID
	job dispatchJob
	// ctx is the run's life: forget and the manager's stop end it.
	ctx    context.Context
	cancel context.CancelFunc
	// follow ends the following when the task is to be cancelled.
	follow     context.Context
	stopFollow context.CancelFunc

	// Guarded by Dispatcher.mu.
	started         bool
	cancelRequested bool
	view            taskView
}

// Dispatcher calls runners on behalf of the AgentTask controller, so that
// Reconcile never waits on the network: it starts each task in its
// session's runner, follows its steps, keeps the latest state in memory
// and wakes the controller on every change; it stops a task in the runner
// when the task is deleted. One goroutine per task, at most
// TaskConfig.MaxRunning at once (cancellations, which are short, besides).
// It runs on the leader only.
type Dispatcher struct {
	reader client.Reader
	cfg    TaskConfig
	log    logr.Logger

	base context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu      sync.Mutex
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
	runs    map[types.UID]*taskRun
	running int
	waiting []*taskRun
}

// NewDispatcher returns a dispatcher that reads Secrets with reader (past
// the cache) and calls runners with the runner RPC's client.
func NewDispatcher(reader client.Reader, cfg TaskConfig, log logr.Logger) *Dispatcher {
	// The workers outlive the Reconcile that starts them; Start ends them
	// with the manager.
	base, stop := context.WithCancel(context.Background())
	return &Dispatcher{
		reader: reader, cfg: cfg, log: log,
		base: base, stop: stop, runs: map[types.UID]*taskRun{},
	}
}

// Start waits for the manager to stop, then stops every worker and waits
// for them.
func (d *Dispatcher) Start(ctx context.Context) error {
	<-ctx.Done()
	d.stop()
	d.wg.Wait()
	return nil
}

// NeedLeaderElection keeps the dispatcher to the leader, with the
// controller it serves.
func (d *Dispatcher) NeedLeaderElection() bool { return true }

// Source is the controller's source of the dispatcher's wake-ups: a change
// of a task's view enqueues the task.
func (d *Dispatcher) Source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.queue = q
		return nil
	})
}

func (d *Dispatcher) notify(key types.NamespacedName) {
	d.mu.Lock()
	q := d.queue
	d.mu.Unlock()
	if q != nil {
		q.Add(reconcile.Request{NamespacedName: key})
	}
}

// viewOf returns what the dispatcher knows of the task.
func (d *Dispatcher) viewOf(uid types.UID) (taskView, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.runs[uid]
	if !ok {
		return taskView{}, false
	}
	return r.view.clone(), true
}

// dispatch starts running the job's task, or follows it if job.attach, and
// returns the task's view; a task the dispatcher already has is left as
// it is.
func (d *Dispatcher) dispatch(job dispatchJob) taskView {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.runs[job.task.UID]; ok {
		return r.view.clone()
	}
	r := d.newRunLocked(job)
	if job.attach {
		st := &job.task.Status
		r.view.Dispatched = true
		r.view.Steps = int(st.Steps)
		// The status's latest steps start the window the follow adds to.
		for _, a := range st.Actions {
			r.view.Actions = append(r.view.Actions, rpc.AgentAction{
				Type: a.Type, Reasoning: a.Reasoning, TaskCompleted: ptr.Deref(a.TaskCompleted, false), Action: a.Action,
				TimeMs: a.TimeMs, PageText: a.PageText, PageURL: a.PageURL, Instruction: a.Instruction,
			})
		}
		if st.StartTime != nil {
			r.view.StartedAt = st.StartTime.Time
		}
	}
	if d.running >= d.cfg.MaxRunning {
		r.view.Stage = stageQueued
		d.waiting = append(d.waiting, r)
		return r.view.clone()
	}
	d.startLocked(r, false)
	return r.view.clone()
}

// cancelTask stops the job's task in its runner and returns the task's view:
// stageCancelled once the runner stopped it (or never had it),
// stageCancelFailed once the dispatcher gave up; a task already over is
// left as it is.
func (d *Dispatcher) cancelTask(job dispatchJob) taskView {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.runs[job.task.UID]
	if !ok {
		r = d.newRunLocked(job)
		r.cancelRequested = true
		d.startLocked(r, true)
		return r.view.clone()
	}
	if r.cancelRequested || r.view.Stage >= stageOver {
		return r.view.clone()
	}
	r.cancelRequested = true
	r.stopFollow()
	if !r.started {
		d.waiting = slices.DeleteFunc(d.waiting, func(w *taskRun) bool { return w == r })
		if !r.job.attach {
			// Queued before any call: the runner never had it.
			r.view.Stage = stageCancelled
			return r.view.clone()
		}
		d.startLocked(r, true)
	}
	return r.view.clone()
}

// forget drops the task: its worker stops and its view goes.
func (d *Dispatcher) forget(uid types.UID) {
	d.mu.Lock()
	r, ok := d.runs[uid]
	if ok {
		delete(d.runs, uid)
		d.waiting = slices.DeleteFunc(d.waiting, func(w *taskRun) bool { return w == r })
	}
	d.mu.Unlock()
	if ok {
		r.cancel()
	}
}

// forgetKey drops the task of that name, whatever its UID: for a task
// that is gone.
func (d *Dispatcher) forgetKey(key types.NamespacedName) {
	d.mu.Lock()
	var uids []types.UID
	for uid, r := range d.runs {
		if r.key == key {
			uids = append(uids, uid)
		}
	}
	d.mu.Unlock()
	for _, uid := range uids {
		d.forget(uid)
	}
}

func (d *Dispatcher) newRunLocked(job dispatchJob) *taskRun {
	ctx, cancel := context.WithCancel(d.base)
	follow, stopFollow := context.WithCancel(ctx)
	r := &taskRun{
		key: client.ObjectKeyFromObject(job.task), uid: job.task.UID, job: job,
		ctx: ctx, cancel: cancel, follow: follow, stopFollow: stopFollow,
		view: taskView{Stage: stageStarting},
	}
	d.runs[r.uid] = r
	return r
}

// startLocked starts the run's worker; a cancellation's takes no slot.
func (d *Dispatcher) startLocked(r *taskRun, cancelOnly bool) {
	r.started = true
	if !cancelOnly {
		d.running++
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.work(r, cancelOnly)
		if !cancelOnly {
			d.release()
		}
	}()
}

// release frees a slot and gives it to the first task waiting for one.
func (d *Dispatcher) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running--
	if len(d.waiting) == 0 || d.base.Err() != nil {
		return
	}
	next := d.waiting[0]
	d.waiting = d.waiting[1:]
	next.view.Stage = stageStarting
	d.startLocked(next, false)
}

// update changes the run's view and wakes the controller.
func (d *Dispatcher) update(r *taskRun, change func(v *taskView)) {
	d.mu.Lock()
	change(&r.view)
	d.mu.Unlock()
	d.notify(r.key)
}

func (d *Dispatcher) cancelRequested(r *taskRun) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return r.cancelRequested
}

// work runs one task: start it in the runner (unless it attaches), follow
// it to its end, and stop it there if it is cancelled meanwhile.
func (d *Dispatcher) work(r *taskRun, cancelOnly bool) {
	log := d.log.WithValues("namespace", r.key.Namespace, "task", r.key.Name, "session", r.job.session.Name)
	runner, err := d.runnerOf(r)
	if err != nil {
		log.Info("cannot call the session's runner", "error", err.Error())
		d.update(r, func(v *taskView) {
			if cancelOnly {
				v.Stage, v.Message = stageCancelFailed, err.Error()
				return
			}
			v.Stage, v.Reason, v.Message = stageFailed, v1alpha1.AgentTaskReasonAgentUnavailable, err.Error()
		})
		return
	}
	if cancelOnly {
		d.cancelInRunner(r, runner, log)
		return
	}
	if !r.job.attach {
		if !d.start(r, runner, log) {
			return
		}
	}
	d.followTask(r, runner, log)
}

// runnerOf returns a client of the task's session's runner.
func (d *Dispatcher) runnerOf(r *taskRun) (*rpc.Client, error) {
	s := r.job.session
	if s.Status.Endpoint == "" {
		return nil, fmt.Errorf("BrowserSession %q has no runner endpoint", s.Name)
	}
	var last error
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(r.ctx, d.cfg.CallTimeout)
		tok, err := runnertoken.Read(ctx, d.reader, s)
		cancel()
		switch {
		case err == nil:
			return rpc.NewClient(s.Status.Endpoint, tok, nil), nil
		case errors.Is(err, runnertoken.ErrMissing):
			return nil, fmt.Errorf("the runner of BrowserSession %q cannot be called: %w", s.Name, err)
		}
		last = err
		if attempt >= d.cfg.RunnerAttempts || !d.wait(r.ctx, attempt) {
			return nil, fmt.Errorf("reading the runner token of BrowserSession %q: %w", s.Name, last)
		}
	}
}

// start starts the task in the runner. It reports whether to follow it.
func (d *Dispatcher) start(r *taskRun, runner *rpc.Client, log logr.Logger) bool {
	seconds := int(math.Ceil(r.job.deadline.Seconds()))
	ctx, cancel := context.WithTimeout(r.ctx, d.cfg.CallTimeout)
	req, err := agentRequest(ctx, d.reader, r.job.task, r.job.session, seconds)
	cancel()
	if err != nil {
		var sp *secretProblem
		reason := v1alpha1.AgentTaskReasonAgentUnavailable
		msg := fmt.Sprintf("reading the task's Secrets: %v", err)
		if errors.As(err, &sp) {
			reason, msg = v1alpha1.AgentTaskReasonSecretNotAllowed, sp.message
		}
		if r.ctx.Err() == nil {
			d.update(r, func(v *taskView) { v.Stage, v.Reason, v.Message = stageFailed, reason, msg })
		}
		return false
	}
	name := r.job.session.Name
	failures := 0
	for busy, attempted := 1, false; ; attempted = true {
		if d.cancelRequested(r) {
			if !attempted {
				d.update(r, func(v *taskView) { v.Stage, v.Message = stageCancelled, "" })
				return false
			}
			// An attempt that failed on the way back may have reached
			// the runner all the same.
			d.cancelInRunner(r, runner, log)
			return false
		}
		ctx, cancel := context.WithTimeout(r.ctx, d.cfg.CallTimeout)
		st, _, err := runner.StartAgentTask(ctx, *req)
		cancel()
		if err == nil {
			log.Info("agent task dispatched", "steps", st.Steps, "phase", st.Phase)
			d.update(r, func(v *taskView) {
				v.Stage, v.Dispatched, v.Message = stageRunning, true, ""
				v.StartedAt = st.StartedAt
				v.take(st)
			})
			if d.cancelRequested(r) {
				// Deleted while the call was under way: the runner has it
				// now, and is to stop it.
				d.cancelInRunner(r, runner, log)
				return false
			}
			return !st.Phase.Over()
		}
		if r.ctx.Err() != nil {
			return false
		}
		switch code := rpc.CodeOf(err); {
		case code == rpc.CodeAgentBusy || code == rpc.CodeSessionBusy:
			// Another task runs in the session (one stopping after its
			// deletion), or the page's queue is full; the runner bounds
			// both, by the task's deadline and the operations' timeouts.
			d.update(r, func(v *taskView) { v.Stage, v.Message = stageBusy, err.Error() })
			d.wait(r.follow, busy) // cancelled: the loop's head sees it
			busy++
		case retryable(code):
			failures++
			log.Info("runner not reachable, retrying", "attempt", failures, "error", err.Error())
			if failures >= d.cfg.RunnerAttempts {
				d.update(r, func(v *taskView) {
					v.Stage, v.Reason = stageFailed, v1alpha1.AgentTaskReasonAgentUnavailable
					v.Message = fmt.Sprintf("the runner of BrowserSession %q could not be reached in %d attempts; the last failed with %v", name, failures, err)
				})
				return false
			}
			d.update(r, func(v *taskView) { v.Stage, v.Message = stageStarting, err.Error() })
			d.wait(r.follow, failures)
		default:
			d.update(r, func(v *taskView) {
				v.Stage, v.Reason = stageFailed, v1alpha1.AgentTaskReasonAgentUnavailable
				v.Message = fmt.Sprintf("the runner of BrowserSession %q refused the task: %v", name, err)
			})
			return false
		}
	}
}

// followTask follows the task from the step the dispatcher knows to its
// end, following again when the stream breaks.
func (d *Dispatcher) followTask(r *taskRun, runner *rpc.Client, log logr.Logger) {
	name := r.job.session.Name
	uid := string(r.uid)
	failures := 0
	for {
		d.mu.Lock()
		from := r.view.Steps
		d.mu.Unlock()
		var st *rpc.AgentTaskState
		err := runner.FollowAgentTask(r.follow, uid, from, func(ev rpc.AgentTaskEvent) error {
			if ev.State != nil {
				st = ev.State
				return nil
			}
			failures = 0
			d.update(r, func(v *taskView) { v.addStep(ev.Index, *ev.Step) })
			return nil
		})
		if err == nil && st != nil {
			log.Info("agent task over", "phase", st.Phase, "steps", st.Steps)
			d.update(r, func(v *taskView) {
				v.take(st)
				v.Stage, v.Message = stageOver, ""
			})
			return
		}
		if r.ctx.Err() != nil {
			return
		}
		if r.follow.Err() != nil {
			d.cancelInRunner(r, runner, log)
			return
		}
		switch code := rpc.CodeOf(err); {
		case code == rpc.CodeNotFound:
			d.update(r, func(v *taskView) {
				v.Stage, v.Reason = stageFailed, v1alpha1.AgentTaskReasonAgentUnavailable
				v.Message = fmt.Sprintf("the runner of BrowserSession %q no longer has the task: it restarted since the task was dispatched, and the agent's work after step %d is lost", name, v.Steps)
			})
			return
		case retryable(code):
			failures++
			log.Info("lost the runner, following again", "attempt", failures, "error", err.Error())
			if failures >= d.cfg.RunnerAttempts {
				d.update(r, func(v *taskView) {
					v.Stage, v.Reason = stageFailed, v1alpha1.AgentTaskReasonAgentUnavailable
					v.Message = fmt.Sprintf("lost the runner of BrowserSession %q after step %d: %d attempts to reach it failed; the last with %v", name, v.Steps, failures, err)
				})
				return
			}
			d.update(r, func(v *taskView) { v.Message = err.Error() })
			if !d.wait(r.follow, failures) && r.ctx.Err() == nil {
				d.cancelInRunner(r, runner, log)
				return
			}
		default:
			d.update(r, func(v *taskView) {
				v.Stage, v.Reason = stageFailed, v1alpha1.AgentTaskReasonAgentUnavailable
				v.Message = fmt.Sprintf("the runner of BrowserSession %q refused to report the task: %v", name, err)
			})
			return
		}
	}
}

// cancelInRunner stops the task in the runner, trying RunnerAttempts times.
func (d *Dispatcher) cancelInRunner(r *taskRun, runner *rpc.Client, log logr.Logger) {
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(r.ctx, d.cfg.CallTimeout)
		st, err := runner.CancelAgentTask(ctx, string(r.uid))
		cancel()
		switch code := rpc.CodeOf(err); {
		case err == nil:
			log.Info("agent task stopped in the runner", "phase", st.Phase, "steps", st.Steps)
			d.update(r, func(v *taskView) {
				v.take(st)
				v.Stage, v.Message = stageCancelled, ""
			})
			return
		case code == rpc.CodeNotFound:
			d.update(r, func(v *taskView) { v.Stage, v.Message = stageCancelled, "" })
			return
		case r.ctx.Err() != nil:
			return
		case !retryable(code) || attempt >= d.cfg.RunnerAttempts:
			log.Info("could not stop the agent task in the runner", "attempts", attempt, "error", err.Error())
			d.update(r, func(v *taskView) {
				v.Stage = stageCancelFailed
				v.Message = fmt.Sprintf("the runner of BrowserSession %q could not be told to stop the agent (%d attempts; the last failed with %v); the runner stops it at its deadline", r.job.session.Name, attempt, err)
			})
			return
		}
		d.wait(r.ctx, attempt)
	}
}

// retryable says whether a runner call that failed with code may succeed
// when made again: the runner could not be reached, or was starting or
// stopping (then the session's own state settles the task).
func retryable(code rpc.ErrorCode) bool {
	switch code {
	case rpc.CodeRunnerUnreachable, rpc.CodeBrowserStarting, rpc.CodeShuttingDown, rpc.CodeBrowserCrashed, rpc.CodeInternal:
		return true
	}
	return false
}

// backoffDelay is the wait after the attempt-th failure: RetryBackoff,
// doubling, at most MaxRetryBackoff.
func (d *Dispatcher) backoffDelay(attempt int) time.Duration {
	wait := d.cfg.RetryBackoff
	for i := 1; i < attempt && wait < d.cfg.MaxRetryBackoff; i++ {
		wait *= 2
	}
	return min(wait, d.cfg.MaxRetryBackoff)
}

// wait waits out the attempt-th backoff; false if ctx ended first.
func (d *Dispatcher) wait(ctx context.Context, attempt int) bool {
	t := time.NewTimer(d.backoffDelay(attempt))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// take records a state the runner answered.
func (v *taskView) take(st *rpc.AgentTaskState) {
	if st.Steps >= v.Steps {
		v.Steps = st.Steps
		v.Actions = latestActions(st.Actions)
	}
	v.Usage = st.Usage
	if v.StartedAt.IsZero() {
		v.StartedAt = st.StartedAt
	}
	if st.Phase.Over() {
		final := *st
		final.Actions = nil
		v.Final = &final
	}
}

// addStep records the step at index; one the view has is ignored.
func (v *taskView) addStep(index int, step rpc.AgentAction) {
	if index < v.Steps {
		return
	}
	v.Steps = index + 1
	v.Actions = latestActions(append(v.Actions, step))
}

// latestActions keeps the last MaxStatusActions of actions, in a slice of
// its own.
func latestActions(actions []rpc.AgentAction) []rpc.AgentAction {
	if n := len(actions) - v1alpha1.MaxStatusActions; n > 0 {
		actions = actions[n:]
	}
	return slices.Clone(actions)
}

func (v taskView) clone() taskView {
	v.Actions = slices.Clone(v.Actions)
	if v.Final != nil {
		f := *v.Final
		v.Final = &f
	}
	return v
}
