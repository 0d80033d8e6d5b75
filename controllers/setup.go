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
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/browserfleet/browserfleet/api/config/v1alpha1"
	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Options configure the controllers. The manager makes them from its
// Configuration file (NewOptions); processes that embed the controllers
// (the dev stack, tests) build them in Go, from DefaultOptions.
type Options struct {
	Runner   RunnerConfig
	Sessions SessionConfig
	// Quota bounds each project's sessions.
	Quota quota.Config
	// TaskSessionWait is how long an AgentTask waits for its session to
	// exist before it fails.
	TaskSessionWait time.Duration
	// Tasks bounds the AgentTasks' runs.
	Tasks TaskConfig
}

// DefaultOptions are the options of a Configuration that sets nothing.
func DefaultOptions() Options {
	opts, err := NewOptions(configv1alpha1.Default())
	if err != nil {
		panic(fmt.Sprintf("the default configuration: %v", err)) // its tests convert it
	}
	return opts
}

// NewOptions converts a defaulted, valid Configuration
// (configv1alpha1.Load) into the controllers' options.
func NewOptions(cfg *configv1alpha1.Configuration) (Options, error) {
	cfg = cfg.DeepCopy() // the options own their maps and lists
	r, s := &cfg.Runner, &cfg.Sessions
	allow, err := parseCIDRs(r.Egress.AllowCIDRs)
	if err != nil {
		return Options{}, fmt.Errorf("runner.egress.allowCIDRs: %w", err)
	}
	cluster, err := parseCIDRs(r.Egress.ClusterCIDRs)
	if err != nil {
		return Options{}, fmt.Errorf("runner.egress.clusterCIDRs: %w", err)
	}
	regions := RegionConfig{NodeLabel: r.Regions.NodeLabel}
	for _, name := range r.Regions.Accepted {
		regions.Accepted = append(regions.Accepted, v1alpha1.Region(name))
	}
	for name, m := range r.Regions.Mappings {
		if regions.Mappings == nil {
			regions.Mappings = map[v1alpha1.Region]RegionMapping{}
		}
		regions.Mappings[v1alpha1.Region(name)] = RegionMapping{NodeLabel: m.NodeLabel, Value: m.Value}
	}
	runner := RunnerConfig{
		Image:                         r.Image,
		ImagePullPolicy:               r.ImagePullPolicy,
		Command:                       r.Command,
		Args:                          r.Args,
		Resources:                     r.Resources,
		ShmSize:                       ptr.Deref(r.ShmSize, resource.Quantity{}),
		TmpSize:                       ptr.Deref(r.TmpSize, resource.Quantity{}),
		RunAsUser:                     ptr.Deref(r.RunAsUser, 0),
		TerminationGracePeriodSeconds: ptr.Deref(r.TerminationGracePeriodSeconds, 0),
		NodeSelector:                  r.NodeSelector,
		Tolerations:                   r.Tolerations,
		RuntimeClassName:              r.RuntimeClassName,
		Regions:                       regions,
		ModelBaseURLs:                 r.ModelBaseURLs,
		AllowedExecutables:            r.AllowedExecutables,
		EgressAllowCIDRs:              allow,
		EgressClusterCIDRs:            cluster,
		SearchURL:                     r.SearchURL,
		ServicesURL:                   r.ServicesURL,
		ModelGateway:                  r.ModelGateway,
		OTLPEndpoint:                  r.OTLPEndpoint,
	}
	sessions := SessionConfig{
		DefaultTimeout:       duration(s.DefaultTimeout),
		MaxTimeout:           duration(s.MaxTimeout),
		DefaultTTLAfterEnded: duration(s.TTLAfterEnded),
		SecretWait:           duration(s.SecretWait),
		StartupTimeout:       duration(s.StartupTimeout),
		ForceDeleteAfter:     duration(r.ForceDeleteAfter),
	}
	q := quota.Config{Default: quota.Limits{
		ConcurrentSessions: int(ptr.Deref(cfg.Quota.ConcurrentSessions, 0)),
		LiveSessions:       int(ptr.Deref(cfg.Quota.LiveSessions, 0)),
	}}
	for _, p := range cfg.Quota.Projects {
		if q.Projects == nil {
			q.Projects = map[string]quota.Limits{}
		}
		// Zero: the default's (quota.Config.For).
		q.Projects[p.Namespace] = quota.Limits{
			ConcurrentSessions: int(ptr.Deref(p.ConcurrentSessions, 0)),
			LiveSessions:       int(ptr.Deref(p.LiveSessions, 0)),
		}
	}
	tasks := TaskConfig{
		DefaultActiveDeadline: duration(cfg.Tasks.DefaultActiveDeadline),
		MaxRunning:            int(ptr.Deref(cfg.Tasks.MaxRunning, 0)),
		RunnerAttempts:        DefaultRunnerAttempts,
		RetryBackoff:          DefaultRetryBackoff,
		MaxRetryBackoff:       DefaultMaxRetryBackoff,
		CallTimeout:           DefaultCallTimeout,
		DeadlineGrace:         DefaultDeadlineGrace,
		StatusInterval:        DefaultStatusInterval,
	}
	return Options{Runner: runner, Sessions: sessions, Quota: q, TaskSessionWait: duration(cfg.Tasks.SessionWait), Tasks: tasks}, nil
}

func parseCIDRs(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		p, err := rpc.ParseCIDR(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func duration(d *metav1.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.Duration
}

// CacheOptions limit the manager's cache to the pods and secrets it manages,
// so that it never holds the rest of the cluster's.
func CacheOptions() cache.Options {
	managed := labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: v1alpha1.ManagedBy})
	hasLabel, err := labels.NewRequirement(v1alpha1.LabelSessionSecret, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant label key
	}
	optedIn := labels.NewSelector().Add(*hasLabel)
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: managed},
		// Only Secrets that opted in to sessions, and only their metadata
		// (the manager reads no Secret's data; see secretrefs.go).
		&corev1.Secret{}: {Label: optedIn},
	}}
}

// SetupWithManager registers the field indexes and every controller.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := opts.Quota.Validate(); err != nil {
		return err
	}
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	// The nodes' labels, for the region check (region.go), cached from
	// the start: a start that names a region reads them at once.
	if _, err := mgr.GetCache().GetInformer(ctx, nodeMetadata()); err != nil {
		return fmt.Errorf("watching nodes: %w", err)
	}
	sessions := &BrowserSessionReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("browsersession-controller"),
		Runner:    opts.Runner,
		Sessions:  opts.Sessions,
		Quota:     opts.Quota,
		Clock:     clock.RealClock{},
		Claimer:   NewClaimer(mgr.GetAPIReader(), opts.Runner, mgr.GetLogger().WithName("pool-claimer")),
		starts:    newStartTracker(startLatency),
	}
	if err := mgr.Add(sessions.Claimer); err != nil {
		return fmt.Errorf("adding the pool claimer: %w", err)
	}
	if err := sessions.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the BrowserSession controller: %w", err)
	}
	pools := &BrowserPoolReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("browserpool-controller"),
		Runner:    opts.Runner,
		Quota:     opts.Quota,
	}
	if err := pools.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the BrowserPool controller: %w", err)
	}
	if err := opts.Tasks.validate(); err != nil {
		return err
	}
	dispatcher := NewDispatcher(mgr.GetAPIReader(), opts.Tasks, mgr.GetLogger().WithName("agenttask-dispatcher"))
	if err := mgr.Add(dispatcher); err != nil {
		return fmt.Errorf("adding the AgentTask dispatcher: %w", err)
	}
	tasks := &AgentTaskReconciler{
		Client:      mgr.GetClient(),
		APIReader:   mgr.GetAPIReader(),
		Scheme:      mgr.GetScheme(),
		Recorder:    mgr.GetEventRecorder("agenttask-controller"),
		Clock:       clock.RealClock{},
		SessionWait: opts.TaskSessionWait,
		SecretWait:  opts.Sessions.SecretWait,
		Tasks:       opts.Tasks,
		Dispatcher:  dispatcher,
	}
	if err := tasks.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the AgentTask controller: %w", err)
	}
	return nil
}
