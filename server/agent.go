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
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	Success   bool           `json:"success"`
	Message   string         `json:"message"`
	Actions   []agentAction  `json:"actions"`
	Completed bool           `json:"completed"`
	Metadata  map[string]any `json:"metadata"`
	Usage     agentUsage     `json:"usage"`
}

type agentAction struct {
	Type          string `json:"type"`
	Reasoning     string `json:"reasoning"`
	TaskCompleted bool   `json:"taskCompleted"`
	Action        string `json:"action"`
	TimeMs        int64  `json:"timeMs"`
	PageText      string `json:"pageText"`
	PageURL       string `json:"pageUrl"`
	Instruction   string `json:"instruction"`
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
// AgentTask for the session and answers from the task's status once the task
// is over. The task is the state: any API replica can serve the call, and
// `kubectl get at` shows it. A caller that goes away cancels the task by
// deleting it.
func (s *server) agentExecute(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	req, stream, ok := decodeOperation(s, w, r, serverv1.DecodeAgentExecute, func(b *serverv1.AgentBody) *bool { return b.StreamResponse })
	if !ok {
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
		if st, ok := err.(apierrors.APIStatus); ok && apierrors.IsInvalid(err) {
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

	steps := int32(0)
	for {
		t := &v1alpha1.AgentTask{}
		err := s.opts.Client.Get(ctx, key, t)
		switch {
		case apierrors.IsNotFound(err):
			// The cache has not seen the create yet, or someone deleted
			// the task; the latter leaves the session's phase to tell.
		case err != nil:
			if ctx.Err() == nil {
				log.Error(err, "reading agent task")
				resp.fail(http.StatusInternalServerError, CodeInternal, "internal error")
			}
			s.cleanup(task)
			return
		default:
			for ; steps < t.Status.Steps; steps++ {
				resp.log(rpc.LogLine{Category: "agent", Message: fmt.Sprintf("step %d", steps+1), Level: rpc.LogLevelInfo})
			}
			switch t.Status.Phase {
			case v1alpha1.AgentTaskSucceeded:
				usage := agentUsageOf(t.Status.Usage)
				s.opts.Metrics.AddTokens(agentModel(t, bs), usage.InputTokens, usage.OutputTokens, usage.ReasoningTokens, usage.CachedInputTokens)
				resp.succeed(agentResultOf(t), "")
				return
			case v1alpha1.AgentTaskFailed, v1alpha1.AgentTaskCancelled:
				msg := t.Status.Message
				if msg == "" {
					msg = "the agent task " + string(t.Status.Phase)
				}
				resp.fail(http.StatusUnprocessableEntity, CodeAgentFailed, msg)
				return
			}
		}
		select {
		case <-wake:
		case <-ctx.Done():
			// The caller went away or the server is stopping: the task
			// has no one to answer to.
			s.cleanup(task)
			if errors.Is(context.Cause(ctx), errShuttingDown) {
				resp.fail(http.StatusServiceUnavailable, CodeUnavailable, "the API server is shutting down; retry the call")
			}
			return
		}
	}
}

func agentModel(t *v1alpha1.AgentTask, bs *v1alpha1.BrowserSession) string {
	if m := t.Spec.AgentConfig.Model; m != nil && m.Name != "" {
		return m.Name
	}
	return bs.Spec.Model.Name
}

func agentUsageOf(u *v1alpha1.Usage) agentUsage {
	if u == nil {
		return agentUsage{}
	}
	return agentUsage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, InferenceTimeMs: u.InferenceTimeMs,
		ReasoningTokens: u.ReasoningTokens, CachedInputTokens: u.CachedInputTokens,
	}
}

func agentResultOf(t *v1alpha1.AgentTask) agentResult {
	out := agentResult{Actions: []agentAction{}, Metadata: map[string]any{}, Usage: agentUsageOf(t.Status.Usage)}
	if res := t.Status.Result; res != nil {
		out.Success, out.Message, out.Completed = ptr.Deref(res.Success, false), res.Message, ptr.Deref(res.Completed, false)
	}
	{
		for _, a := range t.Status.Actions {
			out.Actions = append(out.Actions, agentAction{
				Type: a.Type, Reasoning: a.Reasoning, TaskCompleted: ptr.Deref(a.TaskCompleted, false), Action: a.Action,
				TimeMs: a.TimeMs, PageText: a.PageText, PageURL: a.PageURL, Instruction: a.Instruction,
			})
		}
	}
	return out
}
