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
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// The runner records every operation it serves (act, observe, extract,
// navigate), failures included, in its session's history (runner/replay):
// in memory, bounded, redacted. A call whose caller went away is recorded
// as failed with CANCELED, with the usage it spent: what a caller sees in
// the replay when it abandoned a call. GET rpc.ReplayPath answers the
// history; when the runner stops, the summary of it goes to its
// termination message (Run).

// actionIDPattern is what an action id from the caller may look like: the
// API's are UUIDs.
var actionIDPattern = regexp.MustCompile(`^[0-9A-Za-z-]{1,64}$`)

// actionID is the call's id from rpc.HeaderActionID, or a new one.
func actionID(r *http.Request) string {
	if id := r.Header.Get(rpc.HeaderActionID); actionIDPattern.MatchString(id) {
		return id
	}
	return uuid.NewString()
}

// record adds an operation's outcome to the history.
func (s *Server) record(r *http.Request, op string, params any, started time.Time, result any, usage rpc.Usage, failure *rpc.Error) {
	e := replay.Entry{
		ActionID: actionID(r),
		Method:   op,
		Params:   params,
		Result:   result,
		Started:  started,
		Ended:    time.Now(),
		Usage: replay.TokenUsage{
			InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens,
			ReasoningTokens: usage.ReasoningTokens, CachedInputTokens: usage.CachedInputTokens,
			TimeMs: usage.InferenceTimeMs,
		},
		PageURL: pageURLOf(result),
	}
	if failure != nil {
		e.Failed = true
		e.Result = map[string]string{"error": failure.Message, "code": string(failure.Code)}
		e.PageURL = ""
	}
	s.history.Record(e)
}

// serveReplay answers the history of the session's calls.
func (s *Server) serveReplay(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.history.Replay())
}

// History returns the server's history of calls.
func (s *Server) History() *replay.History { return s.history }

// WriteSummary leaves the summary of the history in the termination
// message file, where the kubelet picks it up for the manager. A runner
// that served no call and failed leaves the file alone, so that the
// kubelet can report the end of its log instead
// (terminationMessagePolicy FallbackToLogsOnError).
func WriteSummary(path string, h *replay.History, failed bool, log *slog.Logger) {
	sum := h.Summary()
	if path == "" || (failed && sum.Calls == 0) {
		return
	}
	if err := os.WriteFile(path, sum.TerminationMessage(), 0o600); err != nil {
		log.Warn("could not write the summary of the history", "path", path, "err", err)
		return
	}
	log.Info("wrote the summary of the history", "calls", sum.Calls, "failed", sum.Failed)
}

// pageURLOf is the page a result says the call ended on: navigate's.
func pageURLOf(result any) string {
	switch n := result.(type) {
	case *rpc.NavigateResult:
		if n != nil {
			return n.URL
		}
	case rpc.NavigateResult:
		return n.URL
	}
	return ""
}

// What the history records of each request: what was asked, never a
// secret. A model is recorded by name only (its key and headers stay out),
// variables by name only (their values are often passwords); Redact takes
// care of typed text and URLs.

func variableNames(v rpc.Variables) []string {
	if len(v) == 0 {
		return nil
	}
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func modelName(m *rpc.ModelConfig) string {
	if m == nil {
		return ""
	}
	return m.ModelName
}

// A call's systemPrompt is left out of its record: it is the caller's
// prompt, as long as 32768 characters; its settle timeout and selfHeal are
// recorded.

type actParamsView struct {
	Input              any      `json:"input"`
	Model              string   `json:"model,omitempty"`
	Variables          []string `json:"variables,omitempty"`
	TimeoutMs          *float64 `json:"timeout,omitempty"`
	Selector           string   `json:"selector,omitempty"`
	IgnoreSelectors    []string `json:"ignoreSelectors,omitempty"`
	SelfHeal           *bool    `json:"selfHeal,omitempty"`
	DOMSettleTimeoutMs *float64 `json:"domSettleTimeoutMs,omitempty"`
	FrameID            string   `json:"frameId,omitempty"`
}

func actParams(req *rpc.ActRequest) any {
	var input any = req.Input.Instruction
	if req.Input.Action != nil {
		input = req.Input.Action
	}
	return actParamsView{Input: input, Model: modelName(req.Options.Model), Variables: variableNames(req.Options.Variables),
		TimeoutMs: req.Options.Timeout, Selector: req.Options.Selector, IgnoreSelectors: req.Options.IgnoreSelectors,
		SelfHeal: req.Options.SelfHeal, DOMSettleTimeoutMs: req.Options.DOMSettleTimeoutMs, FrameID: req.FrameID}
}

type observeParamsView struct {
	Instruction        string   `json:"instruction,omitempty"`
	Model              string   `json:"model,omitempty"`
	Variables          []string `json:"variables,omitempty"`
	TimeoutMs          *float64 `json:"timeout,omitempty"`
	Selector           string   `json:"selector,omitempty"`
	IgnoreSelectors    []string `json:"ignoreSelectors,omitempty"`
	DOMSettleTimeoutMs *float64 `json:"domSettleTimeoutMs,omitempty"`
	FrameID            string   `json:"frameId,omitempty"`
}

func observeParams(req *rpc.ObserveRequest) any {
	return observeParamsView{Instruction: req.Instruction, Model: modelName(req.Options.Model),
		Variables: variableNames(req.Options.Variables), TimeoutMs: req.Options.Timeout,
		Selector: req.Options.Selector, IgnoreSelectors: req.Options.IgnoreSelectors,
		DOMSettleTimeoutMs: req.Options.DOMSettleTimeoutMs, FrameID: req.FrameID}
}

type extractParamsView struct {
	Instruction        string          `json:"instruction,omitempty"`
	Schema             json.RawMessage `json:"schema,omitempty"`
	Model              string          `json:"model,omitempty"`
	TimeoutMs          *float64        `json:"timeout,omitempty"`
	Selector           string          `json:"selector,omitempty"`
	IgnoreSelectors    []string        `json:"ignoreSelectors,omitempty"`
	Screenshot         *bool           `json:"screenshot,omitempty"`
	DOMSettleTimeoutMs *float64        `json:"domSettleTimeoutMs,omitempty"`
	FrameID            string          `json:"frameId,omitempty"`
}

func extractParams(req *rpc.ExtractRequest) any {
	return extractParamsView{Instruction: req.Instruction, Schema: req.Schema, Model: modelName(req.Options.Model),
		TimeoutMs: req.Options.Timeout, Selector: req.Options.Selector, IgnoreSelectors: req.Options.IgnoreSelectors,
		Screenshot: req.Options.Screenshot, DOMSettleTimeoutMs: req.Options.DOMSettleTimeoutMs, FrameID: req.FrameID}
}

type navigateParamsView struct {
	URL       string        `json:"url"`
	Referer   string        `json:"referer,omitempty"`
	TimeoutMs *float64      `json:"timeout,omitempty"`
	WaitUntil rpc.WaitUntil `json:"waitUntil,omitempty"`
	FrameID   string        `json:"frameId,omitempty"`
}

func navigateParams(req *rpc.NavigateRequest) any {
	return navigateParamsView{URL: replay.RedactURL(req.URL), Referer: replay.RedactURL(req.Options.Referer),
		TimeoutMs: req.Options.Timeout, WaitUntil: req.Options.WaitUntil, FrameID: req.FrameID}
}
