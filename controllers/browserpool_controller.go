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
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// BrowserPoolReconciler keeps each BrowserPool's unclaimed runners at its
// replicas: it starts runners with the pool's template, replaces those
// that fail, and removes those its template no longer describes. Sessions
// claim runners (claimWarmRunner); a claimed runner is the session's and
// the pool starts another.
type BrowserPoolReconciler struct {
	Client client.Client
	// APIReader reads the pool's token Secret, which the cache does not
	// hold.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Runner    RunnerConfig
	Quota     quota.Config

	// pending are the runners this controller created or deleted that its
	// cache does not show yet (ReplicaSet's expectations): until it does,
	// a pass would count them wrong and start or remove too many.
	pending pendingRunners
}

// pendingTTL is how long a creation or deletion the cache never showed is
// waited for.
const pendingTTL = time.Minute

// pendingRunners are, by pool, runners created or deleted but not yet seen
// so in the cache.
type pendingRunners struct {
	mu    sync.Mutex
	pools map[types.NamespacedName]map[string]pendingChange
}

type pendingChange struct {
	deleted bool
	at      time.Time
}

func (p *pendingRunners) add(pool types.NamespacedName, pod string, deleted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pools == nil {
		p.pools = map[types.NamespacedName]map[string]pendingChange{}
	}
	if p.pools[pool] == nil {
		p.pools[pool] = map[string]pendingChange{}
	}
	p.pools[pool][pod] = pendingChange{deleted: deleted, at: time.Now()}
}

// settled drops the changes the cache shows (pods, the pool's as listed)
// and reports whether none is left to wait for.
func (p *pendingRunners) settled(pool types.NamespacedName, pods []corev1.Pod) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	changes := p.pools[pool]
	if len(changes) == 0 {
		return true
	}
	present := map[string]bool{}
	for i := range pods {
		present[pods[i].Name] = pods[i].DeletionTimestamp == nil
	}
	for name, c := range changes {
		live, listed := present[name]
		if time.Since(c.at) > pendingTTL || (c.deleted && !live) || (!c.deleted && listed) {
			delete(changes, name)
		}
	}
	if len(changes) == 0 {
		delete(p.pools, pool)
		return true
	}
	return false
}

// forget drops a pool that is gone.
func (p *pendingRunners) forget(pool types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pools, pool)
}

// +kubebuilder:rbac:groups=browserfleet.io,resources=browserpools,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=browserfleet.io,resources=browserpools/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=browserfleet.io,resources=browserpools/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;update;delete;patch

// Reconcile brings one pool's unclaimed runners in line with its spec.
func (r *BrowserPoolReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pool := &v1alpha1.BrowserPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		if apierrors.IsNotFound(err) {
			r.pending.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pool.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, pool)
	}
	if controllerutil.AddFinalizer(pool, PoolRunnersFinalizer) {
		// The update is an event of its own; the next pass goes on from here.
		return ctrl.Result{}, r.Client.Update(ctx, pool)
	}
	orig := pool.DeepCopy()
	stepErr := r.reconcileRunners(ctx, pool)
	if err := r.writeStatus(ctx, orig, pool); err != nil {
		return ctrl.Result{}, errors.Join(stepErr, err)
	}
	r.recordEvents(orig, pool)
	return ctrl.Result{}, stepErr
}

// PoolRunnersFinalizer keeps a deleted BrowserPool until its unclaimed
// runners are gone: each holds a browser, and a control plane without a
// garbage collector (make dev's) would leave them running. Claimed runners
// are their sessions' and stay.
const PoolRunnersFinalizer = "browserfleet.io/pool-runners"

// reconcileDelete deletes the pool's unclaimed runners, then lets the pool
// go. Its token Secret goes with it through the garbage collector.
func (r *BrowserPoolReconciler) reconcileDelete(ctx context.Context, pool *v1alpha1.BrowserPool) error {
	if !controllerutil.ContainsFinalizer(pool, PoolRunnersFinalizer) {
		return nil
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(pool.Namespace), client.MatchingLabels{v1alpha1.LabelPool: pool.Name}); err != nil {
		return fmt.Errorf("listing the pool's runners: %w", err)
	}
	left := 0
	var errs []error
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !metav1.IsControlledBy(pod, pool) {
			continue
		}
		left++
		if pod.DeletionTimestamp == nil {
			errs = append(errs, r.deleteRunner(ctx, pool, pod))
		}
	}
	if err := errors.Join(errs...); err != nil || left > 0 {
		// The pods' deletions bring the next pass.
		return err
	}
	r.pending.forget(client.ObjectKeyFromObject(pool))
	controllerutil.RemoveFinalizer(pool, PoolRunnersFinalizer)
	return client.IgnoreNotFound(r.Client.Update(ctx, pool))
}

// poolRunners are the runner pods a pool started, sorted out.
type poolRunners struct {
	// idle are the pool's unclaimed runners that may yet serve: running
	// or starting, with the pool's current template.
	idle []*corev1.Pod
	// ready are the idle runners that can be claimed now.
	ready int32
	// stale are unclaimed runners to remove: failed, or started with an
	// older template.
	stale []*corev1.Pod
	// claimed are runners sessions claimed that still run.
	claimed int32
}

func (r *BrowserPoolReconciler) reconcileRunners(ctx context.Context, pool *v1alpha1.BrowserPool) error {
	tmpl := v1alpha1.NormalizeTemplate(ptr.Deref(pool.Spec.Template, v1alpha1.BrowserPoolTemplate{}))
	hash := v1alpha1.LaunchHash(tmpl)
	pool.Status.LaunchHash = hash
	pool.Status.Selector = idleSelector(pool.Name).String()

	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(pool.Namespace), client.MatchingLabels{v1alpha1.LabelPool: pool.Name}); err != nil {
		return fmt.Errorf("listing the pool's runners: %w", err)
	}
	runners := sortRunners(pool, hash, pods.Items)
	pool.Status.Replicas = ptr.To(int32(len(runners.idle)))
	pool.Status.ReadyReplicas = ptr.To(runners.ready)
	pool.Status.ClaimedReplicas = ptr.To(runners.claimed)
	if !r.pending.settled(client.ObjectKeyFromObject(pool), pods.Items) {
		// The pod events of what the last pass did bring the next one.
		return nil
	}

	var errs []error
	for _, pod := range runners.stale {
		errs = append(errs, r.deleteRunner(ctx, pool, pod))
	}

	want := ptr.Deref(pool.Spec.Replicas, 1)
	if refusal := r.templateRefusal(ctx, pool, &tmpl); refusal != "" {
		// Runners started before the template changed keep serving; none
		// is started with a template that cannot run.
		setPoolCondition(pool, metav1.ConditionFalse, v1alpha1.BrowserPoolReasonTemplateRefused, refusal)
		return errors.Join(errs...)
	}
	room, err := r.quotaRoom(ctx, pool)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	// The quota bounds what the pool starts, not what it has: a runner
	// kept warm while sessions came is theirs to claim.
	target := min(want, max(room, int32(len(runners.idle))))

	switch have := int32(len(runners.idle)); {
	case have < target:
		if err := r.ensureToken(ctx, pool); err != nil {
			return errors.Join(append(errs, err)...)
		}
		for range target - have {
			errs = append(errs, r.createRunner(ctx, pool, &tmpl, hash))
		}
	case have > target:
		// The ones not ready first, then the newest: the oldest ready
		// runners are the likeliest to be claimed next.
		surplus := slices.Clone(runners.idle)
		slices.SortStableFunc(surplus, func(a, b *corev1.Pod) int {
			if ra, rb := podReady(a), podReady(b); ra != rb {
				if !ra {
					return -1
				}
				return 1
			}
			return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
		})
		for _, pod := range surplus[:have-target] {
			errs = append(errs, r.deleteRunner(ctx, pool, pod))
		}
	}

	switch {
	case target < want:
		setPoolCondition(pool, metav1.ConditionFalse, v1alpha1.BrowserPoolReasonQuotaLimited,
			fmt.Sprintf("the project's quota of %d concurrent sessions, less its sessions that have not ended and its other pools' warm runners, leaves room for %d of the %d warm runners the pool asks for", r.Quota.For(pool.Namespace).ConcurrentSessions, target, want))
	case runners.ready >= want:
		setPoolCondition(pool, metav1.ConditionTrue, v1alpha1.BrowserPoolReasonReplicasReady, fmt.Sprintf("%d of %d runners are ready to be claimed", runners.ready, want))
	default:
		setPoolCondition(pool, metav1.ConditionFalse, v1alpha1.BrowserPoolReasonReplicasStarting, fmt.Sprintf("%d of %d runners are ready to be claimed", runners.ready, want))
	}
	return errors.Join(errs...)
}

// sortRunners sorts a pool's pods into idle, stale and claimed.
func sortRunners(pool *v1alpha1.BrowserPool, hash string, pods []corev1.Pod) poolRunners {
	var out poolRunners
	for i := range pods {
		pod := &pods[i]
		finished := pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
		if !metav1.IsControlledBy(pod, pool) {
			if _, claimed := pod.Labels[v1alpha1.LabelSession]; claimed && !finished && pod.DeletionTimestamp == nil {
				out.claimed++
			}
			continue
		}
		switch {
		case pod.DeletionTimestamp != nil:
		case finished || pod.Labels[v1alpha1.LabelLaunchHash] != hash:
			out.stale = append(out.stale, pod)
		default:
			out.idle = append(out.idle, pod)
			if podReady(pod) && pod.Status.PodIP != "" {
				out.ready++
			}
		}
	}
	return out
}

// idleSelector selects a pool's unclaimed runners.
func idleSelector(pool string) labels.Selector {
	return unclaimedRunners(requirement(v1alpha1.LabelPool, selection.Equals, pool))
}

// unclaimedRunners selects the runner pods that match reqs and that no
// session claimed: a claim labels the runner with its session.
func unclaimedRunners(reqs ...labels.Requirement) labels.Selector {
	return labels.NewSelector().Add(reqs...).Add(requirement(v1alpha1.LabelSession, selection.DoesNotExist))
}

// requirement is a label requirement on this package's own label keys and
// values, which labels.NewRequirement accepts.
func requirement(key string, op selection.Operator, values ...string) labels.Requirement {
	r, err := labels.NewRequirement(key, op, values)
	if err != nil {
		panic(fmt.Sprintf("label requirement on %s: %v", key, err))
	}
	return *r
}

// templateRefusal says why the pool's template cannot start a runner, or
// "" when it can: the same checks as a session's.
func (r *BrowserPoolReconciler) templateRefusal(ctx context.Context, pool *v1alpha1.BrowserPool, tmpl *v1alpha1.BrowserPoolTemplate) string {
	spec := templateSpec(tmpl)
	if msg := executableRefusal(spec, r.Runner); msg != "" {
		return "template: " + msg
	}
	if _, msg, err := regionRefusal(ctx, r.Client, r.APIReader, spec, r.Runner); err != nil {
		return fmt.Sprintf("template: checking its region: %v", err)
	} else if msg != "" {
		return "template: " + msg
	}
	refused, err := refusedSecretRefs(ctx, r.Client, pool, sessionSecretRefs(spec))
	if err != nil {
		return fmt.Sprintf("template: checking its Secrets: %v", err)
	}
	if len(refused) > 0 {
		return "template: " + refusalMessage(refused)
	}
	return ""
}

// quotaRoom is how many unclaimed runners the pool may have: a project may
// keep warm, across its pools, as many runners as it may yet start
// sessions: its concurrent sessions quota less its sessions that have not
// ended. More could never be claimed.
func (r *BrowserPoolReconciler) quotaRoom(ctx context.Context, pool *v1alpha1.BrowserPool) (int32, error) {
	limit := r.Quota.For(pool.Namespace).ConcurrentSessions
	if limit <= 0 {
		return v1alpha1.MaxPoolReplicas, nil
	}
	var sessions v1alpha1.BrowserSessionList
	if err := r.Client.List(ctx, &sessions, client.InNamespace(pool.Namespace)); err != nil {
		return 0, fmt.Errorf("listing the project's sessions: %w", err)
	}
	live := int32(quota.Live(sessions.Items))
	var pods corev1.PodList
	sel := unclaimedRunners(requirement(v1alpha1.LabelPool, selection.Exists))
	if err := r.Client.List(ctx, &pods, client.InNamespace(pool.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return 0, fmt.Errorf("listing the project's warm runners: %w", err)
	}
	others := int32(0)
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Labels[v1alpha1.LabelPool] != pool.Name {
			others++
		}
	}
	return max(int32(limit)-live-others, 0), nil
}

// templateSpec is a pool's template as the spec of a session that has
// nothing but it.
func templateSpec(tmpl *v1alpha1.BrowserPoolTemplate) *v1alpha1.BrowserSessionSpec {
	return &v1alpha1.BrowserSessionSpec{Browser: tmpl.Browser, CloudSessionCreateParams: tmpl.CloudSessionCreateParams}
}

// constructPoolRunner builds an unclaimed runner pod of a pool: a session's
// runner pod but for its name, chosen by the API server, and the token it
// accepts, the pool's, until a session claims it. The owner reference is
// set by the caller.
func constructPoolRunner(pool *v1alpha1.BrowserPool, tmpl *v1alpha1.BrowserPoolTemplate, hash string, cfg RunnerConfig) (*corev1.Pod, error) {
	return buildRunnerPod(runnerIdentity{
		generateName: pool.Name + "-",
		namespace:    pool.Namespace,
		labels: map[string]string{
			v1alpha1.LabelManagedBy:  v1alpha1.ManagedBy,
			v1alpha1.LabelComponent:  v1alpha1.ComponentRunner,
			v1alpha1.LabelPool:       pool.Name,
			v1alpha1.LabelLaunchHash: hash,
		},
		pool:        pool.Name,
		tokenSecret: v1alpha1.PoolTokenSecretName(pool.Name),
		spec:        templateSpec(tmpl),
	}, cfg)
}

// constructPoolTokenSecret builds the Secret of the token a pool's
// unclaimed runners accept their claim with. The owner reference is set by
// the caller.
func constructPoolTokenSecret(pool *v1alpha1.BrowserPool, token []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      v1alpha1.PoolTokenSecretName(pool.Name),
			Namespace: pool.Namespace,
			Labels: map[string]string{
				v1alpha1.LabelManagedBy: v1alpha1.ManagedBy,
				v1alpha1.LabelComponent: v1alpha1.ComponentRunner,
				v1alpha1.LabelPool:      pool.Name,
			},
		},
		Type:      corev1.SecretTypeOpaque,
		Immutable: ptr.To(true),
		Data:      map[string][]byte{rpc.TokenSecretKey: token},
	}
}

func (r *BrowserPoolReconciler) ensureToken(ctx context.Context, pool *v1alpha1.BrowserPool) error {
	// One left by an earlier pass, or by a deleted pool of the same name
	// that the garbage collector has not taken yet (make dev runs none), is
	// as good: the runners that knew it went with their pool
	// (PoolRunnersFinalizer). A Secret of the name that no pool of the name
	// controls is not the pool's.
	return createTokenSecret(ctx, r.Client, r.APIReader, r.Scheme, pool,
		func(token []byte) *corev1.Secret { return constructPoolTokenSecret(pool, token) },
		func(existing *corev1.Secret) bool {
			owner := metav1.GetControllerOf(existing)
			return owner != nil && owner.Kind == "BrowserPool" && owner.Name == pool.Name
		})
}

func (r *BrowserPoolReconciler) createRunner(ctx context.Context, pool *v1alpha1.BrowserPool, tmpl *v1alpha1.BrowserPoolTemplate, hash string) error {
	pod, err := constructPoolRunner(pool, tmpl, hash, r.Runner)
	if err != nil {
		return err
	}
	if err := controllerutil.SetControllerReference(pool, pod, r.Scheme); err != nil {
		return fmt.Errorf("owning pool runner: %w", err)
	}
	if err := r.Client.Create(ctx, pod); err != nil {
		return fmt.Errorf("creating a runner of pool %s: %w", pool.Name, err)
	}
	r.pending.add(client.ObjectKeyFromObject(pool), pod.Name, false)
	ctrl.LoggerFrom(ctx).V(1).Info("created pool runner", "pod", klog.KObj(pod))
	return nil
}

// deleteRunner deletes an unclaimed runner, unless a session claimed it
// since the pool's cache saw it: the precondition on its resource version
// fails then.
func (r *BrowserPoolReconciler) deleteRunner(ctx context.Context, pool *v1alpha1.BrowserPool, pod *corev1.Pod) error {
	err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID, ResourceVersion: &pod.ResourceVersion})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting pool runner %s: %w", pod.Name, err)
	}
	r.pending.add(client.ObjectKeyFromObject(pool), pod.Name, true)
	ctrl.LoggerFrom(ctx).V(1).Info("deleted pool runner", "pod", klog.KObj(pod))
	return nil
}

func setPoolCondition(pool *v1alpha1.BrowserPool, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{
		Type: v1alpha1.BrowserPoolConditionReady, Status: status, Reason: reason, Message: message,
		ObservedGeneration: pool.Generation,
	})
}

func (r *BrowserPoolReconciler) writeStatus(ctx context.Context, orig, pool *v1alpha1.BrowserPool) error {
	pool.Status.ObservedGeneration = pool.Generation
	if equality.Semantic.DeepEqual(orig.Status, pool.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, pool, client.MergeFrom(orig)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("writing status: %w", err))
	}
	return nil
}

// recordEvents records a change of the pool's Ready reason, once its
// status is written.
func (r *BrowserPoolReconciler) recordEvents(orig, pool *v1alpha1.BrowserPool) {
	before := meta.FindStatusCondition(orig.Status.Conditions, v1alpha1.BrowserPoolConditionReady)
	after := meta.FindStatusCondition(pool.Status.Conditions, v1alpha1.BrowserPoolConditionReady)
	if after == nil || (before != nil && before.Reason == after.Reason) {
		return
	}
	eventType := corev1.EventTypeNormal
	if after.Reason == v1alpha1.BrowserPoolReasonTemplateRefused || after.Reason == v1alpha1.BrowserPoolReasonQuotaLimited {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(pool, nil, eventType, after.Reason, "KeepWarm", "%s", after.Message)
}

// SetupWithManager registers the reconciler with a manager.
func (r *BrowserPoolReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BrowserPool{}).
		// Every runner a pool started, claimed or not: a claim takes one
		// from the pool (which then starts another), and a claimed one's
		// end changes the pool's claimed count.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(poolOfPod)).
		// A Secret that opts in may let a refused template start.
		WatchesMetadata(secretMetadata(), handler.EnqueueRequestsFromMapFunc(r.poolsOfNamespace)).
		// A session that ends or goes makes room in its project's quota.
		Watches(&v1alpha1.BrowserSession{}, handler.EnqueueRequestsFromMapFunc(r.limitedPools), builder.WithPredicates(freesQuota)).
		// A node that comes, or is labelled, may serve a refused
		// template's region. Its status updates, frequent, are not
		// looked at.
		WatchesMetadata(nodeMetadata(), handler.EnqueueRequestsFromMapFunc(r.refusedPools),
			builder.WithPredicates(nodeLabelled)).
		Named("browserpool").
		Complete(r)
}

func poolOfPod(_ context.Context, o client.Object) []reconcile.Request {
	name, ok := o.GetLabels()[v1alpha1.LabelPool]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// poolsOfNamespace are the pools of o's namespace whose template is
// refused, for a Secret that may have opted in to them.
func (r *BrowserPoolReconciler) poolsOfNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	return r.poolsWithReason(ctx, o, v1alpha1.BrowserPoolReasonTemplateRefused)
}

// nodeLabelled passes a node that comes, or whose labels change.
var nodeLabelled = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return true },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// refusedPools are the pools of every namespace whose template is
// refused, for a node that may serve their region.
func (r *BrowserPoolReconciler) refusedPools(ctx context.Context, _ client.Object) []reconcile.Request {
	var pools v1alpha1.BrowserPoolList
	if err := r.Client.List(ctx, &pools); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the pools")
		return nil
	}
	return withReason(pools.Items, v1alpha1.BrowserPoolReasonTemplateRefused)
}

// limitedPools are the pools of o's namespace that the project's quota
// holds below their replicas.
func (r *BrowserPoolReconciler) limitedPools(ctx context.Context, o client.Object) []reconcile.Request {
	return r.poolsWithReason(ctx, o, v1alpha1.BrowserPoolReasonQuotaLimited)
}

func (r *BrowserPoolReconciler) poolsWithReason(ctx context.Context, o client.Object, reason string) []reconcile.Request {
	var pools v1alpha1.BrowserPoolList
	if err := r.Client.List(ctx, &pools, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the pools of a namespace", "namespace", o.GetNamespace())
		return nil
	}
	return withReason(pools.Items, reason)
}

// withReason are the pools whose Ready condition has the reason.
func withReason(pools []v1alpha1.BrowserPool, reason string) []reconcile.Request {
	var reqs []reconcile.Request
	for i := range pools {
		p := &pools[i]
		if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.BrowserPoolConditionReady); c != nil && c.Reason == reason {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
		}
	}
	return reqs
}
