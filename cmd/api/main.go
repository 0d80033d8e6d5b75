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

// Command api runs the API pod: the /v1 HTTP service of spec/http-api.md
// over the BrowserSessions of the cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/server"
	"github.com/browserfleet/browserfleet/server/apikey"
)

func main() {
	var (
		listenAddr    = ":8000"
		metricsAddr   = ":8080"
		metricsSecure bool
		startTimeout  = server.DefaultStartTimeout
		maxBody       = server.DefaultMaxBodyBytes
		shutdownGrace = 30 * time.Second
	)
	flag.StringVar(&listenAddr, "listen-address", listenAddr, "address of the /v1 API, /healthz and /readyz")
	flag.StringVar(&metricsAddr, "metrics-bind-address", metricsAddr, "address of the metrics endpoint; 0 disables it")
	flag.BoolVar(&metricsSecure, "metrics-secure", false, "serve metrics over HTTPS, to callers the cluster authorizes")
	flag.DurationVar(&startTimeout, "start-timeout", startTimeout, "how long session start waits for the browser to be ready")
	flag.Int64Var(&maxBody, "max-body-bytes", maxBody, "largest request body accepted; larger ones get 413")
	flag.DurationVar(&shutdownGrace, "shutdown-grace", shutdownGrace, "how long in-flight requests may finish after SIGTERM")
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
	// No leader election: every API replica serves. The probes are the
	// server's own, on the API port, so the manager's are off.
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Cache:                  server.CacheOptions(),
		Metrics:                metrics,
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		fatal(err, "creating manager")
	}

	// The manager outlives the HTTP server: draining requests still read
	// its cache. Hence its own context, cancelled after the drain.
	mgrCtx, stopMgr := context.WithCancel(context.Background())
	defer stopMgr()
	auth, err := apikey.NewAuthenticator(mgrCtx, mgr.GetFieldIndexer(), mgr.GetClient())
	if err != nil {
		fatal(err, "setting up the authenticator")
	}
	handler, err := server.New(server.Options{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		Cache:         mgr.GetCache(),
		Authenticator: auth,
		StartTimeout:  startTimeout,
		MaxBodyBytes:  maxBody,
		Logger:        ctrl.Log.WithName("http"),
	})
	if err != nil {
		fatal(err, "setting up the server")
	}
	srv := &http.Server{
		Addr:              listenAddr,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		// No WriteTimeout: start legitimately takes up to --start-timeout,
		// and streamed replies longer; handlers bound their own work.
		IdleTimeout: 2 * time.Minute,
	}

	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.ListenAndServe() }()
	log.Info("serving", "address", listenAddr, "startTimeout", startTimeout, "maxBodyBytes", maxBody)

	signals := ctrl.SetupSignalHandler()
	select {
	case <-signals.Done():
		log.Info("shutting down", "grace", shutdownGrace)
	case err := <-srvDone:
		fatal(err, "serving")
	case err := <-mgrDone:
		if err == nil {
			err = errors.New("manager stopped")
		}
		fatal(err, "running manager")
	}
	// Shutdown stops accepting and waits for in-flight requests; those still
	// running after the grace period are cut off by Close (a start whose
	// client is cut off ends the session it made).
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Error(err, "graceful shutdown incomplete; closing connections")
		_ = srv.Close()
	}
	stopMgr()
	if err := <-mgrDone; err != nil {
		fatal(err, "stopping manager")
	}
}

func fatal(err error, msg string) {
	ctrl.Log.WithName("setup").Error(err, msg)
	os.Exit(1)
}
