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

package agenttask

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// These tests drive the registry with runs the test steps by hand: what a
// run does on a page is the RPC server's (its tests run the real agent on
// Chromium); here only the registry's bookkeeping is under test.

// wait bounds every wait of these tests; none is expected to come near it.
const wait = 60 * time.Second

// steppedRun is a run that takes a step each time the test says so and
// ends when the test says so, or when its context ends.
type steppedRun struct {
	calls atomic.Int32
	step  chan rpc.AgentAction
	end   chan error
	// ended receives the cause of the run's context when it ended by it.
	ended chan error
}

func newSteppedRun() *steppedRun {
	return &steppedRun{step: make(chan rpc.AgentAction), end: make(chan error), ended: make(chan error, 1)}
}

func (s *steppedRun) run(ctx context.Context, onStep func(int, rpc.AgentAction, rpc.Usage)) (*rpc.AgentResult, rpc.Usage, error) {
	s.calls.Add(1)
	n := 0
	for {
		select {
		case a := <-s.step:
			onStep(n, a, rpc.Usage{InputTokens: int64(10 * (n + 1))})
			n++
		case err := <-s.end:
			if err != nil {
				return nil, rpc.Usage{InputTokens: int64(10 * n)}, err
			}
			return &rpc.AgentResult{Success: true, Completed: true, Message: "done"}, rpc.Usage{InputTokens: int64(10 * n), OutputTokens: 1}, nil
		case <-ctx.Done():
			s.ended <- context.Cause(ctx)
			return nil, rpc.Usage{InputTokens: int64(10 * n)}, context.Cause(ctx)
		}
	}
}

// takeStep has the run take a step and waits until the task r has under
// uid shows it.
func (s *steppedRun) takeStep(t *testing.T, r *Registry, uid string, a rpc.AgentAction) {
	t.Helper()
	before, _ := r.Get(uid)
	select {
	case s.step <- a:
	case <-time.After(wait):
		t.Fatal("the run did not take its step")
	}
	errSeen := errors.New("seen")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := r.Follow(ctx, uid, before.Steps, func(rpc.AgentTaskEvent) error { return errSeen })
	if !errors.Is(err, errSeen) {
		t.Fatalf("the step did not show: %v", err)
	}
}

func (s *steppedRun) finish(t *testing.T, err error) {
	t.Helper()
	select {
	case s.end <- err:
	case <-time.After(wait):
		t.Fatal("the run did not end")
	}
}

// waitOver waits until the task uid is over and returns its state.
func waitOver(t *testing.T, r *Registry, uid string) rpc.AgentTaskState {
	t.Helper()
	var final rpc.AgentTaskState
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := r.Follow(ctx, uid, 0, func(ev rpc.AgentTaskEvent) error {
		if ev.State != nil {
			final = *ev.State
		}
		return nil
	})
	if err != nil {
		t.Fatalf("following %s: %v", uid, err)
	}
	return final
}

func step(n int) rpc.AgentAction {
	return rpc.AgentAction{Type: "act", Action: fmt.Sprintf("step %d", n), Reasoning: "because"}
}

// ignoreTimes leaves out the times a state was taken at.
var ignoreTimes = cmpopts.IgnoreFields(rpc.AgentTaskState{}, "StartedAt", "FinishedAt")

func TestStartIsIdempotent(t *testing.T) {
	r := New(Options{})
	run := newSteppedRun()
	st, created, err := r.Start("task-1", 0, run.run)
	if err != nil || !created {
		t.Fatalf("Start = %v, %v; want a new task", created, err)
	}
	want := rpc.AgentTaskState{UID: "task-1", Phase: rpc.AgentTaskRunning, Actions: []rpc.AgentAction{}}
	if diff := cmp.Diff(want, st, ignoreTimes); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	run.takeStep(t, r, "task-1", step(0))

	// Another start of the same task, as a manager that restarted sends:
	// the task as it stands, and no second run.
	other := newSteppedRun()
	st2, created, err := r.Start("task-1", 0, other.run)
	if err != nil || created {
		t.Fatalf("second Start = %v, %v; want the existing task", created, err)
	}
	want.Steps, want.Actions, want.Usage = 1, []rpc.AgentAction{step(0)}, rpc.Usage{InputTokens: 10}
	if diff := cmp.Diff(want, st2, ignoreTimes); diff != "" {
		t.Errorf("state of the second start (-want +got):\n%s", diff)
	}
	if !st2.StartedAt.Equal(st.StartedAt) {
		t.Errorf("startedAt %v, want the first start's %v", st2.StartedAt, st.StartedAt)
	}

	run.finish(t, nil)
	final := waitOver(t, r, "task-1")
	runnertestWant(t, "phase", final.Phase, rpc.AgentTaskSucceeded)
	if _, created, err := r.Start("task-1", 0, other.run); err != nil || created {
		t.Errorf("Start of a finished task = %v, %v; want the existing task", created, err)
	}
	runnertestWant(t, "runs of the task", run.calls.Load(), int32(1))
	runnertestWant(t, "runs of the second start", other.calls.Load(), int32(0))
}

func runnertestWant[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestOneTaskAtATime(t *testing.T) {
	r := New(Options{})
	first := newSteppedRun()
	if _, _, err := r.Start("first", 0, first.run); err != nil {
		t.Fatal(err)
	}
	second := newSteppedRun()
	_, _, err := r.Start("second", 0, second.run)
	if diff := cmp.Diff(&rpc.Error{Code: rpc.CodeAgentBusy, Message: "another agent task (first) runs in the session; one runs at a time"}, asError(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if _, ok := r.Get("second"); ok {
		t.Error("the refused task is kept")
	}
	first.finish(t, nil)
	waitOver(t, r, "first")
	if _, created, err := r.Start("second", 0, second.run); err != nil || !created {
		t.Fatalf("Start once the first is over = %v, %v", created, err)
	}
	second.finish(t, nil)
	waitOver(t, r, "second")
}

func asError(err error) *rpc.Error {
	var e *rpc.Error
	if errors.As(err, &e) {
		return e
	}
	if err != nil {
		return &rpc.Error{Code: "not an *rpc.Error", Message: err.Error()}
	}
	return nil
}

func TestFollow(t *testing.T) {
	r := New(Options{})
	run := newSteppedRun()
	if _, _, err := r.Start("task", 0, run.run); err != nil {
		t.Fatal(err)
	}
	run.takeStep(t, r, "task", step(0))
	run.takeStep(t, r, "task", step(1))

	type follower struct {
		from   int
		events chan rpc.AgentTaskEvent
		err    chan error
	}
	follow := func(ctx context.Context, from int) follower {
		f := follower{from: from, events: make(chan rpc.AgentTaskEvent, 16), err: make(chan error, 1)}
		go func() {
			f.err <- r.Follow(ctx, "task", from, func(ev rpc.AgentTaskEvent) error {
				f.events <- ev
				return nil
			})
		}()
		return f
	}
	next := func(f follower) rpc.AgentTaskEvent {
		t.Helper()
		select {
		case ev := <-f.events:
			return ev
		case <-time.After(wait):
			t.Fatalf("follower from %d got no event", f.from)
			return rpc.AgentTaskEvent{}
		}
	}
	wantStep := func(f follower, i int) {
		t.Helper()
		ev := next(f)
		if diff := cmp.Diff(rpc.AgentTaskEvent{Step: new(step(i)), Index: i}, ev); diff != "" {
			t.Errorf("follower from %d: event (-want +got):\n%s", f.from, diff)
		}
	}

	fromStart := follow(context.Background(), 0)
	fromTwo := follow(context.Background(), 2)
	goneCtx, leave := context.WithCancel(context.Background())
	gone := follow(goneCtx, 1)
	wantStep(fromStart, 0)
	wantStep(fromStart, 1)
	wantStep(gone, 1)

	// A follower that goes away leaves the task and the others alone.
	leave()
	select {
	case err := <-gone.err:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the follower that left: %v, want context.Canceled", err)
		}
	case <-time.After(wait):
		t.Fatal("the follower that left did not return")
	}
	run.takeStep(t, r, "task", step(2))
	wantStep(fromStart, 2)
	wantStep(fromTwo, 2)
	run.finish(t, nil)
	for _, f := range []follower{fromStart, fromTwo} {
		ev := next(f)
		if ev.State == nil || ev.Step != nil {
			t.Fatalf("follower from %d: event %+v, want the final state", f.from, ev)
		}
		runnertestWant(t, "index of the final state", ev.Index, 3)
		runnertestWant(t, "phase", ev.State.Phase, rpc.AgentTaskSucceeded)
		runnertestWant(t, "steps", ev.State.Steps, 3)
		if err := <-f.err; err != nil {
			t.Errorf("follower from %d: %v", f.from, err)
		}
	}

	// Following a task that is over: its steps from the index asked,
	// then its state, at once.
	var got []int
	err := r.Follow(context.Background(), "task", 1, func(ev rpc.AgentTaskEvent) error {
		if ev.State != nil {
			got = append(got, -1)
		} else {
			got = append(got, ev.Index)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 2, -1}, got); diff != "" {
		t.Errorf("events of a finished task (-want +got):\n%s", diff)
	}
	// A follower's error ends its follow and is returned.
	errStop := errors.New("stop")
	if err := r.Follow(context.Background(), "task", 0, func(rpc.AgentTaskEvent) error { return errStop }); !errors.Is(err, errStop) {
		t.Errorf("Follow = %v, want the follower's error", err)
	}
}

func TestEndings(t *testing.T) {
	tests := []struct {
		name      string
		deadline  time.Duration
		end       func(t *testing.T, r *Registry, run *steppedRun)
		wantPhase rpc.AgentTaskPhase
		wantErr   *rpc.Error
		wantCause *rpc.Error
	}{
		{
			name:      "succeeds",
			end:       func(t *testing.T, _ *Registry, run *steppedRun) { run.finish(t, nil) },
			wantPhase: rpc.AgentTaskSucceeded,
		},
		{
			name: "fails with the run's error",
			end: func(t *testing.T, _ *Registry, run *steppedRun) {
				run.finish(t, rpc.Errorf(rpc.CodeModelError, "openai/gpt-4.1: HTTP 500"))
			},
			wantPhase: rpc.AgentTaskFailed,
			wantErr:   rpc.Errorf(rpc.CodeModelError, "openai/gpt-4.1: HTTP 500"),
		},
		{
			name:      "an error without a code is an engine error",
			end:       func(t *testing.T, _ *Registry, run *steppedRun) { run.finish(t, errors.New("the snapshot failed")) },
			wantPhase: rpc.AgentTaskFailed,
			wantErr:   rpc.Errorf(rpc.CodeEngineError, "the snapshot failed"),
		},
		{
			name: "cancelled",
			end: func(t *testing.T, r *Registry, _ *steppedRun) {
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				defer cancel()
				st, err := r.Cancel(ctx, "task")
				if err != nil {
					t.Fatal(err)
				}
				// Cancel returns once the run has stopped.
				runnertestWant(t, "phase Cancel answers", st.Phase, rpc.AgentTaskCancelled)
			},
			wantPhase: rpc.AgentTaskCancelled,
			wantErr:   ErrCancelled,
			wantCause: ErrCancelled,
		},
		{
			name:      "past its deadline",
			deadline:  time.Millisecond,
			end:       func(*testing.T, *Registry, *steppedRun) {},
			wantPhase: rpc.AgentTaskFailed,
			wantErr:   rpc.Errorf(rpc.CodeTimeout, "the agent task did not finish within its deadline of 1ms"),
			wantCause: rpc.Errorf(rpc.CodeTimeout, "the agent task did not finish within its deadline of 1ms"),
		},
		{
			name: "the runner stops",
			end: func(_ *testing.T, r *Registry, _ *steppedRun) {
				r.Stop(rpc.Errorf(rpc.CodeShuttingDown, "the runner is shutting down"))
			},
			wantPhase: rpc.AgentTaskFailed,
			wantErr:   rpc.Errorf(rpc.CodeShuttingDown, "the runner is shutting down"),
			wantCause: rpc.Errorf(rpc.CodeShuttingDown, "the runner is shutting down"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(Options{})
			run := newSteppedRun()
			if _, _, err := r.Start("task", tt.deadline, run.run); err != nil {
				t.Fatal(err)
			}
			if tt.deadline == 0 {
				run.takeStep(t, r, "task", step(0))
			}
			tt.end(t, r, run)
			final := waitOver(t, r, "task")
			runnertestWant(t, "phase", final.Phase, tt.wantPhase)
			if diff := cmp.Diff(tt.wantErr, final.Error); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if final.FinishedAt.IsZero() || final.FinishedAt.Before(final.StartedAt) {
				t.Errorf("finishedAt %v, startedAt %v", final.FinishedAt, final.StartedAt)
			}
			if tt.wantPhase == rpc.AgentTaskSucceeded {
				if final.Result == nil || !final.Result.Success {
					t.Errorf("result %+v, want the run's", final.Result)
				}
			} else if final.Result != nil {
				t.Errorf("result %+v of a task that did not succeed", final.Result)
			}
			if tt.deadline == 0 {
				// The usage of a run that failed is kept: its tokens
				// were spent.
				runnertestWant(t, "input tokens", final.Usage.InputTokens, int64(10))
			}
			if tt.wantCause != nil {
				select {
				case cause := <-run.ended:
					if diff := cmp.Diff(tt.wantCause, asError(cause)); diff != "" {
						t.Errorf("the run's context's cause (-want +got):\n%s", diff)
					}
				case <-time.After(wait):
					t.Fatal("the run's context did not end")
				}
			}
			// Cancelling a task that is over leaves it as it is.
			st, err := r.Cancel(context.Background(), "task")
			if err != nil || st.Phase != tt.wantPhase {
				t.Errorf("Cancel of a finished task = %v, %v; want phase %s", st.Phase, err, tt.wantPhase)
			}
		})
	}
}

func TestStopRefusesNewTasks(t *testing.T) {
	r := New(Options{})
	cause := rpc.Errorf(rpc.CodeShuttingDown, "the runner is shutting down")
	r.Stop(cause)
	run := newSteppedRun()
	_, _, err := r.Start("late", 0, run.run)
	if diff := cmp.Diff(cause, asError(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	runnertestWant(t, "runs", run.calls.Load(), int32(0))
	if err := r.Wait(context.Background()); err != nil {
		t.Errorf("Wait with no task: %v", err)
	}
}

func TestUnknownTask(t *testing.T) {
	r := New(Options{})
	want := &rpc.Error{Code: rpc.CodeNotFound, Message: "no agent task nope in this runner"}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get found an unknown task")
	}
	_, err := r.Cancel(context.Background(), "nope")
	if diff := cmp.Diff(want, asError(err)); diff != "" {
		t.Errorf("Cancel (-want +got):\n%s", diff)
	}
	err = r.Follow(context.Background(), "nope", 0, func(rpc.AgentTaskEvent) error { return nil })
	if diff := cmp.Diff(want, asError(err)); diff != "" {
		t.Errorf("Follow (-want +got):\n%s", diff)
	}
}

func TestFinishedTasksAreBounded(t *testing.T) {
	big := strings.Repeat("x", 3000)
	tests := []struct {
		name     string
		opts     Options
		message  string
		runs     int
		wantKept []string
	}{
		{
			name:     "by count",
			opts:     Options{MaxFinished: 3},
			runs:     5,
			wantKept: []string{"t2", "t3", "t4"},
		},
		{
			name:     "by bytes: the latest is kept whatever its size",
			opts:     Options{MaxFinishedBytes: 5000},
			message:  big,
			runs:     4,
			wantKept: []string{"t3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(tt.opts)
			for i := range tt.runs {
				uid := fmt.Sprintf("t%d", i)
				_, _, err := r.Start(uid, 0, func(context.Context, func(int, rpc.AgentAction, rpc.Usage)) (*rpc.AgentResult, rpc.Usage, error) {
					return &rpc.AgentResult{Success: true, Message: tt.message}, rpc.Usage{}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				waitOver(t, r, uid)
			}
			var kept []string
			for i := range tt.runs {
				if _, ok := r.Get(fmt.Sprintf("t%d", i)); ok {
					kept = append(kept, fmt.Sprintf("t%d", i))
				}
			}
			if diff := cmp.Diff(tt.wantKept, kept); diff != "" {
				t.Errorf("tasks kept (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStepTextsAreBounded(t *testing.T) {
	r := New(Options{})
	long := strings.Repeat("é", MaxStepTextBytes) // two bytes each
	var wg sync.WaitGroup
	wg.Add(1)
	_, _, err := r.Start("task", 0, func(_ context.Context, onStep func(int, rpc.AgentAction, rpc.Usage)) (*rpc.AgentResult, rpc.Usage, error) {
		defer wg.Done()
		onStep(0, rpc.AgentAction{Type: "ariaTree", PageText: long, Reasoning: "short"}, rpc.Usage{})
		return &rpc.AgentResult{Success: true}, rpc.Usage{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	final := waitOver(t, r, "task")
	got := final.Actions[0]
	if len(got.PageText) > MaxStepTextBytes || !strings.HasSuffix(got.PageText, "…") || !strings.HasPrefix(got.PageText, "éé") {
		t.Errorf("pageText of %d bytes ending %q, want at most %d ending with …", len(got.PageText), got.PageText[len(got.PageText)-8:], MaxStepTextBytes)
	}
	if !utf8.ValidString(got.PageText) {
		t.Error("pageText was not cut at a rune boundary")
	}
	runnertestWant(t, "reasoning", got.Reasoning, "short")
}
