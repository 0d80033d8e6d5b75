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
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// openAIComputerWait is how long OpenAI's wait action waits; the action
// carries no duration.
const openAIComputerWait = 2 * time.Second

// openAIComputer runs OpenAI's computer tool on the Responses API. The
// conversation stays on OpenAI's side: each request names the previous
// response and adds the outcome of its computer calls. That needs OpenAI
// to store responses, its default: an organisation with zero data
// retention cannot use it.
//
// computer-use-preview takes the computer_use_preview tool, with the
// display size and the environment; GPT-5 models take the computer tool,
// which batches actions in one call. Both answer a call with a screenshot.
type openAIComputer struct {
	responses responses.ResponseService
	model     string
	opts      ComputerUseOptions
	// previous is the id of the latest response.
	previous string
}

func newOpenAIComputer(cfg Config, model string, hc *http.Client, opts ComputerUseOptions) *openAIComputer {
	o, _ := openAIOptions(cfg, hc)
	return &openAIComputer{responses: responses.NewResponseService(o...), model: model, opts: opts}
}

// preview reports whether the model takes computer_use_preview rather than
// the computer tool of the GPT-5 models.
func (b *openAIComputer) preview() bool {
	return !strings.HasPrefix(b.model, "gpt-5")
}

func (b *openAIComputer) space() Size { return b.opts.Screen }

func (b *openAIComputer) apiError(err error) (int, string, bool) {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return 0, "", false
	}
	return apiErr.StatusCode, apiErr.Message, true
}

func (b *openAIComputer) step(ctx context.Context, turn *ComputerTurn, calls []computerCall) (*ComputerStep, []computerCall, error) {
	params := responses.ResponseNewParams{
		Model:      b.model,
		Truncation: responses.ResponseNewParamsTruncationAuto,
	}
	if b.preview() {
		params.Tools = []responses.ToolUnionParam{{OfComputerUsePreview: &responses.ComputerUsePreviewToolParam{
			DisplayWidth:  int64(b.opts.Screen.Width),
			DisplayHeight: int64(b.opts.Screen.Height),
			Environment:   responses.ComputerUsePreviewToolEnvironmentBrowser,
		}}}
	} else {
		params.Tools = []responses.ToolUnionParam{{OfComputer: &responses.ComputerToolParam{}}}
	}
	if b.opts.System != "" {
		// Instructions do not carry over from the previous response.
		params.Instructions = openai.String(b.opts.System)
	}
	if b.opts.MaxOutputTokens > 0 {
		params.MaxOutputTokens = openai.Int(int64(b.opts.MaxOutputTokens))
	}
	if b.previous != "" {
		params.PreviousResponseID = openai.String(b.previous)
	}
	var input responses.ResponseInputParam
	shot := ""
	if len(turn.Screenshot) > 0 {
		shot = "data:image/png;base64," + base64.StdEncoding.EncodeToString(turn.Screenshot)
	}
	for _, c := range calls {
		out := &responses.ResponseInputItemComputerCallOutputParam{
			CallID: c.id,
			Output: responses.ResponseComputerToolCallOutputScreenshotParam{ImageURL: openai.String(shot)},
		}
		if turn.URL != "" && b.preview() {
			out.Output.SetExtraFields(map[string]any{"current_url": turn.URL})
		}
		for _, sc := range c.checks {
			out.AcknowledgedSafetyChecks = append(out.AcknowledgedSafetyChecks, responses.ResponseInputItemComputerCallOutputAcknowledgedSafetyCheckParam{
				ID: sc.ID, Code: openai.String(sc.Code), Message: openai.String(sc.Message),
			})
		}
		input = append(input, responses.ResponseInputItemUnionParam{OfComputerCallOutput: out})
	}
	// The computer call output has no error field: a failure is told in
	// words.
	var content responses.ResponseInputMessageContentListParam
	if note := failureNote(turn, calls); note != "" {
		content = append(content, responses.ResponseInputContentParamOfInputText(note))
	}
	if turn.Text != "" {
		content = append(content, responses.ResponseInputContentParamOfInputText(turn.Text))
	}
	if len(calls) == 0 && shot != "" {
		img := responses.ResponseInputImageParam{ImageURL: openai.String(shot), Detail: responses.ResponseInputImageDetailAuto}
		content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &img})
		if turn.URL != "" {
			content = append(content, responses.ResponseInputContentParamOfInputText("Current URL: "+turn.URL))
		}
	}
	if len(content) > 0 {
		input = append(input, responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser))
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}

	resp, err := b.responses.New(ctx, params)
	if err != nil {
		return nil, nil, err
	}
	if resp.Status == responses.ResponseStatusFailed {
		return nil, nil, fmt.Errorf("%w: the response failed: %s", ErrInvalidOutput, resp.Error.Message)
	}
	step := &ComputerStep{FinishReason: string(resp.Status)}
	if resp.IncompleteDetails.Reason != "" {
		step.FinishReason += ": " + resp.IncompleteDetails.Reason
	}
	var texts, reasoning []string
	var next []computerCall
	for _, item := range resp.Output {
		switch item.Type {
		case "message":
			for _, c := range item.AsMessage().Content {
				switch c.Type {
				case "output_text":
					texts = append(texts, c.Text)
				case "refusal":
					texts = append(texts, c.Refusal)
				}
			}
		case "reasoning":
			for _, s := range item.AsReasoning().Summary {
				reasoning = append(reasoning, s.Text)
			}
		case "computer_call":
			cc := item.AsComputerCall()
			call := computerCall{id: cc.CallID, name: "computer", first: len(step.Actions)}
			for _, sc := range cc.PendingSafetyChecks {
				call.checks = append(call.checks, SafetyCheck{ID: sc.ID, Code: sc.Code, Message: sc.Message})
			}
			var actions []ComputerAction
			var unsupported []string
			add := func(a responses.ComputerActionUnion) {
				if action, ok := openAIComputerAction(a); ok {
					actions = append(actions, action)
				} else {
					unsupported = append(unsupported, a.Type)
				}
			}
			if cc.Action.Type != "" {
				add(responses.ComputerActionUnion{
					Type: cc.Action.Type, X: cc.Action.X, Y: cc.Action.Y, Button: cc.Action.Button, Keys: cc.Action.Keys,
					ScrollX: cc.Action.ScrollX, ScrollY: cc.Action.ScrollY, Text: cc.Action.Text, Path: dragPath(cc.Action.Path),
				})
			}
			for _, a := range cc.Actions {
				add(a)
			}
			if len(unsupported) > 0 {
				// The call is answered with the error and none of its
				// actions run: half a batch would surprise the model.
				call.unsupported = fmt.Sprintf("Unsupported action %s: nothing was done.", strings.Join(unsupported, ", "))
				actions = nil
			}
			call.n = len(actions)
			step.Actions = append(step.Actions, actions...)
			next = append(next, call)
		}
	}
	step.Text = strings.Join(texts, "\n")
	step.Reasoning = strings.Join(reasoning, "\n")
	u := resp.Usage
	step.Usage = Usage{
		InputTokens:       u.InputTokens,
		OutputTokens:      u.OutputTokens,
		ReasoningTokens:   u.OutputTokensDetails.ReasoningTokens,
		CachedInputTokens: u.InputTokensDetails.CachedTokens,
	}
	b.previous = resp.ID
	return step, next, nil
}

// dragPath converts the path of a single action to the batched actions'
// type.
func dragPath(path []responses.ResponseComputerToolCallActionDragPath) []responses.ComputerActionDragPath {
	out := make([]responses.ComputerActionDragPath, len(path))
	for i, p := range path {
		out[i] = responses.ComputerActionDragPath{X: p.X, Y: p.Y}
	}
	return out
}

// openAIComputerAction maps an action of OpenAI's computer tool.
func openAIComputerAction(a responses.ComputerActionUnion) (ComputerAction, bool) {
	x, y := int(a.X), int(a.Y)
	switch a.Type {
	case "click":
		button := a.Button
		switch button {
		case "", "left", "right", "back", "forward":
		case "wheel":
			button = "middle"
		default:
			return ComputerAction{}, false
		}
		if button == "" {
			button = "left"
		}
		return ComputerAction{Type: ActionClick, X: x, Y: y, Button: button}, true
	case "double_click":
		return ComputerAction{Type: ActionDoubleClick, X: x, Y: y}, true
	case "move":
		return ComputerAction{Type: ActionMove, X: x, Y: y}, true
	case "scroll":
		return ComputerAction{Type: ActionScroll, X: x, Y: y, ScrollX: int(a.ScrollX), ScrollY: int(a.ScrollY)}, true
	case "type":
		return ComputerAction{Type: ActionType, Text: a.Text}, true
	case "keypress":
		return ComputerAction{Type: ActionKeypress, Keys: domKeys(a.Keys)}, len(a.Keys) > 0
	case "drag":
		if len(a.Path) < 2 {
			return ComputerAction{}, false
		}
		path := make([]Point, len(a.Path))
		for i, p := range a.Path {
			path[i] = Point{int(p.X), int(p.Y)}
		}
		return ComputerAction{Type: ActionDrag, Path: path}, true
	case "wait":
		return ComputerAction{Type: ActionWait, Duration: openAIComputerWait}, true
	case "screenshot":
		return ComputerAction{Type: ActionScreenshot}, true
	}
	return ComputerAction{}, false
}
