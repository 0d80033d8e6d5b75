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

package runner

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/testing/procs"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// chromiumProcesses lists the processes whose command line names dataDir
// as their profile: the browser and the helpers it starts.
func chromiumProcesses(t *testing.T, dataDir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if strings.Contains(string(stat), ") Z ") {
			continue // a zombie is dead, only not reaped yet
		}
		if strings.Contains(string(raw), "--user-data-dir="+dataDir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// startRun runs Run in the background and waits for /healthz to turn 200.
func startRun(t *testing.T, cfg *config.Config, engine operations.Interface) (base string, cancel context.CancelFunc, result <-chan error, logs *runnertest.SyncBuffer) {
	t.Helper()
	return startRunWith(t, cfg, Options{Operations: engine})
}

// startRunWith is startRun with opts; their Logger and Listener are the
// test's.
func startRunWith(t *testing.T, cfg *config.Config, opts Options) (base string, cancel context.CancelFunc, result <-chan error, logs *runnertest.SyncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log, buf := runnertest.Logger(t)
	opts.Logger, opts.Listener = log, ln
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- Run(ctx, cfg, opts) }()
	base = "http://" + ln.Addr().String()
	runnertest.WaitFor(t, "the runner to be ready", func() bool {
		resp, err := http.Get(base + rpc.HealthPath)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	t.Cleanup(cancel)
	return base, cancel, ch, buf
}

func TestShutdownLeavesNoChromium(t *testing.T) {
	cfg := runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
		lo.UserDataDir = "profile"
		lo.PreserveUserDataDir = ptr.To(true)
	}))
	cfg.DataDir = t.TempDir()
	dataDir := filepath.Join(cfg.DataDir, "profiles", "profile")
	engine := browsertest.NewOperations()
	base, stop, result, logs := startRun(t, cfg, engine)
	c := runnertest.Client{Base: base, Token: runnertest.Token}

	pids := chromiumProcesses(t, dataDir)
	if len(pids) == 0 {
		t.Fatal("no chromium process runs with the session's profile")
	}
	t.Logf("chromium processes: %v", pids)

	// An operation in flight when the runner is told to stop fails with
	// SHUTTING_DOWN instead of hanging.
	type outcome struct {
		status int
		body   []byte
	}
	inFlight := make(chan outcome, 1)
	go func() {
		status, body, _ := c.Call(context.Background(), rpc.ActPath, browsertest.Act("hold shutdown"))
		inFlight <- outcome{status, body}
	}()
	engine.WaitStarted(t, "hold shutdown")

	stop() // what SIGTERM does in cmd/runner
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("Run returned %v, want nil after an orderly stop", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	o := <-inFlight
	runnertest.Want(t, "status of the call in flight", o.status, 503)
	runnertest.Want(t, "code of the call in flight", runnertest.DecodeError(t, o.body).Code, rpc.CodeShuttingDown)

	for _, pid := range pids {
		if procs.Running(pid) {
			t.Errorf("chromium process %d outlived the runner", pid)
		}
	}
	if left := chromiumProcesses(t, dataDir); len(left) > 0 {
		t.Errorf("chromium processes %v outlived the runner", left)
	}
	if procs.GroupAlive(pids[0]) {
		t.Errorf("chromium's process group %d outlived the runner", pids[0])
	}
	// The preserved profile was written: its Default profile directory,
	// which Chromium and its headless shell both write (the headless
	// shell writes no Local State).
	if fi, err := os.Stat(filepath.Join(dataDir, "Default")); err != nil || !fi.IsDir() {
		t.Errorf("the preserved profile lacks its Default directory: %v", err)
	}
	runnertest.WantContains(t, "log", logs.String(), "session=test-session", "browser closed")
}

func TestSecretsStayOutOfLogsErrorsAndChromium(t *testing.T) {
	const (
		token         = "tok-NEVER-LOG-ME-4d2e6a"
		proxyPassword = "pw-NEVER-LOG-ME-9b1c"
		modelKey      = "sk-NEVER-LOG-ME-77aa"
	)
	backend := runnertest.NewPageServer(t, runnertest.HTMLHandler(`<!doctype html><title>secret test</title>`))
	// The proxy wants another password, so the session's is refused and
	// the refusal is reported: the error path must not leak it either.
	_, proxySrv := runnertest.NewAuthProxy(t, "fleet", "the-password-the-proxy-wants", backend.URL)
	dataRoot := t.TempDir()
	dataDir := filepath.Join(dataRoot, "profiles", "profile")

	spec := runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
		lo.UserDataDir = "profile"
		lo.Proxy = &v1alpha1.LaunchProxy{
			Server:            proxySrv.URL,
			Username:          "fleet",
			PasswordSecretRef: &v1alpha1.SecretKeyReference{Name: "proxy", Key: "password"},
		}
	})).Spec
	spec.Model.APIKeySecretRef = &v1alpha1.SecretKeyReference{Name: "model", Key: "key"}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	// The environment and the secret volumes the manager gives a runner
	// pod.
	secrets := runnertest.SecretVolume(t, map[string]string{
		rpc.FileToken:               token,
		rpc.FileLaunchProxyPassword: proxyPassword,
		rpc.FileModelAPIKey:         modelKey,
	})
	headers := runnertest.SecretVolume(t, map[string]string{"X-Api-Key": modelKey})
	t.Setenv(rpc.EnvSessionName, "secret-session")
	t.Setenv(rpc.EnvSession, string(specJSON))
	t.Setenv(rpc.EnvSecretsDir, secrets)
	t.Setenv(rpc.EnvModelHeadersDir, headers)
	cfg, err := config.FromEnv(os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Egress, cfg.Resolver = runnertest.LoopbackEgress(), runnertest.HostsResolver{}
	runnertest.Want(t, "DefaultModel().APIKey", cfg.DefaultModel().APIKey, modelKey)
	runnertest.Want(t, "DefaultModel().Headers", cfg.DefaultModel().Headers["X-Api-Key"], modelKey)
	cfg.DataDir = dataRoot

	base, stop, result, logs := startRun(t, cfg, nil)
	var bodies []string
	record := func(status int, body []byte) {
		bodies = append(bodies, strconv.Itoa(status)+" "+string(body))
	}
	wrong := runnertest.Client{Base: base, Token: token[:len(token)-1]}
	status, body := wrong.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: "about:blank"})
	runnertest.Want(t, "status with a wrong token", status, 401)
	record(status, body)
	c := runnertest.Client{Base: base, Token: token}
	status, body = c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: "http://site.test/"})
	record(status, body)
	runnertest.Want(t, "status through a refusing proxy", status, 502)
	runnertest.Want(t, "code through a refusing proxy", runnertest.DecodeError(t, body).Code, rpc.CodeProxyAuthFailed)
	status, body = c.MustCall(t, rpc.ActPath, browsertest.Act("click"))
	record(status, body)
	resp, err := http.Get(base + rpc.HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	record(resp.StatusCode, hb)

	// Chromium's environment has the runner's variables blanked.
	pids := chromiumProcesses(t, dataDir)
	if len(pids) == 0 {
		t.Fatal("no chromium process runs with the session's profile")
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/environ")
	if err != nil {
		t.Fatal(err)
	}

	stop()
	if err := <-result; err != nil {
		t.Fatalf("Run: %v", err)
	}
	for what, text := range map[string]string{
		"the runner's log":       logs.String(),
		"the responses":          strings.Join(bodies, "\n"),
		"chromium's environment": string(environ),
	} {
		for name, secret := range map[string]string{"token": token, "proxy password": proxyPassword, "model key": modelKey} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains the %s", what, name)
			}
		}
	}
	runnertest.WantContains(t, "log", logs.String(), "the proxy refused the session's credentials", "session=secret-session")
	runnertest.WantContains(t, "chromium's environment", string(environ), rpc.EnvSession+"=\x00", rpc.EnvSecretsDir+"=\x00")
}

// TestCrashReasonWaitsForTheExit: the DevTools connection may drop before
// the kernel shows the process gone; the reason is the exit all the same.

func TestShutdownEndsAgentTask(t *testing.T) {
	t.Log("(scripted model)")
	model := llmtest.NewServer(t)
	// One step, so that a follower knows it is following; then the model
	// thinks until the runner gives up on it.
	model.Enqueue(llmtest.ToolCalls(llmtest.Call("think", `{"reasoning":"first"}`)),
		llmtest.ToolCalls(llmtest.Call("done", `{"reasoning":"never","taskComplete":true}`)).WithDelay(10*time.Minute))
	cfg := runnertest.Config(func(s *v1alpha1.BrowserSessionSpec) {
		s.Model = v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini", BaseURL: model.BaseURL(llmtest.OpenAI)}
	})
	cfg.Secrets.ModelAPIKey = config.NewSecret("sk-lifecycle-key")
	cfg.TerminationMessagePath = filepath.Join(t.TempDir(), "termination-log")
	base, stop, result, _ := startRun(t, cfg, nil)
	client := rpc.NewClient(base, runnertest.Token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	uid := "11fec1c1-0000-4000-8000-000000000001"
	if _, _, err := client.StartAgentTask(ctx, rpc.AgentTaskRequest{UID: uid, Instruction: "think for ever"}); err != nil {
		t.Fatal(err)
	}

	// A follower, as the manager has, reads the task's end.
	final := make(chan *rpc.AgentTaskState, 1)
	following := make(chan struct{})
	go func() {
		var once sync.Once
		err := client.FollowAgentTask(ctx, uid, 0, func(ev rpc.AgentTaskEvent) error {
			if ev.Step != nil {
				once.Do(func() { close(following) })
			}
			if ev.State != nil {
				final <- ev.State
			}
			return nil
		})
		if err != nil {
			t.Errorf("following the task: %v", err)
			close(final)
		}
	}()

	select {
	case <-following:
	case st := <-final:
		t.Fatalf("the follow ended before the first step, with state %+v", st)
	}
	runnertest.WaitFor(t, "the model to be asked again", func() bool { return len(model.Requests()) > 1 })
	select {
	case <-following:
	case st := <-final:
		t.Fatalf("the follow ended before the first step, with state %+v", st)
	}
	runnertest.WaitFor(t, "the model to be asked again", func() bool { return len(model.Requests()) > 1 })
	stop() // what SIGTERM does in cmd/runner
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("Run returned %v, want nil after an orderly stop", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	st := <-final
	if st == nil {
		t.Fatal("the follower got no final state")
	}
	runnertest.Want(t, "phase", st.Phase, rpc.AgentTaskFailed)
	if st.Error == nil || st.Error.Code != rpc.CodeShuttingDown {
		t.Errorf("error %v, want SHUTTING_DOWN", st.Error)
	}
	// The summary the manager reads counts the run.
	raw, err := os.ReadFile(cfg.TerminationMessagePath)
	if err != nil {
		t.Fatal(err)
	}
	sum, ok := replay.ParseTerminationMessage(string(raw))
	if !ok {
		t.Fatalf("termination message %s is no summary", raw)
	}
	runnertest.Want(t, "agentExecute calls", sum.ByMethod["agentExecute"], int64(1))
	runnertest.Want(t, "failed calls", sum.Failed, int64(1))
}
