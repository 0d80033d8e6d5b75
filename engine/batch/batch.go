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

package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Bounds of a batch. Each is also in docs/client.md ("ExperimentalBatch").
const (
	// DefaultTimeout is a batch's deadline when its Call says none.
	DefaultTimeout = 30 * time.Second
	// MaxSourceBytes bounds the script's source.
	MaxSourceBytes = 256 << 10
	// MaxInputBytes bounds the input's JSON.
	MaxInputBytes = 512 << 10
	// MaxResultBytes bounds the result's JSON.
	MaxResultBytes = 1 << 20
	// MaxCallStackSize bounds the script's call depth (frames); deeper
	// recursion ends the batch.
	MaxCallStackSize = 2048
	// DefaultMaxOperations bounds the operations (act, observe, extract,
	// metrics, and the page and context calls) of one batch unless its
	// Limits say otherwise; past it, a call's promise rejects.
	DefaultMaxOperations = 1000
	// DefaultGrace bounds how long an operation still running when the
	// batch ends (its deadline passed, or the script returned without
	// awaiting it) may go on before it is cancelled.
	DefaultGrace = time.Minute
	// DefaultHeapSampleInterval is how often the heap watchdog samples.
	DefaultHeapSampleInterval = 25 * time.Millisecond
)

// Errors of Run besides *ScriptError; test with errors.Is.
var (
	// ErrDeadline is a batch that passed its deadline: no operation
	// started after it, and the script was interrupted.
	ErrDeadline = errors.New("the batch passed its deadline")
	// ErrInvalid is a batch that cannot start: its source is not a
	// function expression, its input is not JSON, or either is too large.
	// The message names the field.
	ErrInvalid = errors.New("invalid batch")
	// ErrLimit is a script stopped at one of its bounds: call depth,
	// memory, or the size of its result.
	ErrLimit = errors.New("the batch passed a bound")
)

// ScriptError is a JavaScript exception that ended the script, or a
// promise it returned that rejected.
type ScriptError struct {
	// Message is the exception's toString(), such as "TypeError: x is
	// not a function".
	Message string
	// Stack is the script's stack at the exception, when known.
	Stack string
	// Cause is the error of the batch operation whose rejection the
	// script let through, nil when the script threw its own.
	Cause error
}

func (e *ScriptError) Error() string { return "the batch script threw: " + e.Message }

// Unwrap is the operation's error, when the exception was one.
func (e *ScriptError) Unwrap() error { return e.Cause }

// Host performs a batch's operations on pages named by id. Run calls it
// from one goroutine at a time, never concurrently, and never from the
// script's goroutine. ctx ends when the caller's does, or when an
// operation outlives the batch by Limits.Grace.
type Host interface {
	// Pages lists the open pages (tabs) by id, oldest first.
	Pages(ctx context.Context) ([]string, error)
	// NewPage opens a page at url ("about:blank" when empty), waits for
	// it to load, and returns its id.
	NewPage(ctx context.Context, url string) (string, error)
	// URL is a page's URL.
	URL(ctx context.Context, page string) (string, error)
	// Title is a page's title.
	Title(ctx context.Context, page string) (string, error)
	// Goto loads url in a page and waits for it to load.
	Goto(ctx context.Context, page, url string) error
	// Act performs an instruction or an action on a page.
	Act(ctx context.Context, page string, in ActInput, opts Options) (*ActResult, error)
	// Observe lists the actions a page offers for instruction ("" for
	// every actionable element).
	Observe(ctx context.Context, page, instruction string, opts Options) (*ObserveResult, error)
	// Extract reads data off a page as schema says (a JSON Schema object;
	// DefaultExtractSchema when the script gave none). Data must be valid
	// against schema.
	Extract(ctx context.Context, page, instruction string, schema json.RawMessage, opts Options) (*ExtractResult, error)
}

// DefaultExtractSchema is extract's schema when the script gives none:
// an object with one string, extraction.
var DefaultExtractSchema = json.RawMessage(`{"type":"object","properties":{"extraction":{"type":"string"}},"required":["extraction"],"additionalProperties":false}`)

// Call is one batch to run.
type Call struct {
	// Source is the function's text: a function expression, sync or
	// async, such as `async (batch, input) => {...}`.
	Source string
	// Input is the function's second argument as JSON; nil is undefined.
	Input json.RawMessage
	// Page is the id of the page the script sees as batch.page.
	Page string
	// Active is the id of the active page at the start: the target of
	// operations that name no page.
	Active string
	// Timeout is the batch's deadline; zero is DefaultTimeout.
	Timeout time.Duration
	// Metrics are the instance's counters at the start; the script's
	// metrics() adds those of the batch's operations to them.
	Metrics Metrics
	// Limits are the bounds a host sets beyond the fixed ones.
	Limits Limits
}

// Limits are a host's bounds of a batch.
type Limits struct {
	// MaxOperations bounds the batch's operations; zero is
	// DefaultMaxOperations.
	MaxOperations int
	// MaxHeapGrowth, when positive, has a watchdog sample the process's
	// live Go heap while the batch runs and stop the script once it grew
	// by more than this many bytes since the start. Only a process that
	// runs nothing else of size at the time (the runner, where batches
	// wait their turn in the session's operation queue) can read the
	// growth as the script's. The watchdog samples: one native call (a
	// huge string repeat, say) can overshoot it between two samples.
	MaxHeapGrowth int64
	// HeapSampleInterval is the watchdog's period; zero is
	// DefaultHeapSampleInterval.
	HeapSampleInterval time.Duration
	// Grace bounds how long an operation still running when the batch
	// ends may go on; zero is DefaultGrace.
	Grace time.Duration
}

// Result is what a batch returned.
type Result struct {
	// Value is the script's return value as JSON; "null" for undefined.
	Value json.RawMessage
	// Active is the id of the active page at the end.
	Active string
	// Usage is what the batch's successful act, observe and extract calls
	// cost, by group.
	Usage GroupUsage
	// Operations counts the operations the batch started.
	Operations int
}

// ActInput is what act performs: an instruction, or an action as given.
type ActInput struct {
	Instruction string
	Action      *Action
}

// Options are the options a script gave an operation, checked. Which ones
// an operation takes: act (timeout, variables, model, selector,
// ignoreSelectors, cache), observe (the same), extract (timeout, model,
// selector, ignoreSelectors, screenshot, cache).
type Options struct {
	// Timeout bounds the operation; zero leaves only the batch's context.
	Timeout time.Duration
	// Variables are the values the instruction uses by name.
	Variables map[string]Variable
	// Model overrides the instance's model.
	Model *Model
	// Selector scopes the operation to an element.
	Selector string
	// IgnoreSelectors leave elements out of what the model sees.
	IgnoreSelectors []string
	// Screenshot lets extract show the model a screenshot.
	Screenshot bool
	// Cache overrides the instance's cache setting; nil leaves it.
	Cache *Cache
}

// Variable is one of Options.Variables.
type Variable struct {
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
}

// Model is a model a script names, as the client library's ModelConfig.
// It may hold a provider key: never log it.
type Model struct {
	ModelName string            `json:"modelName"`
	APIKey    string            `json:"apiKey,omitempty"`
	BaseURL   string            `json:"baseURL,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// Cache is a cache setting a script gives: true, false, or {threshold: n}.
type Cache struct {
	Enabled   bool
	Threshold int
}

// The results are the client library's, in its JSON shapes (camelCase),
// as the script sees them.

// Action is one action on an element.
type Action struct {
	Selector    string   `json:"selector"`
	Description string   `json:"description"`
	Method      string   `json:"method,omitempty"`
	Arguments   []string `json:"arguments,omitempty"`
}

// Usage is what an operation's inference cost.
type Usage struct {
	InputTokens       float64 `json:"inputTokens"`
	OutputTokens      float64 `json:"outputTokens"`
	ReasoningTokens   float64 `json:"reasoningTokens"`
	CachedInputTokens float64 `json:"cachedInputTokens"`
	InferenceTimeMs   float64 `json:"inferenceTimeMs"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + o.InputTokens,
		OutputTokens:      u.OutputTokens + o.OutputTokens,
		ReasoningTokens:   u.ReasoningTokens + o.ReasoningTokens,
		CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		InferenceTimeMs:   u.InferenceTimeMs + o.InferenceTimeMs,
	}
}

// GroupUsage is a batch's usage by group of operations.
type GroupUsage struct {
	Act     Usage `json:"act"`
	Observe Usage `json:"observe"`
	Extract Usage `json:"extract"`
}

// TokensSaved is what a cache hit saved.
type TokensSaved struct {
	InputTokens  float64 `json:"inputTokens"`
	OutputTokens float64 `json:"outputTokens"`
	TotalTokens  float64 `json:"totalTokens"`
}

// CacheMetadata is the cache's part of Metadata.
type CacheMetadata struct {
	Status      string       `json:"status"`
	Count       int          `json:"count,omitempty"`
	Threshold   int          `json:"threshold,omitempty"`
	MissReason  string       `json:"missReason,omitempty"`
	TokensSaved *TokensSaved `json:"tokensSaved,omitempty"`
}

// Metadata is what an act, observe or extract result says about how it was
// made.
type Metadata struct {
	Cache    CacheMetadata `json:"cache"`
	ActionID string        `json:"actionId,omitempty"`
	Usage    Usage         `json:"usage"`
}

// ActData is what act did.
type ActData struct {
	ActionDescription string   `json:"actionDescription"`
	Actions           []Action `json:"actions"`
	Message           string   `json:"message"`
	Success           bool     `json:"success"`
}

// ActResult is act's result.
type ActResult struct {
	Data     ActData  `json:"data"`
	Metadata Metadata `json:"metadata"`
}

// ObserveResult is observe's result.
type ObserveResult struct {
	Data     []Action `json:"data"`
	Metadata Metadata `json:"metadata"`
}

// ExtractResult is extract's result: Data is valid against the schema.
type ExtractResult struct {
	Data     json.RawMessage `json:"data"`
	Metadata Metadata        `json:"metadata"`
}

// Metrics are an instance's counters, as the client library's Metrics
// (same fields, in the same order, so that the two convert).
type Metrics struct {
	ActPromptTokens          float64 `json:"actPromptTokens"`
	ActCompletionTokens      float64 `json:"actCompletionTokens"`
	ActReasoningTokens       float64 `json:"actReasoningTokens"`
	ActCachedInputTokens     float64 `json:"actCachedInputTokens"`
	ActInferenceTimeMs       float64 `json:"actInferenceTimeMs"`
	ExtractPromptTokens      float64 `json:"extractPromptTokens"`
	ExtractCompletionTokens  float64 `json:"extractCompletionTokens"`
	ExtractReasoningTokens   float64 `json:"extractReasoningTokens"`
	ExtractCachedInputTokens float64 `json:"extractCachedInputTokens"`
	ExtractInferenceTimeMs   float64 `json:"extractInferenceTimeMs"`
	ObservePromptTokens      float64 `json:"observePromptTokens"`
	ObserveCompletionTokens  float64 `json:"observeCompletionTokens"`
	ObserveReasoningTokens   float64 `json:"observeReasoningTokens"`
	ObserveCachedInputTokens float64 `json:"observeCachedInputTokens"`
	ObserveInferenceTimeMs   float64 `json:"observeInferenceTimeMs"`
	TotalPromptTokens        float64 `json:"totalPromptTokens"`
	TotalCompletionTokens    float64 `json:"totalCompletionTokens"`
	TotalReasoningTokens     float64 `json:"totalReasoningTokens"`
	TotalCachedInputTokens   float64 `json:"totalCachedInputTokens"`
	TotalInferenceTimeMs     float64 `json:"totalInferenceTimeMs"`
}

// Plus returns m with a batch's usage added, totals included.
func (m Metrics) Plus(g GroupUsage) Metrics {
	m.ActPromptTokens += g.Act.InputTokens
	m.ActCompletionTokens += g.Act.OutputTokens
	m.ActReasoningTokens += g.Act.ReasoningTokens
	m.ActCachedInputTokens += g.Act.CachedInputTokens
	m.ActInferenceTimeMs += g.Act.InferenceTimeMs
	m.ExtractPromptTokens += g.Extract.InputTokens
	m.ExtractCompletionTokens += g.Extract.OutputTokens
	m.ExtractReasoningTokens += g.Extract.ReasoningTokens
	m.ExtractCachedInputTokens += g.Extract.CachedInputTokens
	m.ExtractInferenceTimeMs += g.Extract.InferenceTimeMs
	m.ObservePromptTokens += g.Observe.InputTokens
	m.ObserveCompletionTokens += g.Observe.OutputTokens
	m.ObserveReasoningTokens += g.Observe.ReasoningTokens
	m.ObserveCachedInputTokens += g.Observe.CachedInputTokens
	m.ObserveInferenceTimeMs += g.Observe.InferenceTimeMs
	all := g.Act.Add(g.Observe).Add(g.Extract)
	m.TotalPromptTokens += all.InputTokens
	m.TotalCompletionTokens += all.OutputTokens
	m.TotalReasoningTokens += all.ReasoningTokens
	m.TotalCachedInputTokens += all.CachedInputTokens
	m.TotalInferenceTimeMs += all.InferenceTimeMs
	return m
}

// Run runs a batch to its end: the script's promise settled (and an
// operation it left running finished), its deadline passed, a bound
// reached, or ctx ended. It returns the script's value, or an error:
// *ScriptError for an exception, ErrDeadline, ErrInvalid, ErrLimit, or
// ctx's cause.
func Run(ctx context.Context, host Host, call Call) (*Result, error) {
	if err := check(call); err != nil {
		return nil, err
	}
	r, err := newRun(ctx, host, call)
	if err != nil {
		return nil, err
	}
	deadline := time.NewTimer(r.call.Timeout)
	defer deadline.Stop()
	return r.run(deadline.C)
}

// check refuses a call that cannot start.
func check(call Call) error {
	switch {
	case len(call.Source) > MaxSourceBytes:
		return fmt.Errorf("%w: source: %d bytes, more than the bound of %d", ErrInvalid, len(call.Source), MaxSourceBytes)
	case len(call.Input) > MaxInputBytes:
		return fmt.Errorf("%w: input: %d bytes of JSON, more than the bound of %d", ErrInvalid, len(call.Input), MaxInputBytes)
	case call.Input != nil && !json.Valid(call.Input):
		return fmt.Errorf("%w: input: not valid JSON", ErrInvalid)
	case call.Timeout < 0:
		return fmt.Errorf("%w: timeout: %v is negative", ErrInvalid, call.Timeout)
	}
	return nil
}
