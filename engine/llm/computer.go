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

package llm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/browserfleet/browserfleet/engine/llm/provider"
)

// Computer use (the agent's cua mode) runs a provider's own computer-use
// loop: the model looks at screenshots and answers with mouse and keyboard
// actions in its own vocabulary, which this package maps to ComputerAction
// values. Each provider keeps its wire shape: OpenAI's computer tool on the
// Responses API, Anthropic's computer tool (beta), Gemini's computer use
// tool with its predefined functions.

const (
	// DefaultKeepScreenshots is how many of the latest screenshots a
	// ComputerUse sends again verbatim; older ones are replaced by a note.
	DefaultKeepScreenshots = 2
	// MaxScreenSide bounds each side of ComputerUseOptions.Screen.
	MaxScreenSide = 10000
	// maxComputerTurnText bounds ComputerTurn.Text and Error, in bytes.
	maxComputerTurnText = 64 << 10
)

// Size is a width and a height in pixels.
type Size struct {
	Width, Height int
}

// Point is a position in a coordinate space.
type Point struct {
	X, Y int
}

// ComputerUseOptions configure a ComputerUse.
type ComputerUseOptions struct {
	// Screen is the size of the screenshots the caller sends, which is the
	// size of the viewport at a device scale factor of 1. Required; each
	// side at most MaxScreenSide.
	Screen Size
	// System is added to the provider's instructions: the agent's rules
	// and the user's system prompt.
	System string
	// KeepScreenshots is how many of the latest screenshots are sent again
	// verbatim; zero means DefaultKeepScreenshots. OpenAI keeps the
	// conversation on its side (previous_response_id) and drops its oldest
	// items itself when the context is full (truncation "auto").
	KeepScreenshots int
	// MaxOutputTokens caps each answer; zero leaves the provider's default
	// (4096 for Anthropic, which requires a cap).
	MaxOutputTokens int
}

// ComputerUse is one computer-use conversation with a model. It keeps the
// conversation, so a task needs a ComputerUse of its own; its methods may
// be called from several goroutines, one Step at a time.
type ComputerUse interface {
	// Step sends the outcome of the previous step (or, first, the task)
	// and returns the model's next actions. A failed Step changes
	// nothing: the same turn may be sent again. Errors are *Error values.
	Step(ctx context.Context, turn ComputerTurn) (*ComputerStep, error)
	// Space is the coordinate space of the actions' X, Y, Path, ScrollX
	// and ScrollY: the Screen for OpenAI and Anthropic, 1000 by 1000 for
	// Google, whose coordinates are normalised to 0..999. Scale them to
	// the viewport with ComputerAction.Scale.
	Space() Size
	// Model returns the canonical "provider/model" name of the model.
	Model() string
}

// ComputerTurn is what the caller tells the model.
type ComputerTurn struct {
	// Text is the task on the first turn (required then), later a message
	// of the user's, such as an answer to the model's question (required
	// after a step without actions).
	Text string
	// Screenshot is a PNG of the screen now, of the Screen's size. It is
	// required after a step with actions, each of whose calls gets it;
	// optional on the first turn.
	Screenshot []byte
	// URL is the page's URL now; models use it to know where they are.
	URL string
	// Executed and Error report the previous step's actions, run in order:
	// with Error empty, all of them ran; otherwise the first Executed ran
	// and the next one failed with Error, which the model reads, and the
	// rest were not run.
	Executed int
	Error    string
	// AcknowledgedSafetyChecks are the IDs of the previous step's
	// SafetyChecks the user accepted. Every one must be acknowledged
	// before the step's actions run; a caller that does not accept them
	// should end the task instead.
	AcknowledgedSafetyChecks []string
}

// ComputerStep is the model's answer to a turn.
type ComputerStep struct {
	// Actions are the next actions, in the Space's coordinates, to run in
	// order, each after the previous one finished.
	Actions []ComputerAction
	// Text is what the model wrote: its final answer when Done, else a
	// remark alongside its actions.
	Text string
	// Reasoning is the model's reasoning summary, when the provider gives
	// one (OpenAI's reasoning summaries, Gemini's thoughts).
	Reasoning string
	// Done is set when the model did not act: it finished, or it asks the
	// user something (Text says which). Another Step with a Text goes on.
	Done bool
	// SafetyChecks must be acknowledged in the next turn before Actions
	// run (OpenAI's pending safety checks, Gemini's safety decisions).
	SafetyChecks []SafetyCheck
	// FinishReason is the provider's reason for stopping; for logs.
	FinishReason string
	// Usage is what the step cost.
	Usage Usage
}

// SafetyCheck is a provider's request for the user's confirmation before
// an action runs, such as a suspected prompt injection or a sensitive
// domain.
type SafetyCheck struct {
	ID      string
	Code    string
	Message string
}

// ComputerActionType names an action.
type ComputerActionType string

// The actions. Coordinates are in the ComputerUse's Space.
const (
	// ActionClick presses and releases Button at X, Y, holding Keys (the
	// modifiers, when any).
	ActionClick ComputerActionType = "click"
	// ActionDoubleClick double-clicks at X, Y.
	ActionDoubleClick ComputerActionType = "double_click"
	// ActionTripleClick triple-clicks at X, Y (selects a line).
	ActionTripleClick ComputerActionType = "triple_click"
	// ActionMove moves the mouse to X, Y.
	ActionMove ComputerActionType = "move"
	// ActionMouseDown presses the left button at X, Y.
	ActionMouseDown ComputerActionType = "mouse_down"
	// ActionMouseUp releases the left button at X, Y.
	ActionMouseUp ComputerActionType = "mouse_up"
	// ActionDrag presses the left button at Path[0], moves through Path
	// and releases it at its last point.
	ActionDrag ComputerActionType = "drag"
	// ActionScroll scrolls by ScrollX, ScrollY with the mouse at X, Y,
	// holding Keys.
	ActionScroll ComputerActionType = "scroll"
	// ActionType types Text.
	ActionType ComputerActionType = "type"
	// ActionKeypress presses Keys together (a chord, modifiers first) and
	// releases them.
	ActionKeypress ComputerActionType = "keypress"
	// ActionHoldKey holds Keys down for Duration.
	ActionHoldKey ComputerActionType = "hold_key"
	// ActionWait waits Duration.
	ActionWait ComputerActionType = "wait"
	// ActionScreenshot does nothing: the model wants a fresh screenshot,
	// which every turn brings.
	ActionScreenshot ComputerActionType = "screenshot"
	// ActionNavigate opens URL.
	ActionNavigate ComputerActionType = "navigate"
	// ActionBack goes back in history.
	ActionBack ComputerActionType = "back"
	// ActionForward goes forward in history.
	ActionForward ComputerActionType = "forward"
)

// ComputerAction is one action of the model's.
type ComputerAction struct {
	Type ComputerActionType
	// X, Y is where a pointer action happens.
	X, Y int
	// Button is a click's button: left, right, middle, back or forward.
	Button string
	// Text is what ActionType types.
	Text string
	// Keys are DOM KeyboardEvent key names ("Control", "Enter",
	// "ArrowDown", "a"): the chord of ActionKeypress and ActionHoldKey,
	// the modifiers held during a click or scroll.
	Keys []string
	// ScrollX, ScrollY is how far ActionScroll scrolls, positive right and
	// down, in the Space's units.
	ScrollX, ScrollY int
	// Path is the way of ActionDrag, at least two points.
	Path []Point
	// URL is where ActionNavigate goes.
	URL string
	// Duration is how long ActionWait waits or ActionHoldKey holds.
	Duration time.Duration
}

// Scale returns the action with its coordinates and scroll distances
// mapped from the space from (ComputerUse.Space) to the space to (the
// viewport), rounded down and kept inside it.
func (a ComputerAction) Scale(from, to Size) ComputerAction {
	if from == to || from.Width <= 0 || from.Height <= 0 {
		return a
	}
	sx := func(x int) int { return clamp(x*to.Width/from.Width, 0, to.Width-1) }
	sy := func(y int) int { return clamp(y*to.Height/from.Height, 0, to.Height-1) }
	a.X, a.Y = sx(a.X), sy(a.Y)
	a.ScrollX = a.ScrollX * to.Width / from.Width
	a.ScrollY = a.ScrollY * to.Height / from.Height
	if a.Path != nil {
		path := make([]Point, len(a.Path))
		for i, p := range a.Path {
			path[i] = Point{sx(p.X), sy(p.Y)}
		}
		a.Path = path
	}
	return a
}

func clamp(v, lo, hi int) int {
	return max(lo, min(v, hi))
}

// computerBackend is one provider's side of a ComputerUse. Its step builds
// the request from its conversation and the turn, and changes the
// conversation only when the call succeeded.
type computerBackend interface {
	step(ctx context.Context, turn *ComputerTurn, calls []computerCall) (*ComputerStep, []computerCall, error)
	apiError(err error) (status int, message string, ok bool)
	space() Size
}

// computerCall is a call of the model's computer tool, which the next turn
// answers: a range of the step's actions, or none with the reason.
type computerCall struct {
	id, name string
	// first and n locate the call's actions in the step's Actions.
	first, n int
	// unsupported, when set, says why the call has no action: it is
	// answered with this error.
	unsupported string
	checks      []SafetyCheck
}

// outcome is how a call's actions went in turn: "" when they all ran,
// else the error to give the model.
func (c computerCall) outcome(turn *ComputerTurn) string {
	switch {
	case c.unsupported != "":
		return c.unsupported
	case turn.Error == "" || turn.Executed >= c.first+c.n:
		return ""
	case turn.Executed >= c.first:
		return turn.Error
	}
	return "Not run: an earlier action failed."
}

// computerUse is the provider-neutral half of every ComputerUse.
type computerUse struct {
	*client
	backend computerBackend

	mu sync.Mutex
	// started is set once the task was sent.
	started bool
	// calls are the previous step's calls, which the next turn answers,
	// and actions how many actions the step had.
	calls   []computerCall
	actions int
}

// NewComputerUse returns a ComputerUse with cfg.Model, which must be a
// computer-use model of its provider (OpenAI's computer-use-preview or a
// GPT-5 model with the computer tool, a Claude model with computer use, a
// Gemini computer-use model). It fails like New, or on options out of
// bounds (ErrInvalidRequest); it makes no request.
func NewComputerUse(cfg Config, opts ComputerUseOptions) (ComputerUse, error) {
	c, httpClient, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	s := opts.Screen
	if s.Width <= 0 || s.Height <= 0 || s.Width > MaxScreenSide || s.Height > MaxScreenSide {
		err := fmt.Errorf("%w: Screen %dx%d: each side must be 1 to %d", ErrInvalidRequest, s.Width, s.Height, MaxScreenSide)
		return nil, c.fail(0, err.Error(), err)
	}
	if opts.KeepScreenshots < 0 || opts.MaxOutputTokens < 0 {
		err := fmt.Errorf("%w: negative KeepScreenshots or MaxOutputTokens", ErrInvalidRequest)
		return nil, c.fail(0, err.Error(), err)
	}
	if opts.KeepScreenshots == 0 {
		opts.KeepScreenshots = DefaultKeepScreenshots
	}
	cu := &computerUse{client: c}
	switch c.provider {
	case provider.OpenAI:
		cu.backend = newOpenAIComputer(cfg, c.model, httpClient, opts)
	case provider.Anthropic:
		cu.backend = newAnthropicComputer(cfg, c.model, httpClient, opts)
	case provider.Google:
		cu.backend, err = newGoogleComputer(cfg, c.model, httpClient, opts)
	}
	if err != nil {
		return nil, c.sdkError(err)
	}
	return cu, nil
}

// Space implements ComputerUse.
func (cu *computerUse) Space() Size { return cu.backend.space() }

// Step implements ComputerUse.
func (cu *computerUse) Step(ctx context.Context, turn ComputerTurn) (*ComputerStep, error) {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	if err := cu.validateTurn(&turn); err != nil {
		return nil, cu.fail(0, err.Error(), err)
	}
	var step *ComputerStep
	var calls []computerCall
	elapsed, err := cu.call(ctx, cu.backend.apiError, func(ctx context.Context) error {
		var err error
		step, calls, err = cu.backend.step(ctx, &turn, cu.calls)
		return err
	})
	if err != nil {
		return nil, err
	}
	cu.started = true
	cu.calls, cu.actions = calls, len(step.Actions)
	for _, c := range calls {
		step.SafetyChecks = append(step.SafetyChecks, c.checks...)
	}
	step.Done = len(calls) == 0
	step.Usage.InferenceTimeMs = elapsed.Milliseconds()
	return step, nil
}

// validateTurn refuses a turn that does not answer the previous step.
func (cu *computerUse) validateTurn(turn *ComputerTurn) error {
	switch {
	case !cu.started && turn.Text == "":
		return fmt.Errorf("%w: the first turn needs the task in Text", ErrInvalidRequest)
	case cu.started && len(cu.calls) == 0 && turn.Text == "":
		return fmt.Errorf("%w: the model did not act: the turn needs a Text to go on", ErrInvalidRequest)
	case len(cu.calls) > 0 && len(turn.Screenshot) == 0:
		return fmt.Errorf("%w: the turn after actions needs a Screenshot", ErrInvalidRequest)
	case len(turn.Text) > maxComputerTurnText || len(turn.Error) > maxComputerTurnText:
		return fmt.Errorf("%w: Text or Error longer than %d bytes", ErrInvalidRequest, maxComputerTurnText)
	case !utf8.ValidString(turn.Text) || !utf8.ValidString(turn.Error):
		return fmt.Errorf("%w: Text or Error is not UTF-8", ErrInvalidRequest)
	case turn.Error != "" && (turn.Executed < 0 || turn.Executed >= cu.actions):
		return fmt.Errorf("%w: Executed %d with an Error: the step had %d actions", ErrInvalidRequest, turn.Executed, cu.actions)
	}
	var pending []string
	for _, c := range cu.calls {
		for _, sc := range c.checks {
			pending = append(pending, sc.ID)
		}
	}
	for _, id := range turn.AcknowledgedSafetyChecks {
		if !slices.Contains(pending, id) {
			return fmt.Errorf("%w: AcknowledgedSafetyChecks: %q is no safety check of the previous step", ErrInvalidRequest, id)
		}
	}
	for _, id := range pending {
		if !slices.Contains(turn.AcknowledgedSafetyChecks, id) {
			return fmt.Errorf("%w: safety check %q of the previous step is not acknowledged", ErrInvalidRequest, id)
		}
	}
	return nil
}

// failureNote tells the model which action failed, for providers that
// answer a call with a screenshot only.
func failureNote(turn *ComputerTurn, calls []computerCall) string {
	var notes []string
	for _, c := range calls {
		if out := c.outcome(turn); out != "" {
			notes = append(notes, fmt.Sprintf("The action of call %s did not run as asked: %s", c.id, out))
		}
	}
	return strings.Join(notes, "\n")
}

// keyNames maps the key names of the providers (OpenAI's "CTRL",
// Anthropic's xdotool "Return" and "Page_Down", Gemini's "Control") to DOM
// KeyboardEvent key names.
var keyNames = map[string]string{
	"ENTER": "Enter", "RETURN": "Enter", "KP_ENTER": "Enter",
	"ESCAPE": "Escape", "ESC": "Escape",
	"BACKSPACE": "Backspace", "TAB": "Tab", "SPACE": " ",
	"DELETE": "Delete", "DEL": "Delete", "INSERT": "Insert",
	"UP": "ArrowUp", "DOWN": "ArrowDown", "LEFT": "ArrowLeft", "RIGHT": "ArrowRight",
	"ARROWUP": "ArrowUp", "ARROWDOWN": "ArrowDown", "ARROWLEFT": "ArrowLeft", "ARROWRIGHT": "ArrowRight",
	"ARROW_UP": "ArrowUp", "ARROW_DOWN": "ArrowDown", "ARROW_LEFT": "ArrowLeft", "ARROW_RIGHT": "ArrowRight",
	"SHIFT": "Shift", "CONTROL": "Control", "CTRL": "Control",
	"ALT": "Alt", "OPTION": "Alt",
	"META": "Meta", "COMMAND": "Meta", "CMD": "Meta", "SUPER": "Meta", "WIN": "Meta", "WINDOWS": "Meta",
	"HOME": "Home", "END": "End",
	"PAGEUP": "PageUp", "PAGEDOWN": "PageDown", "PAGE_UP": "PageUp", "PAGE_DOWN": "PageDown",
	"PGUP": "PageUp", "PGDN": "PageDown", "PRIOR": "PageUp", "NEXT": "PageDown",
	"CAPSLOCK": "CapsLock", "CAPS_LOCK": "CapsLock",
}

// domKeys returns keys as DOM key names. A single letter goes in lower
// case unless Shift is part of the chord, so that "CTRL"+"A" selects all
// rather than typing "A".
func domKeys(keys []string) []string {
	out := make([]string, 0, len(keys))
	shift := false
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		u := strings.ToUpper(k)
		switch {
		case keyNames[u] != "":
			k = keyNames[u]
		case len(u) >= 2 && len(u) <= 3 && u[0] == 'F' && u[1] >= '1' && u[1] <= '9':
			k = u // F1..F24
		}
		if k == "Shift" {
			shift = true
		}
		out = append(out, k)
	}
	for i, k := range out {
		if len(k) == 1 && !shift {
			out[i] = strings.ToLower(k)
		}
	}
	return out
}

// splitChord splits a chord written as "ctrl+shift+t"; a lone "+" is the
// plus key.
func splitChord(s string) []string {
	if s == "+" {
		return []string{"+"}
	}
	var keys []string
	for _, k := range strings.Split(s, "+") {
		if k != "" {
			keys = append(keys, k)
		}
	}
	if strings.HasSuffix(s, "++") {
		keys = append(keys, "+")
	}
	return keys
}
