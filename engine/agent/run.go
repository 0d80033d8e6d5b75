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

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
)

// Bounds of what the agent keeps and sends.
const (
	// MaxAriaTreeChars bounds the page outline an ariaTree call gives the
	// model (about 25,000 tokens); a longer one is cut at a line, with a
	// note saying so.
	MaxAriaTreeChars = 100_000
	// MaxStepPageText bounds a Step's PageText, which status objects and
	// streams carry: the model gets the whole (bounded) outline, a Step
	// its beginning.
	MaxStepPageText = 8_000
	// MaxScreenshotWidth and MaxScreenshotHeight bound the screenshots the
	// model gets; a larger viewport is scaled down, and coordinates the
	// model gives in the image's pixels are scaled back.
	MaxScreenshotWidth  = 1280
	MaxScreenshotHeight = 1280
	// RepeatedFailureWarning is how many times the same failing call
	// (same tool, same arguments) is made before its result carries a
	// warning.
	RepeatedFailureWarning = 3
	// settleAfterAction bounds the wait for the page to settle after a
	// coordinate action or a key press, before its screenshot.
	settleAfterAction = 5 * time.Second
)

// run is one run of the tool loop (dom and hybrid modes).
type run struct {
	e    *engine.Engine
	p    *page.Page
	opts Options
	exec llm.Client
	log  *slog.Logger
	now  func() time.Time

	tools    []llm.Tool
	known    map[string]bool
	system   string
	startURL string
	messages []llm.Message
	usage    llm.Usage
	steps    []Step
	// failures counts failed calls by tool and arguments.
	failures map[string]int
	// cached are the deterministic steps, when ShouldCache.
	cached []cacheStep
	// shot is the latest screenshot the model was sent: its pixels are
	// the model's coordinate space.
	shot *page.Screenshot
	// redactions are the variables' values (raw and as JSON string
	// content) and their placeholders, longest first.
	redactions []redaction
	// signature names the models for the cache entry.
	signature configSignature
	// key is what the run was asked, for its cache key: made at the
	// start, before any step.
	key cacheKeyInput
	// replayed counts the steps of r.steps a cache replay took before
	// handing over to the live agent.
	replayed int
	// uncacheable, when set, says why the run's steps cannot be replayed:
	// a successful run then returns no cache entry.
	uncacheable string
}

type redaction struct{ value, placeholder string }

// redactionsFor lists what redact replaces: each value, raw and as the
// content of a JSON string, longest first so that a value containing
// another is replaced whole.
func redactionsFor(vars map[string]engine.Variable) []redaction {
	var out []redaction
	for name, v := range vars {
		if v.Value == "" {
			continue
		}
		ph := "%" + name + "%"
		out = append(out, redaction{v.Value, ph})
		if b, err := json.Marshal(v.Value); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != v.Value {
				out = append(out, redaction{esc, ph})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i].value) > len(out[j].value) })
	return out
}

// checkOptions validates opts and fills in the defaults.
func checkOptions(opts *Options) error {
	if strings.TrimSpace(opts.Instruction) == "" {
		return fmt.Errorf("%w: instruction is required", ErrInvalidArgument)
	}
	switch opts.Mode {
	case "":
		opts.Mode = ModeDOM
	case ModeDOM, ModeHybrid, ModeCUA:
	default:
		return fmt.Errorf("%w: mode %q is not one of dom, hybrid and cua", ErrInvalidArgument, opts.Mode)
	}
	switch {
	case opts.Mode == ModeCUA && opts.ComputerUse == nil:
		return fmt.Errorf("%w: mode cua needs ComputerUse, which opens the model's computer-use conversation", ErrInvalidArgument)
	case opts.Mode != ModeCUA && opts.Model == nil:
		return fmt.Errorf("%w: model is required", ErrInvalidArgument)
	}
	switch {
	case opts.MaxSteps < 0:
		return fmt.Errorf("%w: maxSteps %d is negative", ErrInvalidArgument, opts.MaxSteps)
	case opts.MaxSteps == 0:
		opts.MaxSteps = DefaultMaxSteps
	}
	switch {
	case opts.ToolTimeout < 0:
		return fmt.Errorf("%w: toolTimeout %s is negative", ErrInvalidArgument, opts.ToolTimeout)
	case opts.ToolTimeout == 0:
		opts.ToolTimeout = DefaultToolTimeout
	}
	for _, name := range variableNames(opts.Variables) {
		if !engine.ValidVariableName(name) {
			return fmt.Errorf("%w: variables: name %q is not made of letters, digits, '_', '.' and '-'", ErrInvalidArgument, name)
		}
	}
	return nil
}

// newRun returns the state every mode starts from, its start URL read.
func newRun(ctx context.Context, e *engine.Engine, opts Options) (*run, error) {
	r := &run{
		e:          e,
		p:          e.Page(),
		opts:       opts,
		log:        opts.Logger,
		now:        time.Now,
		failures:   make(map[string]int),
		redactions: redactionsFor(opts.Variables),
		signature:  configSignature{SystemPrompt: opts.SystemPrompt},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.log = r.log.With("mode", string(opts.Mode))
	url, err := r.p.URL(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("agent: %w", ctx.Err())
		}
		return nil, fmt.Errorf("agent: reading the start page: %w", err)
	}
	r.startURL = url
	// Redacted, as every recorded text is: the key and the entry hold
	// no variable's value, should the page's URL carry one.
	r.key = keyInput(opts, r.redact(url), e.Frame())
	return r, nil
}

// runTools runs the dom and hybrid modes.
func runTools(ctx context.Context, r *run) (*Result, error) {
	opts := r.opts
	r.exec = opts.ExecutionModel
	if r.exec == nil {
		r.exec = opts.Model
	}
	r.signature.Model, r.signature.ExecutionModel = opts.Model.Model(), r.exec.Model()
	r.tools = toolSet(opts.Mode, variableNames(opts.Variables), opts.Search != nil)
	r.known = make(map[string]bool, len(r.tools))
	for _, t := range r.tools {
		r.known[t.Name] = true
	}
	at, note := r.takeOver(ctx)
	r.system = systemPrompt(opts.Mode, r.tools, opts.Variables, opts.MaxSteps, at, opts.SystemPrompt, r.now())
	first := []llm.Part{llm.TextPart(opts.Instruction)}
	if note != "" {
		first = append(first, llm.TextPart(note))
	}
	r.messages = []llm.Message{llm.UserMessage(first...)}
	r.log.Info("agent started", "maxSteps", opts.MaxSteps, "tools", len(r.tools), "replayedSteps", r.replayed)
	return r.loop(ctx)
}

// outcome is how a run ended, when it ended on its own terms.
type outcome struct {
	reason    string
	success   bool
	completed bool
	message   string
	output    json.RawMessage
}

func (r *run) loop(ctx context.Context) (*Result, error) {
	start := r.now()
	askedForDone := false
	var end *outcome
	for end == nil {
		choice := llm.ToolChoiceAuto
		if askedForDone {
			choice = llm.ToolChoiceRequired
		}
		resp, err := r.generate(ctx, choice)
		if err != nil {
			return r.partial(), err
		}
		if len(resp.ToolCalls) == 0 {
			r.messages = append(r.messages, llm.AssistantMessage(resp.Text))
			if askedForDone {
				msg := "the model stopped without calling done"
				if t := strings.TrimSpace(resp.Text); t != "" {
					msg += ": " + r.redact(t)
				}
				end = &outcome{reason: "noDone", message: msg}
				break
			}
			// Ask once: some models end their turn with a summary
			// instead of the tool call.
			r.log.Info("model stopped without done, asking once more")
			askedForDone = true
			r.messages = append(r.messages, llm.UserMessage(llm.TextPart(doneReminder)))
			continue
		}

		parts := make([]llm.Part, 0, 1+len(resp.ToolCalls))
		if resp.Text != "" {
			parts = append(parts, llm.TextPart(resp.Text))
		}
		for _, c := range resp.ToolCalls {
			parts = append(parts, llm.ToolCallPart(c))
		}
		r.messages = append(r.messages, llm.Message{Role: llm.RoleAssistant, Parts: parts})

		results := make([]llm.Part, 0, len(resp.ToolCalls))
		for _, call := range resp.ToolCalls {
			if call.Name != toolDone && r.toolSteps() >= r.opts.MaxSteps {
				end = &outcome{
					reason: "maxSteps",
					message: fmt.Sprintf("the agent stopped after %d tool calls without finishing: it reached maxSteps (%d)",
						r.toolSteps(), r.opts.MaxSteps),
				}
				break
			}
			res, fin, err := r.step(ctx, call, resp.Text)
			if err != nil {
				return r.partial(), err
			}
			if fin != nil {
				end = fin
				break
			}
			results = append(results, llm.ToolResultPart(res))
		}
		if end == nil {
			r.messages = append(r.messages, llm.UserMessage(results...))
		}
	}

	return r.finish(ctx, end, start)
}

// finish builds the Result of a run that ended on its own terms: the
// metadata, the cache entry, the log line.
func (r *run) finish(ctx context.Context, end *outcome, start time.Time) (*Result, error) {
	res := &Result{
		Success:   end.success,
		Message:   end.message,
		Completed: end.completed,
		Actions:   r.steps,
		Output:    end.output,
		Usage:     r.usage,
		Metadata: map[string]any{
			"mode":       string(r.opts.Mode),
			"steps":      len(r.steps),
			"maxSteps":   r.opts.MaxSteps,
			"stopReason": end.reason,
			"startUrl":   r.startURL,
		},
	}
	if res.Actions == nil {
		res.Actions = []Step{}
	}
	if u, err := r.p.URL(ctx); err == nil {
		res.Metadata["finalUrl"] = u
	}
	res.Metadata["durationMs"] = r.now().Sub(start).Milliseconds()
	if r.opts.ShouldCache && res.Success && r.uncacheable != "" {
		res.Metadata["cacheSkipped"] = r.uncacheable
	}
	if r.opts.ShouldCache && res.Success && r.uncacheable == "" {
		ce, err := r.buildCacheEntry(res)
		if err != nil {
			return res, fmt.Errorf("agent: %w", err)
		}
		res.CacheEntry = ce
	}
	r.log.Info("agent finished", "stopReason", end.reason, "success", res.Success, "steps", len(r.steps),
		"inputTokens", r.usage.InputTokens, "outputTokens", r.usage.OutputTokens)
	return res, nil
}

// toolSteps counts the tool calls so far (done excluded).
func (r *run) toolSteps() int {
	n := 0
	for _, s := range r.steps {
		if s.Type != toolDone {
			n++
		}
	}
	return n
}

// unreplayable notes why the run's steps cannot be replayed, which leaves a
// successful run without a cache entry; the first reason is kept.
func (r *run) unreplayable(why string) {
	if r.opts.ShouldCache && r.uncacheable == "" {
		r.uncacheable = why
	}
}

// report adds a step the run took without a tool call (the cua mode's
// actions, a replayed step) and tells OnStep.
func (r *run) report(st Step) {
	index := len(r.steps)
	r.steps = append(r.steps, st)
	if r.opts.OnStep != nil {
		r.opts.OnStep(index, st, r.usage)
	}
}

// partial is what a run that ends on an error has done so far.
func (r *run) partial() *Result {
	return &Result{Actions: r.steps, Usage: r.usage, Message: "the agent stopped on an error"}
}

// generate asks the loop's model for the next step, the history compressed
// first.
func (r *run) generate(ctx context.Context, choice llm.ToolChoice) (*llm.Response, error) {
	compress(r.messages)
	resp, err := r.opts.Model.Generate(ctx, llm.Request{
		System:     r.system,
		Messages:   r.messages,
		Tools:      r.tools,
		ToolChoice: choice,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("agent: step %d: %w", len(r.steps), ctx.Err())
		}
		// The model never gets a variable's value, so its errors hold none.
		return nil, fmt.Errorf("agent: step %d: calling the model: %w", len(r.steps), err)
	}
	r.usage = r.usage.Add(resp.Usage)
	return resp, nil
}

// redactedError is an error whose text has the variables' values
// replaced, still inspectable with errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr returns err with the variables' values redacted from its text.
func (r *run) redactErr(err error) error {
	if msg := r.redact(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

// redact replaces every variable value in s by its placeholder.
func (r *run) redact(s string) string {
	for _, rd := range r.redactions {
		s = strings.ReplaceAll(s, rd.value, rd.placeholder)
	}
	return s
}

// redactJSON redacts the strings of a JSON document (keys and values),
// leaving its structure valid whatever the values are; a document that
// does not parse is redacted as text.
func (r *run) redactJSON(doc []byte) []byte {
	if len(r.redactions) == 0 {
		return doc
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []byte(r.redact(string(doc)))
	}
	out, err := json.Marshal(r.redactValue(v))
	if err != nil {
		return []byte(r.redact(string(doc)))
	}
	return out
}

func (r *run) redactValue(v any) any {
	switch t := v.(type) {
	case string:
		return r.redact(t)
	case []any:
		for i := range t {
			t[i] = r.redactValue(t[i])
		}
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[r.redact(k)] = r.redactValue(e)
		}
		return m
	}
	return v
}

// truncate cuts s to at most n bytes at a rune boundary, preferring the
// last line break, and says how much was left out.
func truncate(s string, n int, what string) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], '\n'); i > n/2 {
		cut = i
	}
	return s[:cut] + fmt.Sprintf("\n[%s truncated: %d of %d characters shown]", what, cut, len(s))
}
