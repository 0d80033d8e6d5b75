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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// These tests run agent tasks as the manager does, through rpc.Client, on
// the real runner with the real agent (engine/agent) on Chromium, and
// llmtest's scripted server as the model provider. The scripted replies
// prove the runner's side (the registry, the queue, the history, the
// codes), never that a model would choose well: the test names say
// "(scripted model)".

// agentWait bounds the waits of these tests; none comes near it.
const agentWait = 120 * time.Second

// never is a model reply's delay that outlasts any test: the reply comes
// when the agent gives up.
const never = 10 * time.Minute

// agentFixture is a runner over a browser, its session's model the
// scripted server's.
type agentFixture struct {
	srv    *Server
	client *rpc.Client
	raw    runnertest.Client
	model  *llmtest.Server
	log    *runnertest.SyncBuffer
	b      *chromium.Browser
}

// newAgentFixture serves the runner RPC over b with the real operations,
// the session's model openai at a new scripted server.
func newAgentFixture(t *testing.T, b *chromium.Browser, mutate func(*v1alpha1.BrowserSessionSpec)) *agentFixture {
	t.Helper()
	return newAgentFixtureWith(t, b, mutate, nil)
}

// newAgentFixtureWith is newAgentFixture with the runner's config changed
// by configure (nil: as it is).
func newAgentFixtureWith(t *testing.T, b *chromium.Browser, mutate func(*v1alpha1.BrowserSessionSpec), configure func(*config.Config)) *agentFixture {
	t.Helper()
	model := llmtest.NewServer(t)
	cfg := runnertest.Config(func(s *v1alpha1.BrowserSessionSpec) {
		s.Model = v1alpha1.ModelSpec{Name: modelNames[llmtest.OpenAI], BaseURL: model.BaseURL(llmtest.OpenAI)}
		if mutate != nil {
			mutate(s)
		}
	})
	cfg.Secrets.ModelAPIKey = config.NewSecret(sessionModelKey)
	if configure != nil {
		configure(cfg)
	}
	log, buf := runnertest.Logger(t)
	s := NewServer(ServerOptions{
		Token:      config.NewSecret(runnertest.Token),
		Operations: operations.NewAutomation(cfg, log),
		Logger:     log,
	})
	s.SetBrowser(b)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(func() {
		if strings.Contains(buf.String(), sessionModelKey) {
			t.Error("the session's model key is in the runner's log")
		}
	})
	// Runs first: no task outlives its test, on the shared browser.
	t.Cleanup(func() {
		s.BeginShutdown()
		ctx, cancel := context.WithTimeout(context.Background(), agentWait)
		defer cancel()
		if err := s.AgentTasks().Wait(ctx); err != nil {
			t.Errorf("a task still runs: %v", err)
		}
	})
	return &agentFixture{
		srv: s, client: rpc.NewClient(hs.URL, runnertest.Token, hs.Client()),
		raw: runnertest.Client{Base: hs.URL, Token: runnertest.Token}, model: model, log: buf, b: b,
	}
}

func taskRequest(uid, instruction string) rpc.AgentTaskRequest {
	return rpc.AgentTaskRequest{UID: uid, Name: "test-task", Instruction: instruction, DeadlineSeconds: 600}
}

// start starts req, failing the test unless the runner started it.
func (f *agentFixture) start(t *testing.T, req rpc.AgentTaskRequest) *rpc.AgentTaskState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	st, created, err := f.client.StartAgentTask(ctx, req)
	if err != nil {
		t.Fatalf("starting task %s: %v", req.UID, err)
	}
	if !created {
		t.Fatalf("task %s: the runner had it already", req.UID)
	}
	return st
}

// follow follows uid from from to its end and returns the events.
func (f *agentFixture) follow(t *testing.T, uid string, from int) []rpc.AgentTaskEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	var events []rpc.AgentTaskEvent
	if err := f.client.FollowAgentTask(ctx, uid, from, func(ev rpc.AgentTaskEvent) error {
		events = append(events, ev)
		return nil
	}); err != nil {
		t.Fatalf("following task %s from %d: %v", uid, from, err)
	}
	return events
}

// final follows uid to its end and returns its final state.
func (f *agentFixture) final(t *testing.T, uid string) rpc.AgentTaskState {
	t.Helper()
	events := f.follow(t, uid, 0)
	return *events[len(events)-1].State
}

// waitSteps waits until uid has taken n steps.
func (f *agentFixture) waitSteps(t *testing.T, uid string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	errEnough := errors.New("enough")
	err := f.client.FollowAgentTask(ctx, uid, n-1, func(ev rpc.AgentTaskEvent) error {
		if ev.Step != nil {
			return errEnough
		}
		t.Fatalf("task %s ended (%s, %v) before step %d", uid, ev.State.Phase, ev.State.Error, n)
		return nil
	})
	if !errors.Is(err, errEnough) {
		t.Fatalf("waiting for step %d of task %s: %v", n, uid, err)
	}
}

// waitRequests waits until the model got n requests.
func (f *agentFixture) waitRequests(t *testing.T, n int) {
	t.Helper()
	runnertest.WaitFor(t, fmt.Sprintf("%d model request(s)", n), func() bool { return len(f.model.Requests()) >= n })
}

func (f *agentFixture) cancel(t *testing.T, uid string) *rpc.AgentTaskState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	st, err := f.client.CancelAgentTask(ctx, uid)
	if err != nil {
		t.Fatalf("cancelling task %s: %v", uid, err)
	}
	return st
}

func gotoCall(url string) llmtest.Reply {
	return llmtest.ToolCalls(llmtest.Call("goto", fmt.Sprintf(`{"url":%q}`, url))).WithUsage(100, 10)
}

func doneCall(message string) llmtest.Reply {
	return llmtest.ToolCalls(llmtest.Call("done", fmt.Sprintf(`{"reasoning":%q,"taskComplete":true}`, message))).WithUsage(100, 10)
}

// pageURL is the URL of b's page.
func pageURL(t *testing.T, b *chromium.Browser) string {
	t.Helper()
	var u string
	browsertest.Evaluate(t, b, `location.href`, &u)
	return u
}

func codeOf(st rpc.AgentTaskState) rpc.ErrorCode {
	if st.Error == nil {
		return ""
	}
	return st.Error.Code
}

func TestAgentTaskRunsOnceAcrossRestarts(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	site := newSite(t)
	f := newAgentFixture(t, b, nil)
	browsertest.MustNavigate(t, b, site.URL+"/form")
	f.model.Enqueue(
		gotoCall(site.URL+"/list"),
		// The manager restarts while the model thinks.
		doneCall("the list is open").WithDelay(2*time.Second),
	)
	req := taskRequest("5d0c1f52-6a3b-4b3e-8f7e-1c2d3e4f5a6b", "open the list")
	started := f.start(t, req)
	runnertest.Want(t, "phase at start", started.Phase, rpc.AgentTaskRunning)
	f.waitSteps(t, req.UID, 1)

	// A manager that restarted starts its task again: it gets the task
	// as it stands, and no second run starts.
	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	again, created, err := f.client.StartAgentTask(ctx, req)
	if err != nil || created {
		t.Fatalf("second start: created %v, %v; want the running task", created, err)
	}
	runnertest.Want(t, "startedAt of the second start", again.StartedAt, started.StartedAt)
	if again.Steps < 1 {
		t.Errorf("the second start answers %d steps, want those taken", again.Steps)
	}
	// And it follows from the steps it knows.
	rest := f.follow(t, req.UID, again.Steps)
	final := *rest[len(rest)-1].State

	runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskSucceeded)
	if final.Result == nil || !final.Result.Success || !final.Result.Completed {
		t.Fatalf("result %+v, want a completed success", final.Result)
	}
	runnertest.Want(t, "the page", pageURL(t, b), site.URL+"/list")
	// Every scripted reply was asked for once: no step ran twice.
	runnertest.Want(t, "model requests", len(f.model.Requests()), 2)
	runnertest.Want(t, "replies left", f.model.Pending(), 0)
	runnertest.Want(t, "input tokens", final.Usage.InputTokens, int64(200))
	runnertest.Want(t, "steps", final.Steps, len(final.Actions))
	if final.Actions[0].Type != "goto" {
		t.Errorf("first step %+v, want the goto", final.Actions[0])
	}

	// Starting it once more after its end answers its outcome.
	after, created, err := f.client.StartAgentTask(ctx, req)
	if err != nil || created {
		t.Fatalf("start after the end: created %v, %v", created, err)
	}
	if diff := cmp.Diff(final, *after); diff != "" {
		t.Errorf("state after the end (-follow +start):\n%s", diff)
	}
	got, err := f.client.AgentTask(ctx, req.UID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(final, *got); diff != "" {
		t.Errorf("GET (-follow +get):\n%s", diff)
	}
	runnertest.Want(t, "model requests in the end", len(f.model.Requests()), 2)
}

func TestAgentTaskFollowers(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	site := newSite(t)
	f := newAgentFixture(t, b, nil)
	f.model.Enqueue(
		gotoCall(site.URL+"/form"),
		gotoCall(site.URL+"/list").WithDelay(time.Second),
		doneCall("done").WithDelay(time.Second),
	)
	req := taskRequest("1f6e2d3c-0b9a-4c8d-9e7f-6a5b4c3d2e1f", "visit two pages")
	f.start(t, req)

	// Two followers from the start; a third leaves after the first step.
	var wg sync.WaitGroup
	results := make([][]rpc.AgentTaskEvent, 2)
	for i := range results {
		wg.Go(func() { results[i] = f.follow(t, req.UID, 0) })
	}
	leaveCtx, leave := context.WithCancel(context.Background())
	defer leave()
	left := make(chan error, 1)
	go func() {
		left <- f.client.FollowAgentTask(leaveCtx, req.UID, 0, func(rpc.AgentTaskEvent) error {
			leave()
			return nil
		})
	}()
	select {
	case err := <-left:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the follower that left: %v", err)
		}
	case <-time.After(agentWait):
		t.Fatal("the follower that left did not return")
	}
	wg.Wait()

	final := *results[0][len(results[0])-1].State
	runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskSucceeded)
	for i, events := range results {
		if diff := cmp.Diff(results[0], events); diff != "" {
			t.Errorf("follower %d saw otherwise than follower 0 (-0 +%d):\n%s", i, i, diff)
		}
	}
	// Each step once, in order, then the state.
	var steps []rpc.AgentAction
	for i, ev := range results[0][:len(results[0])-1] {
		runnertest.Want(t, "event index", ev.Index, i)
		steps = append(steps, *ev.Step)
	}
	if diff := cmp.Diff(final.Actions, steps); diff != "" {
		t.Errorf("steps followed (-state +followed):\n%s", diff)
	}
	runnertest.Want(t, "index of the final state", results[0][len(results[0])-1].Index, final.Steps)

	// Following the task that is over, from step 1: the rest at once.
	from1 := f.follow(t, req.UID, 1)
	runnertest.Want(t, "events from step 1", len(from1), final.Steps)
	runnertest.Want(t, "first event from step 1", from1[0].Index, 1)
	if from1[len(from1)-1].State == nil {
		t.Error("the follow from step 1 did not end with the state")
	}
}

func TestAgentTaskBusy(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	f := newAgentFixture(t, b, nil)
	f.model.Enqueue(doneCall("never").WithDelay(never))
	first := taskRequest("a1b2c3d4-0000-4000-8000-000000000001", "think for ever")
	f.start(t, first)
	f.waitRequests(t, 1)

	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	second := taskRequest("a1b2c3d4-0000-4000-8000-000000000002", "another task")
	_, _, err := f.client.StartAgentTask(ctx, second)
	var e *rpc.Error
	if !errors.As(err, &e) || e.Code != rpc.CodeAgentBusy {
		t.Fatalf("second task: %v, want AGENT_BUSY", err)
	}
	runnertest.WantContains(t, "message", e.Message, first.UID)
	if _, err := f.client.AgentTask(ctx, second.UID); rpc.CodeOf(err) != rpc.CodeNotFound {
		t.Errorf("the refused task: %v, want NOT_FOUND", err)
	}

	// Once the first is over, the second starts.
	f.cancel(t, first.UID)
	f.model.Enqueue(doneCall("done"))
	f.start(t, second)
	runnertest.Want(t, "phase of the second", f.final(t, second.UID).Phase, rpc.AgentTaskSucceeded)
}

func TestAgentTaskCancel(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	site := newSite(t)
	f := newAgentFixture(t, b, nil)
	f.model.Enqueue(
		gotoCall(site.URL+"/list"),
		doneCall("never").WithDelay(never),
		doneCall("too late"),
	)
	req := taskRequest("c0ffee00-1111-4222-8333-444455556666", "open the list, then think")
	f.start(t, req)
	f.waitSteps(t, req.UID, 1)
	f.waitRequests(t, 2)

	st := f.cancel(t, req.UID)
	// DELETE answers once the run has stopped.
	runnertest.Want(t, "phase", st.Phase, rpc.AgentTaskCancelled)
	runnertest.Want(t, "code", codeOf(*st), rpc.CodeCanceled)
	runnertest.Want(t, "steps kept", st.Steps, 1)
	runnertest.Want(t, "model requests", len(f.model.Requests()), 2)
	runnertest.Want(t, "replies left", f.model.Pending(), 1)
	if st.FinishedAt.IsZero() {
		t.Error("no finishedAt")
	}
	// Cancelling again leaves it as it is.
	again := f.cancel(t, req.UID)
	if diff := cmp.Diff(st, again); diff != "" {
		t.Errorf("second DELETE (-first +second):\n%s", diff)
	}

	// The history has the run, with what it spent.
	rep, err := f.client.Replay(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a := findCall(t, rep.Pages, "agentExecute")
	runnertest.Want(t, "action id", a.ActionID, req.UID)
	runnertest.WantContains(t, "result", string(a.Result), `"code":"CANCELED"`, `"steps":1`)
	runnertest.Want(t, "recorded input tokens", a.TokenUsage.InputTokens, int64(100))
}

func TestAgentTaskDeadline(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	f := newAgentFixture(t, b, nil)
	f.model.Enqueue(doneCall("never").WithDelay(never))
	req := taskRequest("dead11e0-0000-4000-8000-000000000001", "think for ever")
	req.DeadlineSeconds = 1
	f.start(t, req)
	final := f.final(t, req.UID)
	runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskFailed)
	if diff := cmp.Diff(&rpc.Error{Code: rpc.CodeTimeout, Message: "the agent task did not finish within its deadline of 1s"}, final.Error); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestAgentTaskHoldsThePage(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(buttonsPage))
	f := newAgentFixture(t, b, nil)
	browsertest.MustNavigate(t, b, page.URL)
	f.model.Enqueue(doneCall("never").WithDelay(never))
	req := taskRequest("b0a1d000-0000-4000-8000-000000000001", "think for ever")
	f.start(t, req)
	f.waitRequests(t, 1)

	// An act sent during the run waits for its turn.
	waiting := make(chan string, 1)
	type outcome struct {
		res *rpc.Result[rpc.ActResult]
		err error
	}
	acted := make(chan outcome, 1)
	go func() {
		var once sync.Once
		res, err := f.client.Act(context.Background(), rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#a", Method: "click"}}},
			func(l rpc.LogLine) { once.Do(func() { waiting <- l.Message }) })
		acted <- outcome{res, err}
	}()
	select {
	case msg := <-waiting:
		runnertest.Want(t, "the act's first line", msg, "waiting for 1 earlier operation(s)")
	case <-time.After(agentWait):
		t.Fatal("the act said nothing")
	}
	var clicks []string
	browsertest.Evaluate(t, b, `window.clicks`, &clicks)
	if len(clicks) != 0 {
		t.Fatalf("clicks %v while the agent holds the page", clicks)
	}

	// Once the task is over, the act runs.
	f.cancel(t, req.UID)
	var o outcome
	select {
	case o = <-acted:
	case <-time.After(agentWait):
		t.Fatal("the act did not run after the task")
	}
	if o.err != nil || !o.res.Result.Success {
		t.Fatalf("act: %+v, %v", o.res, o.err)
	}
	browsertest.Evaluate(t, b, `window.clicks`, &clicks)
	if diff := cmp.Diff([]string{"a"}, clicks); diff != "" {
		t.Errorf("clicks (-want +got):\n%s", diff)
	}
}

func TestAgentTaskShutdown(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	f := newAgentFixture(t, b, nil)
	f.model.Enqueue(doneCall("never").WithDelay(never))
	req := taskRequest("5b0d0000-0000-4000-8000-000000000001", "think for ever")
	f.start(t, req)
	f.waitRequests(t, 1)
	f.srv.BeginShutdown()
	final := f.final(t, req.UID)
	runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskFailed)
	runnertest.Want(t, "code", codeOf(final), rpc.CodeShuttingDown)

	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	_, _, err := f.client.StartAgentTask(ctx, taskRequest("5b0d0000-0000-4000-8000-000000000002", "late"))
	runnertest.Want(t, "code of a task started after", rpc.CodeOf(err), rpc.CodeShuttingDown)
	// The manager still reads the outcome.
	st, err := f.client.AgentTask(ctx, req.UID)
	if err != nil || st.Phase != rpc.AgentTaskFailed {
		t.Errorf("state after shutdown: %+v, %v", st, err)
	}
}

func TestAgentTaskFailures(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	tests := []struct {
		name     string
		session  func(*v1alpha1.BrowserSessionSpec)
		req      func(*rpc.AgentTaskRequest, *llmtest.Server)
		replies  []llmtest.Reply
		wantCode rpc.ErrorCode
		wantMsg  []string
	}{
		{
			name:     "useSearch on a runner without the search relay",
			req:      func(r *rpc.AgentTaskRequest, _ *llmtest.Server) { r.UseSearch = true },
			wantCode: rpc.CodeBadRequest,
			wantMsg:  []string{"useSearch: this deployment has no search provider configured"},
		},
		{
			name:     "no model",
			session:  func(s *v1alpha1.BrowserSessionSpec) { s.Model = v1alpha1.ModelSpec{} },
			wantCode: rpc.CodeBadRequest,
			wantMsg:  []string{"agentExecute needs a model", "agentConfig.model"},
		},
		{
			name: "a model that cannot be used",
			req: func(r *rpc.AgentTaskRequest, _ *llmtest.Server) {
				r.Model = &rpc.ModelConfig{ModelName: "nobody/model", APIKey: "sk-task-key-0042"}
			},
			wantCode: rpc.CodeBadRequest,
			wantMsg:  []string{"agentConfig.model"},
		},
		{
			name: "an execution model that cannot be used",
			req: func(r *rpc.AgentTaskRequest, _ *llmtest.Server) {
				r.ExecutionModel = &rpc.ModelConfig{ModelName: "gpt-4.1"}
			},
			wantCode: rpc.CodeBadRequest,
			wantMsg:  []string{"agentConfig.executionModel"},
		},
		{
			name:     "the model fails",
			replies:  []llmtest.Reply{llmtest.Status(http.StatusBadRequest).WithMessage("the scripted model refuses")},
			wantCode: rpc.CodeModelError,
			wantMsg:  []string{"openai/gpt-4.1-mini", "400", "the scripted model refuses"},
		},
		{
			name: "the task's own model, with its own key, fails",
			req: func(r *rpc.AgentTaskRequest, m *llmtest.Server) {
				r.Model = &rpc.ModelConfig{ModelName: "anthropic/claude-sonnet-4-5", APIKey: "sk-task-key-0042", BaseURL: m.BaseURL(llmtest.Anthropic)}
			},
			replies:  []llmtest.Reply{llmtest.Status(http.StatusBadRequest).WithMessage("the scripted model refuses")},
			wantCode: rpc.CodeModelError,
			wantMsg:  []string{"anthropic/claude-sonnet-4-5", "the scripted model refuses"},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name+" (scripted model)", func(t *testing.T) {
			f := newAgentFixture(t, b, tt.session)
			f.model.Enqueue(tt.replies...)
			req := taskRequest(fmt.Sprintf("fa11ed00-0000-4000-8000-%012d", i), "do something")
			if tt.req != nil {
				tt.req(&req, f.model)
			}
			f.start(t, req)
			final := f.final(t, req.UID)
			runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskFailed)
			runnertest.Want(t, "code", codeOf(final), tt.wantCode)
			if final.Error != nil {
				runnertest.WantContains(t, "message", final.Error.Message, tt.wantMsg...)
				runnertest.WantNotContains(t, "message", final.Error.Message, sessionModelKey, "sk-task-key-0042")
			}
			runnertest.Want(t, "model requests", len(f.model.Requests()), len(tt.replies))
			runnertest.WantNotContains(t, "runner log", f.log.String(), "sk-task-key-0042")
		})
	}
}

func TestAgentTaskSecretsStayOut(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	site := newSite(t)
	f := newAgentFixture(t, b, func(s *v1alpha1.BrowserSessionSpec) { s.SystemPrompt = "Session rule: answer in French." })
	const password = "hunter2-7c41e0"
	const taskKey = "sk-task-key-9d3a"
	f.model.Enqueue(gotoCall(site.URL+"/form"), doneCall("signed in"))
	req := taskRequest("5ec12e70-0000-4000-8000-000000000001", "sign in with %password%")
	req.Variables = map[string]string{"password": password}
	req.SystemPrompt = "Task rule: never buy anything."
	req.Model = &rpc.ModelConfig{ModelName: modelNames[llmtest.OpenAI], APIKey: taskKey, BaseURL: f.model.BaseURL(llmtest.OpenAI), Headers: map[string]string{"X-Task-Secret": "header-secret-1"}}
	f.start(t, req)
	final := f.final(t, req.UID)
	runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskSucceeded)

	// The task's key went to the model, and nothing secret elsewhere.
	reqs := f.model.Requests()
	if len(reqs) == 0 || reqs[0].Header.Get("Authorization") != "Bearer "+taskKey {
		t.Errorf("the model was not called with the task's key")
	}
	for i, r := range reqs {
		runnertest.WantNotContains(t, fmt.Sprintf("model request %d", i), string(r.Body), password)
	}
	// The session's system prompt, then the task's, reach the model.
	if len(reqs) > 0 {
		text := reqs[0].Text
		session, task := strings.Index(text, "Session rule: answer in French."), strings.Index(text, "Task rule: never buy anything.")
		if session < 0 || task < session {
			t.Errorf("the model read %q; want the session's system prompt, then the task's", text)
		}
	}
	state, _ := json.Marshal(final)
	rep, err := f.client.Replay(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	replay, _ := json.Marshal(rep)
	for what, text := range map[string]string{"state": string(state), "replay": string(replay), "runner log": f.log.String()} {
		runnertest.WantNotContains(t, what, text, password, taskKey, "header-secret-1")
	}
	// The history has the run by its parameters, variables by name.
	a := findCall(t, rep.Pages, "agentExecute")
	runnertest.WantContains(t, "parameters", string(a.Parameters), `"instruction":"sign in with %password%"`, `"variables":["password"]`, `"model":"openai/gpt-4.1-mini"`)
	runnertest.WantContains(t, "result", string(a.Result), `"success":true`, fmt.Sprintf(`"steps":%d`, final.Steps))
	runnertest.Want(t, "recorded input tokens", a.TokenUsage.InputTokens, int64(200))
	sum := f.srv.History().Summary()
	runnertest.Want(t, "agentExecute calls in the summary", sum.ByMethod["agentExecute"], int64(1))
}

func TestAgentTaskEgressRefusalsAreLogged(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	f := newAgentFixture(t, b, nil)
	// 10.0.0.0/8 is not the browser's to reach: the policy allows
	// loopback only.
	f.model.Enqueue(gotoCall("http://10.255.0.1/admin"), doneCall("could not"))
	req := taskRequest("e9e55000-0000-4000-8000-000000000001", "open the admin page")
	f.start(t, req)
	final := f.final(t, req.UID)
	runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskSucceeded)
	runnertest.WantContains(t, "runner log", f.log.String(), "agent task: connection refused by the egress policy", "task="+req.UID)
}

func TestAgentTaskRequests(t *testing.T) {
	_, c, _ := newTestServer(t, browsertest.Shared(t), nil)
	uid := "0e0e0e0e-0000-4000-8000-000000000001"
	tests := []struct {
		name       string
		method     string
		path       string
		token      string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"start without a token", http.MethodPost, rpc.AgentTasksPath, "", `{"uid":"` + uid + `","instruction":"x"}`, 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"state with a wrong token", http.MethodGet, rpc.AgentTaskPath(uid), "wrong", ``, 401, `{"error":"invalid runner token","code":"UNAUTHORIZED"}`},
		{"cancel without a token", http.MethodDelete, rpc.AgentTaskPath(uid), "", ``, 401, `{"error":"missing runner token","code":"UNAUTHORIZED"}`},
		{"unknown task", http.MethodGet, rpc.AgentTaskPath(uid), runnertest.Token, ``, 404, `{"error":"no agent task ` + uid + ` in this runner","code":"NOT_FOUND"}`},
		{"cancel of an unknown task", http.MethodDelete, rpc.AgentTaskPath(uid), runnertest.Token, ``, 404, `{"error":"no agent task ` + uid + ` in this runner","code":"NOT_FOUND"}`},
		{"a uid that cannot be one", http.MethodGet, rpc.AgentTaskPath("a/b"), runnertest.Token, ``, 404, `{"error":"no such path","code":"NOT_FOUND"}`},
		{"no uid", http.MethodPost, rpc.AgentTasksPath, runnertest.Token, `{"instruction":"x"}`, 400, `{"error":"uid is required: the AgentTask's UID, at most 64 letters, digits and '-'","code":"BAD_REQUEST"}`},
		{"no instruction", http.MethodPost, rpc.AgentTasksPath, runnertest.Token, `{"uid":"` + uid + `"}`, 400, `{"error":"instruction is required","code":"BAD_REQUEST"}`},
		{"unknown mode", http.MethodPost, rpc.AgentTasksPath, runnertest.Token, `{"uid":"` + uid + `","instruction":"x","mode":"psychic"}`, 400, `{"error":"mode must be dom, hybrid or cua","code":"BAD_REQUEST"}`},
		{"too many steps", http.MethodPost, rpc.AgentTasksPath, runnertest.Token, `{"uid":"` + uid + `","instruction":"x","maxSteps":1001}`, 400, `{"error":"maxSteps must be between 0 and 1000","code":"BAD_REQUEST"}`},
		{"a negative deadline", http.MethodPost, rpc.AgentTasksPath, runnertest.Token, `{"uid":"` + uid + `","instruction":"x","deadlineSeconds":-1}`, 400, `{"error":"deadlineSeconds must be between 0 and 86400","code":"BAD_REQUEST"}`},
		{"a body that is no JSON", http.MethodPost, rpc.AgentTasksPath, runnertest.Token, `{"uid":]`, 400, `{"error":"the body is not valid: malformed JSON at byte 8","code":"BAD_REQUEST"}`},
		{"GET of the tasks", http.MethodGet, rpc.AgentTasksPath, runnertest.Token, ``, 405, `{"error":"/v1/agent/tasks takes POST","code":"METHOD_NOT_ALLOWED"}`},
		{"PUT of a task", http.MethodPut, rpc.AgentTaskPath(uid), runnertest.Token, `{}`, 405, `{"error":"/v1/agent/tasks/{uid} takes GET or DELETE","code":"METHOD_NOT_ALLOWED"}`},
		{"following from a step that is none", http.MethodGet, rpc.AgentTaskPath(uid) + "?from=-1", runnertest.Token, ``, 400, `{"error":"from must be a step index, 0 or more","code":"BAD_REQUEST"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, c.Base+tt.path, strings.NewReader(tt.body))
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			if strings.Contains(tt.path, "from=") {
				req.Header.Set("Accept", rpc.ContentTypeNDJSON)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			runnertest.Want(t, "status", resp.StatusCode, tt.wantStatus)
			if diff := cmp.Diff(tt.wantBody, strings.TrimSpace(string(body))); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

// findCall returns the one recorded call of method.
func findCall(t *testing.T, pages []replay.Page, method string) replay.Action {
	t.Helper()
	var found []replay.Action
	for _, p := range pages {
		for _, a := range p.Actions {
			if a.Method == method {
				found = append(found, a)
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d recorded %s calls, want 1", len(found), method)
	}
	return found[0]
}

// TestAgentTaskComputerUse runs a cua task through the runner: the
// provider's computer-use protocol with the session's model and key, real
// input on the page.
func TestAgentTaskComputerUse(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	site := newSite(t)
	f := newAgentFixture(t, b, nil)
	browsertest.MustNavigate(t, b, site.URL+"/form")
	f.model.Enqueue(
		llmtest.Computer(llmtest.Keypress("Tab")).WithUsage(700, 15),
		llmtest.Text("I pressed Tab.").WithUsage(800, 10),
	)
	req := taskRequest("0c5e2a77-9d41-4f3a-b8e2-6a1f0d3c7e59", "press tab")
	req.Mode = rpc.AgentModeCUA
	f.start(t, req)
	final := f.final(t, req.UID)

	runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskSucceeded)
	if final.Result == nil || !final.Result.Success || final.Result.Message != "I pressed Tab." {
		t.Fatalf("result %+v, want the model's final answer", final.Result)
	}
	if len(final.Actions) == 0 || final.Actions[0].Type != "keypress" {
		t.Errorf("steps %+v, want the keypress first", final.Actions)
	}
	runnertest.Want(t, "input tokens", final.Usage.InputTokens, int64(1500))
	reqs := f.model.Requests()
	runnertest.Want(t, "model requests", len(reqs), 2)
	for _, r := range reqs {
		runnertest.Want(t, "path of a computer-use request", r.Path, "/v1/responses")
		runnertest.Want(t, "key of a computer-use request", r.Header.Get("Authorization"), "Bearer "+sessionModelKey)
		if len(r.Images) == 0 {
			t.Errorf("a computer-use request carries no screenshot")
		}
	}
}
