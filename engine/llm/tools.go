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
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Tool is a function the model may call (Request.Tools). The model answers
// with ToolCalls; the caller runs them and sends each outcome back as a
// ToolResultPart in the next user message.
type Tool struct {
	// Name identifies the tool: [a-zA-Z0-9_-], at most 64 characters.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Parameters is the JSON Schema of the arguments: an object schema.
	// Nil means no arguments.
	Parameters map[string]any
}

// ToolChoice says whether the model must call a tool.
type ToolChoice string

const (
	// ToolChoiceAuto lets the model answer with text or tool calls; the
	// default.
	ToolChoiceAuto ToolChoice = "auto"
	// ToolChoiceRequired makes the model call at least one tool.
	ToolChoiceRequired ToolChoice = "required"
	// ToolChoiceNone forbids tool calls although Tools are listed.
	ToolChoiceNone ToolChoice = "none"
)

// ToolCall is a call the model made: a part of an assistant message.
type ToolCall struct {
	// ID is the provider's id of the call, which its result names. Google
	// gives none; the client makes one up.
	ID string
	// Name is the tool's name.
	Name string
	// Arguments is the JSON object of the arguments, as the model wrote
	// it: it may not be valid against the tool's Parameters, and from an
	// OpenAI-compatible server it may not even be JSON. Sent back, what is
	// not a JSON object goes as an empty object to the providers whose
	// wire takes only objects (Anthropic, Google).
	Arguments json.RawMessage
	// Signature is opaque state the provider attached to the call (Gemini's
	// thought signature, which Gemini 3 requires back with the call). Keep
	// the ToolCall as returned when sending the conversation back.
	Signature []byte
}

// ToolResult is the outcome of a ToolCall: a part of the user message that
// follows the assistant message that made the call.
type ToolResult struct {
	// CallID is the ToolCall's ID.
	CallID string
	// Name is the ToolCall's Name (Google matches results by name).
	Name string
	// Text is the outcome, for the model to read.
	Text string
	// Image, when set, is a PNG the tool produced, such as a screenshot.
	// Providers that cannot put an image in a tool result get it in a
	// user message right after.
	Image []byte
	// IsError marks a tool that failed; Text says why.
	IsError bool
}

// ToolCallPart returns an assistant message part that records a call the
// model made, to send the conversation back.
func ToolCallPart(call ToolCall) Part { return Part{ToolCall: &call} }

// ToolResultPart returns a user message part with a tool's outcome.
func ToolResultPart(result ToolResult) Part { return Part{ToolResult: &result} }

// toolName is what every provider accepts as a function name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// validateTools checks Request.Tools and Request.ToolChoice.
func validateTools(req *Request) error {
	switch req.ToolChoice {
	case "", ToolChoiceAuto, ToolChoiceNone:
	case ToolChoiceRequired:
		if len(req.Tools) == 0 {
			return fmt.Errorf("%w: ToolChoice %q without Tools", ErrInvalidRequest, req.ToolChoice)
		}
	default:
		return fmt.Errorf("%w: ToolChoice %q is not one of %q, %q, %q", ErrInvalidRequest, req.ToolChoice, ToolChoiceAuto, ToolChoiceRequired, ToolChoiceNone)
	}
	if len(req.Tools) > 0 && req.Schema != nil {
		return fmt.Errorf("%w: Tools and Schema cannot be set together", ErrInvalidRequest)
	}
	if len(req.Tools) > maxTools {
		return fmt.Errorf("%w: %d Tools, more than the %d providers accept", ErrInvalidRequest, len(req.Tools), maxTools)
	}
	seen := make(map[string]bool, len(req.Tools))
	for i, t := range req.Tools {
		if !toolName.MatchString(t.Name) {
			return fmt.Errorf("%w: Tools[%d].Name %q: want 1 to 64 of [a-zA-Z0-9_-]", ErrInvalidRequest, i, t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("%w: Tools[%d].Name %q is not unique", ErrInvalidRequest, i, t.Name)
		}
		seen[t.Name] = true
		if t.Parameters != nil && !isObjectSchema(t.Parameters) {
			return fmt.Errorf("%w: Tools[%d] (%s).Parameters is not an object schema", ErrInvalidRequest, i, t.Name)
		}
	}
	return nil
}

// maxTools is the most tools a request may offer: OpenAI's limit, the
// lowest of the providers'.
const maxTools = 128

// validateToolParts checks the tool calls and results of the conversation:
// calls only from the assistant, results only from the user, each result
// answering a call of the assistant message right before it, and every
// call answered in the message right after it, as OpenAI and Anthropic
// require. It fills in a result's Name from its call.
func validateToolParts(req *Request, msgs []Message) error {
	uses := false
	// calls are the calls of the previous assistant message, by ID.
	var calls map[string]*ToolCall
	for i := range msgs {
		m := &msgs[i]
		answered := map[string]bool{}
		var current map[string]*ToolCall
		for j := range m.Parts {
			p := &m.Parts[j]
			switch {
			case p.ToolCall != nil:
				uses = true
				if m.Role != RoleAssistant {
					return fmt.Errorf("%w: message %d part %d: only assistant messages may carry a ToolCall", ErrInvalidRequest, i, j)
				}
				c := *p.ToolCall
				if c.ID == "" {
					return fmt.Errorf("%w: message %d part %d: ToolCall.ID is empty", ErrInvalidRequest, i, j)
				}
				if !toolName.MatchString(c.Name) {
					return fmt.Errorf("%w: message %d part %d: ToolCall.Name %q: want 1 to 64 of [a-zA-Z0-9_-]", ErrInvalidRequest, i, j, c.Name)
				}
				if current[c.ID] != nil {
					return fmt.Errorf("%w: message %d part %d: ToolCall.ID %q is not unique in its message", ErrInvalidRequest, i, j, c.ID)
				}
				if current == nil {
					current = map[string]*ToolCall{}
				}
				current[c.ID] = &c
				p.ToolCall = &c
			case p.ToolResult != nil:
				uses = true
				if m.Role != RoleUser {
					return fmt.Errorf("%w: message %d part %d: only user messages may carry a ToolResult", ErrInvalidRequest, i, j)
				}
				r := *p.ToolResult
				call := calls[r.CallID]
				switch {
				case call == nil:
					return fmt.Errorf("%w: message %d part %d: ToolResult.CallID %q answers no ToolCall of the previous assistant message", ErrInvalidRequest, i, j, r.CallID)
				case answered[r.CallID]:
					return fmt.Errorf("%w: message %d part %d: ToolCall %q is answered twice", ErrInvalidRequest, i, j, r.CallID)
				case r.Name == "":
					r.Name = call.Name
				case r.Name != call.Name:
					return fmt.Errorf("%w: message %d part %d: ToolResult.Name %q differs from its call's %q", ErrInvalidRequest, i, j, r.Name, call.Name)
				}
				answered[r.CallID] = true
				p.ToolResult = &r
			}
		}
		for _, id := range sortedKeys(calls) {
			if !answered[id] {
				return fmt.Errorf("%w: message %d: ToolCall %q (%s) of the previous assistant message has no ToolResult", ErrInvalidRequest, i, id, calls[id].Name)
			}
		}
		calls = current
		if i == len(msgs)-1 && len(calls) > 0 {
			return fmt.Errorf("%w: the last message has tool calls: send their results", ErrInvalidRequest)
		}
	}
	if uses && len(req.Tools) == 0 {
		// Anthropic refuses tool_use and tool_result blocks without tools;
		// ToolChoiceNone keeps the model from calling them.
		return fmt.Errorf("%w: the conversation has tool calls but Tools is empty", ErrInvalidRequest)
	}
	return nil
}

// sortedKeys returns the keys of m in order, so that errors are stable.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// argumentsObject returns a call's arguments for a provider whose wire
// takes a JSON object: as they are when they are one, else an empty
// object, since a model may have written something else (OpenAI's
// arguments are free text) and the conversation must still go back.
func argumentsObject(b json.RawMessage) json.RawMessage {
	var v map[string]json.RawMessage
	if json.Unmarshal(b, &v) != nil || v == nil {
		return json.RawMessage("{}")
	}
	return b
}

// toolResultText is the text of a result for providers that mark errors
// only in words (OpenAI), or that need some text where the tool gave
// none.
func toolResultText(r *ToolResult) string {
	text := r.Text
	switch {
	case r.IsError && text == "":
		text = "Error."
	case r.IsError:
		text = "Error: " + text
	case text == "" && len(r.Image) > 0:
		text = "The image follows."
	}
	return text
}

// toolImageCaption introduces the image of a tool result sent apart from
// it.
func toolImageCaption(r *ToolResult) string {
	return fmt.Sprintf("Image returned by the %s tool (call %s):", r.Name, r.CallID)
}

// arguments returns a tool call's arguments as the model wrote them, or an
// empty object when it wrote none.
func arguments(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}
