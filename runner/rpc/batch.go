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
	"time"
)

// BatchPath runs a batch script of the client library's ExperimentalBatch
// (engine/batch) as one operation of the session's queue. Body
// BatchRequest; result BatchResult. It is never streamed.
const BatchPath = "/v1/batch"

// Bounds of a batch in the runner, beyond engine/batch's own.
const (
	// MaxBatchTimeout bounds a batch's timeout: the longest a batch
	// holds the session's operation queue (plus the grace of an
	// operation running at its deadline).
	MaxBatchTimeout = 10 * time.Minute
	// MaxBatchStackBytes bounds the script stack an error carries.
	MaxBatchStackBytes = 16 << 10
	// MaxBatchPageIDs bounds BatchRequest.PageIDs.
	MaxBatchPageIDs = 100
)

// Codes of a batch's failures.
const (
	// CodeBatchScriptError (422): the script threw, or its promise
	// rejected (an operation's failure it let through, too). The message
	// is the exception's; Error.Stack the script's stack when known.
	CodeBatchScriptError ErrorCode = "BATCH_SCRIPT_ERROR"
	// CodeBatchDeadline (504): the batch passed its timeout. No operation
	// started after it; one running then was let finish.
	CodeBatchDeadline ErrorCode = "BATCH_DEADLINE"
	// CodeBatchLimit (422): the script passed one of its bounds (memory,
	// call depth, result size).
	CodeBatchLimit ErrorCode = "BATCH_LIMIT"
)

// BatchRequest is the body of POST /v1/batch.
type BatchRequest struct {
	// Source is the script: a function expression, such as
	// `async (batch, input) => {...}`. Required.
	Source string `json:"source"`
	// Input is the function's second argument; absent is undefined, JSON
	// null is null.
	Input json.RawMessage `json:"input,omitempty"`
	// PageID is the page (target id) the script sees as batch.page;
	// empty is ActivePageID.
	PageID string `json:"pageId,omitempty"`
	// ActivePageID is the active page at the start, the target of the
	// operations that name no page; empty is the runner's own tab.
	ActivePageID string `json:"activePageId,omitempty"`
	// PageIDs are the caller's pages, oldest first: the order the
	// script's context.pages() keeps (DevTools lists tabs in no order).
	// Pages it leaves out come after, the runner's own tab first.
	PageIDs []string `json:"pageIds,omitempty"`
	// Timeout is the batch's deadline in milliseconds; absent or zero is
	// 30000, at most MaxBatchTimeout.
	Timeout *float64 `json:"timeout,omitempty"`
	// Model is the caller's default model for the operations whose
	// options name none (the client library's instance model); absent is
	// the session's.
	Model *ModelConfig `json:"model,omitempty"`
	// SelfHeal and CallSettings are the caller's settings of the
	// session's engine for each of the script's operations, as act's,
	// observe's and extract's options (selfHeal: act only); nil keeps the
	// session's.
	SelfHeal *bool `json:"selfHeal,omitempty"`
	CallSettings
	// Metrics are the caller's counters at the start, which the script's
	// metrics() adds the batch's usage to: the client library's Metrics
	// fields in camelCase (actPromptTokens, ...). Absent is zero.
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// BatchResult is a batch's result.
type BatchResult struct {
	// Result is the script's return value; null for undefined.
	Result json.RawMessage `json:"result"`
	// ActivePageID is the active page at the end.
	ActivePageID string `json:"activePageId"`
	// Usage is what the batch's act, observe and extract calls cost, by
	// group. The Result envelope's usage is their sum.
	Usage BatchUsage `json:"usage"`
}

// BatchUsage is a batch's usage by group of operations.
type BatchUsage struct {
	Act     Usage `json:"act"`
	Observe Usage `json:"observe"`
	Extract Usage `json:"extract"`
}

// Batch runs a batch on the runner. It is never streamed. Errors and
// cancellation are as for Act: cancelling ctx cancels the batch in the
// runner.
func (c *Client) Batch(ctx context.Context, req BatchRequest) (*Result[BatchResult], error) {
	return call[BatchResult](ctx, c, BatchPath, req, nil)
}
