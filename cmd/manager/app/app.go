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

// Package app is the manager's wiring: cmd/manager runs it with its flags,
// and the local dev stack (internal/devstack) runs the same code in-process.
package app

import (
	"context"
	"flag"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	configv1alpha1 "github.com/browserfleet/browserfleet/api/config/v1alpha1"
	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/controllers"
)

// LeaderElectionID names the manager's leader election lease.
const LeaderElectionID = "browserfleet-manager.browserfleet.io"

// Options configure the manager. AddFlags binds the first group to
// cmd/manager's flags, and LoadConfig reads the Configuration file into
// Controllers; the rest are for processes that embed the manager.
type Options struct {
	// ConfigFile is the path of the manager's Configuration file
	// (config.browserfleet.io/v1alpha1); empty: the defaults.
	ConfigFile string
	// MetricsAddress is the metrics endpoint's address; "0" disables it.
	MetricsAddress string
	// MetricsSecure serves metrics over HTTPS to callers the cluster
	// authorizes.
	MetricsSecure bool
	// ProbeAddress is the /healthz and /readyz endpoints' address; "0"
	// disables them.
	ProbeAddress string
	// LeaderElection elects a leader, so that one replica reconciles.
	LeaderElection bool
	// LeaderElectionNamespace holds the lease; empty: the pod's.
	LeaderElectionNamespace string
	// Controllers configure the reconcilers: cmd/manager's from
	// ConfigFile, an embedding process's as it likes.
	Controllers controllers.Options

	// Logger is the manager's logger; default ctrl.Log.
	Logger logr.Logger
	// SkipNameValidation lets a process make more than one manager (the dev
	// stack restarted in one test process): controller names are otherwise
	// unique per process.
	SkipNameValidation bool
}

// DefaultOptions are the defaults of cmd/manager's flags and of its
// Configuration file.
func DefaultOptions() Options {
	return Options{
		MetricsAddress: ":8080",
		ProbeAddress:   ":8081",
		Controllers:    controllers.DefaultOptions(),
	}
}

// AddFlags binds the options to cmd/manager's flags: the process's
// basics and the path of the Configuration file, which says the rest.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "path of the manager's Configuration file (config.browserfleet.io/v1alpha1, docs/configuration.md); none: the defaults")
	fs.StringVar(&o.MetricsAddress, "metrics-bind-address", o.MetricsAddress, "address of the metrics endpoint; 0 disables it")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "serve metrics over HTTPS, to callers the cluster authorizes")
	fs.StringVar(&o.ProbeAddress, "health-probe-bind-address", o.ProbeAddress, "address of the /healthz and /readyz endpoints")
	fs.BoolVar(&o.LeaderElection, "leader-elect", o.LeaderElection, "elect a leader, so that only one replica reconciles at a time")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election lease (default: the pod's)")
}

// LoadConfig reads ConfigFile, when set, into Controllers. A file that does
// not decode or validate is an error naming the file and the field.
func (o *Options) LoadConfig() error {
	if o.ConfigFile == "" {
		return nil
	}
	cfg, err := configv1alpha1.Load(o.ConfigFile)
	if err != nil {
		return err
	}
	opts, err := controllers.NewOptions(cfg)
	if err != nil {
		return fmt.Errorf("configuration %s: %w", o.ConfigFile, err)
	}
	o.Controllers = opts
	return nil
}

// Scheme knows the built-in kinds and browserfleet's.
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	return scheme, nil
}

// The manager's client rate to the API server, unless its rest config sets
// one (controller-runtime's GetConfig sets 20 and 30).
const (
	ClientQPS   = 50
	ClientBurst = 100
)

// New makes the manager against cfg with every controller set up; its
// Start runs them. ctx bounds the field indexes' setup.
func New(ctx context.Context, cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		// client-go's own 5 per second is too few for fifty sessions
		// starting at once (each start is a handful of writes: the
		// finalizer, the token, the pod or its claim, the status).
		cfg.QPS, cfg.Burst = ClientQPS, ClientBurst
	}
	mgr, err := ctrl.NewManager(cfg, managerOptions(scheme, opts))
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := controllers.SetupWithManager(ctx, mgr, opts.Controllers); err != nil {
		return nil, fmt.Errorf("setting up controllers: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding ready check: %w", err)
	}
	return mgr, nil
}

func managerOptions(scheme *runtime.Scheme, opts Options) ctrl.Options {
	metrics := metricsserver.Options{BindAddress: opts.MetricsAddress, SecureServing: opts.MetricsSecure}
	if opts.MetricsSecure {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mo := ctrl.Options{
		Scheme:                        scheme,
		Cache:                         controllers.CacheOptions(),
		Metrics:                       metrics,
		HealthProbeBindAddress:        opts.ProbeAddress,
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
	}
	if opts.Logger.GetSink() != nil {
		mo.Logger = opts.Logger
	}
	if opts.SkipNameValidation {
		mo.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	}
	return mo
}
