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
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/startlatency"
)

// SessionWorkers is how many BrowserSessions the manager reconciles at
// once (each one by one worker at a time).
const SessionWorkers = 8

// StopBrowserFinalizer keeps a BrowserSession until its browser has stopped
// and its runner pod is gone.
const StopBrowserFinalizer = "browserfleet.io/stop-browser"

// SessionConfig holds the manager's session defaults, from the sessions
// section of its Configuration file (and runner.forceDeleteAfter).
type SessionConfig struct {
	// DefaultTimeout is a session's lifetime when its spec gives none.
	DefaultTimeout time.Duration
	// MaxTimeout caps every session's lifetime.
	MaxTimeout time.Duration
	// DefaultTTLAfterEnded is how long an Ended or Failed session is kept
	// when its spec does not say.
	DefaultTTLAfterEnded time.Duration
	// SecretWait is how long a session waits for the Secrets it references
	// to exist and opt in (v1alpha1.LabelSessionSecret) before it fails.
	SecretWait time.Duration
	// StartupTimeout is how long after its creation a session may take to
	// become Ready the first time; then it fails and its pod is deleted.
	StartupTimeout time.Duration
	// ForceDeleteAfter is how long past its deletion deadline a runner pod
	// may stay Terminating (its node is gone and no kubelet confirms the
	// end) before the manager deletes it with no grace.
	ForceDeleteAfter time.Duration
}

// BrowserSessionReconciler runs each BrowserSession as one runner pod and
// follows that pod through the session's life.
type BrowserSessionReconciler struct {
	Client client.Client
	// APIReader reads past the cache, to tell a pod that is gone from one
	// the cache has not seen yet.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Runner    RunnerConfig
	Sessions  SessionConfig
	Quota     quota.Config
	Clock     clock.PassiveClock
	// Claimer hands claimed pool runners their sessions; nil: sessions
	// never claim one.
	Claimer *Claimer
	// starts times sessions' starts (startlatency); nil: not timed.
	starts *startTracker
}

// +kubebuilder:rbac:groups=browserfleet.io,resources=browsersessions,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=browserfleet.io,resources=browsersessions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=browserfleet.io,resources=browsersessions/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// Reconcile brings one BrowserSession's runner in line with its spec.
func (r *BrowserSessionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	session := &v1alpha1.BrowserSession{}
	if err := r.Client.Get(ctx, req.NamespacedName, session); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !session.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, session)
	}
	if controllerutil.AddFinalizer(session, StopBrowserFinalizer) {
		// A session without the finalizer is one the manager sees for the
		// first time: its start is timed from here.
		r.starts.begin(session, r.Clock.Now())
		// The update is an event of its own; the next pass goes on from here.
		return ctrl.Result{}, r.Client.Update(ctx, session)
	}
	return r.reconcile(ctx, session)
}

func (r *BrowserSessionReconciler) reconcile(ctx context.Context, session *v1alpha1.BrowserSession) (ctrl.Result, error) {
	orig := session.DeepCopy()
	now := r.Clock.Now()
	warnings := r.setExpiry(session)
	markUnsupported(session)
	stepErr := r.reconcileRunner(ctx, session, now)
	if err := r.writeStatus(ctx, orig, session); err != nil {
		if errors.Is(err, errStale) && stepErr == nil {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, errors.Join(stepErr, err)
	}
	r.recordEvents(ctx, orig, session, warnings)
	if stepErr != nil {
		return ctrl.Result{}, stepErr
	}
	return r.schedule(ctx, session, now)
}

// setExpiry fixes the session's expiry once, from its creation time and
// timeout. It returns warnings for people.
func (r *BrowserSessionReconciler) setExpiry(s *v1alpha1.BrowserSession) []string {
	if s.Status.ExpiresAt != nil {
		return nil
	}
	timeout := r.Sessions.DefaultTimeout
	if c := s.Spec.CloudSessionCreateParams; c != nil && c.TimeoutSeconds > 0 {
		timeout = time.Duration(c.TimeoutSeconds) * time.Second
	}
	var warnings []string
	if r.Sessions.MaxTimeout > 0 && timeout > r.Sessions.MaxTimeout {
		warnings = append(warnings, fmt.Sprintf("timeout %s exceeds the maximum %s; the session ends after %s", timeout, r.Sessions.MaxTimeout, r.Sessions.MaxTimeout))
		timeout = r.Sessions.MaxTimeout
	}
	s.Status.ExpiresAt = &metav1.Time{Time: s.CreationTimestamp.Add(timeout)}
	return warnings
}

// reconcileRunner walks the session through its life: start the runner,
// follow its pod, and stop it when the session ends.
func (r *BrowserSessionReconciler) reconcileRunner(ctx context.Context, s *v1alpha1.BrowserSession, now time.Time) error {
	if sessionOver(&s.Status) {
		r.forgetStart(s)
		// A failed session keeps its pod, for its logs, until the session
		// itself is deleted; a pod deleted all the same is let go once its
		// summary is taken. The cache is enough: no pod is created for a
		// session that is over.
		pod := &corev1.Pod{}
		err := r.Client.Get(ctx, runnerPodKey(s), pod)
		if err != nil || !metav1.IsControlledBy(pod, s) {
			return client.IgnoreNotFound(err)
		}
		return r.collectSummary(ctx, s, pod, now)
	}
	if reason, msg := endRequest(s, now); reason != "" {
		if !meta.IsStatusConditionTrue(s.Status.Conditions, v1alpha1.BrowserSessionConditionEnding) {
			markEnding(s, reason, msg)
		}
		return r.stopRunner(ctx, s, now)
	}
	if s.Status.PodName == "" {
		if msg := executableRefusal(&s.Spec, r.Runner); msg != "" {
			markFailed(s, v1alpha1.BrowserSessionReasonExecutableNotAllowed, msg, now)
			return nil
		}
		// Before it waits for anything: a pod of a region no node serves
		// would pend until the startup deadline, saying nothing clear.
		if reason, msg, err := regionRefusal(ctx, r.Client, r.APIReader, &s.Spec, r.Runner); err != nil || reason != "" {
			if reason != "" {
				markFailed(s, reason, msg, now)
			}
			return err
		}
		if waiting, err := r.checkSecretRefs(ctx, s, now); err != nil || waiting {
			return err
		}
		if waiting, err := r.checkQuota(ctx, s, now); err != nil || waiting {
			return err
		}
		if err := r.createTokenSecret(ctx, s); err != nil {
			return err
		}
	}
	pod, err := r.ensureRunnerPod(ctx, s, now)
	if err != nil {
		return err
	}
	if pod == nil {
		markFailed(s, v1alpha1.BrowserSessionReasonPodDeleted,
			fmt.Sprintf("runner pod %s disappeared while the session was running", runnerPodKey(s).Name), now)
		return nil
	}
	handingOver, failure := r.handOver(s, pod)
	if failure != "" {
		markFailed(s, v1alpha1.BrowserSessionReasonClaimFailed,
			fmt.Sprintf("the warm runner %s of pool %s could not be handed the session: %s; the runner pod was deleted", pod.Name, s.Status.Pool, failure), now)
		_, err := r.deleteRunnerPod(ctx, s, now)
		return err
	}
	observePod(s, pod, now, handingOver)
	r.markStart(s, pod, now)
	if err := r.collectSummary(ctx, s, pod, now); err != nil {
		return err
	}
	if deadline, ok := r.startupDeadline(s); ok && !now.Before(deadline) {
		markFailed(s, v1alpha1.BrowserSessionReasonStartupTimedOut,
			fmt.Sprintf("the session was not ready within %s of its creation; %s; the runner pod was deleted", r.Sessions.StartupTimeout, s.Status.Message), now)
		// Nothing useful runs in it, and it may hold a node's resources.
		_, err := r.deleteRunnerPod(ctx, s, now)
		return err
	}
	return nil
}

// forgetStart drops what the start's timing and hand-over hold of a
// session that is over or going.
func (r *BrowserSessionReconciler) forgetStart(s *v1alpha1.BrowserSession) {
	r.starts.forget(s.UID)
	if r.Claimer != nil {
		r.Claimer.Forget(s.UID)
	}
}

// startupDeadline is when a session that has never been ready fails: the
// startup timeout after its creation or, if it waited for its quota, after
// it got its turn.
func (r *BrowserSessionReconciler) startupDeadline(s *v1alpha1.BrowserSession) (time.Time, bool) {
	if r.Sessions.StartupTimeout <= 0 || s.Status.StartedAt != nil || sessionOver(&s.Status) {
		return time.Time{}, false
	}
	from := s.CreationTimestamp.Time
	if c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.BrowserSessionConditionQuotaExceeded); c != nil {
		if c.Status == metav1.ConditionTrue {
			return time.Time{}, false
		}
		from = c.LastTransitionTime.Time
	}
	return from.Add(r.Sessions.StartupTimeout), true
}

// checkQuota holds back a session its project's quota has no room for
// (quota.Place): it waits, with QuotaExceeded True, until a session of the
// project ends (sessionsWaitingForQuota brings it back), or fails when the
// project has too many live sessions. It reports whether the session may
// not start yet.
func (r *BrowserSessionReconciler) checkQuota(ctx context.Context, s *v1alpha1.BrowserSession, now time.Time) (bool, error) {
	var sessions v1alpha1.BrowserSessionList
	if err := r.Client.List(ctx, &sessions, client.InNamespace(s.Namespace)); err != nil {
		return false, fmt.Errorf("listing the project's sessions: %w", err)
	}
	verdict, msg := quota.Place(r.Quota.For(s.Namespace), sessions.Items, s)
	switch verdict {
	case quota.Refuse:
		setSessionCondition(s, v1alpha1.BrowserSessionConditionQuotaExceeded, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonQuotaExceeded, msg)
		markFailed(s, v1alpha1.BrowserSessionReasonQuotaExceeded, msg+"; no runner pod was created", now)
		return true, nil
	case quota.Wait:
		setSessionCondition(s, v1alpha1.BrowserSessionConditionQuotaExceeded, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonQuotaExceeded, msg)
		setSessionCondition(s, v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonQuotaExceeded, msg)
		s.Status.Message = msg
		return true, nil
	}
	if meta.IsStatusConditionTrue(s.Status.Conditions, v1alpha1.BrowserSessionConditionQuotaExceeded) {
		setSessionCondition(s, v1alpha1.BrowserSessionConditionQuotaExceeded, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonQuotaAdmitted, "the project's quota let the session have a browser")
	}
	return false, nil
}

// checkSecretRefs holds back a session that references a Secret that has
// not opted in to it (secretrefs.go): it waits Sessions.SecretWait from the
// session's creation, for a Secret created or labelled just after it (the
// Secret watch brings it back), then fails naming the references. It
// reports whether the session may not start yet.
func (r *BrowserSessionReconciler) checkSecretRefs(ctx context.Context, s *v1alpha1.BrowserSession, now time.Time) (bool, error) {
	refused, err := refusedSecretRefs(ctx, r.Client, s, sessionSecretRefs(&s.Spec))
	if err != nil || len(refused) == 0 {
		return false, err
	}
	msg := refusalMessage(refused)
	if deadline := s.CreationTimestamp.Add(r.Sessions.SecretWait); now.Before(deadline) {
		msg = fmt.Sprintf("waiting until %s for %s", deadline.UTC().Format(time.RFC3339), msg)
		setSessionCondition(s, v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonSecretNotAllowed, msg)
		s.Status.Message = msg
		return true, nil
	}
	markFailed(s, v1alpha1.BrowserSessionReasonSecretNotAllowed, msg+"; no runner pod was created", now)
	return true, nil
}

// waitingForSecrets says whether the session waits for Secrets to opt in,
// and until when.
func (r *BrowserSessionReconciler) waitingForSecrets(s *v1alpha1.BrowserSession) (time.Time, bool) {
	c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.BrowserSessionConditionReady)
	if s.Status.PodName != "" || sessionOver(&s.Status) || c == nil || c.Reason != v1alpha1.BrowserSessionReasonSecretNotAllowed {
		return time.Time{}, false
	}
	return s.CreationTimestamp.Add(r.Sessions.SecretWait), true
}

// endRequest says whether and why the session is to end.
func endRequest(s *v1alpha1.BrowserSession, now time.Time) (reason, message string) {
	claim, claimed := claimDeadline(s)
	switch {
	case s.Spec.Ended:
		return v1alpha1.BrowserSessionReasonEndRequested, "the session was ended"
	case s.Status.ExpiresAt != nil && !now.Before(s.Status.ExpiresAt.Time):
		return v1alpha1.BrowserSessionReasonTimedOut, fmt.Sprintf("the session timed out at %s", s.Status.ExpiresAt.UTC().Format(time.RFC3339))
	case claimed && !now.Before(claim):
		return v1alpha1.BrowserSessionReasonUnclaimed, fmt.Sprintf("the client that started the session through the API never received its id (claim deadline %s)", claim.UTC().Format(time.RFC3339))
	}
	return "", ""
}

// claimDeadline is the session's AnnotationClaimDeadline, if it has one
// that parses; a value that does not parse is ignored (it is not the API's).
func claimDeadline(s *v1alpha1.BrowserSession) (time.Time, bool) {
	v, ok := s.Annotations[v1alpha1.AnnotationClaimDeadline]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// stopRunner deletes the runner pod and marks the session Ended once the pod
// is gone. Until then the pod's own events bring the next pass.
func (r *BrowserSessionReconciler) stopRunner(ctx context.Context, s *v1alpha1.BrowserSession, now time.Time) error {
	gone, err := r.deleteRunnerPod(ctx, s, now)
	if err != nil {
		return err
	}
	if gone {
		markEnded(s, now)
	}
	return nil
}

func (r *BrowserSessionReconciler) createTokenSecret(ctx context.Context, s *v1alpha1.BrowserSession) error {
	// One left by an earlier pass of this session is its own; one left by
	// an older session of the same name that the garbage collector has not
	// taken yet is not.
	return createTokenSecret(ctx, r.Client, r.APIReader, r.Scheme, s,
		func(token []byte) *corev1.Secret { return constructTokenSecret(s, token) },
		func(existing *corev1.Secret) bool { return metav1.IsControlledBy(existing, s) })
}

// runnerPodKey is the session's runner pod: the pool's runner it claimed,
// or the one started for it.
func runnerPodKey(s *v1alpha1.BrowserSession) types.NamespacedName {
	if s.Status.PodName != "" {
		return types.NamespacedName{Namespace: s.Namespace, Name: s.Status.PodName}
	}
	return types.NamespacedName{Namespace: s.Namespace, Name: v1alpha1.RunnerPodName(s.Name)}
}

// ensureRunnerPod returns the session's runner pod: the first time, a
// ready runner of a pool whose template matches the session's launch, or
// else a pod created for it. It returns nil when a pod the session had is
// gone.
func (r *BrowserSessionReconciler) ensureRunnerPod(ctx context.Context, s *v1alpha1.BrowserSession, now time.Time) (*corev1.Pod, error) {
	key := runnerPodKey(s)
	pod, err := r.getRunnerPod(ctx, key)
	if err != nil {
		return nil, err
	}
	if pod != nil {
		if !metav1.IsControlledBy(pod, s) {
			return nil, fmt.Errorf("pod %s exists and does not belong to this session", key.Name)
		}
		s.Status.PodName = pod.Name
		return pod, nil
	}
	if s.Status.PodName != "" {
		return nil, nil
	}
	r.starts.mark(s, startlatency.PhaseAdmitted, now)
	if pod, err = r.claimedEarlier(ctx, s); err != nil || pod != nil {
		return pod, err
	}
	if pod, err = r.claimWarmRunner(ctx, s); err != nil || pod != nil {
		if pod != nil {
			r.starts.mark(s, startlatency.PhasePodCreated, r.Clock.Now())
		}
		return pod, err
	}

	pod, err = constructRunnerPod(s, r.Runner)
	if err != nil {
		return nil, err
	}
	if err := controllerutil.SetControllerReference(s, pod, r.Scheme); err != nil {
		return nil, fmt.Errorf("owning runner pod: %w", err)
	}
	if err := r.Client.Create(ctx, pod); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			msg := fmt.Sprintf("creating runner pod %s: %v", key.Name, err)
			setSessionCondition(s, v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonPodCreateFailed, msg)
			s.Status.Message = msg
			return nil, fmt.Errorf("creating runner pod %s: %w", key.Name, err)
		}
		if err := r.APIReader.Get(ctx, key, pod); err != nil {
			return nil, fmt.Errorf("getting runner pod: %w", err)
		}
	}
	r.starts.mark(s, startlatency.PhasePodCreated, r.Clock.Now())
	ctrl.LoggerFrom(ctx).V(1).Info("created runner pod", "pod", key.Name)
	s.Status.PodName = pod.Name
	return pod, nil
}

// getRunnerPod reads a runner pod, or returns nil when there is none. The
// cache's "not found" is checked with the API server first: the cache may
// not have seen a pod created a moment ago.
func (r *BrowserSessionReconciler) getRunnerPod(ctx context.Context, key types.NamespacedName) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, key, pod)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, pod)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting runner pod %s: %w", key.Name, err)
	}
	return pod, nil
}

// deleteRunnerPod deletes the session's runner pod and reports whether it is
// gone. A deleted pod goes once the runner's summary is in the status
// (collectSummary).
func (r *BrowserSessionReconciler) deleteRunnerPod(ctx context.Context, s *v1alpha1.BrowserSession, now time.Time) (bool, error) {
	pod, err := r.getRunnerPod(ctx, runnerPodKey(s))
	if err != nil {
		return false, err
	}
	if pod == nil || !metav1.IsControlledBy(pod, s) {
		return true, nil
	}
	if pod.DeletionTimestamp == nil {
		err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("deleting runner pod: %w", err)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("deleted runner pod", "pod", pod.Name)
		return false, nil
	}
	if err := r.collectSummary(ctx, s, pod, now); err != nil {
		return false, err
	}
	return false, r.forceDeleteOverdue(ctx, s, pod, now)
}

// forceDeleteAfter is when a Terminating runner pod is deleted with no
// grace: ForceDeleteAfter past its deletion deadline. A pod whose grace is
// already 0 (a kubelet confirmed, or it was forced) waits for nothing.
func (r *BrowserSessionReconciler) forceDeleteAfter(pod *corev1.Pod) (time.Time, bool) {
	if r.Sessions.ForceDeleteAfter <= 0 || pod.DeletionTimestamp == nil ||
		(pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0) {
		return time.Time{}, false
	}
	return pod.DeletionTimestamp.Add(r.Sessions.ForceDeleteAfter), true
}

// forceDeleteOverdue deletes with no grace a runner pod whose node never
// confirmed its end, so that the session's finalizer does not wait
// forever. On a dead node the containers may in truth still run; the
// node's own kubelet stops them if it ever comes back.
func (r *BrowserSessionReconciler) forceDeleteOverdue(ctx context.Context, s *v1alpha1.BrowserSession, pod *corev1.Pod, now time.Time) error {
	deadline, ok := r.forceDeleteAfter(pod)
	if !ok || now.Before(deadline) {
		return nil
	}
	err := r.Client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("force-deleting runner pod %s: %w", pod.Name, err)
	}
	msg := fmt.Sprintf("runner pod %s on node %q was still Terminating %s after its grace period; deleted it with no grace", pod.Name, pod.Spec.NodeName, r.Sessions.ForceDeleteAfter)
	ctrl.LoggerFrom(ctx).Info("force-deleted runner pod", "pod", klog.KObj(pod), "node", pod.Spec.NodeName)
	r.Recorder.Eventf(s, pod, corev1.EventTypeWarning, "RunnerPodForceDeleted", "ForceDelete", "%s", msg)
	return nil
}

// podDeadline is the next timer of a deleted runner pod: when it is let go
// without its summary, or force-deleted, whichever comes first.
func (r *BrowserSessionReconciler) podDeadline(ctx context.Context, s *v1alpha1.BrowserSession) (time.Time, bool) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, runnerPodKey(s), pod); err != nil || !metav1.IsControlledBy(pod, s) {
		return time.Time{}, false
	}
	next, ok := summaryDeadline(pod)
	if force, fok := r.forceDeleteAfter(pod); fok && (!ok || force.Before(next)) {
		return force, true
	}
	return next, ok
}

// schedule deletes a session whose TTL ran out, and asks to be called again
// at the session's next deadline.
func (r *BrowserSessionReconciler) schedule(ctx context.Context, s *v1alpha1.BrowserSession, now time.Time) (ctrl.Result, error) {
	if sessionOver(&s.Status) {
		ttl := r.Sessions.DefaultTTLAfterEnded
		if s.Spec.TTLSecondsAfterEnded != nil {
			ttl = time.Duration(*s.Spec.TTLSecondsAfterEnded) * time.Second
		}
		deadline := s.Status.EndedAt.Add(ttl)
		if now.Before(deadline) {
			return ctrl.Result{RequeueAfter: deadline.Sub(now)}, nil
		}
		ctrl.LoggerFrom(ctx).Info("deleting session after its ttl", "ttl", ttl)
		err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if meta.IsStatusConditionTrue(s.Status.Conditions, v1alpha1.BrowserSessionConditionEnding) {
		// The pod's deletion brings the next pass; a pod whose node never
		// reports its end is let go at its summary deadline, and
		// force-deleted at its force-delete deadline.
		if deadline, ok := r.podDeadline(ctx, s); ok {
			return ctrl.Result{RequeueAfter: max(deadline.Sub(now), time.Millisecond)}, nil
		}
		return ctrl.Result{}, nil
	}
	// The earliest of the session's timers: its expiry, the end of its wait
	// for Secrets, its startup deadline, its claim deadline.
	var next time.Time
	expiry := func(s *v1alpha1.BrowserSession) (time.Time, bool) {
		if s.Status.ExpiresAt == nil {
			return time.Time{}, false
		}
		return s.Status.ExpiresAt.Time, true
	}
	for _, d := range []func(*v1alpha1.BrowserSession) (time.Time, bool){expiry, r.waitingForSecrets, r.startupDeadline, claimDeadline} {
		if deadline, ok := d(s); ok && (next.IsZero() || deadline.Before(next)) {
			next = deadline
		}
	}
	if next.IsZero() {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: max(next.Sub(now), time.Millisecond)}, nil
}

// reconcileDelete stops the browser before the session goes.
func (r *BrowserSessionReconciler) reconcileDelete(ctx context.Context, s *v1alpha1.BrowserSession) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(s, StopBrowserFinalizer) {
		return ctrl.Result{}, nil
	}
	orig := s.DeepCopy()
	now := r.Clock.Now()
	r.forgetStart(s)
	over := sessionOver(&s.Status)
	if !over && !meta.IsStatusConditionTrue(s.Status.Conditions, v1alpha1.BrowserSessionConditionEnding) {
		markEnding(s, v1alpha1.BrowserSessionReasonDeleted, "the session is being deleted")
	}
	gone, err := r.deleteRunnerPod(ctx, s, now)
	if gone && !over {
		markEnded(s, now)
	}
	if werr := r.writeStatus(ctx, orig, s); werr != nil && !apierrors.IsNotFound(werr) {
		if errors.Is(werr, errStale) && err == nil {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, errors.Join(err, werr)
	}
	r.recordEvents(ctx, orig, s, nil)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !gone {
		if deadline, ok := r.podDeadline(ctx, s); ok {
			return ctrl.Result{RequeueAfter: max(deadline.Sub(now), time.Millisecond)}, nil
		}
		return ctrl.Result{}, nil
	}
	controllerutil.RemoveFinalizer(s, StopBrowserFinalizer)
	if err := r.Client.Update(ctx, s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}

// writeStatus patches the status when the pass changed it. The patch is
// conditional on the resource version the pass read, so that a pass working
// from a stale cache fails and is retried instead of undoing newer status.
func (r *BrowserSessionReconciler) writeStatus(ctx context.Context, orig, s *v1alpha1.BrowserSession) error {
	s.Status.ObservedGeneration = s.Generation
	s.Status.Phase = sessionPhase(&s.Status)
	if equality.Semantic.DeepEqual(orig.Status, s.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, s, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return errStale
		}
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}

// errStale says a pass read an older version of its object than the API
// server holds, so its status write was refused. The newer version's own
// event brings the next pass: the conflict is routine, not an error to log
// and back off from, and the pass's events must not be recorded.
var errStale = errors.New("the object changed since it was read; the next event retries")

// recordEvents records the pass's transition and warnings. It runs only after
// the status that shows them was written.
func (r *BrowserSessionReconciler) recordEvents(ctx context.Context, orig, s *v1alpha1.BrowserSession, warnings []string) {
	for _, w := range warnings {
		r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, "TimeoutCapped", "SetExpiry", "%s", w)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.BrowserSessionConditionUnsupportedSetting); c != nil &&
		!meta.IsStatusConditionTrue(orig.Status.Conditions, v1alpha1.BrowserSessionConditionUnsupportedSetting) {
		r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, v1alpha1.BrowserSessionConditionUnsupportedSetting, "Accept", "%s", c.Message)
	}
	from, to := orig.Status.Phase, s.Status.Phase
	if from == to {
		return
	}
	ctrl.LoggerFrom(ctx).Info("session phase changed", "from", from, "to", to, "message", s.Status.Message)
	eventType := corev1.EventTypeNormal
	if to == v1alpha1.BrowserSessionFailed {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(s, nil, eventType, string(to), phaseAction[to], "%s", s.Status.Message)
}

// phaseAction names what the manager did to bring a session into a phase.
var phaseAction = map[v1alpha1.BrowserSessionPhase]string{
	v1alpha1.BrowserSessionPending:  "Accept",
	v1alpha1.BrowserSessionStarting: "StartRunner",
	v1alpha1.BrowserSessionReady:    "StartRunner",
	v1alpha1.BrowserSessionEnding:   "StopBrowser",
	v1alpha1.BrowserSessionEnded:    "StopBrowser",
	v1alpha1.BrowserSessionFailed:   "WatchRunner",
}

// SetupWithManager registers the reconciler with a manager.
func (r *BrowserSessionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BrowserSession{}).
		// A pass waits on the API server (writes, and reads past the
		// cache); sessions that start together should not wait for each
		// other's.
		WithOptions(controller.Options{MaxConcurrentReconciles: SessionWorkers}).
		Owns(&corev1.Pod{})
	if r.Claimer != nil {
		// The end of a claimed runner's hand-over.
		b = b.WatchesRawSource(r.Claimer.Source())
	}
	return b.
		// A Secret that opts in wakes the sessions that wait for it.
		WatchesMetadata(secretMetadata(), handler.EnqueueRequestsFromMapFunc(r.sessionsOfSecret)).
		// A session that ends or goes makes room for those waiting for
		// their project's quota.
		Watches(&v1alpha1.BrowserSession{}, handler.EnqueueRequestsFromMapFunc(r.sessionsWaitingForQuota), builder.WithPredicates(freesQuota)).
		Named("browsersession").
		Complete(r)
}

// sessionsOfSecret are the sessions of the Secret's namespace that reference
// it.
func (r *BrowserSessionReconciler) sessionsOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var sessions v1alpha1.BrowserSessionList
	if err := r.Client.List(ctx, &sessions, client.InNamespace(o.GetNamespace()), client.MatchingFields{IndexBrowserSessionSecret: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the sessions of a secret", "secret", klog.KObj(o))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(sessions.Items))
	for _, s := range sessions.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
	}
	return reqs
}

// freesQuota passes the events of a session that makes room in its
// project's quota (quota.Place): it ended or failed, or it went. Other
// sessions' status writes need not list the namespace.
var freesQuota = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, oldOK := e.ObjectOld.(*v1alpha1.BrowserSession)
		cur, curOK := e.ObjectNew.(*v1alpha1.BrowserSession)
		return oldOK && curOK && !old.Status.Finished() && cur.Status.Finished()
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// sessionsWaitingForQuota are the sessions of o's namespace that wait for
// their project's quota.
func (r *BrowserSessionReconciler) sessionsWaitingForQuota(ctx context.Context, o client.Object) []reconcile.Request {
	var sessions v1alpha1.BrowserSessionList
	if err := r.Client.List(ctx, &sessions, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the sessions waiting for quota", "namespace", o.GetNamespace())
		return nil
	}
	var reqs []reconcile.Request
	for i := range sessions.Items {
		s := &sessions.Items[i]
		if s.Status.PodName == "" && !sessionOver(&s.Status) && meta.IsStatusConditionTrue(s.Status.Conditions, v1alpha1.BrowserSessionConditionQuotaExceeded) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s)})
		}
	}
	return reqs
}
