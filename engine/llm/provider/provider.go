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

// Package provider names the model providers the engine calls: one list for
// the engine's clients (engine/llm), the manager's configuration and the
// scripted model server. It imports nothing, so that naming a provider
// links no SDK.
package provider

import "slices"

// The providers, by the prefix of a model name ("openai/gpt-4.1-mini").
const (
	// OpenAI is OpenAI's Chat Completions API, or any server that speaks
	// it (vLLM, Ollama, LiteLLM) at a base URL.
	OpenAI = "openai"
	// Anthropic is Anthropic's Messages API.
	Anthropic = "anthropic"
	// Google is the Gemini API.
	Google = "google"
)

// Names lists the providers, sorted for messages.
var Names = []string{Anthropic, Google, OpenAI}

// Known reports whether name is a provider.
func Known(name string) bool { return slices.Contains(Names, name) }
