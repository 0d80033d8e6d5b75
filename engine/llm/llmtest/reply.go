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

package llmtest

import (
	"net/http"
	"time"
)

// Reply is one scripted answer of the Server. Build it with Text, JSON,
// ToolCalls, Computer or Status and refine it with the With methods, which
// return a copy.
type Reply struct {
	kind    replyKind
	body    string
	status  int
	message string
	calls   []ToolCall

	actions                   []ComputerAction
	reasoning                 string
	safetyCode, safetyMessage string

	usage      Usage
	retryAfter *time.Duration
	delay      time.Duration
	release    <-chan struct{}
}

type replyKind int

const (
	textReply replyKind = iota
	jsonReply
	statusReply
	toolCallsReply
	computerReply
)

// Usage is the token usage a reply reports, in the normalised terms of
// package llm: Input counts cached tokens too, Output counts reasoning too.
// The Server splits them the way each provider does on the wire.
type Usage struct {
	Input, Output, Reasoning, CachedInput int64
}

// Text answers with plain text.
func Text(text string) Reply { return Reply{kind: textReply, body: text} }

// JSON answers with a JSON document, as a model does under a schema: the
// message text for OpenAI and Google, and for Anthropic the input of the
// tool the request forced (or the text when it forced none).
func JSON(doc string) Reply { return Reply{kind: jsonReply, body: doc} }

// ToolCalls answers with calls of the request's tools, in each provider's
// format: OpenAI's tool_calls with finish_reason "tool_calls", Anthropic's
// tool_use blocks with stop_reason "tool_use", Google's functionCall parts
// with finishReason STOP. WithText adds the text the model wrote before
// the calls.
func ToolCalls(calls ...ToolCall) Reply {
	return Reply{kind: toolCallsReply, calls: calls}
}

// ToolCall is a scripted call of a tool.
type ToolCall struct {
	// ID is the call's id. Empty gives OpenAI "call_llmtest_<request>_<i>"
	// and Anthropic "toolu_llmtest_<request>_<i>", request counting the
	// Server's requests from 1 and i the calls of the reply from 0; Google
	// sends no id unless one is set.
	ID string
	// Name is the tool's name.
	Name string
	// Arguments is the JSON object of the arguments; empty is {}.
	Arguments string
	// Signature is Google's thoughtSignature of the call's part; other
	// providers ignore it.
	Signature []byte
}

// Call returns a call of the tool name with the JSON object arguments.
func Call(name, arguments string) ToolCall {
	return ToolCall{Name: name, Arguments: arguments}
}

// WithID sets the call's id.
func (c ToolCall) WithID(id string) ToolCall {
	c.ID = id
	return c
}

// WithSignature sets the call's Google thoughtSignature.
func (c ToolCall) WithSignature(sig []byte) ToolCall {
	c.Signature = sig
	return c
}

// WithText sets the text of a ToolCalls or Computer reply, written before
// the calls.
func (r Reply) WithText(text string) Reply {
	r.body = text
	return r
}

// Status answers with an HTTP error in the provider's error format.
func Status(code int) Reply { return Reply{kind: statusReply, status: code} }

// WithUsage sets the input and output token counts.
func (r Reply) WithUsage(input, output int64) Reply {
	r.usage.Input, r.usage.Output = input, output
	return r
}

// WithReasoningTokens sets how many of the output tokens were reasoning.
func (r Reply) WithReasoningTokens(n int64) Reply {
	r.usage.Reasoning = n
	return r
}

// WithCachedInputTokens sets how many of the input tokens came from the
// prompt cache.
func (r Reply) WithCachedInputTokens(n int64) Reply {
	r.usage.CachedInput = n
	return r
}

// WithRetryAfter sets the Retry-After header of a Status reply, in whole
// seconds rounded up.
func (r Reply) WithRetryAfter(d time.Duration) Reply {
	r.retryAfter = &d
	return r
}

// WithMessage sets the error message of a Status reply.
func (r Reply) WithMessage(msg string) Reply {
	r.message = msg
	return r
}

// WithDelay makes the Server wait before answering, or until the client
// gives up.
func (r Reply) WithDelay(d time.Duration) Reply {
	r.delay = d
	return r
}

// WithRelease makes the Server hold the answer until release is closed, or
// the client gives up: a test decides when the model answers, to see what
// happens meanwhile.
func (r Reply) WithRelease(release <-chan struct{}) Reply {
	r.release = release
	return r
}

// errorMessage is the message of a Status reply.
func (r Reply) errorMessage() string {
	if r.message != "" {
		return r.message
	}
	return "llmtest: scripted " + http.StatusText(r.status)
}
