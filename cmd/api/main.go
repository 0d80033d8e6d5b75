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
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/server"
	"github.com/browserfleet/browserfleet/server/apikey"
	"github.com/browserfleet/browserfleet/server/cdptoken"
	"github.com/browserfleet/browserfleet/server/metrics"
)

func main() {
	var (
		listenAddr    = ":8000"
		metricsAddr   = ":8080"
		metricsSecure bool
		startTimeout  = server.DefaultStartTimeout
		maxBody       = server.DefaultMaxBodyBytes
		shutdownGrace = 30 * time.Second
		cdpKeyFile    string
		cdpKeyPrev    string
		cdpURLTTL     = server.DefaultCDPURLTTL
		publicURL     string
	)
	flag.StringVar(&listenAddr, "listen-address", listenAddr, "address of the /v1 API, /healthz and /readyz")
	flag.StringVar(&metricsAddr, "metrics-bind-address", metricsAddr, "address of the metrics endpoint; 0 disables it")
	flag.BoolVar(&metricsSecure, "metrics-secure", false, "serve metrics over HTTPS, to callers the cluster authorizes")
	flag.DurationVar(&startTimeout, "start-timeout", startTimeout, "how long session start waits for the browser to be ready")
	flag.Int64Var(&maxBody, "max-body-bytes", maxBody, "largest request body accepted; larger ones get 413")
	flag.DurationVar(&shutdownGrace, "shutdown-grace", shutdownGrace, "how long in-flight requests may finish after SIGTERM")
	flag.StringVar(&cdpKeyFile, "cdp-signing-key-file", "", "file holding the key that signs cdpUrl tokens (a mounted Secret, shared by every replica); empty: a random key per process, which only suits a single replica")
	flag.StringVar(&cdpKeyPrev, "cdp-signing-key-previous-file", "", "file holding the previous signing key, still accepted while a rotation completes")
	flag.DurationVar(&cdpURLTTL, "cdp-url-ttl", cdpURLTTL, "how long a cdpUrl may be used to connect (never past its session's expiry)")
	flag.StringVar(&publicURL, "public-url", "", "base URL clients reach the API at, for cdpUrl (e.g. https://browserfleet.example.com); empty: the host of each request")
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
	metricsOpts := metricsserver.Options{BindAddress: metricsAddr, SecureServing: metricsSecure}
	if metricsSecure {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	// No leader election: every API replica serves. The probes are the
	// server's own, on the API port, so the manager's are off.
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Cache:                  server.CacheOptions(),
		Metrics:                metricsOpts,
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
	signer, err := cdpSigner(cdpKeyFile, cdpKeyPrev)
	if err != nil {
		fatal(err, "loading the cdpUrl signing key")
	}
	if cdpKeyFile == "" {
		log.Info("no --cdp-signing-key-file: cdpUrls are signed with a random key of this process, which other replicas refuse")
	}
	// The metrics server of the manager serves these, on its own port:
	// they name projects and models, which is not for the API's callers.
	m, err := metrics.New(ctrlmetrics.Registry, mgr.GetClient())
	if err != nil {
		fatal(err, "registering metrics")
	}
	handler, err := server.New(server.Options{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		Cache:         mgr.GetCache(),
		Authenticator: auth,
		StartTimeout:  startTimeout,
		MaxBodyBytes:  maxBody,
		Logger:        ctrl.Log.WithName("http"),
		Metrics:       m,
		CDPSigner:     signer,
		CDPURLTTL:     cdpURLTTL,
		PublicURL:     publicURL,
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
	// Shutdown stops accepting and waits for in-flight calls. /readyz fails
	// at once so that load balancers send no more; calls still running when
	// the grace has passed are aborted: plain calls answer 503, streams end
	// with an error frame, CDP connections close (a start whose client is cut
	// off ends the session it made).
	handler.Drain()
	graceCtx, cancelGrace := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancelGrace()
	go func() {
		<-graceCtx.Done()
		handler.Abort()
	}()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace+10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Error(err, "graceful shutdown incomplete; closing connections")
		_ = srv.Close()
	}
	// Hijacked connections (CDP) are not Shutdown's to wait for.
	handler.Abort()
	stopMgr()
	if err := <-mgrDone; err != nil {
		fatal(err, "stopping manager")
	}
}

// cdpSigner loads the cdpUrl signing keys, or makes a random one.
func cdpSigner(current, previous string) (*cdptoken.Signer, error) {
	var key []byte
	var err error
	if current == "" {
		key, err = cdptoken.GenerateKey()
	} else {
		key, err = cdptoken.LoadKey(current)
	}
	if err != nil {
		return nil, err
	}
	var prev [][]byte
	if previous != "" {
		p, err := cdptoken.LoadKey(previous)
		if err != nil {
			return nil, err
		}
		prev = append(prev, p)
	}
	return cdptoken.NewSigner(key, prev...)
}

func fatal(err error, msg string) {
	ctrl.Log.WithName("setup").Error(err, msg)
	os.Exit(1)
}
