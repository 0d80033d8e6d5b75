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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
)

const (
	// anthropicScrollStep is how far one of Anthropic's scroll "clicks"
	// scrolls, in pixels: a mouse wheel notch.
	anthropicScrollStep = 100
	// anthropicMaxDuration bounds Anthropic's wait and hold_key durations.
	anthropicMaxDuration = 30 * time.Second
	// omittedScreenshot replaces a screenshot no longer sent verbatim.
	omittedScreenshot = "(An earlier screenshot, omitted.)"
)

// anthropicComputer runs Anthropic's computer tool (beta). The client
// keeps the conversation, the latest screenshots verbatim.
type anthropicComputer struct {
	client anthropic.Client
	model  string
	opts   ComputerUseOptions
	// newTool is set for the models of computer_20251124.
	newTool bool

	messages []anthropic.BetaMessageParam
	// mouse is where the latest action left the mouse, for the actions
	// that take no coordinate.
	mouse Point
}

func newAnthropicComputer(cfg Config, model string, hc *http.Client, opts ComputerUseOptions) *anthropicComputer {
	return &anthropicComputer{
		client:  anthropic.NewClient(anthropicOptions(cfg, hc)...),
		model:   model,
		opts:    opts,
		newTool: anthropicNewComputerTool(model),
	}
}

var claudeVersion = regexp.MustCompile(`^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d+))?`)

// anthropicNewComputerTool reports whether model takes computer_20251124,
// as Claude Opus 4.5 and the models from 4.6 on do; older ones take
// computer_20250124.
func anthropicNewComputerTool(model string) bool {
	m := claudeVersion.FindStringSubmatch(model)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if minor >= 100 {
		// A date, as in claude-sonnet-4-20250514: version 4.0.
		minor = 0
	}
	switch {
	case major != 4:
		return major > 4
	case minor >= 6:
		return true
	}
	return minor == 5 && strings.HasPrefix(model, "claude-opus-")
}

func (b *anthropicComputer) space() Size { return b.opts.Screen }

func (b *anthropicComputer) apiError(err error) (int, string, bool) {
	return (&anthropicBackend{}).apiError(err)
}

func (b *anthropicComputer) step(ctx context.Context, turn *ComputerTurn, calls []computerCall) (*ComputerStep, []computerCall, error) {
	var blocks []anthropic.BetaContentBlockParamUnion
	image := func() anthropic.BetaContentBlockParamUnion {
		return anthropic.NewBetaImageBlock(anthropic.BetaBase64ImageSourceParam{
			Data:      base64.StdEncoding.EncodeToString(turn.Screenshot),
			MediaType: anthropic.BetaBase64ImageSourceMediaTypeImagePNG,
		})
	}
	for i, c := range calls {
		result := anthropic.BetaToolResultBlockParam{ToolUseID: c.id}
		if out := c.outcome(turn); out != "" {
			result.IsError = anthropic.Bool(true)
			result.Content = append(result.Content, anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: out}})
		}
		// The screen after all the actions goes with the last call; the
		// ones before it add nothing.
		if i == len(calls)-1 {
			img := image().OfImage
			result.Content = append(result.Content, anthropic.BetaToolResultBlockParamContentUnion{OfImage: img})
			if turn.URL != "" {
				result.Content = append(result.Content, anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: "Current URL: " + turn.URL}})
			}
		} else if len(result.Content) == 0 {
			result.Content = append(result.Content, anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: "Done."}})
		}
		blocks = append(blocks, anthropic.BetaContentBlockParamUnion{OfToolResult: &result})
	}
	if turn.Text != "" {
		blocks = append(blocks, anthropic.NewBetaTextBlock(turn.Text))
	}
	if len(calls) == 0 && len(turn.Screenshot) > 0 {
		blocks = append(blocks, image())
		if turn.URL != "" {
			blocks = append(blocks, anthropic.NewBetaTextBlock("Current URL: "+turn.URL))
		}
	}
	messages := append(slices.Clone(b.messages), anthropic.BetaMessageParam{Role: anthropic.BetaMessageParamRoleUser, Content: blocks})
	messages = keepLatestAnthropicScreenshots(messages, b.opts.KeepScreenshots)

	params := anthropic.BetaMessageNewParams{
		Model:     b.model,
		MaxTokens: anthropicDefaultMaxTokens,
		Messages:  messages,
	}
	if b.opts.MaxOutputTokens > 0 {
		params.MaxTokens = int64(b.opts.MaxOutputTokens)
	}
	if b.opts.System != "" {
		params.System = []anthropic.BetaTextBlockParam{{Text: b.opts.System}}
	}
	w, h := int64(b.opts.Screen.Width), int64(b.opts.Screen.Height)
	if b.newTool {
		params.Tools = []anthropic.BetaToolUnionParam{{OfComputerUseTool20251124: &anthropic.BetaToolComputerUse20251124Param{DisplayWidthPx: w, DisplayHeightPx: h}}}
		params.Betas = []anthropic.AnthropicBeta{anthropic.AnthropicBetaComputerUse2025_11_24}
	} else {
		params.Tools = []anthropic.BetaToolUnionParam{{OfComputerUseTool20250124: &anthropic.BetaToolComputerUse20250124Param{DisplayWidthPx: w, DisplayHeightPx: h}}}
		params.Betas = []anthropic.AnthropicBeta{anthropic.AnthropicBetaComputerUse2025_01_24}
	}

	msg, err := b.client.Beta.Messages.New(ctx, params)
	if err != nil {
		return nil, nil, err
	}
	if msg.StopReason == anthropic.BetaStopReasonRefusal {
		return nil, nil, fmt.Errorf("%w: the model refused", ErrInvalidOutput)
	}
	step := &ComputerStep{FinishReason: string(msg.StopReason)}
	var texts, reasoning []string
	var next []computerCall
	mouse := b.mouse
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			texts = append(texts, block.Text)
		case "thinking":
			reasoning = append(reasoning, block.Thinking)
		case "tool_use":
			call := computerCall{id: block.ID, name: block.Name, first: len(step.Actions)}
			if block.Name != "computer" {
				call.unsupported = fmt.Sprintf("There is no tool %q.", block.Name)
				next = append(next, call)
				continue
			}
			action, err := anthropicComputerAction(block.Input, mouse)
			if err != nil {
				call.unsupported = err.Error()
			} else {
				call.n = 1
				step.Actions = append(step.Actions, action)
				if pointer(action.Type) {
					mouse = Point{action.X, action.Y}
				} else if action.Type == ActionDrag {
					mouse = action.Path[len(action.Path)-1]
				}
			}
			next = append(next, call)
		}
	}
	step.Text = strings.Join(texts, "\n")
	step.Reasoning = strings.Join(reasoning, "\n")
	u := msg.Usage
	step.Usage = Usage{
		InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:      u.OutputTokens,
		ReasoningTokens:   u.OutputTokensDetails.ThinkingTokens,
		CachedInputTokens: u.CacheReadInputTokens,
	}
	b.messages = append(messages, msg.ToParam())
	b.mouse = mouse
	return step, next, nil
}

// pointer reports whether an action of type t happens at its X, Y.
func pointer(t ComputerActionType) bool {
	switch t {
	case ActionClick, ActionDoubleClick, ActionTripleClick, ActionMove, ActionMouseDown, ActionMouseUp, ActionScroll:
		return true
	}
	return false
}

// anthropicInput is the input of Anthropic's computer tool.
type anthropicInput struct {
	Action          string    `json:"action"`
	Coordinate      []float64 `json:"coordinate"`
	StartCoordinate []float64 `json:"start_coordinate"`
	Text            string    `json:"text"`
	ScrollDirection string    `json:"scroll_direction"`
	ScrollAmount    *float64  `json:"scroll_amount"`
	Duration        *float64  `json:"duration"`
}

// anthropicComputerAction maps an input of Anthropic's computer tool;
// mouse is where the mouse is, for actions without a coordinate.
func anthropicComputerAction(raw json.RawMessage, mouse Point) (ComputerAction, error) {
	var in anthropicInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return ComputerAction{}, fmt.Errorf("the input of the computer tool is not understood: %w", err)
	}
	at := func(c []float64) (Point, error) {
		if c == nil {
			return mouse, nil
		}
		if len(c) != 2 {
			return Point{}, fmt.Errorf("the coordinate of %s must be [x, y]", in.Action)
		}
		return Point{int(math.Round(c[0])), int(math.Round(c[1]))}, nil
	}
	p, err := at(in.Coordinate)
	if err != nil {
		return ComputerAction{}, err
	}
	var modifiers []string
	if in.Text != "" {
		modifiers = domKeys(splitChord(in.Text))
	}
	duration := func() time.Duration {
		if in.Duration == nil || *in.Duration < 0 {
			return time.Second
		}
		return min(time.Duration(*in.Duration*float64(time.Second)), anthropicMaxDuration)
	}
	switch in.Action {
	case "left_click", "right_click", "middle_click":
		return ComputerAction{Type: ActionClick, X: p.X, Y: p.Y, Button: strings.TrimSuffix(in.Action, "_click"), Keys: modifiers}, nil
	case "double_click":
		return ComputerAction{Type: ActionDoubleClick, X: p.X, Y: p.Y, Keys: modifiers}, nil
	case "triple_click":
		return ComputerAction{Type: ActionTripleClick, X: p.X, Y: p.Y, Keys: modifiers}, nil
	case "mouse_move":
		return ComputerAction{Type: ActionMove, X: p.X, Y: p.Y}, nil
	case "left_mouse_down":
		return ComputerAction{Type: ActionMouseDown, X: p.X, Y: p.Y}, nil
	case "left_mouse_up":
		return ComputerAction{Type: ActionMouseUp, X: p.X, Y: p.Y}, nil
	case "left_click_drag":
		start, err := at(in.StartCoordinate)
		if err != nil {
			return ComputerAction{}, err
		}
		return ComputerAction{Type: ActionDrag, Path: []Point{start, p}}, nil
	case "scroll":
		amount := 3.0
		if in.ScrollAmount != nil {
			amount = *in.ScrollAmount
		}
		d := int(math.Round(amount * anthropicScrollStep))
		a := ComputerAction{Type: ActionScroll, X: p.X, Y: p.Y, Keys: modifiers}
		switch in.ScrollDirection {
		case "up":
			a.ScrollY = -d
		case "down":
			a.ScrollY = d
		case "left":
			a.ScrollX = -d
		case "right":
			a.ScrollX = d
		default:
			return ComputerAction{}, fmt.Errorf("unknown scroll_direction %q: want up, down, left or right", in.ScrollDirection)
		}
		return a, nil
	case "type":
		return ComputerAction{Type: ActionType, Text: in.Text}, nil
	case "key":
		if len(modifiers) == 0 {
			return ComputerAction{}, fmt.Errorf("the key action needs the keys in text")
		}
		return ComputerAction{Type: ActionKeypress, Keys: modifiers}, nil
	case "hold_key":
		if len(modifiers) == 0 {
			return ComputerAction{}, fmt.Errorf("the hold_key action needs the keys in text")
		}
		return ComputerAction{Type: ActionHoldKey, Keys: modifiers, Duration: duration()}, nil
	case "wait":
		return ComputerAction{Type: ActionWait, Duration: duration()}, nil
	case "screenshot", "cursor_position":
		return ComputerAction{Type: ActionScreenshot}, nil
	}
	return ComputerAction{}, fmt.Errorf("unsupported action %q", in.Action)
}

// keepLatestAnthropicScreenshots returns messages with the images of all
// but the latest keep user messages that carry any replaced by a note.
func keepLatestAnthropicScreenshots(messages []anthropic.BetaMessageParam, keep int) []anthropic.BetaMessageParam {
	seen := 0
	for i := len(messages) - 1; i >= 0; i-- {
		m := messages[i]
		if m.Role != anthropic.BetaMessageParamRoleUser || !anthropicHasImage(m) {
			continue
		}
		seen++
		if seen <= keep {
			continue
		}
		blocks := slices.Clone(m.Content)
		for j, b := range blocks {
			switch {
			case b.OfImage != nil:
				blocks[j] = anthropic.NewBetaTextBlock(omittedScreenshot)
			case b.OfToolResult != nil:
				r := *b.OfToolResult
				r.Content = slices.Clone(r.Content)
				for k, c := range r.Content {
					if c.OfImage != nil {
						r.Content[k] = anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: omittedScreenshot}}
					}
				}
				blocks[j] = anthropic.BetaContentBlockParamUnion{OfToolResult: &r}
			}
		}
		messages[i].Content = blocks
	}
	return messages
}

func anthropicHasImage(m anthropic.BetaMessageParam) bool {
	for _, b := range m.Content {
		if b.OfImage != nil {
			return true
		}
		if b.OfToolResult != nil {
			for _, c := range b.OfToolResult.Content {
				if c.OfImage != nil {
					return true
				}
			}
		}
	}
	return false
}
