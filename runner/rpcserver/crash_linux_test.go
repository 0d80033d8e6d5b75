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

package rpcserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/browserfleet/browserfleet/internal/testing/procs"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestBrowserCrash(t *testing.T) {
	b := browsertest.Start(t, runnertest.Config(nil))
	engine := browsertest.NewOperations()
	_, c, _ := newTestServer(t, b, engine)
	pid := b.PID()
	if pid == 0 {
		t.Fatal("no browser pid")
	}

	type outcome struct {
		status int
		body   []byte
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		status, body, err := c.Call(context.Background(), rpc.ActPath, browsertest.Act("hang"))
		done <- outcome{status, body, err}
	}()
	engine.WaitStarted(t, "hang")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing chromium: %v", err)
	}

	var o outcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the call in flight did not fail after the browser died")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	runnertest.Want(t, "status of the call in flight", o.status, 503)
	e := runnertest.DecodeError(t, o.body)
	runnertest.Want(t, "code of the call in flight", e.Code, rpc.CodeBrowserCrashed)
	runnertest.WantContains(t, "reason", e.Message, "chromium (pid "+strconv.Itoa(pid)+") exited unexpectedly")

	// /healthz says so, with the reason.
	resp, err := http.Get(c.Base + rpc.HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	runnertest.Want(t, "health status", resp.StatusCode, 503)
	var h rpc.Health
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatal(err)
	}
	runnertest.Want(t, "health", h.Status, rpc.HealthCrashed)
	runnertest.Want(t, "health reason", h.Reason, e.Message)

	// Later calls fail at once with the same reason.
	status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: "about:blank"})
	runnertest.Want(t, "status of a later call", status, 503)
	later := runnertest.DecodeError(t, body)
	runnertest.Want(t, "code of a later call", later.Code, rpc.CodeBrowserCrashed)
	runnertest.Want(t, "message of a later call", later.Message, e.Message)

	// Nothing of Chromium is left.
	runnertest.WaitFor(t, "chromium's process group to be gone", func() bool { return !procs.GroupAlive(pid) })
	if !errors.Is(b.Err(), b.Err()) || b.Err() == nil {
		t.Errorf("Browser.Err() = nil after a crash")
	}
}

func TestAgentTaskBrowserCrash(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Start(t, runnertest.Config(nil))
	f := newAgentFixture(t, b, nil)
	f.model.Enqueue(doneCall("never").WithDelay(never))
	req := taskRequest("c2a5fe00-0000-4000-8000-000000000001", "think for ever")
	f.start(t, req)
	f.waitRequests(t, 1)
	pid := b.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing chromium: %v", err)
	}
	final := f.final(t, req.UID)
	runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskFailed)
	runnertest.Want(t, "code", codeOf(final), rpc.CodeBrowserCrashed)
	if final.Error != nil {
		runnertest.WantContains(t, "message", final.Error.Message, "chromium (pid "+strconv.Itoa(pid)+") exited unexpectedly")
	}
	// A task started after is refused with the same reason.
	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	_, _, err := f.client.StartAgentTask(ctx, taskRequest("c2a5fe00-0000-4000-8000-000000000002", "later"))
	runnertest.Want(t, "code of a later task", rpc.CodeOf(err), rpc.CodeBrowserCrashed)
}
