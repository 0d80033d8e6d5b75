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

// Command dev runs the whole service on this machine (internal/devstack): a
// control plane, the manager, the /v1 API and a runner process with
// Chromium per session, until Ctrl-C or SIGTERM. `make dev` runs it.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	configv1alpha1 "github.com/browserfleet/browserfleet/api/config/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/devstack"
	"github.com/browserfleet/browserfleet/quota"
)

func main() {
	os.Exit(run())
}

func run() int {
	opts := devstack.Options{}
	flag.StringVar(&opts.Dir, "dir", envOr("DEV_DIR", devstack.DefaultDir), "state directory: etcd data, keys, logs (env DEV_DIR)")
	flag.StringVar(&opts.APIAddress, "api-address", envOr("DEV_API_ADDRESS", devstack.DefaultAPIAddress), "address the /v1 API listens on (env DEV_API_ADDRESS)")
	flag.StringVar(&opts.RunnerBinary, "runner", "", "runner binary (default: bin/runner of the repository)")
	// The endpoints are checked as the manager checks its Configuration's
	// runner.modelBaseURLs.
	modelBaseURLs := map[string]string{}
	modelBaseURL := func(v string) error {
		for _, one := range strings.Split(v, ",") {
			if one = strings.TrimSpace(one); one == "" {
				continue
			}
			provider, endpoint, ok := strings.Cut(one, "=")
			if !ok || provider == "" {
				return fmt.Errorf("want provider=URL, not %q", one)
			}
			modelBaseURLs[provider] = endpoint
		}
		return configv1alpha1.ValidateModelBaseURLs(modelBaseURLs, field.NewPath("model-base-url")).ToAggregate()
	}
	flag.Func("model-base-url", "provider=URL: the endpoint runners use for that provider when a session names none, e.g. openai=http://127.0.0.1:11434/v1 for Ollama; repeatable (env DEV_MODEL_BASE_URL, comma-separated)", modelBaseURL)
	if v := os.Getenv("DEV_MODEL_BASE_URL"); v != "" {
		if err := modelBaseURL(v); err != nil {
			fmt.Fprintf(os.Stderr, "DEV_MODEL_BASE_URL: %v\n", err)
			return 2
		}
	}
	flag.StringVar(&opts.OTLPEndpoint, "otlp-endpoint", os.Getenv("DEV_OTLP_ENDPOINT"), "OTLP/HTTP base URL of an OpenTelemetry collector the API and the runners export their spans to, e.g. http://127.0.0.1:4318 (env DEV_OTLP_ENDPOINT); empty: runners export nothing, the API as OTEL_* says")
	flag.StringVar(&opts.CacheRedisAddress, "cache-redis-address", os.Getenv("DEV_CACHE_REDIS_ADDRESS"), "host:port of a Redis for the API's server-side cache and the gateway's budgets (env DEV_CACHE_REDIS_ADDRESS); empty: the API's embedded store")
	flag.BoolVar(&opts.CacheEnabled, "cache-enabled", os.Getenv("DEV_CACHE_ENABLED") == "true", "turn the server-side cache on for calls that do not say (env DEV_CACHE_ENABLED=true); off, a call turns it on with options.cache")
	gatewayDefault := flag.String("gateway-default-model", os.Getenv("DEV_GATEWAY_DEFAULT_MODEL"), "with --model-base-url, what the gateway's model auto means (env DEV_GATEWAY_DEFAULT_MODEL); empty: the first provider's usual model, such as openai/gpt-4.1-mini")
	verbosity := flag.Int("v", 0, "log verbosity: 1 adds controller-runtime's start and stop chatter and debug logs")
	// The API's and the manager's quota flags, with the make dev
	// environment's defaults: hack/load's 50 concurrent starts need more
	// than the default 10 sessions at once.
	q := quota.DefaultConfig()
	for _, e := range []struct {
		name string
		into *int
	}{{"DEV_QUOTA_CONCURRENT_SESSIONS", &q.Default.ConcurrentSessions}, {"DEV_QUOTA_LIVE_SESSIONS", &q.Default.LiveSessions}} {
		if v := os.Getenv(e.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: want a number, not %q\n", e.name, v)
				return 2
			}
			*e.into = n
		}
	}
	q.AddFlags(flag.CommandLine)
	flag.Parse()
	if q.Default.LiveSessions < q.Default.ConcurrentSessions && os.Getenv("DEV_QUOTA_LIVE_SESSIONS") == "" && !flagSet("quota-live-sessions") {
		// Raising only the sessions at once raises the live ones with it.
		q.Default.LiveSessions = q.Default.ConcurrentSessions
	}
	if err := q.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "dev: %v\n", err)
		return 2
	}
	opts.Quota = &q

	if len(modelBaseURLs) > 0 {
		opts.ModelBaseURLs = modelBaseURLs
		// The same endpoints behind the API's model gateway, with a dev
		// key: sessions without a model key (or model) of their own use
		// it, as they would a cluster's.
		opts.Gateway = &devstack.Gateway{BaseURLs: modelBaseURLs, DefaultModel: cmp.Or(*gatewayDefault, devGatewayModel(modelBaseURLs))}
	}
	log := newLogger(os.Stderr, *verbosity)
	opts.Logger = log
	// controller-runtime and client-go log through globals too.
	ctrl.SetLogger(log)
	klog.SetLogger(log.WithName("client-go"))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stack, err := devstack.Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		return 1
	}
	if err := welcome(os.Stdout, stack); err != nil {
		log.Error(err, "printing the env file")
	}

	code := 0
	select {
	case <-ctx.Done():
	case err := <-stack.Failed():
		log.Error(err, "the dev stack is broken; stopping it")
		code = 1
	}
	// From here a second Ctrl-C kills at once, the control plane included.
	stop()
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-again
		log.Info("killing the dev stack")
		stack.Kill()
		os.Exit(130)
	}()
	log.Info("stopping (Ctrl-C again to kill at once)")
	if err := stack.Stop(); err != nil {
		log.Error(err, "stopping the dev stack")
		return 1
	}
	return code
}

// flagSet says whether the command line set the flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// welcome prints the env file and what to try.
func welcome(w io.Writer, stack *devstack.Stack) error {
	env, err := os.ReadFile(stack.EnvPath())
	if err != nil {
		return err
	}
	envPath := relative(stack.EnvPath())
	fmt.Fprintf(w, "\nThe browserfleet dev stack is up. %s:\n\n%s\n", envPath, env)
	fmt.Fprintf(w, "Try it:\n\n%s\n", strings.ReplaceAll(tryIt, "ENV", envPath))
	fmt.Fprintf(w, "Runner logs: %s. Ctrl-C stops everything; the state stays in %s for the next run (remove it to start afresh).\n\n",
		relative(filepath.Join(stack.Dir(), "kubelet", "logs")), relative(stack.Dir()))
	return nil
}

// tryIt starts a session, navigates and ends it; ENV is the env file.
const tryIt = `  source ENV
  ID=$(curl -s -X POST "$BROWSERFLEET_API_URL/v1/sessions/start" \
    -H "x-svc-api-key: $BROWSERFLEET_API_KEY" -H 'Content-Type: application/json' \
    -d '{"modelName":"openai/gpt-4.1-mini"}' | grep -o '"sessionId":"[^"]*"' | cut -d'"' -f4); echo "$ID"
  curl -s -X POST "$BROWSERFLEET_API_URL/v1/sessions/$ID/navigate" \
    -H "x-svc-api-key: $BROWSERFLEET_API_KEY" -H 'Content-Type: application/json' \
    -d '{"url":"data:text/html,<h1>hi</h1>"}'; echo
  curl -s -X POST "$BROWSERFLEET_API_URL/v1/sessions/$ID/end" -H "x-svc-api-key: $BROWSERFLEET_API_KEY"; echo
  kubectl get browsersessions
`

// relative shortens path to the working directory's view of it.
func relative(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// devGatewayModels are the models auto means on make dev, by provider.
var devGatewayModels = map[string]string{
	"openai":    "openai/gpt-4.1-mini",
	"anthropic": "anthropic/claude-sonnet-4-5",
	"google":    "google/gemini-2.5-flash",
}

// devGatewayModel is the model auto means for the endpoints given: the
// usual model of the first provider, in the order openai, anthropic,
// google.
func devGatewayModel(baseURLs map[string]string) string {
	for _, p := range []string{"openai", "anthropic", "google"} {
		if _, ok := baseURLs[p]; ok {
			return devGatewayModels[p]
		}
	}
	return ""
}
