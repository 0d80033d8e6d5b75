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

package devstack

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	apiapp "github.com/browserfleet/browserfleet/cmd/api/app"
	managerapp "github.com/browserfleet/browserfleet/cmd/manager/app"
	"github.com/browserfleet/browserfleet/internal/localkubelet"
	"github.com/browserfleet/browserfleet/tracing"
)

// apiShutdownGrace is short: on a developer's machine nobody waits for a
// drain.
const apiShutdownGrace = 5 * time.Second

// startKubelet runs the local kubelet, which runs RunnerImage's pods as
// runner processes; it returns once the kubelet sees every pod.
func (s *Stack) startKubelet(ctx context.Context) error {
	kl, err := localkubelet.New(localkubelet.Options{
		Config:   s.cfg,
		StateDir: filepath.Join(s.opts.Dir, "kubelet"),
		Images: map[string]localkubelet.Image{RunnerImage: {
			Entrypoint: []string{s.runnerBinary, "--log-format=text", "--chromium=" + s.opts.ChromiumPath},
		}},
		LogOutput: s.opts.LogOutput,
		Logger:    s.log.WithName("kubelet"),
	})
	if err != nil {
		return fmt.Errorf("setting up the local kubelet: %w", err)
	}
	s.kubelet = kl
	p := s.run("local kubelet", kl.Run)
	return await(ctx, p, func(ctx context.Context) bool { return kl.WaitReady(ctx) == nil })
}

// startManager runs the controllers as cmd/manager does, with runner pods
// of RunnerImage and no metrics or probe endpoints (their ports are the
// machine's).
func (s *Stack) startManager(ctx context.Context) error {
	opts := managerapp.DefaultOptions()
	opts.MetricsAddress = "0"
	opts.ProbeAddress = "0"
	opts.Controllers.Runner.Image = RunnerImage
	opts.Controllers.Runner.ModelBaseURLs = s.opts.ModelBaseURLs
	opts.Controllers.Runner.EgressAllowCIDRs = s.opts.EgressAllowCIDRs
	opts.Controllers.Runner.OTLPEndpoint = s.opts.OTLPEndpoint
	opts.Controllers.Runner.ServicesURL = s.servicesURL
	opts.Controllers.Runner.ModelGateway = s.opts.Gateway != nil
	if s.opts.Quota != nil {
		opts.Controllers.Quota = *s.opts.Quota
	}
	if s.opts.SessionSecretWait > 0 {
		opts.Controllers.Sessions.SecretWait = s.opts.SessionSecretWait
	}
	s.log.Info("runners may connect to these addresses of this machine (pages too): fine for a developer's machine, never for a shared one", "allowed", fmt.Sprint(s.opts.EgressAllowCIDRs))
	opts.Logger = s.log.WithName("manager")
	opts.SkipNameValidation = true
	mgr, err := managerapp.New(ctx, s.cfg, opts)
	if err != nil {
		return fmt.Errorf("setting up the manager: %w", err)
	}
	p := s.run("manager", mgr.Start)
	return await(ctx, p, mgr.GetCache().WaitForCacheSync)
}

// startAPI serves the /v1 API as cmd/api does, on the listener bound at the
// start, and returns once /readyz answers: its cache has synced, so keys
// are checked and sessions found.
func (s *Stack) startAPI(ctx context.Context) error {
	s.registry = prometheus.NewRegistry()
	opts := apiapp.DefaultOptions()
	opts.Listener = s.listener
	opts.RunnerListener = s.runnerListener
	opts.CacheRedisAddress = s.opts.CacheRedisAddress
	opts.CacheRedisPasswordFile = s.opts.CacheRedisPasswordFile
	opts.CacheEnabled = s.opts.CacheEnabled
	opts.MetricsAddress = "0"
	opts.ShutdownGrace = apiShutdownGrace
	opts.CDPKeyFile = s.cdpKeyPath()
	// The stack's one project, as the chart makes its bootstrap key's
	// namespace one.
	opts.ProjectNamespaces = []string{s.opts.Namespace}
	if s.opts.Quota != nil {
		opts.Quota = *s.opts.Quota
	}
	opts.Registry = s.registry
	opts.Logger = s.log.WithName("api")
	s.applyGateway(&opts)
	var tp *sdktrace.TracerProvider
	if s.opts.OTLPEndpoint != "" {
		var err error
		tp, err = tracing.New(ctx, tracing.Options{Endpoint: s.opts.OTLPEndpoint, DefaultServiceName: apiapp.ServiceName})
		if err != nil {
			return fmt.Errorf("setting up the API's trace export: %w", err)
		}
		opts.TracerProvider = tp
	}
	p := s.run("api", func(ctx context.Context) error {
		err := apiapp.Run(ctx, s.cfg, opts)
		if tp != nil {
			// Run leaves a provider it was given alone; its last spans
			// go out now.
			flushCtx, cancel := context.WithTimeout(context.Background(), apiShutdownGrace)
			defer cancel()
			err = errors.Join(err, tp.Shutdown(flushCtx))
		}
		return err
	})
	return await(ctx, p, func(ctx context.Context) bool { return pollReady(ctx, s.apiURL+"/readyz") })
}
