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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AgentTaskSpec is an autonomous multi-step task for an agent to run in a
// BrowserSession: the agent config and execute options of the /v1 API's
// agentExecute, with secrets referenced, never inline. It is immutable.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
// +kubebuilder:validation:XValidation:rule="!(has(self.executeOptions.useSearch) && self.executeOptions.useSearch && has(self.agentConfig.mode) && self.agentConfig.mode == 'cua')",message="executeOptions.useSearch: mode cua runs the provider's computer-use loop, which has no search tool"
type AgentTaskSpec struct {
	// sessionRef names the BrowserSession, in the same namespace, that the
	// agent drives.
	// +required
	SessionRef SessionReference `json:"sessionRef,omitzero"`

	// agentConfig selects the agent's models, prompt and mode.
	// +optional
	AgentConfig AgentConfig `json:"agentConfig,omitempty"` //nolint:kubeapilinter // a value, not a pointer: Go callers set its fields in place; empty means the defaults

	// executeOptions say what the agent is to do and within which bounds.
	// +required
	ExecuteOptions ExecuteOptions `json:"executeOptions,omitzero"`

	// frameId is the frame the agent works in; the main frame when omitted.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	FrameID string `json:"frameId,omitempty"`

	// shouldCache captures a cache entry of the run, returned with its result.
	// +optional
	ShouldCache *bool `json:"shouldCache,omitempty"`

	// cache is the server-side cache setting of the run: with shouldCache
	// and the cache on, an identical earlier run is replayed with no model
	// call, and a successful run is stored. Omitted, the session's.
	// +optional
	Cache *CacheSpec `json:"cache,omitempty"`

	// activeDeadlineSeconds bounds the task's run, counted from when its
	// agent started; past it the agent is stopped and the task fails with
	// reason DeadlineExceeded. When omitted, the manager's
	// tasks.defaultActiveDeadline (15 minutes unless configured).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	ActiveDeadlineSeconds int32 `json:"activeDeadlineSeconds,omitempty"`
}

// SessionReference names a BrowserSession in the same namespace.
type SessionReference struct {
	// name is the BrowserSession's name (its session id).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
}

// AgentMode is how the agent perceives and acts on the page.
// +kubebuilder:validation:Enum=dom;hybrid;cua
type AgentMode string

const (
	// AgentModeDOM works from the page snapshot.
	AgentModeDOM AgentMode = "dom"
	// AgentModeHybrid works from the snapshot and screenshots.
	AgentModeHybrid AgentMode = "hybrid"
	// AgentModeCUA is a computer-use agent working from screenshots.
	AgentModeCUA AgentMode = "cua"
)

// AgentConfig selects the agent's models, prompt and mode.
type AgentConfig struct {
	// provider overrides the provider taken from the model's name.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Provider string `json:"provider,omitempty"`

	// model is the agent's model; the session's model when omitted.
	// +optional
	Model *ModelSpec `json:"model,omitempty"`

	// executionModel runs the agent's individual tool calls; model when
	// omitted.
	// +optional
	ExecutionModel *ModelSpec `json:"executionModel,omitempty"`

	// systemPrompt is extra system instructions for the agent.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	SystemPrompt string `json:"systemPrompt,omitempty"`

	// mode is `dom` (default), `hybrid` or `cua`. The /v1 API's `cua: true`
	// maps to mode cua.
	// +optional
	// +kubebuilder:default=dom
	Mode AgentMode `json:"mode,omitempty"`
}

// ExecuteOptions say what an agent is to do and within which bounds.
type ExecuteOptions struct {
	// instruction is the task, in natural language.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	Instruction string `json:"instruction,omitempty"`

	// maxSteps bounds the number of agent steps.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxSteps int32 `json:"maxSteps,omitempty"`

	// highlightCursor shows the agent's cursor on the page.
	// +optional
	HighlightCursor *bool `json:"highlightCursor,omitempty"`

	// useSearch offers the agent the search tool: web search through the
	// provider the operator configured (docs/agent.md). Without one the
	// task fails, and the /v1 API refuses it; not with mode cua.
	// +optional
	UseSearch *bool `json:"useSearch,omitempty"`

	// toolTimeoutMs bounds each tool call, in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600000
	ToolTimeoutMs *int32 `json:"toolTimeoutMs,omitempty"`

	// variables are values the agent may type by name without seeing them.
	// They are not secret; put secret values in variablesSecretRef.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Variables map[string]string `json:"variables,omitempty"`

	// variablesSecretRef names a Secret whose every key is a variable name and
	// whose value is that variable's value.
	// +optional
	VariablesSecretRef *SecretReference `json:"variablesSecretRef,omitempty"`

	// variableDescriptions tell the model what a variable (of variables or
	// variablesSecretRef) holds, by name; the model sees names and
	// descriptions, never values.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k].size() <= 1024)",message="each description is at most 1024 characters"
	VariableDescriptions map[string]string `json:"variableDescriptions,omitempty"`
}

// AgentTaskPhase is a one-word summary of a task's conditions.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Cancelled
type AgentTaskPhase string

const (
	// AgentTaskPending means the task waits for its session to be ready.
	AgentTaskPending AgentTaskPhase = "Pending"
	// AgentTaskRunning means the agent is running.
	AgentTaskRunning AgentTaskPhase = "Running"
	// AgentTaskSucceeded means the agent finished its task.
	AgentTaskSucceeded AgentTaskPhase = "Succeeded"
	// AgentTaskFailed means the agent or its session failed.
	AgentTaskFailed AgentTaskPhase = "Failed"
	// AgentTaskCancelled means the task was cancelled before it finished.
	AgentTaskCancelled AgentTaskPhase = "Cancelled"
)

// Condition types of an AgentTask.
const (
	// AgentTaskConditionRunning is True while the agent runs.
	AgentTaskConditionRunning = "Running"
	// AgentTaskConditionSucceeded is True once the agent finished its task.
	AgentTaskConditionSucceeded = "Succeeded"
	// AgentTaskConditionFailed is True once the task failed.
	AgentTaskConditionFailed = "Failed"
	// AgentTaskConditionCancelled is True once the task was cancelled.
	AgentTaskConditionCancelled = "Cancelled"
)

// Condition reasons of an AgentTask.
const (
	// AgentTaskReasonSessionNotFound: the referenced session does not exist.
	AgentTaskReasonSessionNotFound = "SessionNotFound"
	// AgentTaskReasonSessionFailed: the referenced session failed.
	AgentTaskReasonSessionFailed = "SessionFailed"
	// AgentTaskReasonSessionEnded: the referenced session ended.
	AgentTaskReasonSessionEnded = "SessionEnded"
	// AgentTaskReasonSecretNotAllowed: the task references a Secret that
	// does not exist or has not opted in to it (LabelSessionSecret). The
	// task waits for it the manager's sessions.secretWait (Pending), then
	// fails.
	AgentTaskReasonSecretNotAllowed = "SecretNotAllowed"
	// AgentTaskReasonAgentUnavailable: the session's runner cannot run the
	// task (it refused it, or lost it: a runner restarted since).
	AgentTaskReasonAgentUnavailable = "AgentUnavailable"
	// AgentTaskReasonDispatched: the session's runner accepted the task
	// and its agent runs (condition Running).
	AgentTaskReasonDispatched = "Dispatched"
	// AgentTaskReasonCompleted: the agent finished (condition Succeeded);
	// result.completed says whether it considers the task complete.
	AgentTaskReasonCompleted = "Completed"
	// AgentTaskReasonAgentFailed: the agent stopped on an error, such as a
	// model that could not be called (condition Failed).
	AgentTaskReasonAgentFailed = "AgentFailed"
	// AgentTaskReasonDeadlineExceeded: the task ran past its
	// activeDeadlineSeconds (condition Failed).
	AgentTaskReasonDeadlineExceeded = "DeadlineExceeded"
	// AgentTaskReasonDeleted: the task was deleted while its agent ran,
	// and the runner stopped it (condition Cancelled).
	AgentTaskReasonDeleted = "Deleted"
)

// FinalizerAgentTask holds a dispatched task until the manager has told the
// session's runner to stop its agent, so that deleting a running task stops
// it.
const FinalizerAgentTask = "browserfleet.io/agent-task"

// MaxStatusActions is how many of the latest steps status.actions keeps;
// the /v1 API answers every step.
const MaxStatusActions = 20

// AgentTaskStatus is the observed state of an AgentTask.
type AgentTaskStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is a one-word summary of the conditions: Pending, Running,
	// Succeeded, Failed or Cancelled.
	// +optional
	Phase AgentTaskPhase `json:"phase,omitempty"` //nolint:kubeapilinter // a summary of the conditions for kubectl get, which remain the source of truth

	// conditions are the source of truth of the task's state: Running,
	// Succeeded, Failed and Cancelled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// steps is the number of agent steps taken so far.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Steps int32 `json:"steps,omitempty"`

	// actions are the latest steps the agent took, oldest first: at most
	// MaxStatusActions, their texts truncated to 1024 bytes.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	Actions []AgentAction `json:"actions,omitempty"`

	// result is the agent's result once it finished.
	// +optional
	Result *AgentResult `json:"result,omitempty"`

	// usage is the model usage of the run so far.
	// +optional
	Usage *Usage `json:"usage,omitempty"`

	// startTime is when the agent started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the task finished, failed or was cancelled.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// message says, for people, why the task is in its phase.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
}

// AgentResult is what an agent reports when it stops.
type AgentResult struct {
	// success is whether the agent reached its goal.
	// +required
	Success *bool `json:"success,omitempty"`

	// completed is whether the agent considers the task complete.
	// +optional
	Completed *bool `json:"completed,omitempty"`

	// message is the agent's final message.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	Message string `json:"message,omitempty"`

	// output is what the agent's done tool reported as the task's output,
	// as JSON, truncated to 16384 bytes.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16384
	Output string `json:"output,omitempty"`
}

// AgentAction is one step an agent took.
type AgentAction struct {
	// type is the kind of step, for example `act` or `goto`.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Type string `json:"type,omitempty"`

	// reasoning is the model's reason for the step.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	Reasoning string `json:"reasoning,omitempty"`

	// taskCompleted is whether the agent considered the task complete after
	// this step.
	// +optional
	TaskCompleted *bool `json:"taskCompleted,omitempty"`

	// action describes the step.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	Action string `json:"action,omitempty"`

	// timeMs is how long the step took, in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=1
	TimeMs int64 `json:"timeMs,omitempty"`

	// pageText is text of the page the step read, truncated.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	PageText string `json:"pageText,omitempty"`

	// pageUrl is the page's URL when the step started.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	PageURL string `json:"pageUrl,omitempty"`

	// instruction is the step's instruction.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	Instruction string `json:"instruction,omitempty"`
}

// AgentTask is an autonomous multi-step task that an agent runs in a
// BrowserSession.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=at,categories=browserfleet
// +kubebuilder:printcolumn:name="Session",type=string,JSONPath=`.spec.sessionRef.name`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Steps",type=integer,JSONPath=`.status.steps`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AgentTask struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the task.
	// +required
	Spec AgentTaskSpec `json:"spec,omitzero"`

	// status is the observed state of the task.
	// +optional
	Status AgentTaskStatus `json:"status,omitempty"` //nolint:kubeapilinter // a value, as in every kubebuilder API; the apiserver starts it empty
}

// AgentTaskList is a list of AgentTasks.
// +kubebuilder:object:root=true
type AgentTaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentTask `json:"items"`
}
