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

// Command manager runs the browserfleet controllers: BrowserSessions become
// runner pods, AgentTasks are settled against their sessions.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/controllers"
)

func main() {
	var (
		metricsAddr    = ":8080"
		metricsSecure  bool
		probeAddr      = ":8081"
		leaderElection bool
		leaderElectNS  string
	)
	opts := controllers.DefaultOptions()
	flag.StringVar(&metricsAddr, "metrics-bind-address", metricsAddr, "address of the metrics endpoint; 0 disables it")
	flag.BoolVar(&metricsSecure, "metrics-secure", false, "serve metrics over HTTPS, to callers the cluster authorizes")
	flag.StringVar(&probeAddr, "health-probe-bind-address", probeAddr, "address of the /healthz and /readyz endpoints")
	flag.BoolVar(&leaderElection, "leader-elect", false, "elect a leader, so that only one replica reconciles at a time")
	flag.StringVar(&leaderElectNS, "leader-election-namespace", "", "namespace of the leader election lease (default: the pod's)")
	opts.AddFlags(flag.CommandLine)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fatal(err, "building scheme")
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		fatal(err, "building scheme")
	}

	metrics := metricsserver.Options{BindAddress: metricsAddr, SecureServing: metricsSecure}
	if metricsSecure {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                        scheme,
		Cache:                         controllers.CacheOptions(),
		Metrics:                       metrics,
		HealthProbeBindAddress:        probeAddr,
		LeaderElection:                leaderElection,
		LeaderElectionID:              "browserfleet-manager.browserfleet.io",
		LeaderElectionNamespace:       leaderElectNS,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		fatal(err, "creating manager")
	}
	ctx := ctrl.SetupSignalHandler()
	if err := controllers.SetupWithManager(ctx, mgr, opts); err != nil {
		fatal(err, "setting up controllers")
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		fatal(err, "adding health check")
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		fatal(err, "adding ready check")
	}
	log.Info("starting manager", "runnerImage", opts.Runner.Image)
	if err := mgr.Start(ctx); err != nil {
		fatal(err, "running manager")
	}
}

func fatal(err error, msg string) {
	ctrl.Log.WithName("setup").Error(err, msg)
	os.Exit(1)
}
