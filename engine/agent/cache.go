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

package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/engine"
)

// CacheEntryVersion is the version of the cache entry's format. Version 2
// keys a run by what it was asked, without its models (changing models
// keeps the cache), and is what the replayer reads.
const CacheEntryVersion = 2

// cacheNavForward is the step of going forward in history, which only the
// cua mode does.
const cacheNavForward = "navforward"

// cacheEntry is the JSON of CacheEntry.Entry (docs/agent.md describes it
// for the replayer). Variables stay as %name%: no value is ever recorded.
type cacheEntry struct {
	Version         int             `json:"version"`
	Instruction     string          `json:"instruction"`
	StartURL        string          `json:"startUrl"`
	Options         cacheOptions    `json:"options"`
	ConfigSignature configSignature `json:"configSignature"`
	VariableNames   []string        `json:"variableNames"`
	Steps           []cacheStep     `json:"steps"`
	Result          cacheResult     `json:"result"`
	Timestamp       string          `json:"timestamp"`
}

// cacheOptions are the options that change what a run does.
type cacheOptions struct {
	Mode            Mode `json:"mode"`
	MaxSteps        int  `json:"maxSteps"`
	HighlightCursor bool `json:"highlightCursor"`
	// UseSearch: the search tool was offered. Left out when false, so
	// that keys of runs without it stay what they were.
	UseSearch bool `json:"useSearch,omitempty"`
	// FrameID is the frame the engine is scoped to (engine.InFrame), whose
	// document the recorded selectors are in; absent for the whole page,
	// which keeps the keys of unscoped runs as they were.
	FrameID string `json:"frameId,omitempty"`
}

// configSignature names the agent's configuration without its secrets:
// the models by name (never their keys or headers) and the caller's system
// prompt.
type configSignature struct {
	Model          string `json:"model"`
	ExecutionModel string `json:"executionModel"`
	SystemPrompt   string `json:"systemPrompt"`
}

type cacheResult struct {
	Success   bool            `json:"success"`
	Message   string          `json:"message"`
	Completed bool            `json:"completed"`
	Output    json.RawMessage `json:"output,omitempty"`
}

// cacheStep is one deterministic step. Type says which fields are set:
//
//	act           instruction, actions (the engine's resolved actions)
//	fillForm      fields, actions
//	goto          url, waitUntil
//	scroll        deltaX, deltaY, anchor (viewport CSS pixels)
//	keys          method, text (type) or keys (press), times
//	wait          timeMs
//	navback       (nothing)
//	navforward    (nothing; cua mode)
//	clickAndHold  selector, durationMs
type cacheStep struct {
	Type        string          `json:"type"`
	Instruction string          `json:"instruction,omitempty"`
	Actions     []engine.Action `json:"actions,omitempty"`
	Fields      []string        `json:"fields,omitempty"`
	URL         string          `json:"url,omitempty"`
	WaitUntil   string          `json:"waitUntil,omitempty"`
	DeltaX      *float64        `json:"deltaX,omitempty"`
	DeltaY      *float64        `json:"deltaY,omitempty"`
	Anchor      *point          `json:"anchor,omitempty"`
	Method      string          `json:"method,omitempty"`
	Text        string          `json:"text,omitempty"`
	Keys        string          `json:"keys,omitempty"`
	Times       int             `json:"times,omitempty"`
	TimeMs      *int64          `json:"timeMs,omitempty"`
	Selector    string          `json:"selector,omitempty"`
	DurationMs  int64           `json:"durationMs,omitempty"`
}

type point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// cacheKeyInput is what the key hashes: what the run was asked, known at
// its start. The models are not in it: the steps a run recorded replay
// whichever model would have run them.
type cacheKeyInput struct {
	Version       int          `json:"version"`
	Instruction   string       `json:"instruction"`
	StartURL      string       `json:"startUrl"`
	Options       cacheOptions `json:"options"`
	SystemPrompt  string       `json:"systemPrompt"`
	VariableNames []string     `json:"variableNames"`
}

// keyInput is the key's input of a run with opts (checked) starting at
// startURL in frame.
func keyInput(opts Options, startURL, frame string) cacheKeyInput {
	return cacheKeyInput{
		Version:     CacheEntryVersion,
		Instruction: strings.TrimSpace(opts.Instruction),
		StartURL:    startURL,
		Options: cacheOptions{Mode: opts.Mode, MaxSteps: opts.MaxSteps, HighlightCursor: opts.HighlightCursor,
			UseSearch: opts.Search != nil, FrameID: frame},
		SystemPrompt:  opts.SystemPrompt,
		VariableNames: variableNames(opts.Variables),
	}
}

// cacheKey is the hex SHA-256 of the JSON of what produced a run.
func cacheKey(in cacheKeyInput) string {
	b, err := json.Marshal(in)
	if err != nil {
		// Strings, numbers and booleans only: it cannot fail.
		panic(fmt.Sprintf("agent: encoding the cache key: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// variableNames returns the sorted names of vars.
func variableNames(vars map[string]engine.Variable) []string {
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// buildCacheEntry assembles the entry of a finished run.
func (r *run) buildCacheEntry(res *Result) (*CacheEntry, error) {
	in := r.key
	steps := r.cached
	if steps == nil {
		steps = []cacheStep{}
	}
	entry := cacheEntry{
		Version:         CacheEntryVersion,
		Instruction:     in.Instruction,
		StartURL:        in.StartURL,
		Options:         in.Options,
		ConfigSignature: r.signature,
		VariableNames:   in.VariableNames,
		Steps:           steps,
		Result:          cacheResult{Success: res.Success, Message: res.Message, Completed: res.Completed, Output: res.Output},
		Timestamp:       r.now().UTC().Format(time.RFC3339),
	}
	b, err := json.Marshal(entry)
	if err != nil {
		return nil, fmt.Errorf("encoding the cache entry: %w", err)
	}
	return &CacheEntry{Key: cacheKey(in), Entry: b}, nil
}
