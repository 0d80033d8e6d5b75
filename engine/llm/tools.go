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

import "encoding/json"

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
	// it: it may not be valid against the tool's Parameters.
	Arguments json.RawMessage
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
