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

package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/server/apikey"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// CodeAgentFailed (422): the agent task failed; the message says why.
const CodeAgentFailed = "AGENT_FAILED"

// agentResult is agentExecute's data.result, in the spec's shape.
type agentResult struct {
	Success   bool              `json:"success"`
	Message   string            `json:"message"`
	Actions   []rpc.AgentAction `json:"actions"`
	Completed bool              `json:"completed"`
	Metadata  map[string]any    `json:"metadata"`
	Usage     agentUsage        `json:"usage"`
}

// agentUsage is snake_case, as the spec has it for agents.
type agentUsage struct {
	InputTokens       int64 `json:"input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	InferenceTimeMs   int64 `json:"inference_time_ms"`
	ReasoningTokens   int64 `json:"reasoning_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
}

// agentExecute serves POST /v1/sessions/{id}/agentExecute: it creates an
// AgentTask for the session, which the manager dispatches to the session's
// runner, and answers once the task is over. The task is the state: any API
// replica can serve the call, and `kubectl get at` shows it. While the task
// runs, the call follows it in the runner, so that each step is streamed as
// it happens and the answer holds every step; should the runner stop
// answering, the task's status, which the manager keeps, has the last word.
// A caller that goes away cancels the task by deleting it.
func (s *server) agentExecute(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	req, stream, ok := decodeOperation(s, w, r, serverv1.DecodeAgentExecute, func(b *serverv1.AgentBody) *bool { return b.StreamResponse })
	if !ok {
		return
	}
	if u := req.ExecuteOptions.UseSearch; u != nil && *u && s.opts.Search == nil {
		// The search tool needs a provider the operator configures; none
		// is.
		writeIssues(w, "invalid request body", []serverv1.Issue{{
			Path:    "executeOptions.useSearch",
			Message: "this deployment has no search provider configured, so the agent has no search tool; leave useSearch out or set it to false",
		}})
		return
	}
	bs, ok := s.readySession(w, r, project)
	if !ok {
		return
	}
	task, secrets, err := req.ToAgentTask(uuid.NewString(), bs.Namespace, bs.Name)
	if err != nil {
		s.log.Error(err, "mapping agentExecute request", "namespace", bs.Namespace, "session", bs.Name)
		writeInternal(w)
		return
	}
	key := client.ObjectKeyFromObject(task)
	wake, cancelWake := s.hub.subscribe(key)
	defer cancelWake()
	if err := s.createWithSecrets(r.Context(), task, "AgentTask", secrets...); err != nil {
		// createWithSecrets wraps the API server's error.
		if st := apierrors.APIStatus(nil); errors.As(err, &st) && apierrors.IsInvalid(err) {
			writeIssues(w, "invalid request body", issuesOf(st.Status()))
			return
		}
		s.log.Error(err, "creating agent task", "namespace", bs.Namespace, "session", bs.Name)
		writeInternal(w)
		return
	}
	log := s.log.WithValues("namespace", bs.Namespace, "session", bs.Name, "task", task.Name)
	log.V(1).Info("agent task created")

	ctx, cancel := s.operationContext(r.Context())
	defer cancel()
	var resp responder = plain{w: w}
	if stream {
		st, ok := s.openStream(w)
		if !ok {
			s.cleanup(task)
			return
		}
		defer st.Close()
		_ = st.Connected()
		resp = streamed{st}
	}
	f := &agentFollower{s: s, bs: bs, resp: resp, log: log}
	if !f.await(ctx, key, wake) {
		// The caller went away or the server is stopping: the task has no
		// one to answer to.
		s.cleanup(task)
		if errors.Is(context.Cause(ctx), errShuttingDown) {
			resp.fail(http.StatusServiceUnavailable, CodeUnavailable, "the API server is shutting down; retry the call")
		}
	}
}

// maxAgentFollows bounds how often one call starts following its task in
// the runner: a runner that keeps dropping the stream leaves the answer to
// the task's status.
const maxAgentFollows = 3

// agentFollower answers one agentExecute call from its task.
type agentFollower struct {
	s    *server
	bs   *v1alpha1.BrowserSession
	resp responder
	log  logr.Logger
	// logged is how many steps the caller has been told of.
	logged int
	// follows counts the times the runner was followed.
	follows int
	// waiting is the last Pending message told.
	waiting string
}

// await answers the call once the task is over, and reports false when ctx
// ended first (nothing has been answered then).
func (f *agentFollower) await(ctx context.Context, key client.ObjectKey, wake <-chan struct{}) bool {
	for {
		t := &v1alpha1.AgentTask{}
		err := f.s.opts.Client.Get(ctx, key, t)
		switch {
		case apierrors.IsNotFound(err):
			// The cache has not seen the create yet, or someone deleted
			// the task; the latter leaves the session's phase to tell.
		case err != nil:
			if ctx.Err() != nil {
				return false
			}
			f.log.Error(err, "reading agent task")
			f.resp.fail(http.StatusInternalServerError, CodeInternal, "internal error")
			return true
		default:
			if f.settle(ctx, t) {
				return true
			}
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}

// settle answers from the task when it is over, or from the runner once it
// runs there, and reports whether it answered.
func (f *agentFollower) settle(ctx context.Context, t *v1alpha1.AgentTask) bool {
	st := &t.Status
	switch st.Phase {
	case v1alpha1.AgentTaskPending, "":
		if st.Message != "" && st.Message != f.waiting {
			f.waiting = st.Message
			f.resp.log(rpc.LogLine{Category: "agent", Message: st.Message, Level: rpc.LogLevelInfo, Timestamp: time.Now()})
		}
		return false
	case v1alpha1.AgentTaskRunning:
		if f.follows < maxAgentFollows {
			f.follows++
			if f.follow(ctx, t) {
				return true
			}
		}
		f.logSteps(int(st.Steps))
		return false
	}
	// Over. A task that ran is answered from the runner, which keeps it
	// for a while with every step and the cache entry; the status has the
	// latest steps only. A short run may be over before the call saw it
	// running.
	if dispatched(st) && f.follows < maxAgentFollows {
		f.follows++
		if f.follow(ctx, t) {
			return true
		}
	}
	switch st.Phase {
	case v1alpha1.AgentTaskSucceeded:
		f.logSteps(int(st.Steps))
		res := agentResultOf(t)
		f.s.opts.Metrics.AddTokens(agentModel(t, f.bs), res.Usage.InputTokens, res.Usage.OutputTokens, res.Usage.ReasoningTokens, res.Usage.CachedInputTokens)
		f.resp.succeedAgent(res, nil)
		return true
	default:
		msg := st.Message
		if msg == "" {
			msg = "the agent task " + string(st.Phase)
		}
		f.resp.fail(http.StatusUnprocessableEntity, CodeAgentFailed, msg)
		return true
	}
}

// dispatched says whether the task reached its runner.
func dispatched(st *v1alpha1.AgentTaskStatus) bool {
	return st.StartTime != nil || meta.FindStatusCondition(st.Conditions, v1alpha1.AgentTaskConditionRunning) != nil
}

// follow streams the task's steps from the runner as they happen and
// answers with the runner's outcome, which holds every step and the cache
// entry. It reports false, having answered nothing, when the runner cannot
// be followed to the end.
func (f *agentFollower) follow(ctx context.Context, t *v1alpha1.AgentTask) bool {
	c, err := f.s.runnerClient(ctx, f.bs)
	if err != nil {
		f.log.V(1).Info("cannot follow the agent task in the runner; waiting for its status", "err", err)
		return false
	}
	var final *rpc.AgentTaskState
	err = c.FollowAgentTask(ctx, string(t.UID), f.logged, func(ev rpc.AgentTaskEvent) error {
		if ev.Step != nil && ev.Index >= f.logged {
			f.resp.log(stepLine(ev.Index, *ev.Step))
			f.logged = ev.Index + 1
		}
		if ev.State != nil {
			final = ev.State
		}
		return nil
	})
	if err != nil || final == nil || !final.Phase.Over() {
		if ctx.Err() == nil {
			f.log.V(1).Info("the runner stopped answering for the agent task; waiting for its status", "err", err)
		}
		return false
	}
	if final.Phase != rpc.AgentTaskSucceeded || final.Result == nil {
		msg := "the agent task " + strings.ToLower(string(final.Phase))
		if final.Error != nil {
			msg = final.Error.Message
			if final.Error.Code == rpc.CodeBudgetExceeded {
				// Not the agent's failure: the project's gateway
				// budget is spent, as for any operation.
				f.resp.fail(http.StatusTooManyRequests, string(rpc.CodeBudgetExceeded), msg)
				return true
			}
		}
		f.resp.fail(http.StatusUnprocessableEntity, CodeAgentFailed, msg)
		return true
	}
	res := agentResultOfState(final)
	f.s.opts.Metrics.AddTokens(agentModel(t, f.bs), res.Usage.InputTokens, res.Usage.OutputTokens, res.Usage.ReasoningTokens, res.Usage.CachedInputTokens)
	var entry any
	if ce := final.Result.CacheEntry; ce != nil {
		entry = ce
	}
	f.resp.succeedAgent(res, entry)
	return true
}

// logSteps tells the caller of steps it has not heard of, from the task's
// status, which names only how many there were.
func (f *agentFollower) logSteps(steps int) {
	for ; f.logged < steps; f.logged++ {
		f.resp.log(rpc.LogLine{Category: "agent", Message: fmt.Sprintf("step %d", f.logged+1), Level: rpc.LogLevelInfo, Timestamp: time.Now()})
	}
}

// maxStepLineChars bounds the description of a step in its log line; the
// whole step is in its auxiliary value.
const maxStepLineChars = 300

// stepLine is the running event of one step: a line for people and the
// step itself, as JSON, for programs.
func stepLine(index int, step rpc.AgentAction) rpc.LogLine {
	msg := fmt.Sprintf("step %d: %s", index+1, step.Type)
	if step.Action != "" {
		msg += ": " + step.Action
	}
	line := rpc.LogLine{Category: "agent", Message: truncateText(msg, maxStepLineChars), Level: rpc.LogLevelInfo, Timestamp: time.Now()}
	if b, err := json.Marshal(step); err == nil {
		line.Auxiliary = map[string]rpc.AuxiliaryValue{"step": {Value: string(b), Type: "object"}}
	}
	return line
}

// truncateText cuts s to at most n bytes on a rune boundary.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func agentModel(t *v1alpha1.AgentTask, bs *v1alpha1.BrowserSession) string {
	if m := t.Spec.AgentConfig.Model; m != nil && m.Name != "" {
		return m.Name
	}
	return bs.Spec.Model.Name
}

// agentUsageOf is usage in the spec's snake_case. The runner's and the
// status's usage have the same fields (rpc.Usage(v1alpha1.Usage) compiles).
func agentUsageOf(u rpc.Usage) agentUsage {
	return agentUsage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, InferenceTimeMs: u.InferenceTimeMs,
		ReasoningTokens: u.ReasoningTokens, CachedInputTokens: u.CachedInputTokens,
	}
}

// agentResultOfState is the result the runner reports, every step included.
func agentResultOfState(st *rpc.AgentTaskState) agentResult {
	out := agentResult{
		Success:   st.Result.Success,
		Message:   st.Result.Message,
		Completed: st.Result.Completed,
		Actions:   st.Actions,
		Metadata:  st.Result.Metadata,
		Usage:     agentUsageOf(st.Usage),
	}
	if out.Actions == nil {
		out.Actions = []rpc.AgentAction{}
	}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	withOutput(out.Metadata, st.Result.Output)
	return out
}

// withOutput puts the done tool's output object, when the model gave one,
// in the result's metadata as "output": the spec's result has no field
// for it, and metadata is the caller's free-form part.
func withOutput(metadata map[string]any, output []byte) {
	if len(output) > 0 && json.Valid(output) {
		metadata["output"] = json.RawMessage(output)
	}
}

// agentResultOf is the result the task's status holds: the latest
// v1alpha1.MaxStatusActions steps only.
func agentResultOf(t *v1alpha1.AgentTask) agentResult {
	out := agentResult{Actions: []rpc.AgentAction{}, Metadata: map[string]any{}}
	if u := t.Status.Usage; u != nil {
		out.Usage = agentUsageOf(rpc.Usage(*u))
	}
	if res := t.Status.Result; res != nil {
		out.Success, out.Message, out.Completed = ptr.Deref(res.Success, false), res.Message, ptr.Deref(res.Completed, false)
		withOutput(out.Metadata, []byte(res.Output))
	}
	for _, a := range t.Status.Actions {
		out.Actions = append(out.Actions, rpc.AgentAction{
			Type: a.Type, Reasoning: a.Reasoning, TaskCompleted: ptr.Deref(a.TaskCompleted, false), Action: a.Action,
			TimeMs: a.TimeMs, PageText: a.PageText, PageURL: a.PageURL, Instruction: a.Instruction,
		})
	}
	return out
}
