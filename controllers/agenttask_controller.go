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
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// AgentTaskReconciler runs each AgentTask in its session's runner: it
// queues the session's tasks (one runs at a time, the oldest first), hands
// the one whose turn it is to the Dispatcher, which calls the runner, and
// writes what the Dispatcher learns into the status. It settles a task its
// session cannot run, and stops a deleted one in the runner.
type AgentTaskReconciler struct {
	Client client.Client
	// APIReader reads past the cache, so that a session created a moment
	// before its task is not taken for a missing one.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// SessionWait is how long a task waits for a session that does not
	// exist yet, so that applying a task and its session together works in
	// either order.
	SessionWait time.Duration
	// SecretWait is how long a task waits for the Secrets it references to
	// exist and opt in (v1alpha1.LabelSessionSecret) before it fails.
	SecretWait time.Duration
	// Tasks bounds the runs.
	Tasks TaskConfig
	// Dispatcher makes the runner calls.
	Dispatcher *Dispatcher

	// progressWrites is when each running task's status was last written,
	// to throttle progress writes (TaskConfig.StatusInterval).
	mu             sync.Mutex
	progressWrites map[types.NamespacedName]progressWrite
}

// progressWrite is when a running task's status was last written.
type progressWrite struct {
	uid types.UID
	at  time.Time
}

// +kubebuilder:rbac:groups=browserfleet.io,resources=agenttasks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=browserfleet.io,resources=agenttasks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=browserfleet.io,resources=agenttasks/finalizers,verbs=update

// Reconcile moves one AgentTask along: waiting, dispatched, following,
// settled; or, once deleted, stopped in the runner.
func (r *AgentTaskReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	task := &v1alpha1.AgentTask{}
	if err := r.Client.Get(ctx, req.NamespacedName, task); err != nil {
		if apierrors.IsNotFound(err) {
			r.Dispatcher.forgetKey(req.NamespacedName)
			r.forgetWrites(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !task.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, task)
	}
	if agentTaskOver(&task.Status) {
		// Settled by an earlier pass (or another manager) whose finalizer
		// removal did not go through.
		r.Dispatcher.forget(task.UID)
		return ctrl.Result{}, r.removeFinalizer(ctx, task)
	}
	return r.reconcile(ctx, task)
}

func (r *AgentTaskReconciler) reconcile(ctx context.Context, task *v1alpha1.AgentTask) (ctrl.Result, error) {
	session, found, err := r.getSession(ctx, task)
	if err != nil {
		return ctrl.Result{}, err
	}
	if found {
		if err := r.ensureOwner(ctx, task, session); err != nil {
			return ctrl.Result{}, err
		}
	}
	orig := task.DeepCopy()
	now := r.Clock.Now()
	view, have := r.Dispatcher.viewOf(task.UID)
	dispatched := taskDispatched(&task.Status) || (have && view.Dispatched)

	var result ctrl.Result
	switch {
	case have && view.Stage == stageOver:
		deadline, source := r.deadlineOf(task)
		r.finishFromRunner(task, &view, deadline, source)
	case have && view.Stage == stageFailed:
		setProgress(&task.Status, &view)
		r.finish(task, v1alpha1.AgentTaskConditionFailed, view.Reason, view.Message)
	case found && sessionSettlesTask(session):
		if have {
			setProgress(&task.Status, &view)
		}
		r.settle(task, session)
	case dispatched:
		result = r.follow(task, session, found, now)
	default:
		var done bool
		if result, done, err = r.await(ctx, task, session, found, now); err != nil || done {
			return result, err
		}
	}

	if wait, ok := r.throttle(orig, task, now); ok {
		return ctrl.Result{RequeueAfter: shortest(result.RequeueAfter, wait)}, nil
	}
	if err := r.writeStatus(ctx, orig, task); err != nil {
		if errors.Is(err, errStale) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if agentTaskOver(&task.Status) {
		r.Dispatcher.forget(task.UID)
		r.forgetWrites(client.ObjectKeyFromObject(task))
		return ctrl.Result{}, r.removeFinalizer(ctx, task)
	}
	return result, nil
}

// getSession reads the task's session: from the cache, and past it when
// the cache has none yet.
func (r *AgentTaskReconciler) getSession(ctx context.Context, task *v1alpha1.AgentTask) (*v1alpha1.BrowserSession, bool, error) {
	session := &v1alpha1.BrowserSession{}
	key := types.NamespacedName{Namespace: task.Namespace, Name: task.Spec.SessionRef.Name}
	err := r.Client.Get(ctx, key, session)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, session)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("getting session: %w", err)
	}
	return session, true, nil
}

// await keeps a task that has not been dispatched Pending until its
// Secrets, its session and its turn are there, then dispatches it. done
// says the pass made its own write and ends there.
func (r *AgentTaskReconciler) await(ctx context.Context, task *v1alpha1.AgentTask, session *v1alpha1.BrowserSession, found bool, now time.Time) (result ctrl.Result, done bool, err error) {
	refused, err := refusedSecretRefs(ctx, r.Client, task, taskSecretRefs(&task.Spec))
	if err != nil {
		return ctrl.Result{}, true, err
	}
	switch {
	case len(refused) > 0:
		return r.awaitSecrets(task, refused, now), false, nil
	case !found:
		return r.awaitSession(task, now), false, nil
	}
	ahead, err := r.taskAhead(ctx, task)
	if err != nil {
		return ctrl.Result{}, true, err
	}
	if ahead != nil {
		task.Status.Phase = v1alpha1.AgentTaskPending
		task.Status.Message = fmt.Sprintf("waiting for AgentTask %q to finish: one task runs in BrowserSession %q at a time, the oldest first", ahead.Name, session.Name)
		return ctrl.Result{}, false, nil
	}
	if session.Status.Phase != v1alpha1.BrowserSessionReady || session.Status.Endpoint == "" {
		task.Status.Phase = v1alpha1.AgentTaskPending
		task.Status.Message = fmt.Sprintf("waiting for BrowserSession %q to be ready", session.Name)
		return ctrl.Result{}, false, nil
	}
	// The finalizer comes first, so that a deletion from here on stops
	// the agent in the runner. Its update brings the next pass.
	if controllerutil.AddFinalizer(task, v1alpha1.FinalizerAgentTask) {
		if err := r.Client.Update(ctx, task); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{}, true, nil
			}
			return ctrl.Result{}, true, fmt.Errorf("adding the finalizer: %w", err)
		}
		return ctrl.Result{}, true, nil
	}
	deadline, _ := r.deadlineOf(task)
	view := r.Dispatcher.dispatch(dispatchJob{task: task.DeepCopy(), session: session.DeepCopy(), deadline: deadline})
	r.observeDispatch(task, session, &view)
	return ctrl.Result{}, false, nil
}

// observeDispatch writes the view of a task being dispatched.
func (r *AgentTaskReconciler) observeDispatch(task *v1alpha1.AgentTask, session *v1alpha1.BrowserSession, view *taskView) {
	st := &task.Status
	switch view.Stage {
	case stageQueued:
		st.Phase = v1alpha1.AgentTaskPending
		st.Message = fmt.Sprintf("waiting for a dispatch slot: the manager runs at most %d agent tasks at once (tasks.maxRunning)", r.Tasks.MaxRunning)
	case stageStarting:
		st.Phase = v1alpha1.AgentTaskPending
		st.Message = fmt.Sprintf("dispatching to the runner of BrowserSession %q", session.Name)
		if view.Message != "" {
			st.Message = truncate(fmt.Sprintf("%s; retrying after: %s", st.Message, view.Message), maxStatusMessage)
		}
	case stageBusy:
		st.Phase = v1alpha1.AgentTaskPending
		st.Message = fmt.Sprintf("the runner of BrowserSession %q runs another agent task; waiting for it to end", session.Name)
	case stageRunning:
		r.markRunning(task, session.Name, view)
	}
}

// markRunning records that the runner runs the task.
func (r *AgentTaskReconciler) markRunning(task *v1alpha1.AgentTask, sessionName string, view *taskView) {
	msg := fmt.Sprintf("the agent runs in the runner of BrowserSession %q", sessionName)
	meta.SetStatusCondition(&task.Status.Conditions, metav1.Condition{
		Type: v1alpha1.AgentTaskConditionRunning, Status: metav1.ConditionTrue, Reason: v1alpha1.AgentTaskReasonDispatched,
		Message: msg, ObservedGeneration: task.Generation,
	})
	if task.Status.StartTime == nil {
		task.Status.StartTime = &metav1.Time{Time: r.Clock.Now()}
		if !view.StartedAt.IsZero() {
			task.Status.StartTime.Time = view.StartedAt
		}
	}
	setProgress(&task.Status, view)
	task.Status.Phase = agentTaskPhase(&task.Status)
	task.Status.Message = msg
}

// follow writes the progress of a dispatched task, re-attaches the
// dispatcher to it after a manager restart or a change of leader, and
// fails it past its deadline when the runner has not reported its end.
func (r *AgentTaskReconciler) follow(task *v1alpha1.AgentTask, session *v1alpha1.BrowserSession, found bool, now time.Time) ctrl.Result {
	deadline, source := r.deadlineOf(task)
	view, have := r.Dispatcher.viewOf(task.UID)
	if !have && found && session.Status.Endpoint != "" {
		view = r.Dispatcher.dispatch(dispatchJob{task: task.DeepCopy(), session: session.DeepCopy(), attach: true, deadline: deadline})
		have = true
	}
	name := task.Spec.SessionRef.Name
	if have {
		r.markRunning(task, name, &view)
	}
	if task.Status.StartTime == nil {
		task.Status.StartTime = &metav1.Time{Time: now}
	}
	end := task.Status.StartTime.Add(deadline + r.Tasks.DeadlineGrace)
	if !now.Before(end) {
		r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonDeadlineExceeded,
			fmt.Sprintf("the task ran past its deadline of %s (%s), and the runner of BrowserSession %q did not report its end within %s of it", deadline, source, name, r.Tasks.DeadlineGrace))
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: end.Sub(now)}
}

// finishFromRunner settles the task as the runner reported its end.
func (r *AgentTaskReconciler) finishFromRunner(task *v1alpha1.AgentTask, view *taskView, deadline time.Duration, source string) {
	setProgress(&task.Status, view)
	if task.Status.StartTime == nil {
		task.Status.StartTime = &metav1.Time{Time: r.Clock.Now()}
	}
	st := view.Final
	switch st.Phase {
	case rpc.AgentTaskSucceeded:
		task.Status.Result = statusResult(st.Result)
		msg := "the agent finished"
		if st.Result != nil && st.Result.Cache != nil && st.Result.Cache.Status == cache.StatusHit {
			// The status keeps no cache report: kubectl users learn of
			// a replay here, and in the event.
			msg += ", replayed from the server-side cache with no model call"
		}
		if st.Result != nil && st.Result.Message != "" {
			msg += ": " + st.Result.Message
		}
		r.finish(task, v1alpha1.AgentTaskConditionSucceeded, v1alpha1.AgentTaskReasonCompleted, msg)
	case rpc.AgentTaskCancelled:
		r.finish(task, v1alpha1.AgentTaskConditionCancelled, v1alpha1.AgentTaskReasonDeleted,
			fmt.Sprintf("the runner stopped the agent after %d steps: %s", st.Steps, runnerError(st)))
	default:
		if st.Error != nil && st.Error.Code == rpc.CodeTimeout {
			r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonDeadlineExceeded,
				fmt.Sprintf("the task ran past its deadline of %s (%s); the runner stopped the agent after %d steps", deadline, source, st.Steps))
			return
		}
		r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonAgentFailed, "the agent failed: "+runnerError(st))
	}
}

// runnerError says why the runner's task failed or stopped.
func runnerError(st *rpc.AgentTaskState) string {
	if st.Error == nil {
		return "the runner gave no reason"
	}
	return st.Error.Error()
}

// deadlineOf is the task's active deadline, and where it comes from.
func (r *AgentTaskReconciler) deadlineOf(task *v1alpha1.AgentTask) (time.Duration, string) {
	if s := task.Spec.ActiveDeadlineSeconds; s > 0 {
		return time.Duration(s) * time.Second, "spec.activeDeadlineSeconds"
	}
	return r.Tasks.DefaultActiveDeadline, "the manager's tasks.defaultActiveDeadline"
}

// taskAhead is the task of the same session that runs before task, if
// any: one that was dispatched, else the oldest of those older than task
// that have not finished (by creation time, then name).
func (r *AgentTaskReconciler) taskAhead(ctx context.Context, task *v1alpha1.AgentTask) (*v1alpha1.AgentTask, error) {
	var tasks v1alpha1.AgentTaskList
	if err := r.Client.List(ctx, &tasks, client.InNamespace(task.Namespace), client.MatchingFields{IndexAgentTaskSession: task.Spec.SessionRef.Name}); err != nil {
		return nil, fmt.Errorf("listing the session's tasks: %w", err)
	}
	var first *v1alpha1.AgentTask
	for i := range tasks.Items {
		t := &tasks.Items[i]
		if t.UID == task.UID || agentTaskOver(&t.Status) {
			continue
		}
		if taskDispatched(&t.Status) {
			return t, nil
		}
		if runsBefore(t, task) && (first == nil || runsBefore(t, first)) {
			first = t
		}
	}
	return first, nil
}

// runsBefore orders a session's tasks: by creation time, then name.
func runsBefore(a, b *v1alpha1.AgentTask) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// taskDispatched says whether the status has the task dispatched.
func taskDispatched(st *v1alpha1.AgentTaskStatus) bool {
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.AgentTaskConditionRunning)
	return c != nil && c.Reason == v1alpha1.AgentTaskReasonDispatched
}

// reconcileDelete stops a deleted task's agent in the runner before the
// task goes. When the runner is gone or going (the session is gone,
// ending or failed), or cannot be reached (the dispatcher's bounded
// retries), the task goes without the call.
func (r *AgentTaskReconciler) reconcileDelete(ctx context.Context, task *v1alpha1.AgentTask) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(task, v1alpha1.FinalizerAgentTask) {
		r.Dispatcher.forget(task.UID)
		return ctrl.Result{}, nil
	}
	if agentTaskOver(&task.Status) {
		r.Dispatcher.forget(task.UID)
		return ctrl.Result{}, r.removeFinalizer(ctx, task)
	}
	session, found, err := r.getSession(ctx, task)
	if err != nil {
		return ctrl.Result{}, err
	}
	orig := task.DeepCopy()
	if !found || sessionSettlesTask(session) || session.Status.Endpoint == "" {
		view, have := r.Dispatcher.viewOf(task.UID)
		if have {
			setProgress(&task.Status, &view)
		}
		what := fmt.Sprintf("BrowserSession %q does not exist", task.Spec.SessionRef.Name)
		if found {
			what = fmt.Sprintf("BrowserSession %q is %s", session.Name, strings.ToLower(string(session.Status.Phase)))
			if session.Status.Phase == "" {
				what = fmt.Sprintf("BrowserSession %q has no runner", session.Name)
			}
		}
		r.finish(task, v1alpha1.AgentTaskConditionCancelled, v1alpha1.AgentTaskReasonDeleted,
			fmt.Sprintf("the task was deleted; %s, so no runner was told to stop it", what))
		return r.settleDeleted(ctx, orig, task)
	}
	deadline, source := r.deadlineOf(task)
	view := r.Dispatcher.cancelTask(dispatchJob{task: task.DeepCopy(), session: session.DeepCopy(), attach: taskDispatched(&task.Status), deadline: deadline})
	switch view.Stage {
	case stageOver:
		r.finishFromRunner(task, &view, deadline, source)
	case stageFailed:
		setProgress(&task.Status, &view)
		r.finish(task, v1alpha1.AgentTaskConditionFailed, view.Reason, view.Message)
	case stageCancelled:
		setProgress(&task.Status, &view)
		msg := "the task was deleted before the runner started it"
		if view.Final != nil || taskDispatched(&task.Status) {
			msg = fmt.Sprintf("the task was deleted; the runner stopped the agent after %d steps", view.Steps)
		}
		if f := view.Final; f != nil && f.Phase.Over() && f.Phase != rpc.AgentTaskCancelled {
			// It ended before the stop reached it.
			r.finishFromRunner(task, &view, deadline, source)
			break
		}
		r.finish(task, v1alpha1.AgentTaskConditionCancelled, v1alpha1.AgentTaskReasonDeleted, msg)
	case stageCancelFailed:
		setProgress(&task.Status, &view)
		r.Recorder.Eventf(task, nil, corev1.EventTypeWarning, "CancelFailed", "Cancel", "%s", view.Message)
		r.finish(task, v1alpha1.AgentTaskConditionCancelled, v1alpha1.AgentTaskReasonDeleted,
			"the task was deleted; "+view.Message)
	default:
		// The dispatcher wakes this pass when the runner answers.
		return ctrl.Result{}, nil
	}
	return r.settleDeleted(ctx, orig, task)
}

// settleDeleted writes a deleted task's last status and lets it go.
func (r *AgentTaskReconciler) settleDeleted(ctx context.Context, orig, task *v1alpha1.AgentTask) (ctrl.Result, error) {
	if err := r.writeStatus(ctx, orig, task); err != nil && !apierrors.IsNotFound(err) {
		if errors.Is(err, errStale) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	r.Dispatcher.forget(task.UID)
	r.forgetWrites(client.ObjectKeyFromObject(task))
	return ctrl.Result{}, r.removeFinalizer(ctx, task)
}

func (r *AgentTaskReconciler) removeFinalizer(ctx context.Context, task *v1alpha1.AgentTask) error {
	if !controllerutil.RemoveFinalizer(task, v1alpha1.FinalizerAgentTask) {
		return nil
	}
	if err := r.Client.Update(ctx, task); err != nil {
		if apierrors.IsConflict(err) {
			// The newer version's event brings the next pass.
			return nil
		}
		return client.IgnoreNotFound(err)
	}
	return nil
}

// throttle says whether to leave this pass's status unwritten, and for
// how long: a running task's progress is written at most once every
// TaskConfig.StatusInterval; any other change at once.
func (r *AgentTaskReconciler) throttle(orig, task *v1alpha1.AgentTask, now time.Time) (time.Duration, bool) {
	if task.Status.Phase != v1alpha1.AgentTaskRunning || orig.Status.Phase != v1alpha1.AgentTaskRunning || !onlyProgress(&orig.Status, &task.Status) {
		return 0, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.progressWrites == nil {
		r.progressWrites = map[types.NamespacedName]progressWrite{}
	}
	key := client.ObjectKeyFromObject(task)
	if last, ok := r.progressWrites[key]; ok && last.uid == task.UID {
		if wait := last.at.Add(r.Tasks.StatusInterval).Sub(now); wait > 0 {
			return wait, true
		}
	}
	r.progressWrites[key] = progressWrite{uid: task.UID, at: now}
	return 0, false
}

// forgetWrites drops the throttle's record of the task of that name.
func (r *AgentTaskReconciler) forgetWrites(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.progressWrites, key)
}

// shortest is the earlier of two requeue delays, 0 being none.
func shortest(a, b time.Duration) time.Duration {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// ensureOwner makes the session own the task, so that the task goes with it.
func (r *AgentTaskReconciler) ensureOwner(ctx context.Context, task *v1alpha1.AgentTask, session *v1alpha1.BrowserSession) error {
	for _, ref := range task.OwnerReferences {
		if ref.UID == session.UID {
			return nil
		}
	}
	base := task.DeepCopy()
	if err := controllerutil.SetOwnerReference(session, task, r.Scheme); err != nil {
		return fmt.Errorf("owning task: %w", err)
	}
	// Optimistic locking: never drop owner references someone else added.
	if err := r.Client.Patch(ctx, task, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting the session as owner: %w", err)
	}
	return nil
}

// awaitSession keeps a task whose session does not exist Pending for
// SessionWait after its creation, then fails it. The session's creation
// brings the task back through the session watch; the requeue is the timer.
func (r *AgentTaskReconciler) awaitSession(task *v1alpha1.AgentTask, now time.Time) ctrl.Result {
	name := task.Spec.SessionRef.Name
	if left := task.CreationTimestamp.Add(r.SessionWait).Sub(now); left > 0 {
		task.Status.Phase = v1alpha1.AgentTaskPending
		task.Status.Message = fmt.Sprintf("waiting for BrowserSession %q to exist", name)
		return ctrl.Result{RequeueAfter: left}
	}
	r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonSessionNotFound,
		fmt.Sprintf("BrowserSession %q does not exist", name))
	return ctrl.Result{}
}

// awaitSecrets keeps a task that references Secrets that have not opted in
// to it (secretrefs.go) Pending for SecretWait after its creation, for a
// Secret created or labelled just after it (the Secret watch brings it
// back), then fails it naming the references.
func (r *AgentTaskReconciler) awaitSecrets(task *v1alpha1.AgentTask, refused []string, now time.Time) ctrl.Result {
	msg := refusalMessage(refused)
	deadline := task.CreationTimestamp.Add(r.SecretWait)
	if left := deadline.Sub(now); left > 0 {
		task.Status.Phase = v1alpha1.AgentTaskPending
		task.Status.Message = fmt.Sprintf("waiting until %s for %s", deadline.UTC().Format(time.RFC3339), msg)
		return ctrl.Result{RequeueAfter: left}
	}
	r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonSecretNotAllowed, msg)
	return ctrl.Result{}
}

// sessionSettlesTask says whether the session's state decides the task's
// whatever the task's own Secrets: it failed or ended.
func sessionSettlesTask(session *v1alpha1.BrowserSession) bool {
	switch session.Status.Phase {
	case v1alpha1.BrowserSessionFailed, v1alpha1.BrowserSessionEnding, v1alpha1.BrowserSessionEnded:
		return true
	}
	return false
}

// settle fails the task of a session that failed or ended.
func (r *AgentTaskReconciler) settle(task *v1alpha1.AgentTask, session *v1alpha1.BrowserSession) {
	name := session.Name
	if session.Status.Phase == v1alpha1.BrowserSessionFailed {
		r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonSessionFailed,
			fmt.Sprintf("BrowserSession %q failed: %s", name, session.Status.Message))
		return
	}
	r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonSessionEnded,
		fmt.Sprintf("BrowserSession %q has ended", name))
}

// finish moves the task to a terminal state.
func (r *AgentTaskReconciler) finish(task *v1alpha1.AgentTask, condType, reason, message string) {
	message = truncate(message, maxStatusMessage)
	if meta.FindStatusCondition(task.Status.Conditions, v1alpha1.AgentTaskConditionRunning) != nil {
		meta.SetStatusCondition(&task.Status.Conditions, metav1.Condition{
			Type: v1alpha1.AgentTaskConditionRunning, Status: metav1.ConditionFalse, Reason: reason, Message: message, ObservedGeneration: task.Generation,
		})
	}
	meta.SetStatusCondition(&task.Status.Conditions, metav1.Condition{
		Type: condType, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: task.Generation,
	})
	task.Status.CompletionTime = &metav1.Time{Time: r.Clock.Now()}
	task.Status.Message = message
	task.Status.Phase = agentTaskPhase(&task.Status)
}

func (r *AgentTaskReconciler) writeStatus(ctx context.Context, orig, task *v1alpha1.AgentTask) error {
	task.Status.ObservedGeneration = task.Generation
	if equality.Semantic.DeepEqual(orig.Status, task.Status) {
		return nil
	}
	// Conditional on the version read, as for sessions: a stale pass retries.
	if err := r.Client.Status().Patch(ctx, task, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return errStale
		}
		return fmt.Errorf("writing status: %w", err)
	}
	if orig.Status.Phase != task.Status.Phase {
		ctrl.LoggerFrom(ctx).Info("task phase changed", "from", orig.Status.Phase, "to", task.Status.Phase, "message", task.Status.Message)
		eventType := corev1.EventTypeNormal
		if task.Status.Phase == v1alpha1.AgentTaskFailed {
			eventType = corev1.EventTypeWarning
		}
		action := "Settle"
		switch task.Status.Phase {
		case v1alpha1.AgentTaskPending:
			action = "Queue"
		case v1alpha1.AgentTaskRunning:
			action = "Dispatch"
		}
		r.Recorder.Eventf(task, nil, eventType, string(task.Status.Phase), action, "%s", task.Status.Message)
	}
	return nil
}

// agentTaskPhase derives the phase from the conditions.
func agentTaskPhase(st *v1alpha1.AgentTaskStatus) v1alpha1.AgentTaskPhase {
	for _, p := range []struct {
		cond  string
		phase v1alpha1.AgentTaskPhase
	}{
		{v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskFailed},
		{v1alpha1.AgentTaskConditionCancelled, v1alpha1.AgentTaskCancelled},
		{v1alpha1.AgentTaskConditionSucceeded, v1alpha1.AgentTaskSucceeded},
		{v1alpha1.AgentTaskConditionRunning, v1alpha1.AgentTaskRunning},
	} {
		if meta.IsStatusConditionTrue(st.Conditions, p.cond) {
			return p.phase
		}
	}
	return v1alpha1.AgentTaskPending
}

func agentTaskOver(st *v1alpha1.AgentTaskStatus) bool {
	switch agentTaskPhase(st) {
	case v1alpha1.AgentTaskSucceeded, v1alpha1.AgentTaskFailed, v1alpha1.AgentTaskCancelled:
		return true
	}
	return false
}

// SetupWithManager registers the reconciler with a manager. A session's
// changes reach the tasks that name it through IndexAgentTaskSession, a
// Secret's (metadata only) those that reference it through
// IndexAgentTaskSecret; a task that is dispatched, settles or goes wakes
// the other tasks of its session; the Dispatcher wakes a task whose run
// changed.
func (r *AgentTaskReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.AgentTask{}).
		Watches(&v1alpha1.BrowserSession{}, handler.EnqueueRequestsFromMapFunc(r.tasksOfSession)).
		WatchesMetadata(secretMetadata(), handler.EnqueueRequestsFromMapFunc(r.tasksOfSecret)).
		Watches(&v1alpha1.AgentTask{}, handler.EnqueueRequestsFromMapFunc(r.tasksAfter), builder.WithPredicates(freesSession)).
		WatchesRawSource(r.Dispatcher.Source()).
		Named("agenttask").
		Complete(r)
}

// freesSession passes the events of a task that change the turns of its
// session's tasks: it was dispatched (the others wait for it), it settled
// or it went (the next may run).
var freesSession = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, oldOK := e.ObjectOld.(*v1alpha1.AgentTask)
		cur, curOK := e.ObjectNew.(*v1alpha1.AgentTask)
		return oldOK && curOK && (agentTaskOver(&old.Status) != agentTaskOver(&cur.Status) ||
			taskDispatched(&old.Status) != taskDispatched(&cur.Status))
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// tasksAfter are the unfinished tasks of the session of o, a task.
func (r *AgentTaskReconciler) tasksAfter(ctx context.Context, o client.Object) []reconcile.Request {
	t, ok := o.(*v1alpha1.AgentTask)
	if !ok {
		return nil
	}
	var tasks v1alpha1.AgentTaskList
	if err := r.Client.List(ctx, &tasks, client.InNamespace(t.Namespace), client.MatchingFields{IndexAgentTaskSession: t.Spec.SessionRef.Name}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the tasks of a session", "session", t.Spec.SessionRef.Name)
		return nil
	}
	var reqs []reconcile.Request
	for i := range tasks.Items {
		if u := &tasks.Items[i]; u.UID != t.UID && !agentTaskOver(&u.Status) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(u)})
		}
	}
	return reqs
}

func (r *AgentTaskReconciler) tasksOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	return r.tasksMatching(ctx, o, IndexAgentTaskSecret)
}

func (r *AgentTaskReconciler) tasksOfSession(ctx context.Context, o client.Object) []reconcile.Request {
	return r.tasksMatching(ctx, o, IndexAgentTaskSession)
}

// tasksMatching are the unfinished tasks of o's namespace whose index
// field holds o's name.
func (r *AgentTaskReconciler) tasksMatching(ctx context.Context, o client.Object, index string) []reconcile.Request {
	var tasks v1alpha1.AgentTaskList
	if err := r.Client.List(ctx, &tasks, client.InNamespace(o.GetNamespace()), client.MatchingFields{index: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the tasks of an object", "index", index, "name", o.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(tasks.Items))
	for _, t := range tasks.Items {
		if !agentTaskOver(&t.Status) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&t)})
		}
	}
	return reqs
}
