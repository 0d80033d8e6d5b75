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

package client

// CacheStatus says whether the server-side cache served a result.
type CacheStatus string

// Cache statuses.
const (
	// CacheStatusHIT is a cached result, served without inference.
	CacheStatusHIT CacheStatus = "HIT"
	// CacheStatusMISS is a result computed because the cache had none to
	// serve.
	CacheStatusMISS CacheStatus = "MISS"
	// CacheStatusDISABLED is a result computed with no cache lookup: the
	// cache is off for the call, the call has a Locator or IgnoreLocators,
	// or the handle has no managed cache.
	CacheStatusDISABLED CacheStatus = "DISABLED"
)

// Action is one action on an element: what Observe proposes and Act
// performs.
type Action struct {
	// Selector locates the element: "xpath=/html/body/..." as the engine
	// reports it, or a CSS selector.
	Selector    string   `json:"selector"`
	Description string   `json:"description"`
	Method      string   `json:"method,omitempty"`
	Arguments   []string `json:"arguments,omitempty"`
}

// Metadata is what every act, observe and extract result says about how it
// was made.
type Metadata struct {
	Cache CacheMetadata
	// ActionID identifies the call: in the session's replay for a cloud
	// handle, in the instance's logs and traces for a local one.
	ActionID string
	// Usage is what the call's inference cost; all zero when none ran.
	Usage Usage
}

// CacheMetadata is the cache's part of Metadata.
type CacheMetadata struct {
	Status CacheStatus
	// Count is how many times the cache key was seen, this call included;
	// zero when the cache did not say.
	Count int
	// Threshold is the hit-count threshold in effect for the key.
	Threshold int
	// MissReason says why the cache did not serve the call; misses only.
	MissReason string
	// TokensSaved is what a hit saved; hits only.
	TokensSaved *TokensSaved
}

// TokensSaved is what a cache hit saved.
type TokensSaved struct {
	InputTokens  float64
	OutputTokens float64
	TotalTokens  float64
}

// Usage is what an operation's inference cost.
type Usage struct {
	InputTokens       float64
	OutputTokens      float64
	ReasoningTokens   float64
	CachedInputTokens float64
	InferenceTimeMs   float64
}

// ActResult is Act's result.
type ActResult struct {
	Data     ActData
	Metadata Metadata
}

// ActData is what Act did. Success false with a Message is an action that
// could not be done (no element fits, the element refused the input); an
// error is a call that could not run at all.
type ActData struct {
	ActionDescription string
	// Actions are the actions performed, variables as %name%.
	Actions []Action
	Message string
	Success bool
}

// ObserveResult is Observe's result: candidate actions, best first.
type ObserveResult struct {
	Data     []Action
	Metadata Metadata
}

// ExtractResult is Extract's result: Data is the extracted value, valid
// against the schema derived from T.
type ExtractResult[T any] struct {
	Data     T
	Metadata Metadata
}

// Metrics are an instance's counters, summed over its successful
// operations: <group><Measure> where group is act, extract, observe or
// total (the sum of the three).
type Metrics struct {
	ActPromptTokens          float64
	ActCompletionTokens      float64
	ActReasoningTokens       float64
	ActCachedInputTokens     float64
	ActInferenceTimeMs       float64
	ExtractPromptTokens      float64
	ExtractCompletionTokens  float64
	ExtractReasoningTokens   float64
	ExtractCachedInputTokens float64
	ExtractInferenceTimeMs   float64
	ObservePromptTokens      float64
	ObserveCompletionTokens  float64
	ObserveReasoningTokens   float64
	ObserveCachedInputTokens float64
	ObserveInferenceTimeMs   float64
	TotalPromptTokens        float64
	TotalCompletionTokens    float64
	TotalReasoningTokens     float64
	TotalCachedInputTokens   float64
	TotalInferenceTimeMs     float64
}
