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
// runner pods, AgentTasks are settled against their sessions. Its wiring is
// in cmd/manager/app, which the local dev stack runs too.
package main

import (
	"flag"
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
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	ctx := ctrl.SetupSignalHandler()
	mgr, err := app.New(ctx, ctrl.GetConfigOrDie(), opts)
	if err != nil {
		fatal(err, "setting up manager")
	}
	log.Info("starting manager", "runnerImage", opts.Controllers.Runner.Image)
	if err := mgr.Start(ctx); err != nil {
		fatal(err, "running manager")
	}
}

func fatal(err error, msg string) {
	ctrl.Log.WithName("setup").Error(err, msg)
	os.Exit(1)
}
