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

// Package cached runs act, observe and extract through the server-side
// cache, where the engine runs (the runner, a client library's local
// handle): it makes the key from the page as the engine sees it and the
// call's answer-changing options, looks it up in a cache.Store, serves a
// hit (act replays its stored actions, with no model and no self-heal;
// observe and extract return the stored value) and stores what a live
// call computed. The store never fails a call: when it does not answer
// within cache.StoreTimeout, the call runs live (MISS store_unavailable).
package cached

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
)

// Methods, as entries name them.
const (
	MethodAct     = "act"
	MethodObserve = "observe"
	MethodExtract = "extract"
)

// actEntry is an act entry's value: the actions to replay, with variables
// as %name%, and the description the live act reported.
type actEntry struct {
	Description string          `json:"description"`
	Actions     []engine.Action `json:"actions"`
}

// Act runs an act through the cache. With no setting or no store, or an
// act given as an Action (no model to save), it is the engine's Act with
// a DISABLED report. On a hit the stored actions are replayed; a replay
// that fails runs the act live (MISS replay_failed) and its result
// replaces the entry. A successful live act whose actions replay (see
// engine.ActResult.Replayable) is stored.
func Act(ctx context.Context, e *engine.Engine, c cache.Store, set *cache.Setting, opts engine.ActOptions) (*engine.ActResult, cache.Report, error) {
	if set == nil || c == nil || opts.Action != nil || strings.TrimSpace(opts.Instruction) == "" {
		res, err := e.Act(ctx, opts)
		return res, cache.Disabled(), err
	}
	ctx, cancel := withTimeout(ctx, opts.Timeout)
	defer cancel()
	opts.Timeout = 0
	l := begin(ctx, e, c, set, progressOf(opts.Progress), KeyInput{
		Method:          MethodAct,
		Instruction:     opts.Instruction,
		VariableNames:   slices.Collect(maps.Keys(opts.Variables)),
		Selector:        opts.Selector,
		IgnoreSelectors: opts.IgnoreSelectors,
	})
	if l.err != nil {
		return nil, cache.Disabled(), l.err
	}
	if entry := l.entry(); entry != nil {
		var v actEntry
		if err := json.Unmarshal(entry.Value, &v); err != nil || len(v.Actions) == 0 {
			l.miss(cache.MissInvalidEntry)
		} else if res, err := replay(ctx, e, v, opts); err != nil {
			return nil, l.report, err
		} else if res != nil {
			return res, l.hit(entry), nil
		} else {
			l.miss(cache.MissReplayFailed)
		}
	}
	res, err := e.Act(ctx, opts)
	if err != nil {
		return nil, l.report, err
	}
	if res.Success && res.Replayable && len(res.Actions) > 0 {
		l.store(ctx, MethodAct, actEntry{Description: res.ActionDescription, Actions: stripNodeIDs(res.Actions)}, res.Usage)
	}
	return res, l.report, nil
}

// replay performs an entry's actions in order with self-healing off, the
// variables' values substituted as the engine does. It returns nil (and no
// error) when an action did not redo: the call then runs live, from the
// page as the actions before it left it (a two-step act's list may be
// open). An error is a call that cannot go on (its context ended, its
// frame is gone).
func replay(ctx context.Context, e *engine.Engine, v actEntry, opts engine.ActOptions) (*engine.ActResult, error) {
	strict := e.WithSelfHeal(false)
	var last *engine.ActResult
	for i, a := range v.Actions {
		a.BackendNodeID = 0
		if opts.Progress != nil {
			opts.Progress(engine.Log{Category: "cache", Message: fmt.Sprintf("replaying cached action %d of %d: %s on %s", i+1, len(v.Actions), a.Method, a.Selector), Level: 1})
		}
		res, err := strict.Act(ctx, engine.ActOptions{Action: &a, Variables: opts.Variables, Progress: opts.Progress})
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			// A stored action the engine refuses now (a selector of an
			// older format): the entry does not replay.
			e.Logger().Info("a cached action did not replay", "method", a.Method, "err", err.Error())
			return nil, nil
		}
		if !res.Success {
			e.Logger().Info("a cached action did not replay", "method", a.Method, "message", res.Message)
			return nil, nil
		}
		last = res
	}
	return &engine.ActResult{
		Success:           true,
		Message:           last.Message,
		ActionDescription: v.Description,
		Actions:           stripNodeIDs(v.Actions),
		Replayable:        true,
	}, nil
}

// Observe runs an observe through the cache. With no setting or no store
// it is the engine's Observe with a DISABLED report. A hit returns the
// stored actions; a live observe that found actions is stored.
func Observe(ctx context.Context, e *engine.Engine, c cache.Store, set *cache.Setting, opts engine.ObserveOptions) (*engine.ObserveResult, cache.Report, error) {
	if set == nil || c == nil {
		res, err := e.Observe(ctx, opts)
		return res, cache.Disabled(), err
	}
	ctx, cancel := withTimeout(ctx, opts.Timeout)
	defer cancel()
	opts.Timeout = 0
	l := begin(ctx, e, c, set, progressOf(opts.Progress), KeyInput{
		Method:          MethodObserve,
		Instruction:     opts.Instruction,
		VariableNames:   slices.Collect(maps.Keys(opts.Variables)),
		Selector:        opts.Selector,
		IgnoreSelectors: opts.IgnoreSelectors,
	})
	if l.err != nil {
		return nil, cache.Disabled(), l.err
	}
	if entry := l.entry(); entry != nil {
		var actions []engine.Action
		if err := json.Unmarshal(entry.Value, &actions); err != nil || len(actions) == 0 {
			l.miss(cache.MissInvalidEntry)
		} else {
			return &engine.ObserveResult{Actions: actions}, l.hit(entry), nil
		}
	}
	res, err := e.Observe(ctx, opts)
	if err != nil {
		return nil, l.report, err
	}
	if len(res.Actions) > 0 {
		l.store(ctx, MethodObserve, stripNodeIDs(res.Actions), res.Usage)
	}
	return res, l.report, nil
}

// Extract runs an extract through the cache. With no setting or no store,
// or no instruction (the page's text, with no model to save), it is the
// engine's Extract with a DISABLED report. A hit returns the stored value
// once it is valid against the call's schema (MISS invalid_entry, live,
// otherwise); a live extract, which the engine validated, is stored.
func Extract(ctx context.Context, e *engine.Engine, c cache.Store, set *cache.Setting, opts engine.ExtractOptions) (*engine.ExtractResult, cache.Report, error) {
	if set == nil || c == nil || opts.Instruction == "" {
		res, err := e.Extract(ctx, opts)
		return res, cache.Disabled(), err
	}
	schema := opts.Schema
	if len(schema) == 0 || string(schema) == "null" {
		schema = nil
	}
	ctx, cancel := withTimeout(ctx, opts.Timeout)
	defer cancel()
	opts.Timeout = 0
	l := begin(ctx, e, c, set, progressOf(opts.Progress), KeyInput{
		Method:          MethodExtract,
		Instruction:     opts.Instruction,
		Schema:          schema,
		Screenshot:      opts.Screenshot,
		Selector:        opts.Selector,
		IgnoreSelectors: opts.IgnoreSelectors,
	})
	if l.err != nil {
		return nil, cache.Disabled(), l.err
	}
	if entry := l.entry(); entry != nil {
		against := schema
		if against == nil {
			against = engine.ExtractionSchema()
		}
		if err := engine.ValidateJSON(against, entry.Value); err != nil {
			l.miss(cache.MissInvalidEntry)
		} else {
			return &engine.ExtractResult{Data: entry.Value}, l.hit(entry), nil
		}
	}
	res, err := e.Extract(ctx, opts)
	if err != nil {
		return nil, l.report, err
	}
	l.store(ctx, MethodExtract, res.Data, res.Usage)
	return res, l.report, nil
}

// lookup is one call's way through the cache: its key, what the store
// answered, and the report so far.
type lookup struct {
	c        cache.Store
	log      *slog.Logger
	progress func(string)
	key      string
	// served is the entry the store served, nil for none.
	served *cache.Entry
	report cache.Report
	// err is a call that cannot go on: the page could not be read for
	// the key because the call's context ended.
	err error
}

// begin makes the call's key from the page and in, and looks it up. A
// page that cannot be fingerprinted (a scope selector that matches
// nothing, a frame that is gone) is left to the live call, which meets
// and reports the same: the report is then DISABLED.
func begin(ctx context.Context, e *engine.Engine, c cache.Store, set *cache.Setting, progress func(string), in KeyInput) *lookup {
	l := &lookup{c: c, log: e.Logger(), progress: progress, report: cache.Disabled()}
	threshold := set.Threshold
	if threshold == 0 {
		threshold = cache.DefaultThreshold
	}
	fp, err := e.Fingerprint(ctx, engine.FingerprintOptions{Selector: in.Selector, IgnoreSelectors: in.IgnoreSelectors})
	if err != nil {
		if ctx.Err() != nil {
			l.err = err
		}
		return l
	}
	in.URL, in.Content, in.Frame = fp.URL, fp.Content, e.Frame()
	if l.key, err = in.Key(); err != nil {
		// A schema that is not JSON: the live call refuses it.
		l.key = ""
		return l
	}
	l.served, l.report, err = cache.Lookup(ctx, c, cache.GetRequest{Key: l.key, Threshold: threshold}, in.Method)
	switch {
	case err != nil:
		l.log.Info("the cache did not answer; running live", "method", in.Method, "err", err.Error())
		// No write either: the store just failed.
		l.key = ""
	case l.report.MissReason == cache.MissInvalidEntry:
		l.progress("cache entry not used (" + cache.MissInvalidEntry + "); running live")
	}
	return l
}

// entry is the entry to serve, when the store served one of the call's
// method (cache.Lookup).
func (l *lookup) entry() *cache.Entry { return l.served }

// miss turns the report into a MISS for reason, for a served entry that
// could not be used.
func (l *lookup) miss(reason string) {
	l.report.Status, l.report.MissReason = cache.StatusMiss, reason
	l.progress("cache entry not used (" + reason + "); running live")
}

// hit is the report of serving entry.
func (l *lookup) hit(entry *cache.Entry) cache.Report {
	l.report = cache.Served(l.report, entry)
	l.progress("served from the cache")
	return l.report
}

// store writes the live call's value under the key, within
// cache.StoreTimeout even when the call's context has ended: the value
// is computed and paid for. A failed write is logged, never the call's
// error.
func (l *lookup) store(ctx context.Context, method string, value any, usage llm.Usage) {
	if l.key == "" {
		return
	}
	raw, err := json.Marshal(value)
	if err != nil {
		l.log.Error("encoding a cache entry failed", "method", method, "err", err.Error())
		return
	}
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	err = cache.Put(context.WithoutCancel(ctx), l.c, l.key, cache.Entry{
		Method: method,
		Value:  raw,
		Usage:  cache.Usage{InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens},
	})
	if err != nil {
		l.log.Info("storing a cache entry failed", "method", method, "bytes", len(raw), "err", err.Error())
	}
}

// stripNodeIDs drops the actions' backend node ids, which name nodes of
// one render only: an entry is served to later renders.
func stripNodeIDs(actions []engine.Action) []engine.Action {
	out := slices.Clone(actions)
	for i := range out {
		out[i].BackendNodeID = 0
	}
	return out
}

// progressOf turns the engine's progress callback into the cache's lines.
func progressOf(p func(engine.Log)) func(string) {
	if p == nil {
		return func(string) {}
	}
	return func(msg string) { p(engine.Log{Category: "cache", Message: msg, Level: 1}) }
}

func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}
