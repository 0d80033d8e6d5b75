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

package controllers

import (
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Bounds of the texts a task's status holds (api/v1alpha1: the CRD's
// maxLength of each field, or less).
const (
	// maxActionText bounds each text of a status action: status.actions
	// holds the latest steps for people and kubectl; the /v1 API's answer
	// is made from them too.
	maxActionText = 1024
	// maxActionType is the CRD's bound of an action's type.
	maxActionType = 64
	// maxStatusMessage is the CRD's bound of status.message.
	maxStatusMessage = 4096
	// maxResultMessage and maxResultOutput are the CRD's bounds of
	// status.result.message and .output.
	maxResultMessage = 32768
	maxResultOutput  = 16384
)

// truncate cuts s to at most n bytes, on a rune boundary: the cut backs up
// to the start of the rune it would split.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// statusActions converts the runner's latest steps into status actions.
func statusActions(actions []rpc.AgentAction) []v1alpha1.AgentAction {
	if len(actions) == 0 {
		return nil
	}
	if n := len(actions) - v1alpha1.MaxStatusActions; n > 0 {
		actions = actions[n:]
	}
	out := make([]v1alpha1.AgentAction, 0, len(actions))
	for _, a := range actions {
		typ := truncate(a.Type, maxActionType)
		if typ == "" {
			typ = "unknown"
		}
		out = append(out, v1alpha1.AgentAction{
			Type:          typ,
			Reasoning:     truncate(a.Reasoning, maxActionText),
			TaskCompleted: ptr.To(a.TaskCompleted),
			Action:        truncate(a.Action, maxActionText),
			TimeMs:        max(a.TimeMs, 0),
			PageText:      truncate(a.PageText, maxActionText),
			PageURL:       truncate(a.PageURL, maxActionText),
			Instruction:   truncate(a.Instruction, maxActionText),
		})
	}
	return out
}

// statusUsage converts the runner's usage; none is nil.
func statusUsage(u rpc.Usage) *v1alpha1.Usage {
	if u == (rpc.Usage{}) {
		return nil
	}
	return &v1alpha1.Usage{
		InputTokens: max(u.InputTokens, 0), OutputTokens: max(u.OutputTokens, 0),
		ReasoningTokens: max(u.ReasoningTokens, 0), CachedInputTokens: max(u.CachedInputTokens, 0),
		InferenceTimeMs: max(u.InferenceTimeMs, 0),
	}
}

// statusResult converts the agent's result.
func statusResult(res *rpc.AgentResult) *v1alpha1.AgentResult {
	if res == nil {
		return nil
	}
	out := &v1alpha1.AgentResult{
		Success:   ptr.To(res.Success),
		Completed: ptr.To(res.Completed),
		Message:   truncate(res.Message, maxResultMessage),
	}
	if len(res.Output) > 0 && string(res.Output) != "null" {
		out.Output = truncate(string(res.Output), maxResultOutput)
	}
	return out
}

// setProgress writes what the view knows of the run into the status.
func setProgress(st *v1alpha1.AgentTaskStatus, v *taskView) {
	if v.Steps > int(st.Steps) || (v.Steps == int(st.Steps) && len(v.Actions) > 0) {
		st.Steps = int32(min(v.Steps, int(^uint32(0)>>1))) //nolint:gosec // bounded just above
		st.Actions = statusActions(v.Actions)
	}
	if u := statusUsage(v.Usage); u != nil {
		st.Usage = u
	}
	if st.StartTime == nil && !v.StartedAt.IsZero() {
		st.StartTime = &metav1.Time{Time: v.StartedAt}
	}
}

// onlyProgress says whether b differs from a in progress alone: steps,
// actions and usage, which a running task's status writes are throttled
// for (TaskConfig.StatusInterval).
func onlyProgress(a, b *v1alpha1.AgentTaskStatus) bool {
	a2, b2 := a.DeepCopy(), b.DeepCopy()
	for _, st := range []*v1alpha1.AgentTaskStatus{a2, b2} {
		st.Steps, st.Actions, st.Usage = 0, nil, nil
	}
	return equality.Semantic.DeepEqual(a2, b2)
}
