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

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testModelKey = "sk-agent-model-key-77"

var (
	testTaskRequest = AgentTaskRequest{
		UID: "0f2d7c1e-5b8a-4d3e-9a61-2c4b8e7f1a90", Instruction: "find the price",
		Model:     &ModelConfig{ModelName: "openai/gpt-4.1", APIKey: testModelKey},
		Variables: map[string]string{"password": "hunter2"},
	}
	testSteps = []AgentAction{
		{Type: "goto", Action: "went to /items", PageURL: "http://127.0.0.1/"},
		{Type: "extract", Action: "read the price", PageText: "$12.00", Instruction: "the price"},
	}
	testRunning = AgentTaskState{UID: testTaskRequest.UID, Phase: AgentTaskRunning, Actions: []AgentAction{},
		StartedAt: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	testDone = AgentTaskState{UID: testTaskRequest.UID, Phase: AgentTaskSucceeded, Steps: 2, Actions: testSteps,
		Usage:     Usage{InputTokens: 300, OutputTokens: 20},
		Result:    &AgentResult{Success: true, Completed: true, Message: "the price is $12.00"},
		StartedAt: testRunning.StartedAt, FinishedAt: testRunning.StartedAt.Add(time.Minute)}
)

func TestClientStartAgentTask(t *testing.T) {
	tests := []struct {
		name        string
		token       string
		status      int
		body        any
		want        *AgentTaskState
		wantCreated bool
		wantErr     *Error
	}{
		{name: "started", token: testToken, status: http.StatusCreated, body: testRunning, want: &testRunning, wantCreated: true},
		{name: "the task it already has", token: testToken, status: http.StatusOK, body: testDone, want: &testDone},
		{
			name: "another task runs", token: testToken, status: http.StatusConflict,
			body:    Errorf(CodeAgentBusy, "another agent task (x) runs in the session; one runs at a time"),
			wantErr: &Error{Code: CodeAgentBusy, Message: "another agent task (x) runs in the session; one runs at a time"},
		},
		{
			name: "browser starting", token: testToken, status: http.StatusServiceUnavailable,
			body:    Errorf(CodeBrowserStarting, "the browser is starting"),
			wantErr: &Error{Code: CodeBrowserStarting, Message: "the browser is starting"},
		},
		{name: "wrong token", token: "wrong", wantErr: &Error{Code: CodeUnauthorized, Message: "invalid runner token"}},
		{
			name: "a state without uid", token: testToken, status: http.StatusCreated, body: map[string]string{"phase": "Running"},
			wantErr: &Error{Code: CodeInternal, Message: "runner /v1/agent/tasks answered a state without uid or phase"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request, _ bool) {
				if r.Method != http.MethodPost || r.URL.Path != AgentTasksPath {
					t.Errorf("request %s %s, want POST %s", r.Method, r.URL.Path, AgentTasksPath)
				}
				var body AgentTaskRequest
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(testTaskRequest, body); diff != "" {
					t.Errorf("request body (-want +got):\n%s", diff)
				}
				writeTestJSON(w, tt.status, tt.body)
			})
			c := NewClient(srv.URL, tt.token, srv.Client())
			got, created, err := c.StartAgentTask(context.Background(), testTaskRequest)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
			if created != tt.wantCreated {
				t.Errorf("created = %v, want %v", created, tt.wantCreated)
			}
			if diff := cmp.Diff(tt.wantErr, errorOf(t, err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if err != nil && (strings.Contains(err.Error(), testModelKey) || strings.Contains(err.Error(), "hunter2")) {
				t.Errorf("error %q carries a secret of the request", err)
			}
		})
	}
}

// errorOf is err as an *Error, failing the test on another kind.
func errorOf(t *testing.T, err error) *Error {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *rpc.Error", err, err)
	}
	return e
}

func TestClientAgentTaskAndCancel(t *testing.T) {
	uid := testTaskRequest.UID
	tests := []struct {
		name    string
		method  string
		call    func(c *Client) (*AgentTaskState, error)
		status  int
		body    any
		want    *AgentTaskState
		wantErr *Error
	}{
		{
			name: "state", method: http.MethodGet, status: http.StatusOK, body: testDone, want: &testDone,
			call: func(c *Client) (*AgentTaskState, error) { return c.AgentTask(context.Background(), uid) },
		},
		{
			name: "unknown task", method: http.MethodGet, status: http.StatusNotFound,
			body:    Errorf(CodeNotFound, "no agent task %s in this runner", uid),
			wantErr: &Error{Code: CodeNotFound, Message: "no agent task " + uid + " in this runner"},
			call:    func(c *Client) (*AgentTaskState, error) { return c.AgentTask(context.Background(), uid) },
		},
		{
			name: "cancel", method: http.MethodDelete, status: http.StatusOK,
			body: AgentTaskState{UID: uid, Phase: AgentTaskCancelled, Actions: []AgentAction{}, Error: Errorf(CodeCanceled, "the agent task was cancelled")},
			want: &AgentTaskState{UID: uid, Phase: AgentTaskCancelled, Actions: []AgentAction{}, Error: Errorf(CodeCanceled, "the agent task was cancelled")},
			call: func(c *Client) (*AgentTaskState, error) { return c.CancelAgentTask(context.Background(), uid) },
		},
		{
			name: "cancel of an unknown task", method: http.MethodDelete, status: http.StatusNotFound,
			body:    Errorf(CodeNotFound, "no agent task %s in this runner", uid),
			wantErr: &Error{Code: CodeNotFound, Message: "no agent task " + uid + " in this runner"},
			call:    func(c *Client) (*AgentTaskState, error) { return c.CancelAgentTask(context.Background(), uid) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request, stream bool) {
				if r.Method != tt.method || r.URL.Path != AgentTaskPath(uid) {
					t.Errorf("request %s %s, want %s %s", r.Method, r.URL.Path, tt.method, AgentTaskPath(uid))
				}
				if stream {
					t.Error("a plain call asked for a stream")
				}
				writeTestJSON(w, tt.status, tt.body)
			})
			got, err := tt.call(c)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErr, errorOf(t, err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientFollowAgentTask(t *testing.T) {
	uid := testTaskRequest.UID
	stepEvents := []AgentTaskEvent{{Step: &testSteps[0], Index: 0}, {Step: &testSteps[1], Index: 1}}
	final := AgentTaskEvent{State: &testDone, Index: 2}
	tests := []struct {
		name     string
		from     int
		op       func(t *testing.T, w http.ResponseWriter)
		onEvent  func(AgentTaskEvent) error
		want     []AgentTaskEvent
		wantErr  *Error
		wantFrom string
	}{
		{
			name: "steps then the final state",
			op: func(t *testing.T, w http.ResponseWriter) {
				startStream(w)
				for _, ev := range append(stepEvents, final) {
					writeEvent(t, w, ev)
				}
			},
			want: append(stepEvents, final), wantFrom: "0",
		},
		{
			name: "from a step",
			from: 1,
			op: func(t *testing.T, w http.ResponseWriter) {
				startStream(w)
				writeEvent(t, w, stepEvents[1])
				writeEvent(t, w, final)
			},
			want: []AgentTaskEvent{stepEvents[1], final}, wantFrom: "1",
		},
		{
			name: "events it does not know are skipped",
			op: func(t *testing.T, w http.ResponseWriter) {
				startStream(w)
				_, _ = w.Write([]byte(`{"heartbeat":true,"index":0}` + "\n"))
				writeEvent(t, w, final)
			},
			want: []AgentTaskEvent{final}, wantFrom: "0",
		},
		{
			name: "the runner goes away mid-stream",
			op: func(t *testing.T, w http.ResponseWriter) {
				startStream(w)
				writeEvent(t, w, stepEvents[0])
				panic(http.ErrAbortHandler)
			},
			want:    stepEvents[:1],
			wantErr: &Error{Code: CodeRunnerUnreachable, Message: "runner " + AgentTaskPath(uid) + ": the stream ended before the task's final state"},
		},
		{
			name: "a stream that ends without the final state",
			op: func(t *testing.T, w http.ResponseWriter) {
				startStream(w)
				writeEvent(t, w, stepEvents[0])
			},
			want:    stepEvents[:1],
			wantErr: &Error{Code: CodeRunnerUnreachable, Message: "runner " + AgentTaskPath(uid) + ": the stream ended before the task's final state"},
		},
		{
			name: "unknown task",
			op: func(t *testing.T, w http.ResponseWriter) {
				writeTestJSON(w, http.StatusNotFound, Errorf(CodeNotFound, "no agent task %s in this runner", uid))
			},
			wantErr: &Error{Code: CodeNotFound, Message: "no agent task " + uid + " in this runner"},
		},
		{
			name: "onEvent's error ends the follow",
			op: func(t *testing.T, w http.ResponseWriter) {
				startStream(w)
				for _, ev := range append(stepEvents, final) {
					writeEvent(t, w, ev)
				}
			},
			onEvent: func(AgentTaskEvent) error { return Errorf(CodeInternal, "the caller's own error") },
			wantErr: &Error{Code: CodeInternal, Message: "the caller's own error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request, stream bool) {
				if r.Method != http.MethodGet || r.URL.Path != AgentTaskPath(uid) {
					t.Errorf("request %s %s, want GET %s", r.Method, r.URL.Path, AgentTaskPath(uid))
				}
				if !stream {
					t.Error("a follow did not ask for a stream")
				}
				if tt.wantFrom != "" && r.URL.Query().Get(ParamFrom) != tt.wantFrom {
					t.Errorf("?%s=%q, want %q", ParamFrom, r.URL.Query().Get(ParamFrom), tt.wantFrom)
				}
				tt.op(t, w)
			})
			var got []AgentTaskEvent
			onEvent := func(ev AgentTaskEvent) error { got = append(got, ev); return nil }
			if tt.onEvent != nil {
				onEvent = tt.onEvent
			}
			err := c.FollowAgentTask(context.Background(), uid, tt.from, onEvent)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErr, errorOf(t, err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientFollowStopsEarly(t *testing.T) {
	runnerSawLeave := make(chan struct{})
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request, _ bool) {
		startStream(w)
		writeEvent(t, w, AgentTaskEvent{Step: &testSteps[0]})
		// The task runs on: the stream stays open until the follower
		// leaves.
		select {
		case <-r.Context().Done():
			close(runnerSawLeave)
		case <-time.After(60 * time.Second):
			t.Error("the runner never saw the follower leave")
		}
	})
	errEnough := errors.New("enough")
	err := c.FollowAgentTask(context.Background(), testTaskRequest.UID, 0, func(AgentTaskEvent) error { return errEnough })
	if !errors.Is(err, errEnough) {
		t.Fatalf("error = %v, want onEvent's", err)
	}
	select {
	case <-runnerSawLeave:
	case <-time.After(60 * time.Second):
		t.Fatal("the follower did not leave the stream")
	}
}

func TestClientFollowCancel(t *testing.T) {
	runnerSawCancel := make(chan struct{})
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request, _ bool) {
		startStream(w)
		writeEvent(t, w, AgentTaskEvent{Step: &testSteps[0]})
		select {
		case <-r.Context().Done():
			close(runnerSawCancel)
		case <-time.After(60 * time.Second):
			t.Error("the runner never saw the follower leave")
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := c.FollowAgentTask(ctx, testTaskRequest.UID, 0, func(AgentTaskEvent) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || CodeOf(err) != "" {
		t.Fatalf("error = %v, want one wrapping context.Canceled and no code", err)
	}
	select {
	case <-runnerSawCancel:
	case <-time.After(60 * time.Second):
		t.Fatal("the runner's request context was not cancelled")
	}
}

// writeEvent writes one AgentTaskEvent line and flushes it, as the runner
// does.
func writeEvent(t *testing.T, w http.ResponseWriter, ev AgentTaskEvent) {
	t.Helper()
	line, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(append(line, '\n'))
	_ = http.NewResponseController(w).Flush()
}
