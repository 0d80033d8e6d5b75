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

// Command load puts a `make dev` stack under load and prints what it
// measured, one scenario per run:
//
//	starts  N concurrent starts and some sequential ones: p50 and p95 of the
//	        start's answer, cold (no pool) and warm (a BrowserPool)
//	acts    S sessions doing A deterministic acts each at once: errors, act
//	        latency, and the memory of the process that runs the API and
//	        the manager
//	sse     K SSE streams held open by the API at once, and its memory
//
// It talks only to loopback: the API of make dev's env file (or
// BROWSERFLEET_API_URL and BROWSERFLEET_API_KEY), its control plane
// (KUBECONFIG) and a page server of its own on 127.0.0.1. Every count has
// a maximum and the whole run a deadline (-timeout). docs/performance.md
// ("Load") says how to run it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Bounds of the flags.
const (
	maxStarts         = 100 // v1alpha1.MaxPoolReplicas: one pool holds a burst
	maxSequential     = 50
	maxSessions       = 100
	maxActs           = 1000
	maxStreams        = 5000
	maxStreamSessions = 60 // 1,020 streamed operations: every stream in a runner queue
	maxTimeout        = time.Hour
)

// config is what the flags and the environment say.
type config struct {
	scenario       string
	envFile        string
	namespace      string
	jsonOut        bool
	timeout        time.Duration
	starts         int
	sequential     int
	mode           string
	sessions       int
	acts           int
	streams        int
	streamSessions int
	poolWait       time.Duration
	pid            int
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "load:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	env, err := connect(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "load:", err)
		return 1
	}
	defer env.close()
	env.logf = func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, a...)...)
	}

	rep := report{Scenario: cfg.scenario, Machine: machineNow(), API: env.apiURL, Process: env.proc}
	var runErr error
	switch cfg.scenario {
	case "starts":
		rep.Starts, runErr = runStarts(ctx, env, cfg)
	case "acts":
		rep.Acts, runErr = runActs(ctx, env, cfg)
	case "sse":
		rep.SSE, runErr = runSSE(ctx, env, cfg)
	}
	if cfg.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "load:", err)
			return 1
		}
	} else {
		rep.print(stdout)
	}
	if runErr != nil {
		fmt.Fprintln(stderr, "load:", runErr)
		return 1
	}
	if rep.failed() {
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./hack/load [flags] starts|acts|sse\n\n"+
			"Runs one scenario against a make dev stack (docs/performance.md, \"Load\").\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.envFile, "env", ".dev/env", "make dev's env file; BROWSERFLEET_API_URL, BROWSERFLEET_API_KEY and KUBECONFIG in the environment win over it")
	fs.StringVar(&cfg.namespace, "namespace", "default", "the project (namespace) of the API key, where pools are made")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print the figures as JSON instead of tables")
	fs.DurationVar(&cfg.timeout, "timeout", 20*time.Minute, fmt.Sprintf("deadline of the whole run, at most %s", maxTimeout))
	fs.IntVar(&cfg.starts, "starts", 50, fmt.Sprintf("starts: concurrent starts of the burst (1..%d)", maxStarts))
	fs.IntVar(&cfg.sequential, "sequential", 10, fmt.Sprintf("starts: starts made one at a time (0..%d)", maxSequential))
	fs.StringVar(&cfg.mode, "mode", "both", "starts: cold, warm or both")
	fs.DurationVar(&cfg.poolWait, "pool-wait", 5*time.Minute, "starts: how long warm waits for the pool's runners to be ready")
	fs.IntVar(&cfg.sessions, "sessions", 50, fmt.Sprintf("acts: sessions acting at once (1..%d)", maxSessions))
	fs.IntVar(&cfg.acts, "acts", 100, fmt.Sprintf("acts: acts of each session (1..%d)", maxActs))
	fs.IntVar(&cfg.streams, "streams", 1000, fmt.Sprintf("sse: streams held open at once (1..%d)", maxStreams))
	fs.IntVar(&cfg.streamSessions, "stream-sessions", 2, fmt.Sprintf("sse: sessions whose runners hold streamed navigates, %d each (0..%d); the other streams are starts", opStreamsPerSession, maxStreamSessions))
	fs.IntVar(&cfg.pid, "pid", 0, "the process that serves the API, whose memory is read; 0 finds the one listening on the API's port")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return cfg, errors.New("name one scenario: starts, acts or sse")
	}
	cfg.scenario = fs.Arg(0)
	return cfg, cfg.validate()
}

// validate checks every bound.
func (c config) validate() error {
	between := func(name string, v, lo, hi int) error {
		if v < lo || v > hi {
			return fmt.Errorf("-%s is %d, want %d to %d", name, v, lo, hi)
		}
		return nil
	}
	switch c.scenario {
	case "starts", "acts", "sse":
	default:
		return fmt.Errorf("unknown scenario %q: want starts, acts or sse", c.scenario)
	}
	switch c.mode {
	case "cold", "warm", "both":
	default:
		return fmt.Errorf("-mode is %q, want cold, warm or both", c.mode)
	}
	if c.timeout <= 0 || c.timeout > maxTimeout {
		return fmt.Errorf("-timeout is %s, want more than 0 and at most %s", c.timeout, maxTimeout)
	}
	if c.poolWait <= 0 || c.poolWait > maxTimeout {
		return fmt.Errorf("-pool-wait is %s, want more than 0 and at most %s", c.poolWait, maxTimeout)
	}
	return errors.Join(
		between("starts", c.starts, 1, maxStarts),
		between("sequential", c.sequential, 0, maxSequential),
		between("sessions", c.sessions, 1, maxSessions),
		between("acts", c.acts, 1, maxActs),
		between("streams", c.streams, 1, maxStreams),
		between("stream-sessions", c.streamSessions, 0, maxStreamSessions),
		between("pid", c.pid, 0, 1<<22),
	)
}
