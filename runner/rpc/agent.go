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
	"encoding/json"
	"time"

	"github.com/browserfleet/browserfleet/cache"
)

// The runner's agent tasks. The manager starts a task with the AgentTask's
// UID as its id and follows it; the runner keeps each task's state by that
// id, so that a manager that restarts, or another one that takes the lead,
// starts it again (which answers the running task) and follows it from the
// step it knows, with no step lost or run twice.
const (
	// AgentTasksPath (POST) starts a task. Body AgentTaskRequest; answer
	// AgentTaskState: 201 for a task it started, 200 for the task it
	// already has under that UID (the request is then ignored), 409
	// AGENT_BUSY while another task runs.
	AgentTasksPath = "/v1/agent/tasks"
	// AgentTaskPathPrefix, followed by a task's UID, is one task. GET
	// answers its AgentTaskState; with Accept ContentTypeNDJSON it streams
	// AgentTaskEvent lines instead: every step from index ParamFrom (0 when
	// absent) as it happens, then the final state, then the stream ends
	// (at once with the state when the task is over). DELETE stops a
	// running task (it ends Cancelled) and answers its state; a task that
	// is over is left as it is. An unknown UID is 404 NOT_FOUND.
	AgentTaskPathPrefix = "/v1/agent/tasks/"
	// ParamFrom is the query parameter of the first step a follower wants.
	ParamFrom = "from"
)

// AgentTaskPath is the path of the task with uid.
func AgentTaskPath(uid string) string { return AgentTaskPathPrefix + uid }

// Agent modes, as the AgentTask's spec.agentConfig.mode has them.
const (
	AgentModeDOM    = "dom"
	AgentModeHybrid = "hybrid"
	AgentModeCUA    = "cua"
)

// AgentTaskRequest starts an agent task. It holds secrets (the models'
// keys and headers, the variables' values): it is never logged or kept
// beyond the task's run.
type AgentTaskRequest struct {
	// UID is the AgentTask's UID, the task's id in the runner.
	UID string `json:"uid"`
	// Name is the AgentTask's name, for logs.
	Name string `json:"name,omitempty"`
	// Mode is dom, hybrid or cua; empty is dom.
	Mode string `json:"mode,omitempty"`
	// Model is the agent loop's model, merged with the session's as an
	// operation's options.model is; nil is the session's.
	Model *ModelConfig `json:"model,omitempty"`
	// ExecutionModel serves the act, extract and fillForm tools; nil is
	// Model.
	ExecutionModel *ModelConfig `json:"executionModel,omitempty"`
	// SystemPrompt is added to the agent's own and the session's.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// Instruction is the task.
	Instruction string `json:"instruction"`
	// MaxSteps bounds the tool calls; 0 is the agent's default.
	MaxSteps int `json:"maxSteps,omitempty"`
	// ToolTimeoutMs bounds each tool call but think and wait; 0 is the
	// agent's default.
	ToolTimeoutMs int `json:"toolTimeoutMs,omitempty"`
	// HighlightCursor draws a cursor in the page for coordinate actions.
	HighlightCursor bool `json:"highlightCursor,omitempty"`
	// UseSearch offers the search tool (the runner must have a search
	// endpoint).
	UseSearch bool `json:"useSearch,omitempty"`
	// Variables are values the agent types by name; the model sees the
	// names only.
	Variables map[string]string `json:"variables,omitempty"`
	// VariableDescriptions tell the model what a variable holds, by name.
	VariableDescriptions map[string]string `json:"variableDescriptions,omitempty"`
	// FrameID scopes the agent to a frame; empty is the main frame.
	FrameID string `json:"frameId,omitempty"`
	// ShouldCache asks for a cache entry of the run in the result.
	ShouldCache bool `json:"shouldCache,omitempty"`
	// Cache is the server-side cache setting of the run: with ShouldCache,
	// an identical earlier run's entry is replayed with no model call, and
	// a successful run stores its entry. nil: neither.
	Cache *cache.Setting `json:"cache,omitempty"`
	// DeadlineSeconds bounds the run from its start; past it the task
	// fails with code TIMEOUT. 0 is no bound but the runner's life.
	DeadlineSeconds int `json:"deadlineSeconds,omitempty"`
}

// AgentTaskPhase is where a task of the runner stands.
type AgentTaskPhase string

const (
	// AgentTaskRunning is a task whose agent runs.
	AgentTaskRunning AgentTaskPhase = "Running"
	// AgentTaskSucceeded is a task whose agent finished; Result says how.
	AgentTaskSucceeded AgentTaskPhase = "Succeeded"
	// AgentTaskFailed is a task whose agent stopped on an error; Error says which
	// (TIMEOUT for the deadline, MODEL_ERROR, BROWSER_CRASHED, ...).
	AgentTaskFailed AgentTaskPhase = "Failed"
	// AgentTaskCancelled is a task whose agent a DELETE stopped.
	AgentTaskCancelled AgentTaskPhase = "Cancelled"
)

// Over says whether the phase is final.
func (p AgentTaskPhase) Over() bool { return p != AgentTaskRunning }

// AgentTaskState is a task as the runner knows it.
type AgentTaskState struct {
	UID   string         `json:"uid"`
	Phase AgentTaskPhase `json:"phase"`
	// Steps is how many steps the agent has taken: len(Actions).
	Steps int `json:"steps"`
	// Actions are every step so far, oldest first.
	Actions []AgentAction `json:"actions"`
	// Usage sums every model call so far, the tools' included.
	Usage Usage `json:"usage"`
	// Result is set once the task Succeeded.
	Result *AgentResult `json:"result,omitempty"`
	// Error is set once the task Failed or was Cancelled.
	Error     *Error    `json:"error,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	// FinishedAt is set once the task is over.
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}

// AgentAction is one step of an agent, in the /v1 API's shape.
type AgentAction struct {
	Type          string `json:"type"`
	Reasoning     string `json:"reasoning"`
	TaskCompleted bool   `json:"taskCompleted"`
	Action        string `json:"action"`
	TimeMs        int64  `json:"timeMs"`
	PageText      string `json:"pageText"`
	PageURL       string `json:"pageUrl"`
	Instruction   string `json:"instruction"`
}

// AgentResult is what an agent reports when it finishes.
type AgentResult struct {
	Success   bool           `json:"success"`
	Message   string         `json:"message"`
	Completed bool           `json:"completed"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Output is the done tool's output, if the model gave one.
	Output json.RawMessage `json:"output,omitempty"`
	// CacheEntry is set when the request asked for ShouldCache.
	CacheEntry *AgentCacheEntry `json:"cacheEntry,omitempty"`
	// Cache is what the server-side cache did for the run; nil is
	// DISABLED.
	Cache *cache.Report `json:"cache,omitempty"`
}

// AgentCacheEntry is the /v1 API's cacheEntry: a key and the recorded
// deterministic steps of a run.
type AgentCacheEntry struct {
	CacheKey string          `json:"cacheKey"`
	Entry    json.RawMessage `json:"entry"`
}

// AgentTaskEvent is one line of a followed task: a step (Index is its
// position, from 0) or the final state.
type AgentTaskEvent struct {
	Step  *AgentAction    `json:"step,omitempty"`
	Index int             `json:"index"`
	State *AgentTaskState `json:"state,omitempty"`
}
