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

// Package llm is the one door through which the browser engine talks to
// language models.
//
// A [Client] is built by [New] from a [Config] whose Model names the provider
// and the model as "provider/model":
//
//	openai/gpt-4.1-mini        OpenAI, or any OpenAI-compatible server
//	                           (vLLM, Ollama, LiteLLM) through Config.BaseURL
//	anthropic/claude-sonnet-4-5
//	google/gemini-2.5-flash    the Gemini API
//
// Each provider is reached through its official Go SDK: Chat Completions of
// github.com/openai/openai-go/v3 (the protocol OpenAI-compatible servers
// speak), Messages of github.com/anthropics/anthropic-sdk-go, and
// generateContent of google.golang.org/genai.
//
// Generate sends one request and returns the model's answer with its token
// usage. With Request.Schema set, the answer is a JSON document meant to be
// valid against that schema, obtained through the provider's native
// mechanism: a json_schema response format for OpenAI, strict when asked
// (see [AdaptSchemaForStrict]), a forced tool call for Anthropic, and a JSON
// response schema for Google.
//
// With Request.Tools set, the model may call functions instead of, or
// besides, answering in words: Response.ToolCalls lists the calls, and the
// caller sends the conversation back with an assistant message holding the
// calls ([ToolCallPart]) and a user message holding their outcomes
// ([ToolResultPart]). Each provider gets its native form: Chat Completions
// function tools, tool_calls and role "tool" messages (a tool result's
// image follows them in a user message, since tool messages take text
// only); Anthropic tool_use and tool_result blocks (the image inside the
// result); Gemini function declarations, functionCall and functionResponse
// parts (the image as inlineData after the responses). Gemini gives no call
// ids: the client numbers the calls of a conversation "call_0", "call_1",
// ..., keeps those ids to itself and sends the responses in the order of
// the calls, which is how Gemini matches them. Request validation refuses
// what a provider would: bad or repeated tool names, Tools with Schema, a
// result that answers no call of the assistant message right before it, a
// call left unanswered.
//
// [NewComputerUse] runs a provider's own computer-use loop (the agent's cua
// mode): OpenAI's computer tool on the Responses API (computer_use_preview
// for computer-use-preview, the computer tool for GPT-5 models; the
// conversation stays on OpenAI's side through previous_response_id, with
// truncation "auto"), Anthropic's computer tool (computer_20250124, or
// computer_20251124 for Claude Opus 4.5 and the models from 4.6 on, with
// their beta headers), and Gemini's computer use tool with its predefined
// functions. Each [ComputerUse.Step] takes the outcome of the previous
// actions (a screenshot, the URL, an error, acknowledged safety checks)
// and returns the model's next actions as [ComputerAction] values in the
// model's coordinate space ([ComputerUse.Space]: the screen for OpenAI and
// Anthropic, 0..999 for Gemini), which [ComputerAction.Scale] maps to the
// viewport. Key names are DOM key names whatever the provider wrote. The
// conversation is kept inside the ComputerUse, only its latest screenshots
// verbatim.
//
// The package owns retries (429 and 5xx, exponential backoff, Retry-After
// honoured) and the per-call timeout, so that all providers behave alike;
// the SDKs' own retries are turned off. It reads no environment variable:
// credentials, endpoints and headers come from Config alone, so no ambient
// key can travel to an endpoint a caller chose.
//
// Package llmtest provides a scripted model server that speaks the three wire
// protocols, tool calls and computer use included, for tests.
package llm
