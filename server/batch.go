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
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/server/apikey"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// batchData is a batch's `data`.
type batchData struct {
	Result       json.RawMessage `json:"result"`
	ActivePageID string          `json:"activePageId"`
	Usage        rpc.BatchUsage  `json:"usage"`
	ActionID     string          `json:"actionId"`
}

// batchErrorBody is the error envelope of a script's exception, with its
// stack.
type batchErrorBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Code    string `json:"code"`
	Stack   string `json:"stack,omitempty"`
}

// batch serves POST /v1/sessions/{id}/batch: the client library's
// ExperimentalBatch, run in the session's runner as one operation. It is
// never streamed. Cancelling the request cancels the batch in the runner.
func (s *server) batch(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req, verr := serverv1.DecodeBatch(body)
	if verr != nil {
		writeIssues(w, verr.Error(), verr.Issues)
		return
	}
	bs, c, ok := s.readyRunner(w, r, project)
	if !ok {
		return
	}

	ctx, cancel := s.operationContext(r.Context())
	defer cancel()
	// The runner records the batch in the session's history under the id
	// the caller gets.
	actionID := uuid.NewString()
	started := time.Now()
	res, err := c.Batch(rpc.WithActionID(ctx, actionID), *req)
	ended := time.Now()

	s.opts.Metrics.ObserveOperation("batch", outcomeOf(err), false, ended.Sub(started))
	if res != nil {
		// The script's operations may each name a model; their tokens
		// count under the batch's default.
		model := modelName(req.Model)
		if model == "" {
			model = bs.Spec.Model.Name
		}
		s.opts.Metrics.AddTokens(model, res.Usage.InputTokens, res.Usage.OutputTokens, res.Usage.ReasoningTokens, res.Usage.CachedInputTokens)
	}
	if err != nil && r.Context().Err() != nil {
		// The caller went away; the runner has been told to stop.
		s.log.V(1).Info("caller went away", "operation", "batch", "namespace", bs.Namespace, "session", bs.Name)
		return
	}
	var e *rpc.Error
	if errors.As(err, &e) && e.Code == rpc.CodeBatchScriptError {
		writeJSON(w, http.StatusUnprocessableEntity, batchErrorBody{Error: e.Message, Code: string(e.Code), Stack: e.Stack})
		return
	}
	if err != nil {
		s.failOperation(ctx, plain{w: w}, bs, "batch", err)
		return
	}
	result := res.Result.Result
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	writeJSON(w, http.StatusOK, success{Success: true, Data: batchData{
		Result: result, ActivePageID: res.Result.ActivePageID, Usage: res.Result.Usage, ActionID: actionID,
	}})
}
