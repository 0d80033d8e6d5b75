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

// Command runner is the process of a browser-runner pod: it launches the
// session's Chromium (or attaches to its cdpUrl) and serves the runner RPC
// on port 8080; a warm pool's runner (BROWSERFLEET_POOL) starts its pool's
// browser and waits for a session to claim it. The manager configures it through the environment, which
// holds no secret, and the secret files of the directories it names (see
// runner/rpc); flags only tune the process.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/browserfleet/browserfleet/runner"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/runner/rpcserver"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		listen         = flag.String("listen-address", "", "host:port to serve the runner RPC on (default: $BROWSERFLEET_POD_IP:8080)")
		chromium       = flag.String("chromium", config.DefaultChromiumPath, "Chromium binary, unless the session's launchOptions.executablePath names another --allowed-executable")
		headlessShell  = flag.String("headless-shell", config.DefaultHeadlessShellPath, "Chromium's headless-only build, for headless sessions that name no executablePath and use no devtools, when the file is there; empty: --chromium for every session")
		siteIsolation  = flag.Bool("site-isolation", true, "isolate sites: cross-site iframes get renderer processes of their own; false lets the headless shell keep them in their page's renderer (a renderer less per embedded site, and no process boundary between a page and what it embeds)")
		webgl          = flag.Bool("webgl", true, "run WebGL on the software GPU (SwiftShader) when the node has none; false saves its memory (about 14 MB per session) and leaves pages without WebGL")
		dataDir        = flag.String("data-dir", "", "directory of the profiles (launchOptions.userDataDir) and downloads directories (downloadsPath) sessions name (default: $TMPDIR/browserfleet, /tmp/browserfleet in a runner pod)")
		allowed        []string
		shutdown       = flag.Duration("shutdown-timeout", config.DefaultShutdownTimeout, "how long closing the browser may take once SIGTERM arrives")
		maxQueued      = flag.Int("max-queued-operations", rpcserver.DefaultMaxQueuedOperations, "how many operations may wait for their turn on the session's page; beyond it an operation answers 429 SESSION_BUSY")
		crashExitDelay = flag.Duration("crash-exit-delay", 30*time.Second, "exit this long after the browser crashed, so the session fails (0: keep serving 503s)")
		logFormat      = flag.String("log-format", "json", "log format: json or text")
		logLevel       = flag.String("log-level", "", "log level: debug, info, warn or error (default: from the session's verbose)")
		searchURL      = flag.String(rpc.FlagSearchURL, "", "URL of the API's search relay, which offers agents web search; empty: no search tool")
		servicesURL    = flag.String(rpc.FlagServicesURL, "", "base URL of the API's runner listener, for the server-side cache and the model gateway; empty: neither")
		modelGateway   = flag.Bool(rpc.FlagModelGateway, false, "the API at --services-url serves the model gateway: call models without credentials of their own, and auto, through it")
		egressCfg      egress.Config
	)
	flag.Func(rpc.FlagAllowedExecutable, "absolute path of a browser binary a session's launchOptions.executablePath may name, besides --chromium; repeatable", func(v string) error {
		if err := rpc.CheckAllowedExecutable(v); err != nil {
			return err
		}
		allowed = append(allowed, v)
		return nil
	})
	egressCfg.AddFlags(flag.CommandLine)
	flag.Parse()
	if flag.NArg() > 0 {
		// A stray argument would stop the parsing of the flags after it,
		// the egress ranges among them.
		fmt.Fprintf(os.Stderr, "runner: unexpected arguments %q\n", flag.Args())
		return 2
	}

	cfg, err := config.FromEnv(os.Environ())
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 2
	}
	cfg.ListenAddress = *listen
	cfg.ChromiumPath = *chromium
	cfg.HeadlessShellPath = *headlessShell
	cfg.DisableSiteIsolation = !*siteIsolation
	cfg.DisableWebGL = !*webgl
	cfg.ShutdownTimeout = *shutdown
	cfg.CrashExitDelay = *crashExitDelay
	if *maxQueued < 1 {
		fmt.Fprintln(os.Stderr, "runner: --max-queued-operations must be at least 1")
		return 2
	}
	cfg.MaxQueuedOperations = *maxQueued
	cfg.DataDir = *dataDir
	cfg.AllowedExecutables = allowed
	cfg.Egress = egress.NewPolicy(egressCfg)
	cfg.ServicesURL = *servicesURL
	cfg.ModelGateway = *modelGateway
	cfg.SearchURL = *searchURL
	// A pooled runner connects them for the session that claims it.
	connect := cfg.ConnectServices
	if cfg.Pool != "" {
		connect = cfg.CheckServices
	}
	if err := connect(); err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 2
	}

	l, err := parseLevel(*logLevel, cfg.Spec.Verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 2
	}
	// A pooled runner learns the session's verbose at the claim.
	level := &slog.LevelVar{}
	level.Set(l)
	hopts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler
	switch *logFormat {
	case "json":
		handler = slog.NewJSONHandler(os.Stderr, hopts)
	case "text":
		handler = slog.NewTextHandler(os.Stderr, hopts)
	default:
		fmt.Fprintf(os.Stderr, "runner: unknown log format %q\n", *logFormat)
		return 2
	}
	log := slog.New(handler)
	slog.SetDefault(log)
	if err := harden(); err != nil {
		log.Warn("could not make the runner non-dumpable", "err", err)
	}
	log.Info("egress policy: the public internet, and the allowed ranges", "allow", egressCfg.AllowCIDRs, "cluster", egressCfg.ClusterCIDRs)

	// SIGTERM is how the kubelet ends the pod; the runner then closes the
	// browser within the termination grace period.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	tp, err := newTracerProvider(ctx, log)
	if err != nil {
		log.Error("cannot export traces", "err", err)
		return 2
	}
	if tp != nil {
		defer flushTraces(tp, log)
	}

	// The operations are the engine over the session's model,
	// systemPrompt and selfHeal (runner.Run makes them, at the claim for a
	// pooled runner).
	ropts := runner.Options{Logger: log, OnClaim: func(claimed *config.Config) {
		if *logLevel == "" {
			// The flag was checked above; verbose maps without error.
			l, _ := parseLevel("", claimed.Spec.Verbose)
			level.Set(l)
		}
	}}
	if tp != nil {
		ropts.TracerProvider = tp
	}
	err = runner.Run(ctx, cfg, ropts)
	if err != nil {
		log.Error("runner failed", "session", cfg.SessionName, "pool", cfg.Pool, "err", err)
		return 1
	}
	return 0
}

// parseLevel reads --log-level, or maps the session's verbose (0 quiet, 1
// normal, 2 debug) when the flag is empty.
func parseLevel(flagValue string, verbose *int32) (slog.Level, error) {
	if flagValue != "" {
		var l slog.Level
		if err := l.UnmarshalText([]byte(flagValue)); err != nil {
			return 0, fmt.Errorf("unknown log level %q", flagValue)
		}
		return l, nil
	}
	switch {
	case verbose == nil || *verbose == 1:
		return slog.LevelInfo, nil
	case *verbose <= 0:
		return slog.LevelWarn, nil
	default:
		return slog.LevelDebug, nil
	}
}
