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

// Package engine turns natural-language instructions into actions on a real
// page: act, observe and extract. It takes a text snapshot of the page
// (engine/page), asks a model (engine/llm) which element to use, and performs
// the action through the DevTools protocol. The runner pod uses it behind its
// RPC. It depends on nothing of the runner's, so that a client library can
// run it in-process.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
)

// DefaultDOMSettleTimeout bounds the wait for the DOM to settle when the
// session does not say.
const DefaultDOMSettleTimeout = 10 * time.Second

// Options configure an Engine.
type Options struct {
	// Model is the default model; a call may bring its own.
	Model llm.Client
	// SystemPrompt is extra instructions added to every model call.
	SystemPrompt string
	// SelfHeal re-snapshots and re-infers once when an action's element no
	// longer resolves or the action fails.
	SelfHeal bool
	// DOMSettleTimeout bounds the wait for the DOM to settle before each
	// operation; zero means DefaultDOMSettleTimeout.
	DOMSettleTimeout time.Duration
	// Logger receives the engine's logs; nil discards them. Variable values
	// are never logged.
	Logger *slog.Logger
}

// Engine runs act, observe and extract on one page. Calls must not overlap:
// the runner serialises them.
type Engine struct {
	page *page.Page
	opts Options
	log  *slog.Logger
	// frame scopes snapshots and selector actions to one frame's
	// document; empty is the whole page.
	frame cdp.FrameID
}

// New returns an engine for a page.
func New(p *page.Page, opts Options) *Engine {
	if opts.DOMSettleTimeout <= 0 {
		opts.DOMSettleTimeout = DefaultDOMSettleTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{page: p, opts: opts, log: log}
}

// Page is the page the engine drives.
func (e *Engine) Page() *page.Page { return e.page }

// Logger is where the engine logs, for packages that work around it (the
// server-side cache).
func (e *Engine) Logger() *slog.Logger { return e.log }

// WithSelfHeal returns an engine on the same page whose actions self-heal
// or not as on says, with its other options as e's. The engines share the
// page and must not be called concurrently.
func (e *Engine) WithSelfHeal(on bool) *Engine {
	c := *e
	c.opts.SelfHeal = on
	return &c
}

// InFrame returns an engine on the same page whose operations work in the
// frame with DevTools frame id id: an iframe at any depth, same-process or
// out-of-process. Its snapshots (act, observe, extract, and so the agent's
// tools that read the page) show only that frame's document, and an
// Action's selector is looked up in it. Empty, or the main frame's id, is
// the whole page. The id is checked by each operation, not here: one the
// page does not have (any more) fails the operation with an error wrapping
// page.ErrNoFrame. The engines share the page and must not be called
// concurrently.
func (e *Engine) InFrame(id string) *Engine {
	c := *e
	c.frame = cdp.FrameID(id)
	if c.frame == e.page.MainFrame().ID {
		c.frame = ""
	}
	return &c
}

// Frame is the frame id the engine's operations are scoped to; empty for
// the whole page.
func (e *Engine) Frame() string { return string(e.frame) }

// Action is one action on an element: what observe proposes and act performs.
type Action struct {
	// Selector locates the element: "xpath=/html/body/..." as the engine
	// reports it, or a CSS selector given by a caller.
	Selector    string   `json:"selector"`
	Description string   `json:"description"`
	Method      string   `json:"method,omitempty"`
	Arguments   []string `json:"arguments,omitempty"`
	// BackendNodeID is the element's DevTools node id, when known.
	BackendNodeID int64 `json:"backendNodeId,omitempty"`
}

// Log is one progress line of an operation.
type Log struct {
	Category string
	Message  string
	Level    int
}

// Common options of every operation.
type callOptions struct {
	// Model overrides the engine's model for this call.
	Model llm.Client
	// Timeout bounds the call; zero leaves only ctx.
	Timeout time.Duration
	// Progress receives progress lines; nil drops them.
	Progress func(Log)
	// scope is the act's snapshot scope (Selector, IgnoreSelectors).
	scope page.SnapshotOptions
}

// ErrNoModel is returned when an operation needs a model and none is set.
var ErrNoModel = errors.New("no model is configured for this session or call")

// ErrInvalidArgument marks a call that cannot run as given.
var ErrInvalidArgument = errors.New("invalid argument")

// checkSelector refuses a selector the page cannot resolve (a "text="
// selector, a malformed " >> nth=" suffix) before any work, as a call that
// cannot run as given.
func checkSelector(sel string) error {
	if err := page.CheckSelector(sel); err != nil {
		return fmt.Errorf("%w: selector %q: %w", ErrInvalidArgument, sel, err)
	}
	return nil
}

// checkScope checks a call's scope and ignore selectors.
func checkScope(scope string, ignore []string) error {
	if scope != "" {
		if err := checkSelector(scope); err != nil {
			return err
		}
	}
	for _, sel := range ignore {
		if err := checkSelector(sel); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) model(o callOptions) (llm.Client, error) {
	if o.Model != nil {
		return o.Model, nil
	}
	if e.opts.Model != nil {
		return e.opts.Model, nil
	}
	return nil, ErrNoModel
}

func (o callOptions) progress(category, format string, args ...any) {
	if o.Progress != nil {
		o.Progress(Log{Category: category, Message: fmt.Sprintf(format, args...), Level: 1})
	}
}

func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// settle waits for the DOM to settle. A page that never goes quiet (a
// polling page, say) is not an error: the operation goes on with what is
// there.
func (e *Engine) settle(ctx context.Context) error {
	err := e.page.Settle(ctx, e.opts.DOMSettleTimeout)
	if err != nil && !errors.Is(err, page.ErrNotSettled) {
		return fmt.Errorf("waiting for the page to settle: %w", err)
	}
	return nil
}

// snapshot settles the page and captures it, in the engine's frame.
func (e *Engine) snapshot(ctx context.Context, opts page.SnapshotOptions) (*page.Snapshot, error) {
	if err := e.settle(ctx); err != nil {
		return nil, err
	}
	opts.Frame = e.frame
	snap, err := e.page.Capture(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("taking the page snapshot: %w", err)
	}
	return snap, nil
}

// ask calls the model with a schema and decodes its answer into out. The
// user message is user's text, then images (PNG), if any.
func (e *Engine) ask(ctx context.Context, model llm.Client, system, user, name string, schema map[string]any, out any, images ...[]byte) (llm.Usage, error) {
	parts := []llm.Part{llm.TextPart(user)}
	for _, img := range images {
		parts = append(parts, llm.ImagePart(img))
	}
	resp, err := model.Generate(ctx, llm.Request{
		System:   systemPrompt(system, e.opts.SystemPrompt),
		Messages: []llm.Message{llm.UserMessage(parts...)},
		Schema:   &llm.Schema{Name: name, JSON: schema, Strict: true},
	})
	if err != nil {
		return llm.Usage{}, fmt.Errorf("asking the model: %w", err)
	}
	if err := json.Unmarshal([]byte(resp.Text), out); err != nil {
		return resp.Usage, fmt.Errorf("the model's answer is not the requested JSON: %w", err)
	}
	return resp.Usage, nil
}

// backendNodeID reads the node id out of an element id "<frame>-<node>".
func backendNodeID(id string) int64 {
	_, node, ok := strings.Cut(id, "-")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseInt(node, 10, 64)
	return n
}

// normaliseID accepts ids as models write them: "0-12", "[0-12]".
func normaliseID(id string) string {
	return strings.Trim(strings.TrimSpace(id), "[]")
}
