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
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/uuid"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine/batch"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// BatchOptions bound the batches (rpc.BatchPath) a Server runs.
type BatchOptions struct {
	// MaxHeapGrowth stops a script whose memory grew by more than this
	// many bytes (engine/batch's heap watchdog). Zero is
	// DefaultBatchMaxHeapGrowth; negative turns the watchdog off.
	MaxHeapGrowth int64
}

// DefaultBatchMaxHeapGrowth is how much a batch script's memory may grow
// in the runner: a fraction of the runner pod's default memory limit
// (2 GiB, shared with Chromium).
const DefaultBatchMaxHeapGrowth = 256 << 20

// batchGrace bounds how long an operation running when a batch ends may go
// on; the batch holds the queue meanwhile.
const batchGrace = batch.DefaultGrace

// serveBatch runs a batch script as one operation of the session's queue:
// the operations it makes run through the same Interface as the RPC's own
// and are recorded in the history each under its own action id, the batch
// under the call's.
func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request) {
	var req rpc.BatchRequest
	if !decode(w, r, &req) {
		return
	}
	call, err := batchCall(&req, s.batch)
	if err != nil {
		writeError(w, err)
		return
	}
	// The engine keeps the deadline (an operation running at it may
	// finish); this bound, beyond it, cancels what still runs.
	wall := call.Timeout + batchGrace + 10*time.Second
	s.operate(w, r, "batch", batchParams(&req), "", nil, wall, func(ctx context.Context, p *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error) {
		h := &batchHost{s: s, r: r, progress: progress, req: &req, pages: operations.NewBatchPages(batchKnownPages(&req, p))}
		if call.Page == "" {
			call.Page = string(p.TargetID())
		}
		if call.Active == "" {
			call.Active = call.Page
		}
		res, err := batch.Run(ctx, h, call)
		if err != nil {
			return nil, rpc.Usage{}, nil, batchFailure(err)
		}
		usage := rpc.BatchUsage{
			Act:     operations.RPCUsage(res.Usage.Act),
			Observe: operations.RPCUsage(res.Usage.Observe),
			Extract: operations.RPCUsage(res.Usage.Extract),
		}
		out := &rpc.BatchResult{Result: res.Value, ActivePageID: res.Active, Usage: usage}
		return out, usage.Act.Add(usage.Observe).Add(usage.Extract), nil, nil
	})
}

// batchCall checks a batch request and makes engine/batch's call of it.
func batchCall(req *rpc.BatchRequest, opts BatchOptions) (batch.Call, *rpc.Error) {
	call := batch.Call{Source: req.Source, Page: req.PageID, Active: req.ActivePageID, Timeout: batch.DefaultTimeout}
	if strings.TrimSpace(req.Source) == "" {
		return call, rpc.Errorf(rpc.CodeBadRequest, "source is required: a function expression such as async (batch, input) => {...}")
	}
	if len(req.Input) > 0 {
		call.Input = req.Input
	}
	if t := req.Timeout; t != nil && *t != 0 {
		if math.IsNaN(*t) || *t < 0 || *t > float64(rpc.MaxBatchTimeout/time.Millisecond) {
			return call, rpc.Errorf(rpc.CodeBadRequest, "timeout must be between 0 and %d milliseconds", rpc.MaxBatchTimeout/time.Millisecond)
		}
		call.Timeout = time.Duration(*t * float64(time.Millisecond))
	}
	if msg := req.Problem(); msg != "" {
		// Problem names the fields as options' ones; a batch has them
		// at the top.
		return call, rpc.Errorf(rpc.CodeBadRequest, "%s", strings.TrimPrefix(msg, "options."))
	}
	if len(req.PageIDs) > rpc.MaxBatchPageIDs {
		return call, rpc.Errorf(rpc.CodeBadRequest, "pageIds: at most %d pages", rpc.MaxBatchPageIDs)
	}
	if len(req.Metrics) > 0 {
		raw, err := json.Marshal(req.Metrics)
		if err == nil {
			err = jsonv2.Unmarshal(raw, &call.Metrics, jsonv2.RejectUnknownMembers(true))
		}
		if err != nil {
			return call, rpc.Errorf(rpc.CodeBadRequest, "metrics: only the client library's counters (actPromptTokens, ..., totalInferenceTimeMs) are allowed")
		}
	}
	switch {
	case opts.MaxHeapGrowth == 0:
		call.Limits.MaxHeapGrowth = DefaultBatchMaxHeapGrowth
	case opts.MaxHeapGrowth > 0:
		call.Limits.MaxHeapGrowth = opts.MaxHeapGrowth
	}
	call.Limits.Grace = batchGrace
	return call, nil
}

// batchKnownPages starts the order of context.pages(): the caller's
// pages, then the runner's own tab and the pages the request names.
func batchKnownPages(req *rpc.BatchRequest, p *chromium.Tab) []string {
	var known []string
	for _, id := range append(slices.Clone(req.PageIDs), string(p.TargetID()), req.PageID, req.ActivePageID) {
		if id != "" && !slices.Contains(known, id) {
			known = append(known, id)
		}
	}
	return known
}

// batchFailure gives a batch's failure its code. Errors of the context
// (the call's cancellation, the runner stopping) are left to operate's
// classification.
func batchFailure(err error) error {
	var se *batch.ScriptError
	switch {
	case errors.As(err, &se):
		stack := se.Stack
		if len(stack) > rpc.MaxBatchStackBytes {
			stack = stack[:rpc.MaxBatchStackBytes]
		}
		return &rpc.Error{Code: rpc.CodeBatchScriptError, Message: se.Message, Stack: stack}
	case errors.Is(err, batch.ErrDeadline):
		return rpc.Errorf(rpc.CodeBatchDeadline, "%s", err.Error())
	case errors.Is(err, batch.ErrLimit):
		return rpc.Errorf(rpc.CodeBatchLimit, "%s", err.Error())
	case errors.Is(err, batch.ErrInvalid):
		return rpc.Errorf(rpc.CodeBadRequest, "%s", strings.TrimPrefix(err.Error(), batch.ErrInvalid.Error()+": "))
	}
	return err
}

// batchHost is engine/batch's Host in the runner: the script's operations
// run through the Server's Interface, in the batch's turn of the queue,
// each on the tab its page names (as the RPC's own, through the Server's
// target and begin), with its own timeout, and are recorded in the
// history.
type batchHost struct {
	s        *Server
	r        *http.Request
	progress operations.ProgressFunc
	req      *rpc.BatchRequest
	pages    *operations.BatchPages
}

var _ batch.Host = (*batchHost)(nil)

// operate runs one of the script's operations on the tab page names, with
// its timeout, and records it under a new action id, which it returns.
func (h *batchHost) operate(ctx context.Context, op string, params any, page string, timeoutMs *float64, def time.Duration, fn opFunc) (any, rpc.Usage, string, error) {
	id := uuid.NewString()
	started := time.Now()
	// record reads the action id off the request.
	rec := h.r.Clone(ctx)
	rec.Header.Set(rpc.HeaderActionID, id)
	fail := func(usage rpc.Usage, e *rpc.Error) (any, rpc.Usage, string, error) {
		h.s.record(rec, op, params, started, nil, usage, e)
		return nil, usage, id, e
	}
	timeout, terr := opTimeout(timeoutMs, def)
	if terr != nil {
		return fail(rpc.Usage{}, terr)
	}
	b, berr := h.s.readyBrowser()
	if berr != nil {
		return fail(rpc.Usage{}, berr)
	}
	tgt, terr := h.s.target(ctx, b, op, page, timeout)
	if terr != nil {
		return fail(rpc.Usage{}, terr)
	}
	octx, finish, ok := h.s.begin(ctx, tgt.Context(), op, timeout)
	if !ok {
		return fail(rpc.Usage{}, errShuttingDown)
	}
	defer finish()
	result, usage, _, err := fn(octx, tgt.TabFor(octx, h.s.settle), h.progress)
	if err != nil {
		return fail(usage, h.s.classify(octx, b, err))
	}
	h.s.record(rec, op, params, started, result, usage, nil)
	return result, usage, id, nil
}

func (h *batchHost) Pages(ctx context.Context) ([]string, error) {
	infos, err := h.pages.Pages(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(infos))
	for i, in := range infos {
		ids[i] = string(in.TargetID)
	}
	return ids, nil
}

// NewPage opens a blank tab and loads url there through navigate; a url
// navigate refuses or cannot load closes the tab again.
func (h *batchHost) NewPage(ctx context.Context, url string) (string, error) {
	blank := url == "" || url == "about:blank"
	if !blank {
		if err := operations.ValidateNavigateURL(url); err != nil {
			return "", err
		}
	}
	id, err := h.pages.Open(ctx)
	if err != nil {
		return "", err
	}
	if blank {
		return id, nil
	}
	if err := h.Goto(ctx, id, url); err != nil {
		h.pages.Close(ctx, id)
		return "", err
	}
	return id, nil
}

func (h *batchHost) URL(ctx context.Context, page string) (string, error) {
	in, err := h.pages.Page(ctx, page)
	if err != nil {
		return "", err
	}
	return in.URL, nil
}

func (h *batchHost) Title(ctx context.Context, page string) (string, error) {
	in, err := h.pages.Page(ctx, page)
	if err != nil {
		return "", err
	}
	return in.Title, nil
}

// Goto is the navigate operation: its URL rules and egress gate apply.
func (h *batchHost) Goto(ctx context.Context, page, url string) error {
	req := rpc.NavigateRequest{URL: url, FrameID: page}
	if err := operations.ValidateNavigateURL(url); err != nil {
		return err
	}
	_, _, _, err := h.operate(ctx, "navigate", navigateParams(&req), page, nil, operations.DefaultNavigateTimeout, func(ctx context.Context, tab *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error) {
		res, err := h.s.ops.Navigate(ctx, tab, req, progress)
		return res, rpc.Usage{}, nil, err
	})
	return err
}

func (h *batchHost) Act(ctx context.Context, page string, in batch.ActInput, opts batch.Options) (*batch.ActResult, error) {
	req := operations.BatchActRequest(h.req, page, in, opts)
	if msg := req.Options.Problem(); msg != "" {
		return nil, rpc.Errorf(rpc.CodeBadRequest, "%s", msg)
	}
	res, usage, id, err := h.operate(ctx, "act", actParams(&req), page, req.Options.Timeout, 0, func(ctx context.Context, tab *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error) {
		// A batch's operations carry no cache setting: DISABLED.
		return h.s.ops.Act(ctx, tab, req, progress)
	})
	if err != nil {
		return nil, err
	}
	a := res.(*rpc.ActResult)
	return &batch.ActResult{
		Data: batch.ActData{
			ActionDescription: a.ActionDescription,
			Actions:           operations.BatchActions(a.Actions),
			Message:           a.Message,
			Success:           a.Success,
		},
		Metadata: operations.BatchMetadata(id, usage),
	}, nil
}

func (h *batchHost) Observe(ctx context.Context, page, instruction string, opts batch.Options) (*batch.ObserveResult, error) {
	req := operations.BatchObserveRequest(h.req, page, instruction, opts)
	res, usage, id, err := h.operate(ctx, "observe", observeParams(&req), page, req.Options.Timeout, 0, func(ctx context.Context, tab *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error) {
		return h.s.ops.Observe(ctx, tab, req, progress)
	})
	if err != nil {
		return nil, err
	}
	return &batch.ObserveResult{Data: operations.BatchActions(res.([]rpc.Action)), Metadata: operations.BatchMetadata(id, usage)}, nil
}

func (h *batchHost) Extract(ctx context.Context, page, instruction string, schema json.RawMessage, opts batch.Options) (*batch.ExtractResult, error) {
	req := operations.BatchExtractRequest(h.req, page, instruction, schema, opts)
	res, usage, id, err := h.operate(ctx, "extract", extractParams(&req), page, req.Options.Timeout, 0, func(ctx context.Context, tab *chromium.Tab, progress operations.ProgressFunc) (any, rpc.Usage, *cache.Report, error) {
		return h.s.ops.Extract(ctx, tab, req, progress)
	})
	if err != nil {
		return nil, err
	}
	return &batch.ExtractResult{Data: res.(json.RawMessage), Metadata: operations.BatchMetadata(id, usage)}, nil
}

// batchParamsView is what the history keeps of a batch: its shape, never
// its source or input, which may hold secrets (a trusted script may carry
// a password), nor the model's key.
type batchParamsView struct {
	SourceBytes  int      `json:"sourceBytes"`
	InputBytes   int      `json:"inputBytes,omitempty"`
	TimeoutMs    *float64 `json:"timeout,omitempty"`
	PageID       string   `json:"pageId,omitempty"`
	ActivePageID string   `json:"activePageId,omitempty"`
	Model        string   `json:"model,omitempty"`
}

func batchParams(req *rpc.BatchRequest) any {
	return batchParamsView{SourceBytes: len(req.Source), InputBytes: len(req.Input), TimeoutMs: req.Timeout,
		PageID: req.PageID, ActivePageID: req.ActivePageID, Model: modelName(req.Model)}
}
