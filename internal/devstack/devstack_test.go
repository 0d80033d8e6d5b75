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

package devstack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	managerapp "github.com/browserfleet/browserfleet/cmd/manager/app"
	"github.com/browserfleet/browserfleet/internal/devstack"
	"github.com/browserfleet/browserfleet/internal/testing/procs"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/server/apikey"
)

// runnerBin is the runner the suite builds, as `make build` would.
var runnerBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	// Logs go to stderr, which go test shows only for a failed package or
	// with -v.
	log := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil))
	ctrl.SetLogger(log)
	tmp, err := os.MkdirTemp("", "devstack-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	runnerBin = filepath.Join(tmp, "runner")
	build := exec.Command("go", "build", "-o", runnerBin, "./cmd/runner")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the runner: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

func options(t *testing.T, dir, address string) devstack.Options {
	return devstack.Options{
		Dir:          dir,
		APIAddress:   address,
		RunnerBinary: runnerBin,
		Logger:       ctrl.Log.WithName(t.Name()),
	}
}

// TestStack starts a stack, runs sessions through the API with the key of
// its env file, stops it and checks that nothing is left running, then
// starts it again on the same state, twice: with its key, and after the key
// was revoked.
func TestStack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dev")
	keepLogsOnFailure(t, dir)
	stack := start(t, options(t, dir, "127.0.0.1:0"))
	env := readEnv(t, stack.EnvPath())
	if env["BROWSERFLEET_API_URL"] != stack.APIURL() || env["BROWSERFLEET_API_KEY"] != stack.APIKey() || env["KUBECONFIG"] != stack.KubeconfigPath() {
		t.Fatalf("env file %v does not match the stack (%s, %s)", env, stack.APIURL(), stack.KubeconfigPath())
	}
	api := apiClient{url: env["BROWSERFLEET_API_URL"], key: env["BROWSERFLEET_API_KEY"]}
	k8s := kubeconfigClient(t, env["KUBECONFIG"])

	t.Run("a second stack on the same state fails", func(t *testing.T) {
		_, err := devstack.Start(context.Background(), options(t, dir, "127.0.0.1:0"))
		if err == nil || !strings.Contains(err.Error(), "another dev stack") {
			t.Fatalf("Start = %v, want a dev stack already running", err)
		}
	})

	ended := api.startSession(t)
	if phase := session(t, k8s, ended).Status.Phase; phase != v1alpha1.BrowserSessionReady {
		t.Fatalf("started session is %s, want Ready", phase)
	}
	api.post(t, "/v1/sessions/"+ended+"/navigate", `{"url":"data:text/html,<h1>hi</h1>"}`)
	checkServices(t, stack, k8s, api, ended)
	api.post(t, "/v1/sessions/"+ended+"/end", "")

	// A session that runs when the stack stops: its runner and Chromium
	// must go with the stack, as must the control plane.
	live := api.startSession(t)
	ps := stackProcesses(t, stack, k8s, live)
	stop(t, stack)
	for _, p := range ps {
		if procs.Running(p.pid) {
			t.Errorf("%s (pid %d) still runs after Stop", p.name, p.pid)
		}
	}

	cdpKey := readFile(t, filepath.Join(dir, "cdp-signing-key"))
	stack = start(t, options(t, dir, "127.0.0.1:0"))
	env = readEnv(t, stack.EnvPath())
	if env["BROWSERFLEET_API_KEY"] != api.key {
		t.Errorf("the restart made a new API key, though its Secret exists")
	}
	if readFile(t, filepath.Join(dir, "cdp-signing-key")) != cdpKey {
		t.Errorf("the restart made a new cdpUrl signing key")
	}
	api.url = env["BROWSERFLEET_API_URL"]
	k8s = kubeconfigClient(t, env["KUBECONFIG"])
	if phase := session(t, k8s, ended).Status.Phase; phase != v1alpha1.BrowserSessionEnded {
		t.Errorf("the ended session is %s after the restart, want Ended", phase)
	}
	// The live session's runner is gone: it fails, as on a kubelet restart.
	eventually(t, func() bool { return session(t, k8s, live).Status.Phase == v1alpha1.BrowserSessionFailed })
	api.get(t, "/v1/sessions/"+ended)
	next := api.startSession(t)
	api.post(t, "/v1/sessions/"+next+"/end", "")

	// A key whose Secret is gone is replaced on the next start.
	if err := k8s.DeleteAllOf(context.Background(), &corev1.Secret{}, client.InNamespace(devstack.DefaultNamespace),
		client.MatchingLabelsSelector{Selector: apikey.Selector()}); err != nil {
		t.Fatalf("revoking the API key: %v", err)
	}
	stop(t, stack)
	stack = start(t, options(t, dir, "127.0.0.1:0"))
	defer stop(t, stack)
	env = readEnv(t, stack.EnvPath())
	if env["BROWSERFLEET_API_KEY"] == api.key {
		t.Fatalf("the restart kept a revoked API key")
	}
	api = apiClient{url: env["BROWSERFLEET_API_URL"], key: env["BROWSERFLEET_API_KEY"]}
	api.get(t, "/v1/sessions")
}

// TestBusyPort: a busy API port fails the start with one line, before
// anything starts.
func TestBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	dir := filepath.Join(t.TempDir(), "dev")
	_, err = devstack.Start(context.Background(), options(t, dir, l.Addr().String()))
	if err == nil {
		t.Fatal("Start on a busy port succeeded")
	}
	msg := err.Error()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "port "+port+" is in use") || !strings.Contains(msg, "DEV_API_ADDRESS") {
		t.Errorf("error %q, want one line saying the port is in use and how to change it", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the control plane was set up: %v", err)
	}
	for _, p := range children() {
		t.Errorf("%s (pid %d) runs after a failed start", p.name, p.pid)
	}
}

// TestPrerequisites: each missing piece fails the start with one line
// that says how to fix it, before anything starts.
func TestPrerequisites(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		name  string
		tweak func(*devstack.Options)
		want  string
	}{
		{"envtest binaries", func(o *devstack.Options) { o.AssetsDir = missing }, "run `make envtest`"},
		{"chromium", func(o *devstack.Options) { o.ChromiumPath = missing }, "apt-get install chromium"},
		{"runner", func(o *devstack.Options) { o.RunnerBinary = missing }, "run `make build`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dev")
			opts := options(t, dir, "127.0.0.1:0")
			tc.tweak(&opts)
			_, err := devstack.Start(context.Background(), opts)
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start = %v, want one line saying %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "etcd")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the control plane was set up: %v", err)
			}
		})
	}
}

func start(t *testing.T, opts devstack.Options) *devstack.Stack {
	t.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stack, err := devstack.Start(ctx, opts)
	if err != nil {
		t.Fatalf("starting the dev stack: %v", err)
	}
	// Stop is idempotent: this only matters when the test fails first.
	t.Cleanup(func() { _ = stack.Stop() })
	t.Logf("the dev stack started in %s", time.Since(began).Round(time.Millisecond))
	return stack
}

func stop(t *testing.T, stack *devstack.Stack) {
	t.Helper()
	began := time.Now()
	if err := stack.Stop(); err != nil {
		t.Errorf("stopping the dev stack: %v", err)
	}
	t.Logf("the dev stack stopped in %s", time.Since(began).Round(time.Millisecond))
}

// readEnv reads the export lines of an env file.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reading the env file: %v", err)
	}
	defer func() { _ = f.Close() }()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "="); ok && !strings.HasPrefix(k, "#") {
			env[k] = v
		}
	}
	return env
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// eventually polls cond for up to 30 seconds.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}

func kubeconfigClient(t *testing.T, path string) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("loading the kubeconfig: %v", err)
	}
	scheme, err := managerapp.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("creating a client: %v", err)
	}
	return c
}

func session(t *testing.T, c client.Client, id string) *v1alpha1.BrowserSession {
	t.Helper()
	bs := &v1alpha1.BrowserSession{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: devstack.DefaultNamespace, Name: id}, bs); err != nil {
		t.Fatalf("getting session %s: %v", id, err)
	}
	return bs
}

// apiClient calls the /v1 API as curl would.
type apiClient struct {
	url, key string
}

var httpClient = &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{Proxy: nil}}

func (a apiClient) do(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, a.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-svc-api-key", a.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s answered %d: %s", method, path, resp.StatusCode, raw)
	}
	var reply map[string]any
	if err := json.Unmarshal(raw, &reply); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, raw)
	}
	return reply
}

func (a apiClient) post(t *testing.T, path, body string) map[string]any {
	t.Helper()
	return a.do(t, http.MethodPost, path, body)
}

func (a apiClient) get(t *testing.T, path string) map[string]any {
	t.Helper()
	return a.do(t, http.MethodGet, path, "")
}

// startSession starts a session and returns its id; start answers once the
// browser is ready.
func (a apiClient) startSession(t *testing.T) string {
	t.Helper()
	reply := a.post(t, "/v1/sessions/start", `{"modelName":"openai/gpt-4.1-mini"}`)
	data, _ := reply["data"].(map[string]any)
	id, _ := data["sessionId"].(string)
	if id == "" {
		t.Fatalf("start answered no session id: %v", reply)
	}
	return id
}

// checkServices: the session's runner got the API's runner listener as
// --services-url, on loopback; the listener serves runners only, and the
// project's key reaches the API's (embedded) cache.
func checkServices(t *testing.T, stack *devstack.Stack, k8s client.Client, api apiClient, id string) {
	t.Helper()
	if !strings.HasPrefix(stack.ServicesURL(), "http://127.0.0.1:") {
		t.Errorf("ServicesURL %q is not on loopback", stack.ServicesURL())
	}
	pod := &corev1.Pod{}
	key := types.NamespacedName{Namespace: devstack.DefaultNamespace, Name: session(t, k8s, id).Status.PodName}
	if err := k8s.Get(context.Background(), key, pod); err != nil {
		t.Fatal(err)
	}
	want := "--" + rpc.FlagServicesURL + "=" + stack.ServicesURL()
	if args := pod.Spec.Containers[0].Args; !slices.Contains(args, want) {
		t.Errorf("runner args %q lack %q", args, want)
	}
	resp, err := httpClient.Post(stack.ServicesURL()+cache.RunnerPathGet, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatalf("the runner listener: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the runner listener answered %d to a call without a token, want 401", resp.StatusCode)
	}
	got := api.post(t, cache.PathGet, `{"key":"`+strings.Repeat("ab", 32)+`","threshold":1}`)
	if got["count"] != float64(1) || got["hit"] != false {
		t.Errorf("a first cache get answered %v, want count 1 and no hit", got)
	}
}

// proc is a process of the stack.
type proc struct {
	name string
	pid  int
}

// stackProcesses lists the live session's runner and its browser, and the
// control plane.
func stackProcesses(t *testing.T, stack *devstack.Stack, c client.Client, id string) []proc {
	t.Helper()
	pod := session(t, c, id).Status.PodName
	runner, ok := stack.Kubelet().PID(types.NamespacedName{Namespace: devstack.DefaultNamespace, Name: pod})
	if !ok {
		t.Fatalf("runner of session %s is not running", id)
	}
	ps := []proc{{"runner", runner}}
	browser := 0
	for _, pid := range procs.SessionMembers(runner) {
		if pid != runner {
			ps = append(ps, proc{"browser process", pid})
			browser++
		}
	}
	if browser == 0 {
		t.Fatalf("runner %d of a ready session has no browser processes", runner)
	}
	cp := children()
	if len(cp) != 2 {
		t.Fatalf("control plane processes %v, want etcd and kube-apiserver", cp)
	}
	return append(ps, cp...)
}

// children lists this process's etcd and kube-apiserver children.
func children() []proc {
	var ps []proc
	procs.ForEach(func(pid int, fields []string) {
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) && fields[0] != "Z" {
			exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
			if name := filepath.Base(exe); name == "etcd" || name == "kube-apiserver" {
				ps = append(ps, proc{name, pid})
			}
		}
	})
	return ps
}

// keepLogsOnFailure prints the runners' logs when the test fails, before
// the temporary directory goes.
func keepLogsOnFailure(t *testing.T, dir string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		files, _ := filepath.Glob(filepath.Join(dir, "kubelet", "logs", "*.log"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			t.Logf("%s:\n%s", filepath.Base(f), b)
		}
	})
}
