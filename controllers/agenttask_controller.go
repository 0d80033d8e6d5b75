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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// AgentTaskReconciler ties each AgentTask to its session and settles it when
// the session cannot run it. Dispatch to the runner is not part of this
// release: a task whose session is Ready fails with AgentUnavailable.
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
}

// +kubebuilder:rbac:groups=browserfleet.io,resources=agenttasks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=browserfleet.io,resources=agenttasks/status,verbs=get;update;patch

// Reconcile settles one AgentTask against its session.
func (r *AgentTaskReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	task := &v1alpha1.AgentTask{}
	if err := r.Client.Get(ctx, req.NamespacedName, task); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !task.DeletionTimestamp.IsZero() || agentTaskOver(&task.Status) {
		return ctrl.Result{}, nil
	}
	session := &v1alpha1.BrowserSession{}
	key := types.NamespacedName{Namespace: task.Namespace, Name: task.Spec.SessionRef.Name}
	err := r.Client.Get(ctx, key, session)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, session)
	}
	found := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("getting session: %w", err)
	}
	if found {
		if err := r.ensureOwner(ctx, task, session); err != nil {
			return ctrl.Result{}, err
		}
	}

	refused, err := refusedSecretRefs(ctx, r.Client, task, taskSecretRefs(&task.Spec))
	if err != nil {
		return ctrl.Result{}, err
	}

	orig := task.DeepCopy()
	var result ctrl.Result
	switch {
	case found && sessionSettlesTask(session):
		r.settle(task, session)
	case len(refused) > 0:
		result = r.awaitSecrets(task, refused)
	case found:
		r.settle(task, session)
	default:
		result = r.awaitSession(task)
	}
	if err := r.writeStatus(ctx, orig, task); err != nil {
		if errors.Is(err, errStale) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	return result, nil
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
func (r *AgentTaskReconciler) awaitSession(task *v1alpha1.AgentTask) ctrl.Result {
	name := task.Spec.SessionRef.Name
	if left := task.CreationTimestamp.Add(r.SessionWait).Sub(r.Clock.Now()); left > 0 {
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
func (r *AgentTaskReconciler) awaitSecrets(task *v1alpha1.AgentTask, refused []string) ctrl.Result {
	msg := refusalMessage(refused)
	deadline := task.CreationTimestamp.Add(r.SecretWait)
	if left := deadline.Sub(r.Clock.Now()); left > 0 {
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

// settle decides the task's state from its session's.
func (r *AgentTaskReconciler) settle(task *v1alpha1.AgentTask, session *v1alpha1.BrowserSession) {
	name := session.Name
	switch session.Status.Phase {
	case v1alpha1.BrowserSessionFailed:
		r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonSessionFailed,
			fmt.Sprintf("BrowserSession %q failed: %s", name, session.Status.Message))
	case v1alpha1.BrowserSessionEnding, v1alpha1.BrowserSessionEnded:
		r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonSessionEnded,
			fmt.Sprintf("BrowserSession %q has ended", name))
	case v1alpha1.BrowserSessionReady:
		r.finish(task, v1alpha1.AgentTaskConditionFailed, v1alpha1.AgentTaskReasonAgentUnavailable,
			"this release of browserfleet cannot run agents yet: AgentTask dispatch to the runner is not implemented")
	default:
		task.Status.Phase = v1alpha1.AgentTaskPending
		task.Status.Message = fmt.Sprintf("waiting for BrowserSession %q to be ready", name)
	}
}

// finish moves the task to a terminal state.
func (r *AgentTaskReconciler) finish(task *v1alpha1.AgentTask, condType, reason, message string) {
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
		r.Recorder.Eventf(task, nil, eventType, string(task.Status.Phase), "Settle", "%s", task.Status.Message)
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
// IndexAgentTaskSecret.
func (r *AgentTaskReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.AgentTask{}).
		Watches(&v1alpha1.BrowserSession{}, handler.EnqueueRequestsFromMapFunc(r.tasksOfSession)).
		WatchesMetadata(secretMetadata(), handler.EnqueueRequestsFromMapFunc(r.tasksOfSecret)).
		Named("agenttask").
		Complete(r)
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
