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
	"flag"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/quota"
)

// Options configure the controllers.
type Options struct {
	Runner   RunnerConfig
	Sessions SessionConfig
	// Quota bounds each project's sessions.
	Quota quota.Config
	// TaskSessionWait is how long an AgentTask waits for its session to
	// exist before it fails.
	TaskSessionWait time.Duration
}

// DefaultOptions are the options the manager's flags default to.
func DefaultOptions() Options {
	return Options{Runner: DefaultRunnerConfig(), Sessions: DefaultSessionConfig(), Quota: quota.DefaultConfig(), TaskSessionWait: 30 * time.Second}
}

// AddFlags binds the options to command-line flags.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	o.Runner.AddFlags(fs)
	o.Sessions.AddFlags(fs)
	o.Quota.AddFlags(fs)
	fs.DurationVar(&o.TaskSessionWait, "task-session-wait", o.TaskSessionWait, "how long an AgentTask waits for its session to exist before it fails")
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
	sessions := &BrowserSessionReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("browsersession-controller"),
		Runner:    opts.Runner,
		Sessions:  opts.Sessions,
		Quota:     opts.Quota,
		Clock:     clock.RealClock{},
	}
	if err := sessions.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the BrowserSession controller: %w", err)
	}
	tasks := &AgentTaskReconciler{
		Client:      mgr.GetClient(),
		APIReader:   mgr.GetAPIReader(),
		Scheme:      mgr.GetScheme(),
		Recorder:    mgr.GetEventRecorder("agenttask-controller"),
		Clock:       clock.RealClock{},
		SessionWait: opts.TaskSessionWait,
		SecretWait:  opts.Sessions.SecretWait,
	}
	if err := tasks.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the AgentTask controller: %w", err)
	}
	return nil
}
