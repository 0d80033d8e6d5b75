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
// runner pods, AgentTasks run in their sessions' runners. Flags set the
// process's basics; the Configuration file of --config (api/config/v1alpha1,
// docs/configuration.md) sets the rest. Its wiring is in cmd/manager/app,
// which the local dev stack runs too.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/browserfleet/browserfleet/cmd/manager/app"
)

func main() {
	opts := app.DefaultOptions()
	opts.AddFlags(flag.CommandLine)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Usage = usage
	flag.Parse()
	// A bad file stops the manager before it touches the cluster.
	if err := opts.LoadConfig(); err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		os.Exit(1)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	ctx := ctrl.SetupSignalHandler()
	mgr, err := app.New(ctx, ctrl.GetConfigOrDie(), opts)
	if err != nil {
		fatal(err, "setting up manager")
	}
	log.Info("starting manager", "config", opts.ConfigFile, "runnerImage", opts.Controllers.Runner.Image)
	if err := mgr.Start(ctx); err != nil {
		fatal(err, "running manager")
	}
}

// usage points whoever passes a --runner-*, --session-* or --quota-* flag
// of earlier versions to the file that took their place.
func usage() {
	out := flag.CommandLine.Output()
	fmt.Fprintf(out, "Usage of %s:\n", os.Args[0])
	flag.PrintDefaults()
	fmt.Fprintln(out, "\nRunner pods, session lifetimes, quotas and tasks are configured in the file of --config (docs/configuration.md), not by flags.")
}

func fatal(err error, msg string) {
	ctrl.Log.WithName("setup").Error(err, msg)
	os.Exit(1)
}
