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

// Package cache is the contract of the server-side cache: the setting a
// call runs with, the report it answers with (data.metadata.cache), the
// wire of the API's cache endpoints, and the one rule that decides when an
// entry is served. The key is made where the engine runs (engine/cached);
// the entries live in the API's store (package store), per project.
package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// Status says whether the cache served a result.
type Status string

// Statuses, as in the client library's spec.
const (
	// StatusHit is a cached result, served without inference.
	StatusHit Status = "HIT"
	// StatusMiss is a computed result; MissReason says why.
	StatusMiss Status = "MISS"
	// StatusDisabled is a call that made no lookup.
	StatusDisabled Status = "DISABLED"
)

// Reasons of a MISS.
const (
	// MissNotCached: no entry under the key.
	MissNotCached = "not_cached"
	// MissBelowThreshold: an entry exists, but the key has not yet been
	// seen threshold times before this call.
	MissBelowThreshold = "below_threshold"
	// MissReplayFailed: the entry's actions did not replay on the page;
	// the call ran live and its result replaced the entry.
	MissReplayFailed = "replay_failed"
	// MissInvalidEntry: the entry could not be used (an older format, a
	// value no longer valid against the schema).
	MissInvalidEntry = "invalid_entry"
	// MissStoreUnavailable: the store did not answer in time; the call
	// ran live.
	MissStoreUnavailable = "store_unavailable"
)

// Bounds and defaults.
const (
	// DefaultThreshold is the threshold of a call that names none: the
	// second identical call hits.
	DefaultThreshold = 1
	// MaxThreshold bounds a threshold.
	MaxThreshold = 1000
	// MaxEntryBytes bounds one entry, as JSON.
	MaxEntryBytes = 1 << 20
	// MaxBodyBytes bounds a request to the cache endpoints: an entry and
	// its envelope.
	MaxBodyBytes = MaxEntryBytes + 64<<10
	// DefaultEntryTTL is how long an entry is kept after its last write.
	DefaultEntryTTL = 7 * 24 * time.Hour
	// CountTTL is how long a key's count lives after its first lookup.
	CountTTL = 24 * time.Hour
	// StoreTimeout bounds one call to the store from where the engine
	// runs; past it the call runs live (MissStoreUnavailable).
	StoreTimeout = 2 * time.Second
)

// Paths of the cache endpoints. The /v1 pair takes the project key (the
// client library's local handles); the /runner/v1 pair, on the API's
// runner listener, takes a runner's session token, and the project is the
// session's namespace.
const (
	PathGet       = "/v1/cache/get"
	PathSet       = "/v1/cache/set"
	RunnerPathGet = "/runner/v1/cache/get"
	RunnerPathSet = "/runner/v1/cache/set"
)

// HeaderBypass is the header that, "true", makes a /v1 call skip the
// cache: no lookup, no write, status DISABLED.
const HeaderBypass = "x-cache-bypass"

// Setting is the cache setting a call runs with, resolved by the API from
// the bypass header, the call's options.cache, the session's cache and the
// project's default. A nil *Setting is off (DISABLED).
type Setting struct {
	// Threshold is how many times a key must have been seen before this
	// call for its entry to be served: 1 to MaxThreshold.
	Threshold int64 `json:"threshold"`
}

// TokensSaved is what a hit did not spend.
type TokensSaved struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	TotalTokens  int64 `json:"totalTokens"`
}

// Report is data.metadata.cache of a result.
type Report struct {
	Status Status `json:"status"`
	// Count is how many times the key has been seen, this call included.
	Count int64 `json:"count,omitempty"`
	// Threshold is the threshold in effect.
	Threshold int64 `json:"threshold,omitempty"`
	// MissReason says why a MISS was not served.
	MissReason string `json:"missReason,omitempty"`
	// TokensSaved is set on a HIT.
	TokensSaved *TokensSaved `json:"tokensSaved,omitempty"`
}

// Disabled is the report of a call that made no lookup.
func Disabled() Report { return Report{Status: StatusDisabled} }

// Usage is what the call that made an entry spent, for TokensSaved.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// Saved is the TokensSaved of serving an entry made with u.
func (u Usage) Saved() *TokensSaved {
	return &TokensSaved{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
}

// Entry is what the store holds under a key: the value that made the
// entry (act's actions, observe's actions, extract's data, an agent run's
// steps) and what computing it spent.
type Entry struct {
	// Method is act, observe, extract or agent: a key is never read as
	// another method's.
	Method string          `json:"method"`
	Value  json.RawMessage `json:"value"`
	Usage  Usage           `json:"usage"`
}

// GetRequest is the body of a cache get.
type GetRequest struct {
	Key       string `json:"key"`
	Threshold int64  `json:"threshold"`
}

// GetResponse answers a get: the key's count (this get included), the
// threshold, and the entry when it is served.
type GetResponse struct {
	Count     int64  `json:"count"`
	Threshold int64  `json:"threshold"`
	Hit       bool   `json:"hit"`
	Entry     *Entry `json:"entry,omitempty"`
	// MissReason is set when Hit is false.
	MissReason string `json:"missReason,omitempty"`
}

// SetRequest is the body of a cache set.
type SetRequest struct {
	Key   string `json:"key"`
	Entry Entry  `json:"entry"`
}

// Store is the cache as seen from where the engine runs: the API's
// endpoints over HTTP (Client), or a store.Store in process (Local).
type Store interface {
	Get(ctx context.Context, req GetRequest) (*GetResponse, error)
	Set(ctx context.Context, req SetRequest) error
}

// keyRE is a key's form: a hex SHA-256, which engine/cached makes.
var keyRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// CheckKey says what is wrong with a key, or nil.
func CheckKey(key string) error {
	if !keyRE.MatchString(key) {
		return fmt.Errorf("key must be a hex SHA-256 (64 characters of 0-9a-f)")
	}
	return nil
}

// CheckThreshold says what is wrong with a threshold, or nil.
func CheckThreshold(t int64) error {
	if t < 1 || t > MaxThreshold {
		return fmt.Errorf("threshold must be from 1 to %d, not %d", MaxThreshold, t)
	}
	return nil
}

// Respond is the one rule of when an entry is served: the key has been
// seen threshold times before this call (count-1 >= threshold) and an
// entry exists. raw is the store's value under the key, nil when none.
func Respond(count, threshold int64, raw []byte) *GetResponse {
	resp := &GetResponse{Count: count, Threshold: threshold}
	if raw == nil {
		resp.MissReason = MissNotCached
		return resp
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil || len(e.Value) == 0 {
		resp.MissReason = MissInvalidEntry
		return resp
	}
	if count-1 < threshold {
		resp.MissReason = MissBelowThreshold
		return resp
	}
	resp.Hit, resp.Entry = true, &e
	return resp
}
