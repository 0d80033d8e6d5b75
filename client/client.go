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
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/browserfleet/browserfleet/engine"
)

// driver is what a handle's kind does for an instance: the local driver
// runs the engine in-process on the page's DevTools target; the cloud
// driver calls the service's /v1 for the session, whose runner runs the
// engine next to the browser.
type driver interface {
	// open checks the instance's configuration against what the handle can
	// honour (a cloud handle refuses Generate) and makes what its
	// operations need. It fails with an error naming the field.
	open(ctx context.Context, cfg *instanceConfig) (runtime, error)
	// close ends the handle (Browser.Close), after the CDP connection's
	// pages are let go.
	close(ctx context.Context) error
}

// runtime runs an open instance's operations. Calls never overlap: the
// Client serialises them. A call's ctx carries the instance's trace span.
type runtime interface {
	act(ctx context.Context, p *Page, call actCall) (*ActResult, error)
	observe(ctx context.Context, p *Page, call observeCall) (*ObserveResult, error)
	// extract returns the extracted value as JSON, which the Client
	// validates against the call's schema and decodes.
	extract(ctx context.Context, p *Page, call extractCall) (json.RawMessage, Metadata, error)
	// batch runs a batch script and returns its result as JSON ("null"
	// for undefined) and the usage of each group of the operations the
	// script ran, which the Client adds to its metrics.
	batch(ctx context.Context, call batchCall) (json.RawMessage, map[opGroup]Usage, error)
	// close releases what open made; the browser stays as it is.
	close(ctx context.Context) error
}

// opGroup is a group of Metrics.
type opGroup string

const (
	groupAct     opGroup = "act"
	groupObserve opGroup = "observe"
	groupExtract opGroup = "extract"
)

// instanceConfig is CreateOptions resolved: what every operation of the
// instance starts from.
type instanceConfig struct {
	apiKey           string
	apiURL           string
	model            *ModelConfig
	generate         GenerateFunc
	systemPrompt     string
	selfHeal         bool
	domSettleTimeout time.Duration
	cache            *Caching
	logger           *slog.Logger
	tracer           trace.Tracer
}

// opCall is what every operation's call carries, resolved against the
// instance: the model and cache setting in effect, the locators as the
// engine's selectors.
type opCall struct {
	model     *ModelConfig
	cache     *Caching
	selector  string
	ignore    []string
	timeout   time.Duration
	variables Variables
}

type actCall struct {
	opCall
	instruction string
	action      *Action
}

type observeCall struct {
	opCall
	instruction string
}

type extractCall struct {
	opCall
	instruction string
	schema      json.RawMessage
	screenshot  bool
}

type batchCall struct {
	source string
	// input is the script's input as JSON; nil is undefined.
	input json.RawMessage
	// page is batch.page; active is the active page at the start.
	page, active *Page
	timeout      time.Duration
	// metrics are the instance's counters at the start, which the
	// script's metrics() adds the batch's own to.
	metrics Metrics
}

// Client is an instance attached to a browser handle. Its methods are safe
// for concurrent use; operations run one at a time, in call order.
type Client struct {
	browser *Browser
	cfg     *instanceConfig
	rt      runtime
	// shutdown flushes and stops the instance's trace export.
	shutdown func(context.Context) error

	// turn is held by the running operation: a buffered channel of one,
	// whose waiting senders go in call order, and which a caller can stop
	// waiting for when its ctx ends.
	turn chan struct{}
	// life ends at Close, which abandons the running operation.
	life     context.Context
	endLife  context.CancelFunc
	closed   atomic.Bool
	mu       sync.Mutex
	metrics  Metrics
	closeMu  sync.Mutex
	closeRes *closeResult
}

// closeResult is the first Close's outcome, which later calls return.
type closeResult struct {
	done chan struct{}
	err  error
}

// Create attaches an instance to opts.Browser and returns it initialized.
// It checks every option before anything is made; an option that cannot be
// honoured is an error wrapping ErrInvalidArgument that names it. A handle
// that backs an open instance is ErrBrowserInUse, a closed one
// ErrBrowserClosed.
func Create(ctx context.Context, opts CreateOptions) (*Client, error) {
	if opts.Browser == nil {
		return nil, ErrNoBrowser
	}
	cfg, err := resolveCreateOptions(opts)
	if err != nil {
		return nil, err
	}
	c := &Client{browser: opts.Browser, cfg: cfg, turn: make(chan struct{}, 1)}
	if err := c.browser.claim(c); err != nil {
		return nil, err
	}
	var shutdown func(context.Context) error
	cfg.tracer, shutdown, err = newTracer(ctx, opts.Telemetry)
	if err != nil {
		c.browser.unclaim(c)
		return nil, fmt.Errorf("setting the trace export up: %w", err)
	}
	rt, err := c.browser.drv.open(ctx, cfg)
	if err != nil {
		_ = shutdown(context.WithoutCancel(ctx))
		c.browser.unclaim(c)
		return nil, err
	}
	c.rt, c.shutdown = rt, shutdown
	c.life, c.endLife = context.WithCancel(context.Background())
	cfg.logger.Debug("instance created", "category", "client")
	return c, nil
}

// resolveCreateOptions checks CreateOptions and makes the instance's
// configuration of them.
func resolveCreateOptions(opts CreateOptions) (*instanceConfig, error) {
	const f = "CreateOptions."
	if opts.Model != nil && opts.Generate != nil {
		return nil, invalid(f+"Model and "+f+"Generate", "set one: Generate answers every model call itself")
	}
	if opts.Model != nil {
		if err := checkModel(f+"Model", opts.Model, false); err != nil {
			return nil, err
		}
	}
	if err := checkCache(f+"Cache", opts.Cache); err != nil {
		return nil, err
	}
	if opts.DOMSettleTimeoutMs < 0 {
		return nil, invalid(f+"DOMSettleTimeoutMs", "must not be negative, got %d", opts.DOMSettleTimeoutMs)
	}
	if opts.DOMSettleTimeoutMs > maxDOMSettleTimeoutMs {
		return nil, invalid(f+"DOMSettleTimeoutMs", "must be at most %d (%s), got %d", maxDOMSettleTimeoutMs, time.Duration(maxDOMSettleTimeoutMs)*time.Millisecond, opts.DOMSettleTimeoutMs)
	}
	if len(opts.SystemPrompt) > maxSystemPrompt {
		return nil, invalid(f+"SystemPrompt", "is %d bytes; at most %d", len(opts.SystemPrompt), maxSystemPrompt)
	}
	logger, err := newLogger(opts.Logging)
	if err != nil {
		return nil, err
	}
	return &instanceConfig{
		apiKey:           opts.APIKey,
		apiURL:           opts.APIURL,
		model:            opts.Model,
		generate:         opts.Generate,
		systemPrompt:     opts.SystemPrompt,
		selfHeal:         opts.SelfHeal,
		domSettleTimeout: time.Duration(opts.DOMSettleTimeoutMs) * time.Millisecond,
		cache:            opts.Cache,
		logger:           logger,
	}, nil
}

// Limits of CreateOptions, as the service's sessions have them.
const (
	// maxDOMSettleTimeoutMs bounds DOMSettleTimeoutMs: ten minutes.
	maxDOMSettleTimeoutMs = 10 * 60 * 1000
	// maxSystemPrompt bounds SystemPrompt, in bytes.
	maxSystemPrompt = 64 << 10
)

// Initialized reports whether the instance can serve calls: true from
// Create until Close.
func (c *Client) Initialized() bool { return !c.closed.Load() }

// Browser is the handle the instance was created with.
func (c *Client) Browser() *Browser { return c.browser }

// Close releases what the instance holds (engines, trace exporter) and
// frees its handle for another instance; the browser stays open. A running
// operation is abandoned, and Close waits for it to stop; ctx bounds that
// wait. Later calls return the first call's result.
func (c *Client) Close(ctx context.Context) error {
	c.closeMu.Lock()
	res := c.closeRes
	if res == nil {
		res = &closeResult{done: make(chan struct{})}
		c.closeRes = res
		c.closed.Store(true)
		c.endLife()
		go func() {
			defer close(res.done)
			// The running operation ends soon, its ctx cancelled; what it
			// holds is released only then.
			c.turn <- struct{}{}
			rctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
			defer cancel()
			res.err = errors.Join(c.rt.close(rctx), c.shutdown(rctx))
			c.browser.unclaim(c)
			c.cfg.logger.Debug("instance closed", "category", "client")
		}()
	}
	c.closeMu.Unlock()
	select {
	case <-res.done:
		return res.err
	case <-ctx.Done():
		return fmt.Errorf("closing the instance: %w", context.Cause(ctx))
	}
}

// run runs one operation of group op on the instance's turn: it waits for
// the operation before it, gives up when ctx ends, and abandons the call
// (returning at once) when ctx ends while it runs; the call's own ctx ends
// then too, and the next operation waits until it has stopped. A
// successful call's usage is added to the metrics, unless the cache served
// it.
func (c *Client) run(ctx context.Context, op opGroup, model string, call func(ctx context.Context) (*Metadata, error)) error {
	if c.closed.Load() {
		return ErrClosed
	}
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%s: waiting for the instance's previous operation: %w", op, context.Cause(ctx))
	case <-c.life.Done():
		return ErrClosed
	}
	if c.closed.Load() {
		<-c.turn
		return ErrClosed
	}
	opCtx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.life, func() { cancel(ErrClosed) })
	type outcome struct {
		md  *Metadata
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		defer func() {
			stop()
			cancel(nil)
			<-c.turn
		}()
		sctx, span := startOperation(opCtx, c.cfg, string(op))
		md, err := call(sctx)
		if err == nil && md != nil {
			if md.ActionID == "" {
				md.ActionID = uuid.NewString()
			}
			if md.Cache.Status == "" {
				md.Cache.Status = CacheStatusDISABLED
			}
		}
		endOperation(span, model, md, err)
		done <- outcome{md, err}
	}()
	select {
	case o := <-done:
		if o.err != nil && errors.Is(context.Cause(opCtx), ErrClosed) {
			o.err = fmt.Errorf("%s abandoned: %w", op, ErrClosed)
		}
		if o.err != nil {
			c.cfg.logger.Debug("operation failed", "category", "client", "op", string(op), "err", o.err.Error())
			return o.err
		}
		c.count(op, o.md)
		c.cfg.logger.Debug("operation done", "category", "client", "op", string(op), "actionId", o.md.ActionID,
			"cache", string(o.md.Cache.Status), "inputTokens", o.md.Usage.InputTokens, "outputTokens", o.md.Usage.OutputTokens,
			"duration", time.Since(start).Round(time.Millisecond).String())
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s abandoned: %w", op, context.Cause(ctx))
	}
}

// count adds a successful operation's usage to the metrics. A cache hit
// ran no inference of its own.
func (c *Client) count(op opGroup, md *Metadata) {
	if md == nil || md.Cache.Status == CacheStatusHIT {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.metrics.add(op, md.Usage)
}

// add adds u to group g and to the totals.
func (m *Metrics) add(g opGroup, u Usage) {
	var grp [5]*float64
	switch g {
	case groupAct:
		grp = [5]*float64{&m.ActPromptTokens, &m.ActCompletionTokens, &m.ActReasoningTokens, &m.ActCachedInputTokens, &m.ActInferenceTimeMs}
	case groupObserve:
		grp = [5]*float64{&m.ObservePromptTokens, &m.ObserveCompletionTokens, &m.ObserveReasoningTokens, &m.ObserveCachedInputTokens, &m.ObserveInferenceTimeMs}
	case groupExtract:
		grp = [5]*float64{&m.ExtractPromptTokens, &m.ExtractCompletionTokens, &m.ExtractReasoningTokens, &m.ExtractCachedInputTokens, &m.ExtractInferenceTimeMs}
	default:
		return
	}
	total := [5]*float64{&m.TotalPromptTokens, &m.TotalCompletionTokens, &m.TotalReasoningTokens, &m.TotalCachedInputTokens, &m.TotalInferenceTimeMs}
	for i, v := range [5]float64{u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CachedInputTokens, u.InferenceTimeMs} {
		*grp[i] += v
		*total[i] += v
	}
}

// Act performs an action: one the model infers from a natural-language
// instruction (ActInstruction), or one Observe returned (ObservedAction),
// which runs with no model call unless SelfHeal finds its element again.
// An action that could not be done is a result with Data.Success false; an
// error is a call that could not run.
func (c *Client) Act(ctx context.Context, instruction Instruction, opts *ActOptions) (*ActResult, error) {
	if opts == nil {
		opts = &ActOptions{}
	}
	const f = "ActOptions."
	if instruction.action == nil && strings.TrimSpace(instruction.text) == "" {
		return nil, invalid("instruction", "is empty: use ActInstruction with the action in words, or ObservedAction")
	}
	if a := instruction.action; a != nil {
		if a.Selector == "" || a.Method == "" {
			return nil, invalid("ObservedAction", "the action needs a Selector and a Method")
		}
		if err := checkSelector("ObservedAction.Selector", a.Selector); err != nil {
			return nil, err
		}
	}
	p, oc, err := c.resolve(ctx, f, callScope{
		page: opts.Page, locator: opts.Locator, ignore: opts.IgnoreLocators,
		model: opts.Model, cache: opts.Cache, timeout: opts.Timeout, variables: opts.Variables,
	})
	if err != nil {
		return nil, err
	}
	call := actCall{opCall: oc, instruction: instruction.text, action: instruction.action}
	var res *ActResult
	err = c.run(ctx, groupAct, oc.modelName(), func(ctx context.Context) (*Metadata, error) {
		var err error
		if res, err = c.rt.act(ctx, p, call); err != nil {
			return nil, err
		}
		return &res.Metadata, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Observe lists the actions the page offers that match instruction; nil
// lists everything actionable. The actions can be given to Act as they are
// (ObservedAction).
func (c *Client) Observe(ctx context.Context, instruction *string, opts *ObserveOptions) (*ObserveResult, error) {
	if opts == nil {
		opts = &ObserveOptions{}
	}
	p, oc, err := c.resolve(ctx, "ObserveOptions.", callScope{
		page: opts.Page, locator: opts.Locator, ignore: opts.IgnoreLocators,
		model: opts.Model, cache: opts.Cache, timeout: opts.Timeout, variables: opts.Variables,
	})
	if err != nil {
		return nil, err
	}
	call := observeCall{opCall: oc}
	if instruction != nil {
		call.instruction = *instruction
	}
	var res *ObserveResult
	err = c.run(ctx, groupObserve, oc.modelName(), func(ctx context.Context) (*Metadata, error) {
		var err error
		if res, err = c.rt.observe(ctx, p, call); err != nil {
			return nil, err
		}
		return &res.Metadata, nil
	})
	if err != nil {
		return nil, err
	}
	if res.Data == nil {
		res.Data = []Action{}
	}
	return res, nil
}

// Extract reads structured data off a page as a T: a JSON Schema derived
// from T (with github.com/invopop/jsonschema: `json` names, `jsonschema`
// tags, omitempty fields optional) tells the model what to answer, the
// answer is validated against it and decoded into Data. An answer the
// schema refuses is an error wrapping ErrSchemaViolation.
func Extract[T any](ctx context.Context, c *Client, instruction string, opts *ExtractOptions) (*ExtractResult[T], error) {
	if opts == nil {
		opts = &ExtractOptions{}
	}
	if strings.TrimSpace(instruction) == "" {
		return nil, invalid("instruction", "is required: say what to extract")
	}
	schema, err := schemaOf[T]()
	if err != nil {
		return nil, err
	}
	p, oc, err := c.resolve(ctx, "ExtractOptions.", callScope{
		page: opts.Page, locator: opts.Locator, ignore: opts.IgnoreLocators,
		model: opts.Model, cache: opts.Cache, timeout: opts.Timeout,
	})
	if err != nil {
		return nil, err
	}
	call := extractCall{opCall: oc, instruction: instruction, schema: schema, screenshot: opts.Screenshot}
	res := &ExtractResult[T]{}
	err = c.run(ctx, groupExtract, oc.modelName(), func(ctx context.Context) (*Metadata, error) {
		data, md, err := c.rt.extract(ctx, p, call)
		if err != nil {
			return nil, err
		}
		if err := engine.ValidateJSON(schema, data); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSchemaViolation, err)
		}
		if err := json.Unmarshal(data, &res.Data); err != nil {
			return nil, fmt.Errorf("%w: decoding it into %T: %w", ErrSchemaViolation, res.Data, err)
		}
		res.Metadata = md
		return &res.Metadata, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Metrics returns the instance's counters. Reading does not reset them, and
// they stay readable after Close.
func (c *Client) Metrics(ctx context.Context) (Metrics, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.metrics, nil
}

// Instruction is what Act does: a natural-language instruction or an action
// Observe returned.
type Instruction struct {
	text   string
	action *Action
}

// ActInstruction is an instruction in natural language.
func ActInstruction(text string) Instruction { return Instruction{text: text} }

// ObservedAction is an action to perform as is, with no model call.
func ObservedAction(action Action) Instruction { return Instruction{action: &action} }
