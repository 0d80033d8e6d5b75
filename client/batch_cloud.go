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

package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/browserfleet/browserfleet/engine/batch"
)

// Codes of the service's batch failures (docs/api.md, batch).
const (
	codeBatchScriptError = "BATCH_SCRIPT_ERROR"
	codeBatchDeadline    = "BATCH_DEADLINE"
	codeInvalidRequest   = "INVALID_REQUEST"
)

// maxBatchPageIDs bounds the pages a batch body lists (the service's
// bound).
const maxBatchPageIDs = 100

// batchWire is the body of POST /v1/sessions/{id}/batch.
type batchWire struct {
	Source       string          `json:"source"`
	Input        json.RawMessage `json:"input,omitempty"`
	PageID       string          `json:"pageId,omitempty"`
	ActivePageID string          `json:"activePageId,omitempty"`
	PageIDs      []string        `json:"pageIds,omitempty"`
	Timeout      float64         `json:"timeout,omitempty"`
	Model        *modelWire      `json:"model,omitempty"`
	// The instance's settings, for each of the script's operations.
	SelfHeal           *bool          `json:"selfHeal,omitempty"`
	SystemPrompt       *string        `json:"systemPrompt,omitempty"`
	DOMSettleTimeoutMs *int           `json:"domSettleTimeoutMs,omitempty"`
	Metrics            *batch.Metrics `json:"metrics,omitempty"`
}

// batchData is a batch's data.
type batchData struct {
	Result       json.RawMessage  `json:"result"`
	ActivePageID string           `json:"activePageId"`
	Usage        batch.GroupUsage `json:"usage"`
	ActionID     string           `json:"actionId"`
}

// batch runs a batch in the session's runner: one POST
// /v1/sessions/{id}/batch with the instance's model and settings, whose
// operations the runner runs as the /v1 calls of the instance's would be.
// The active page at the end becomes the handle's.
func (r *cloudRuntime) batch(ctx context.Context, call batchCall) (json.RawMessage, map[opGroup]Usage, error) {
	b := call.active.b
	pages, err := b.Context().Pages(ctx)
	if err != nil {
		return nil, nil, err
	}
	opts := r.options(opCall{model: r.cfg.model})
	body := batchWire{
		Source:             call.source,
		Input:              call.input,
		PageID:             call.page.ID(),
		ActivePageID:       call.active.ID(),
		Timeout:            float64(call.timeout) / float64(time.Millisecond),
		Model:              opts.Model,
		SelfHeal:           trueOrNil(r.cfg.selfHeal),
		SystemPrompt:       opts.SystemPrompt,
		DOMSettleTimeoutMs: opts.DOMSettleTimeoutMs,
	}
	for _, p := range pages[:min(len(pages), maxBatchPageIDs)] {
		body.PageIDs = append(body.PageIDs, p.ID())
	}
	if call.metrics != (Metrics{}) {
		m := batch.Metrics(call.metrics)
		body.Metrics = &m
	}
	var d batchData
	if err := r.api.do(ctx, http.MethodPost, sessionPath(r.sessionID, "batch"), body, &d); err != nil {
		return nil, nil, cloudBatchError(err, call.timeout)
	}
	if err := adoptCloudPage(ctx, b, d.ActivePageID); err != nil {
		return nil, nil, err
	}
	result := d.Result
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	return result, groupUsage(d.Usage), nil
}

// stackedAPIError is an *APIError that came with a batch script's stack
// (BATCH_SCRIPT_ERROR), which ExperimentalBatch hands on in its
// *BatchError.
type stackedAPIError struct {
	*APIError
	stack string
}

func (e *stackedAPIError) Unwrap() error { return e.APIError }

// cloudBatchError gives the service's batch refusals the meaning a local
// handle's have: an exception is a *BatchError, the deadline
// ErrBatchDeadline, a refused body ErrInvalidArgument; each wraps the
// *APIError too.
func cloudBatchError(err error, timeout time.Duration) error {
	var ae *APIError
	if !errors.As(err, &ae) {
		return fmt.Errorf("batch: %w", err)
	}
	switch ae.Code {
	case codeBatchScriptError:
		var stack string
		var se *stackedAPIError
		if errors.As(err, &se) {
			stack = se.stack
		}
		return &batchScriptError{BatchError: &BatchError{Message: ae.Message, Stack: stack}, cause: ae}
	case codeBatchDeadline:
		return fmt.Errorf("%w of %v: no operation started after it, and the script was stopped: %w", ErrBatchDeadline, timeout, ae)
	case codeInvalidRequest:
		return fmt.Errorf("%w: batch: %w", ErrInvalidArgument, ae)
	}
	return fmt.Errorf("batch: %w", err)
}

// adoptCloudPage makes the runner's active page at the end of a batch the
// handle's. A tab the script opened may not have reached the handle's
// DevTools connection yet (its event and the service's answer travel
// apart): the handle takes it up by its id.
func adoptCloudPage(ctx context.Context, b *Browser, id string) error {
	if id == "" {
		return nil
	}
	p, err := pageByID(ctx, b, id)
	if err != nil {
		if p = b.addPage(target.ID(id)); p == nil {
			return fmt.Errorf("making the batch's active page %s the handle's: it has closed", id)
		}
	}
	return b.Context().SetActivePage(ctx, p)
}
