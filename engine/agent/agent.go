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

// Package agent runs an autonomous multi-step task on a page: a model
// chooses tools (act, extract, goto, scroll, keys, ...) step by step until it
// calls done or runs out of steps. It drives the page through an
// engine.Engine and depends on nothing of the runner's, so that a client
// library can run it in-process.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/search"
)

// Mode is how the agent perceives and acts on the page.
type Mode string

const (
	// ModeDOM works from the page's accessibility snapshot, through tools.
	ModeDOM Mode = "dom"
	// ModeHybrid adds screenshots and coordinate tools to ModeDOM's.
	ModeHybrid Mode = "hybrid"
	// ModeCUA is the provider's own computer-use loop.
	ModeCUA Mode = "cua"
)

// Defaults of a zero Options field.
const (
	// DefaultMaxSteps bounds the tool calls of a run (in cua mode, its
	// actions).
	DefaultMaxSteps = 20
	// DefaultToolTimeout bounds each tool call but think and wait (in cua
	// mode, each action but wait, hold_key and screenshot).
	DefaultToolTimeout = 45 * time.Second
)

// ErrInvalidArgument marks a run that cannot start as asked.
var ErrInvalidArgument = engine.ErrInvalidArgument

// Options say what the agent is to do and within which bounds.
type Options struct {
	// Instruction is the task, in natural language. Required.
	Instruction string
	// Mode is ModeDOM when empty.
	Mode Mode
	// Model runs the agent's loop. Required but in cua mode, which talks
	// to the model through ComputerUse.
	Model llm.Client
	// ExecutionModel serves the act, extract and fillForm tools; nil is
	// Model.
	ExecutionModel llm.Client
	// ComputerUse opens the cua mode's conversation with the loop's
	// model: llm.NewComputerUse with the model's llm.Config and the
	// options the agent passes (the screenshots' size, the agent's
	// instructions). Required in cua mode, where Model and ExecutionModel
	// are not used and may be nil; unused in the other modes.
	ComputerUse func(llm.ComputerUseOptions) (llm.ComputerUse, error)
	// AcknowledgeSafetyCheck, in cua mode, is asked about each safety
	// check a model raises before its next actions (OpenAI's pending
	// safety checks, Gemini's require_confirmation). Answering true
	// acknowledges it and the actions run; nil, or false, stops the run
	// uncompleted with a message naming the check.
	AcknowledgeSafetyCheck func(llm.SafetyCheck) bool
	// SystemPrompt is added to the agent's own system prompt.
	SystemPrompt string
	// MaxSteps bounds the tool calls (done excluded); in cua mode, the
	// actions run, an answer without any counting as one. Zero is
	// DefaultMaxSteps.
	MaxSteps int
	// ToolTimeout bounds each tool call but think and wait (in cua mode,
	// each action but wait, hold_key and screenshot); zero is
	// DefaultToolTimeout.
	ToolTimeout time.Duration
	// Variables are values the agent types by name: the model sees names
	// and descriptions only, and %name% is replaced by its value only when
	// input is typed.
	Variables map[string]engine.Variable
	// HighlightCursor draws a visible cursor in the page for coordinate
	// actions.
	HighlightCursor bool
	// Search, when set, offers the model the search tool (dom and hybrid
	// modes; the provider's computer-use loop has no tools of ours).
	Search search.Searcher
	// ShouldCache records the run's deterministic steps in
	// Result.CacheEntry.
	ShouldCache bool
	// Cache is the server-side cache of agent runs. With ShouldCache and
	// CacheSetting, the run's key is looked up at its start: an entry
	// that is served is replayed with no model call (a step that fails
	// hands over to the live agent from where the page is), and a
	// successful run stores its entry. nil: no cache (DISABLED).
	Cache cache.Store
	// CacheSetting is the run's cache setting (its threshold); nil is off.
	CacheSetting *cache.Setting
	// OnStep, when set, is called after each step with its index (from 0),
	// the step, and the usage of every model call so far. The run waits
	// for it.
	OnStep func(index int, step Step, usage llm.Usage)
	// Logger receives the agent's logs; nil discards them. Variable
	// values are never logged.
	Logger *slog.Logger
}

// Step is one step of a run, in the /v1 API's shape.
type Step struct {
	// Type is the tool the step used, such as "act" or "goto".
	Type string
	// Reasoning is the model's reason for the step.
	Reasoning string
	// TaskCompleted is whether the agent considered the task complete
	// after the step.
	TaskCompleted bool
	// Action describes what the step did.
	Action string
	// TimeMs is how long the step took.
	TimeMs int64
	// PageText is what the step read off the page, where it read it.
	PageText string
	// PageURL is the page's URL when the step started.
	PageURL string
	// Instruction is the step's instruction (act, extract, fillForm).
	Instruction string
}

// Result is the outcome of a run.
type Result struct {
	// Success is whether the agent finished its task (done with
	// taskComplete true).
	Success bool
	// Message is the agent's final message, or why it stopped.
	Message string
	// Completed is whether the run reached an end of its own (done)
	// rather than a limit.
	Completed bool
	// Actions are every step, oldest first.
	Actions []Step
	// Output is the done tool's output, when the model gave one.
	Output json.RawMessage
	// Metadata is extra facts of the run, for the /v1 result's metadata.
	Metadata map[string]any
	// Usage sums every model call of the run, the tools' included.
	Usage llm.Usage
	// CacheEntry is set when Options.ShouldCache was.
	CacheEntry *CacheEntry
	// Cache is what the server-side cache did for the run: HIT (the
	// steps were replayed; Usage is zero), MISS with its reason, or
	// DISABLED.
	Cache *cache.Report
}

// CacheEntry is a run's deterministic steps under a key that names what
// produced them.
type CacheEntry struct {
	// Key hashes the instruction, the start URL, the options that change
	// behaviour, the system prompt and the variable names: what the run
	// was asked, not which models ran it.
	Key string
	// Entry is the recorded steps, as JSON.
	Entry json.RawMessage
}

// Run runs the agent on e's page until it calls done, runs out of steps,
// or ctx ends. A model that cannot be called is an error (an *llm.Error);
// a step that fails is told to the model, which may try something else.
// When ctx ends the error wraps ctx's error, and options that cannot run
// wrap ErrInvalidArgument. On an error the Result, when not nil, holds the
// steps taken and the usage so far.
func Run(ctx context.Context, e *engine.Engine, opts Options) (*Result, error) {
	if e == nil {
		return nil, fmt.Errorf("%w: no engine", ErrInvalidArgument)
	}
	if err := checkOptions(&opts); err != nil {
		return nil, err
	}
	r, err := newRun(ctx, e, opts)
	if err != nil {
		return nil, err
	}
	sc := newServerCache(r)
	if stored := sc.lookup(ctx); stored != nil {
		res, err := r.replay(ctx, stored)
		switch {
		case err != nil:
			res = r.partial()
			res.Cache = sc.result()
			return res, err
		case res != nil:
			sc.hit(ctx, stored)
			res.Cache = sc.result()
			return res, nil
		}
		sc.replayFailed()
	}
	var res *Result
	switch opts.Mode {
	case ModeCUA:
		res, err = runCUA(ctx, r)
	default:
		res, err = runTools(ctx, r)
	}
	if res != nil {
		if err == nil {
			sc.store(ctx, res)
		}
		res.Cache = sc.result()
	}
	return res, err
}
