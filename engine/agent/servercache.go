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
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/browserfleet/browserfleet/cache"
)

// cacheMethod is the cache entry's method of an agent run: a key is never
// read as another method's.
const cacheMethod = "agent"

// serverCache is one run's use of the server-side cache (Options.Cache):
// the lookup at the start, the write at the end, and the report. Store
// calls are bounded by cache.StoreTimeout each, and a store that fails
// never fails the run: it runs live, MISS store_unavailable.
type serverCache struct {
	r      *run
	on     bool
	hash   string
	report cache.Report
}

func newServerCache(r *run) *serverCache {
	o := r.opts
	c := &serverCache{r: r, report: cache.Disabled()}
	if o.ShouldCache && o.Cache != nil && o.CacheSetting != nil {
		c.on = true
		c.hash = cacheKey(r.key)
		c.report = cache.Report{Status: cache.StatusMiss, Threshold: o.CacheSetting.Threshold}
	}
	return c
}

// stored is an entry the cache served, decoded and checked.
type stored struct {
	entry cacheEntry
	// raw is the entry as stored, answered as the run's CacheEntry.
	raw   json.RawMessage
	usage cache.Usage
}

// lookup counts the run's key and returns the entry when the cache serves
// one that can be replayed; the report says what happened either way.
func (c *serverCache) lookup(ctx context.Context) *stored {
	if !c.on {
		return nil
	}
	entry, rep, err := cache.Lookup(ctx, c.r.opts.Cache, cache.GetRequest{Key: c.hash, Threshold: c.r.opts.CacheSetting.Threshold}, cacheMethod)
	c.report = rep
	if err != nil {
		c.r.log.Info("the agent cache did not answer; running live", "error", err)
		return nil
	}
	if entry == nil {
		return nil
	}
	s, err := c.decode(entry)
	if err != nil {
		c.r.log.Info("the agent cache's entry cannot be replayed; running live", "error", err)
		c.report.MissReason = cache.MissInvalidEntry
		return nil
	}
	return s
}

// decode reads a served entry, an agent run's (cache.Lookup checks the
// method): of this version, recorded for what this run is asked, with
// steps the replayer can run.
func (c *serverCache) decode(e *cache.Entry) (*stored, error) {
	s := &stored{raw: e.Value, usage: e.Usage}
	if err := json.Unmarshal(e.Value, &s.entry); err != nil {
		return nil, fmt.Errorf("decoding the entry: %w", err)
	}
	en := &s.entry
	if en.Version != CacheEntryVersion {
		return nil, fmt.Errorf("the entry is of version %d, not %d", en.Version, CacheEntryVersion)
	}
	k := c.r.key
	// The key is a hash of these: an entry that says otherwise was not
	// recorded for this run.
	if en.Instruction != k.Instruction || en.StartURL != k.StartURL || en.Options != k.Options || !slices.Equal(en.VariableNames, k.VariableNames) {
		return nil, fmt.Errorf("the entry was recorded for another run")
	}
	if !en.Result.Success {
		return nil, fmt.Errorf("the entry's run did not succeed")
	}
	for i, st := range en.Steps {
		if err := checkStep(st); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i, st.Type, err)
		}
	}
	return s, nil
}

// replayFailed notes a replay that handed over to the live agent.
func (c *serverCache) replayFailed() {
	c.report.MissReason = cache.MissReplayFailed
}

// hit reports a replayed entry and stores it again as it was, so that an
// entry in use outlives its TTL.
func (c *serverCache) hit(ctx context.Context, s *stored) {
	e := cache.Entry{Method: cacheMethod, Value: s.raw, Usage: s.usage}
	c.report = cache.Served(c.report, &e)
	c.set(ctx, e)
}

// store writes the entry of a live run that made one (a successful run);
// its usage is what a later hit saves.
func (c *serverCache) store(ctx context.Context, res *Result) {
	if !c.on || res.CacheEntry == nil {
		return
	}
	u := cache.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}
	if !c.set(ctx, cache.Entry{Method: cacheMethod, Value: res.CacheEntry.Entry, Usage: u}) && c.report.MissReason != cache.MissReplayFailed {
		c.report.MissReason = cache.MissStoreUnavailable
	}
}

// set writes an entry under the run's key and reports whether it was
// stored; an entry over cache.MaxEntryBytes is not sent.
func (c *serverCache) set(ctx context.Context, e cache.Entry) bool {
	if n := len(e.Value); n > cache.MaxEntryBytes-1024 {
		c.r.log.Info("the agent run's cache entry is too large to store", "bytes", n, "limit", cache.MaxEntryBytes)
		return false
	}
	if err := cache.Put(ctx, c.r.opts.Cache, c.hash, e); err != nil {
		c.r.log.Info("storing the agent run's cache entry failed", "error", err)
		return false
	}
	return true
}

// result is the report of the run, for Result.Cache.
func (c *serverCache) result() *cache.Report {
	rep := c.report
	return &rep
}
