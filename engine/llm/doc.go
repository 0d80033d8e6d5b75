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
// The package owns retries (429 and 5xx, exponential backoff, Retry-After
// honoured) and the per-call timeout, so that all providers behave alike;
// the SDKs' own retries are turned off. It reads no environment variable:
// credentials, endpoints and headers come from Config alone, so no ambient
// key can travel to an endpoint a caller chose.
//
// Package llmtest provides a scripted model server that speaks the three wire
// protocols, for tests.
package llm
