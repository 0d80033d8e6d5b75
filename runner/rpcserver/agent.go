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
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/runner/agenttask"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Agent tasks (rpc.AgentTasksPath). The registry (runner/agenttask) keeps
// them by UID; a task's run takes its turn in the operation queue like an
// operation and holds the page until it ends, so operations sent meanwhile
// wait (bounded as ever by --max-queued-operations). Its context is the
// task's, not the request's: a caller that goes away leaves it running; a
// DELETE, its deadline, the runner's shutdown or the browser's death end
// it.

// maxAgentDeadline bounds a task's deadlineSeconds, as the AgentTask's
// spec.activeDeadlineSeconds does.
const maxAgentDeadline = 24 * time.Hour

// cancelWait bounds how long a DELETE waits for the run it stopped to
// return; a run ends within moments of its context, so this is a guard.
const cancelWait = 30 * time.Second

// uidPattern is what a task's UID may look like: Kubernetes UIDs are UUIDs.
var uidPattern = regexp.MustCompile(`^[0-9A-Za-z-]{1,64}$`)

func (s *Server) serveAgentTasks(w http.ResponseWriter, r *http.Request) {
	var req rpc.AgentTaskRequest
	if !decode(w, r, &req) {
		return
	}
	if e := checkAgentRequest(&req); e != nil {
		writeError(w, e)
		return
	}
	// A task the registry has is answered whatever the browser's state:
	// a manager that restarts reads the outcome of its task.
	if st, ok := s.tasks.Get(req.UID); ok {
		writeJSON(w, http.StatusOK, st)
		return
	}
	b, e := s.readyBrowser()
	if e != nil {
		writeError(w, e)
		return
	}
	if c, ok := s.ops.(agentChecker); ok {
		ctx, cancel := context.WithTimeout(r.Context(), agentCheckTimeout)
		err := c.CheckAgent(ctx, b.TabFor(ctx, s.settle), req)
		cancel()
		if err != nil {
			writeError(w, asRPCError(err))
			return
		}
	}
	if s.queue.full() {
		writeError(w, errBusy)
		return
	}
	st, created, err := s.tasks.Start(req.UID, time.Duration(req.DeadlineSeconds)*time.Second,
		func(ctx context.Context, onStep func(int, rpc.AgentAction, rpc.Usage)) (*rpc.AgentResult, rpc.Usage, error) {
			return s.runAgent(ctx, req, onStep)
		})
	switch {
	case err != nil:
		writeError(w, asRPCError(err))
	case created:
		// What the task is, never what it holds (keys, variable values).
		s.log.Info("agent task accepted", "task", req.UID, "name", req.Name, "mode", req.Mode,
			"maxSteps", req.MaxSteps, "deadlineSeconds", req.DeadlineSeconds)
		writeJSON(w, http.StatusCreated, st)
	default:
		writeJSON(w, http.StatusOK, st)
	}
}

// agentChecker is implemented by operations that check a task on the page
// before its run starts (operations.Automation: a frameId the page does not
// have), so that the start answers the error and leaves nothing behind.
type agentChecker interface {
	CheckAgent(ctx context.Context, tab *chromium.Tab, req rpc.AgentTaskRequest) error
}

// agentCheckTimeout bounds that check; one that runs out is left to the
// run.
const agentCheckTimeout = 10 * time.Second

// checkAgentRequest checks what the runner can tell of a request before
// the run without the page: the frame is checked on the page (see
// agentChecker); the rest (models, mode, and the frame again) the run's
// first moments check.
func checkAgentRequest(req *rpc.AgentTaskRequest) *rpc.Error {
	switch {
	case !uidPattern.MatchString(req.UID):
		return rpc.Errorf(rpc.CodeBadRequest, "uid is required: the AgentTask's UID, at most 64 letters, digits and '-'")
	case strings.TrimSpace(req.Instruction) == "":
		return rpc.Errorf(rpc.CodeBadRequest, "instruction is required")
	case req.MaxSteps < 0 || req.MaxSteps > agenttask.MaxSteps:
		return rpc.Errorf(rpc.CodeBadRequest, "maxSteps must be between 0 and %d", agenttask.MaxSteps)
	case req.ToolTimeoutMs < 0 || req.ToolTimeoutMs > int(time.Hour/time.Millisecond):
		return rpc.Errorf(rpc.CodeBadRequest, "toolTimeoutMs must be between 0 and 3600000")
	case req.DeadlineSeconds < 0 || req.DeadlineSeconds > int(maxAgentDeadline/time.Second):
		return rpc.Errorf(rpc.CodeBadRequest, "deadlineSeconds must be between 0 and %d", int(maxAgentDeadline/time.Second))
	}
	switch req.Mode {
	case "", rpc.AgentModeDOM, rpc.AgentModeHybrid, rpc.AgentModeCUA:
	default:
		return rpc.Errorf(rpc.CodeBadRequest, "mode must be dom, hybrid or cua")
	}
	return nil
}

// serveAgentTask serves one task: GET its state or follows it, DELETE
// cancels it.
func (s *Server) serveAgentTask(w http.ResponseWriter, r *http.Request) {
	uid := strings.TrimPrefix(r.URL.Path, rpc.AgentTaskPathPrefix)
	if !uidPattern.MatchString(uid) {
		writeError(w, rpc.Errorf(rpc.CodeNotFound, "no such path"))
		return
	}
	switch r.Method {
	case http.MethodGet:
		if acceptsNDJSON(r) {
			s.followAgentTask(w, r, uid)
			return
		}
		st, ok := s.tasks.Get(uid)
		if !ok {
			writeError(w, rpc.Errorf(rpc.CodeNotFound, "no agent task %s in this runner", uid))
			return
		}
		writeJSON(w, http.StatusOK, st)
	case http.MethodDelete:
		ctx, cancel := context.WithTimeout(r.Context(), cancelWait)
		defer cancel()
		st, err := s.tasks.Cancel(ctx, uid)
		if err != nil {
			writeError(w, asRPCError(err))
			return
		}
		writeJSON(w, http.StatusOK, st)
	default:
		w.Header().Set("Allow", "GET, DELETE")
		writeError(w, rpc.Errorf(rpc.CodeMethodNotAllowed, "%s takes GET or DELETE", rpc.AgentTaskPathPrefix+"{uid}"))
	}
}

// followAgentTask streams the task's steps from ?from= on, then its final
// state, as rpc.AgentTaskEvent lines.
func (s *Server) followAgentTask(w http.ResponseWriter, r *http.Request, uid string) {
	from := 0
	if v := r.URL.Query().Get(rpc.ParamFrom); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, rpc.Errorf(rpc.CodeBadRequest, "%s must be a step index, 0 or more", rpc.ParamFrom))
			return
		}
		from = n
	}
	if _, ok := s.tasks.Get(uid); !ok {
		writeError(w, rpc.Errorf(rpc.CodeNotFound, "no agent task %s in this runner", uid))
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", rpc.ContentTypeNDJSON)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	err := s.tasks.Follow(r.Context(), uid, from, func(ev rpc.AgentTaskEvent) error {
		line, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("encoding an agent task event: %w", err)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("writing an agent task event: %w", err)
		}
		if err := rc.Flush(); err != nil {
			return fmt.Errorf("flushing an agent task event: %w", err)
		}
		return nil
	})
	if err != nil && r.Context().Err() == nil {
		s.log.Debug("following an agent task ended", "task", uid, "err", err)
	}
}

// runAgent is a task's run: its turn in the queue, then the agent on the
// page, recorded in the history as one agentExecute call.
func (s *Server) runAgent(ctx context.Context, req rpc.AgentTaskRequest, onStep func(int, rpc.AgentAction, rpc.Usage)) (*rpc.AgentResult, rpc.Usage, error) {
	started := time.Now()
	var (
		res   *rpc.AgentResult
		usage rpc.Usage
		steps int
	)
	fail := func(e *rpc.Error) (*rpc.AgentResult, rpc.Usage, error) {
		s.recordAgent(req, started, steps, nil, usage, e)
		return nil, usage, e
	}
	counted := func(i int, step rpc.AgentAction, u rpc.Usage) {
		steps = i + 1
		onStep(i, step, u)
	}
	release, err := s.queue.acquire(ctx)
	if errors.Is(err, errBusy) {
		return fail(errBusy)
	}
	if err != nil {
		return fail(causeOf(ctx))
	}
	defer release()
	b, rerr := s.readyBrowser()
	if rerr != nil {
		return fail(rerr)
	}
	if ctx.Err() != nil {
		// Its turn came as it ended.
		return fail(causeOf(ctx))
	}
	tctx, finish, ok := s.begin(ctx, b.TabContext(), "agentExecute", 0)
	if !ok {
		return fail(errShuttingDown)
	}
	defer finish()
	page := b.TabFor(tctx, s.settle)
	log := s.log.With("task", req.UID)
	// Refused connections go to the runner's log under the task: no
	// caller waits on a stream for them.
	stopEgress := b.WatchEgress(func(l rpc.LogLine) {
		log.Info("agent task: connection refused by the egress policy", "message", l.Message)
	})
	res, usage, err = s.ops.Agent(tctx, page, req, counted)
	stopEgress()
	if err != nil {
		return fail(s.classify(tctx, b, err))
	}
	s.recordAgent(req, started, steps, res, usage, nil)
	return res, usage, nil
}

// causeOf is why ctx, a task's context, ended.
func causeOf(ctx context.Context) *rpc.Error {
	var e *rpc.Error
	if errors.As(context.Cause(ctx), &e) {
		return e
	}
	return rpc.Errorf(rpc.CodeInternal, "the agent task ended: %v", context.Cause(ctx))
}

// asRPCError is err's *rpc.Error, or an INTERNAL one.
func asRPCError(err error) *rpc.Error {
	var e *rpc.Error
	if errors.As(err, &e) {
		return e
	}
	return rpc.Errorf(rpc.CodeInternal, "%s", err.Error())
}

// agentParamsView is what the history keeps of a task's request: no model
// key or header, no variable value.
type agentParamsView struct {
	Instruction     string   `json:"instruction"`
	Mode            string   `json:"mode,omitempty"`
	Model           string   `json:"model,omitempty"`
	ExecutionModel  string   `json:"executionModel,omitempty"`
	MaxSteps        int      `json:"maxSteps,omitempty"`
	ToolTimeoutMs   int      `json:"toolTimeoutMs,omitempty"`
	HighlightCursor bool     `json:"highlightCursor,omitempty"`
	Variables       []string `json:"variables,omitempty"`
	FrameID         string   `json:"frameId,omitempty"`
	ShouldCache     bool     `json:"shouldCache,omitempty"`
	DeadlineSeconds int      `json:"deadlineSeconds,omitempty"`
	UID             string   `json:"uid"`
}

// agentResultView is what the history keeps of a task's result: a summary;
// its steps are the AgentTask's.
type agentResultView struct {
	Success   bool   `json:"success"`
	Completed bool   `json:"completed"`
	Message   string `json:"message,omitempty"`
	Steps     int    `json:"steps"`
}

// maxRecordedMessage bounds the agent's message in the history.
const maxRecordedMessage = 1024

// recordAgent adds a task's run to the history, as one agentExecute call
// under the task's UID. A cancelled run is recorded too: its steps were
// taken and its tokens spent.
func (s *Server) recordAgent(req rpc.AgentTaskRequest, started time.Time, steps int, res *rpc.AgentResult, usage rpc.Usage, failure *rpc.Error) {
	params := agentParamsView{
		Instruction: req.Instruction, Mode: req.Mode, Model: modelName(req.Model), ExecutionModel: modelName(req.ExecutionModel),
		MaxSteps: req.MaxSteps, ToolTimeoutMs: req.ToolTimeoutMs, HighlightCursor: req.HighlightCursor,
		Variables: slices.Sorted(maps.Keys(req.Variables)), FrameID: req.FrameID, ShouldCache: req.ShouldCache,
		DeadlineSeconds: req.DeadlineSeconds, UID: req.UID,
	}
	e := replay.Entry{
		ActionID: req.UID,
		Method:   "agentExecute",
		Params:   params,
		Started:  started,
		Ended:    time.Now(),
		Usage: replay.TokenUsage{
			InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens,
			ReasoningTokens: usage.ReasoningTokens, CachedInputTokens: usage.CachedInputTokens,
			TimeMs: usage.InferenceTimeMs,
		},
	}
	if failure != nil {
		e.Failed = true
		e.Result = map[string]any{"error": failure.Message, "code": string(failure.Code), "steps": steps}
	} else {
		msg := res.Message
		if len(msg) > maxRecordedMessage {
			msg = strings.ToValidUTF8(msg[:maxRecordedMessage], "")
		}
		e.Result = agentResultView{Success: res.Success, Completed: res.Completed, Message: msg, Steps: steps}
	}
	s.history.Record(e)
}
