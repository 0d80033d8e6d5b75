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

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// env is what a scenario works with.
type env struct {
	apiURL    string
	api       *apiClient
	kube      client.Client
	namespace string
	pages     *pages
	// proc is the process that serves the API (and, on make dev, runs
	// the manager too), whose memory is read.
	proc processInfo
	logf func(format string, a ...any)
}

func (e *env) close() { e.pages.close() }

// connect reads the stack's address, key and kubeconfig, refuses any that
// is not loopback, and finds the API's process.
func connect(ctx context.Context, cfg config) (*env, error) {
	vars, err := readEnvFile(cfg.envFile)
	if err != nil {
		return nil, err
	}
	get := func(name string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return vars[name]
	}
	apiURL, key, kubeconfig := get("BROWSERFLEET_API_URL"), get("BROWSERFLEET_API_KEY"), get("KUBECONFIG")
	if apiURL == "" || key == "" || kubeconfig == "" {
		return nil, fmt.Errorf("need BROWSERFLEET_API_URL, BROWSERFLEET_API_KEY and KUBECONFIG: run make dev and pass its env file (-env %s) or source it", cfg.envFile)
	}
	u, err := loopbackURL(apiURL)
	if err != nil {
		return nil, fmt.Errorf("BROWSERFLEET_API_URL: %w", err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig %s: %w", kubeconfig, err)
	}
	if _, err := loopbackURL(rc.Host); err != nil {
		return nil, fmt.Errorf("the kubeconfig's server: %w", err)
	}
	rc.QPS, rc.Burst = 50, 100
	scheme := runtime.NewScheme()
	if err := errors.Join(corev1.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	kube, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the control plane: %w", err)
	}

	e := &env{apiURL: u.String(), api: newAPIClient(u.String(), key), kube: kube, namespace: cfg.namespace, logf: func(string, ...any) {}}
	if err := e.api.ping(ctx); err != nil {
		return nil, fmt.Errorf("the API at %s: %w", u, err)
	}
	pid := cfg.pid
	if pid == 0 {
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			return nil, fmt.Errorf("BROWSERFLEET_API_URL %s names no port", u)
		}
		if pid, err = listenerPID(port); err != nil {
			return nil, fmt.Errorf("finding the API's process (pass -pid): %w", err)
		}
	}
	if e.proc, err = describeProcess(pid); err != nil {
		return nil, err
	}
	if e.pages, err = servePages(); err != nil {
		return nil, err
	}
	return e, nil
}

// readEnvFile reads the `export NAME=value` lines of make dev's env file;
// a missing file is no values.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
		name, value, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		vars[name] = unquote(value)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return vars, nil
}

// unquote undoes the env file's shell quoting: 'it'\”s' is it's.
func unquote(v string) string {
	if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
		return v
	}
	return strings.ReplaceAll(v[1:len(v)-1], `'\''`, `'`)
}

// loopbackURL parses an http(s) URL and refuses it unless its host is a
// loopback address or localhost: this command sends load, and load goes
// nowhere but this machine.
func loopbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parsing %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q: want an http or https URL", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return u, nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%q is not a loopback address: this command loads only this machine's make dev stack", raw)
	}
	return u, nil
}

// pollUntil calls done every interval until it reports true, it fails, or
// wait has passed (then it returns false).
func pollUntil(ctx context.Context, wait, interval time.Duration, done func(context.Context) (bool, error)) (bool, error) {
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := done(ctx)
		if err != nil || ok {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-timeout.C:
			return false, nil
		case <-t.C:
		}
	}
}

// newTransport is the HTTP transport of the API client: no cap on
// connections (a scenario decides how many calls run at once), and room
// for every session's idle connection.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = 2 * maxSessions
	t.MaxConnsPerHost = 0
	t.DisableCompression = true
	return t
}
