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
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/page"
)

// The replayer runs a cache entry's steps on the page as they were
// recorded, with no model: act and fillForm perform their resolved
// actions (no self-healing, which would ask a model), the other steps
// drive the page as their tools did. Variables are filled in from the
// run's values where input is typed, as the live tools do; the entry holds
// their placeholders only. A step that fails stops the replay, and the
// live agent takes over from where the page is, the steps replayed so far
// kept as the run's first steps.

// checkStep says what keeps a recorded step from being replayed, or nil:
// an entry is checked whole before any of its steps runs.
func checkStep(s cacheStep) error {
	switch s.Type {
	case toolAct, toolFillForm:
		if len(s.Actions) == 0 {
			return errors.New("no actions")
		}
		for _, a := range s.Actions {
			if a.Selector == "" || a.Method == "" {
				return errors.New("an action without a selector or a method")
			}
		}
	case toolGoto:
		if _, err := replayURL(s.URL); err != nil {
			return err
		}
		switch page.WaitUntil(s.WaitUntil) {
		case "", page.WaitLoad, page.WaitDOMContentLoaded, page.WaitNetworkIdle:
		default:
			return fmt.Errorf("waitUntil %q", s.WaitUntil)
		}
	case toolScroll:
		if s.DeltaX == nil || s.DeltaY == nil || s.Anchor == nil {
			return errors.New("no deltas or anchor")
		}
	case toolKeys:
		if s.Times < 1 || s.Times > MaxKeyRepeat {
			return fmt.Errorf("times %d is not between 1 and %d", s.Times, MaxKeyRepeat)
		}
		if s.Method != "type" && (s.Method != "press" || s.Keys == "") {
			return fmt.Errorf("method %q", s.Method)
		}
	case toolWait:
		if s.TimeMs == nil || *s.TimeMs < 0 || *s.TimeMs > MaxWait {
			return fmt.Errorf("timeMs is not between 0 and %d", MaxWait)
		}
	case toolNavBack, cacheNavForward:
	case toolClickAndHold:
		if s.Selector == "" || s.DurationMs < 0 || s.DurationMs > page.MaxHold.Milliseconds() {
			return errors.New("no selector, or a duration out of bounds")
		}
	default:
		return errors.New("not a step the replayer knows")
	}
	return nil
}

// replayURL is a goto step's URL, held to what the goto tool allows.
func replayURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("url %q is not an absolute http or https URL", raw)
	}
	return u, nil
}

// replay runs the entry's steps. It returns the run's Result when every
// step ran; nil when one failed, the steps before it kept in r (the live
// agent goes on from them); an error when ctx ended.
func (r *run) replay(ctx context.Context, s *stored) (*Result, error) {
	start := r.now()
	// Deterministic: no self-healing, which would ask a model.
	det := r.e.WithSelfHeal(false)
	r.log.Info("agent replaying a cached run", "steps", len(s.entry.Steps))
	for i, cs := range s.entry.Steps {
		pageURL, _ := r.p.URL(ctx)
		started := r.now()
		st := Step{Type: cs.Type, PageURL: r.redact(pageURL), Reasoning: "replayed from the cache"}
		done, err := r.replayStep(ctx, det, cs, &st)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("agent: replaying step %d (%s): %w", i, cs.Type, ctx.Err())
		}
		if err != nil {
			msg := r.redact(err.Error())
			r.log.Info("agent cache replay failed; the live agent takes over", "step", i, "type", cs.Type, "error", msg)
			if len(done) > 0 {
				// What the step did before it failed is on the page:
				// the live run's entry starts from it.
				cs.Actions = done
				r.record(cs)
			}
			r.replayed = len(r.steps)
			return nil, nil
		}
		r.record(cs)
		st.TimeMs = r.now().Sub(started).Milliseconds()
		st.Action, st.Instruction = r.redact(st.Action), r.redact(st.Instruction)
		r.report(st)
	}
	res := s.entry.Result
	u, _ := r.p.URL(ctx)
	r.report(Step{Type: toolDone, Reasoning: res.Message, TaskCompleted: res.Success, Action: "done", PageURL: r.redact(u)})
	out, err := r.finish(ctx, &outcome{reason: toolDone, success: res.Success, completed: res.Completed, message: res.Message, output: res.Output}, start)
	if err != nil {
		return nil, err
	}
	out.Metadata["replayed"] = true
	// The entry as stored: it names the models that recorded it.
	out.CacheEntry = &CacheEntry{Key: cacheKey(r.key), Entry: s.raw}
	return out, nil
}

// replayStep runs one recorded step, bounded by ToolTimeout but for wait.
// For act and fillForm it returns the actions done, those of a step that
// then failed included.
func (r *run) replayStep(ctx context.Context, det *engine.Engine, s cacheStep, st *Step) ([]engine.Action, error) {
	if s.Type != toolWait {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.opts.ToolTimeout)
		defer cancel()
	}
	switch s.Type {
	case toolAct, toolFillForm:
		st.Instruction = s.Instruction
		if s.Type == toolFillForm {
			st.Instruction = strings.Join(s.Fields, "; ")
		}
		var done []engine.Action
		for _, a := range s.Actions {
			res, err := det.Act(ctx, engine.ActOptions{Action: &a, Variables: r.opts.Variables})
			if err != nil {
				return done, err
			}
			if !res.Success {
				return done, errors.New(res.Message)
			}
			done = append(done, a)
			st.Action = res.Message
		}
		r.settle(ctx)
		if s.Type == toolFillForm {
			st.Action = fmt.Sprintf("filled %d of %d fields", len(done), len(s.Actions))
		}
		return done, nil
	case toolGoto:
		st.Action = "goto " + s.URL
		// The URL was recorded redacted: a value it held is put back.
		u, err := replayURL(engine.SubstituteVariables(s.URL, r.opts.Variables))
		if err != nil {
			return nil, err
		}
		if err := r.p.Navigate(ctx, u.String(), page.NavigateOptions{WaitUntil: page.WaitUntil(s.WaitUntil)}); err != nil {
			_ = r.p.StopLoading(ctx) // as the goto tool does
			return nil, err
		}
	case toolScroll:
		if err := r.p.ScrollAt(ctx, s.Anchor.X, s.Anchor.Y, *s.DeltaX, *s.DeltaY); err != nil {
			return nil, err
		}
		st.Action = fmt.Sprintf("scrolled %gpx", math.Abs(*s.DeltaY))
	case toolKeys:
		for range s.Times {
			var err error
			if s.Method == "type" {
				st.Action = fmt.Sprintf("type %q", s.Text)
				err = r.p.TypeText(ctx, engine.SubstituteVariables(s.Text, r.opts.Variables))
			} else {
				st.Action = "press " + s.Keys
				err = r.p.PressKey(ctx, s.Keys)
			}
			if err != nil {
				return nil, err
			}
		}
		r.settle(ctx)
	case toolWait:
		st.Action = fmt.Sprintf("waited %d ms", *s.TimeMs)
		t := time.NewTimer(time.Duration(*s.TimeMs) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case toolNavBack:
		st.Action = "go back"
		if err := r.p.GoBack(ctx, page.NavigateOptions{}); err != nil {
			_ = r.p.StopLoading(ctx)
			return nil, err
		}
	case cacheNavForward:
		st.Action = "go forward"
		if err := r.p.GoForward(ctx, page.NavigateOptions{}); err != nil {
			_ = r.p.StopLoading(ctx)
			return nil, err
		}
	case toolClickAndHold:
		st.Instruction = s.Instruction
		st.Action = fmt.Sprintf("hold %s for %d ms", s.Selector, s.DurationMs)
		el, err := r.p.MainFrame().Query(ctx, s.Selector)
		if err != nil {
			return nil, err
		}
		if err := r.p.HoldOn(ctx, el, time.Duration(s.DurationMs)*time.Millisecond); err != nil {
			return nil, err
		}
		r.settle(ctx)
	default:
		// checkStep refused it before the replay began.
		return nil, fmt.Errorf("step type %q cannot be replayed", s.Type)
	}
	return nil, nil
}

// takeOver is where the live agent starts: the start URL, or after a
// replay that handed over, the page's URL now and a note telling the model
// which steps are done.
func (r *run) takeOver(ctx context.Context) (at, note string) {
	if r.replayed == 0 {
		return r.startURL, ""
	}
	at, err := r.p.URL(ctx)
	if err != nil {
		at = r.startURL
	}
	var b strings.Builder
	fmt.Fprintf(&b, "These steps of the task were already done, by replaying an earlier run of it; the last one could not be replayed. Go on from the page as it is now (%s):\n", r.redact(at))
	for i, s := range r.steps[:r.replayed] {
		fmt.Fprintf(&b, "%d. %s: %s\n", i+1, s.Type, s.Action)
	}
	return at, b.String()
}
