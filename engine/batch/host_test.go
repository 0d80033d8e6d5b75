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

package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// fakeHost is the tests' Host: pages in memory, and operations that record
// what they were asked and answer from the instruction. The engine, not
// the host, is under test here.
type fakeHost struct {
	mu     sync.Mutex
	pages  []string
	urls   map[string]string
	calls  []string
	opts   []Options
	nextID int
	// running counts the operations in progress; overlap records
	// whether two ever ran at once.
	running atomic.Int32
	overlap atomic.Bool
	// block, when set, is called at the start of act with the
	// instruction; it may wait.
	block func(ctx context.Context, instruction string) error
}

func newFakeHost(pages ...string) *fakeHost {
	h := &fakeHost{pages: pages, urls: map[string]string{}}
	for _, p := range pages {
		h.urls[p] = "about:blank"
	}
	return h
}

// errNoSuchButton is the error of act "fail".
var errNoSuchButton = errors.New("no element fits the instruction")

func (h *fakeHost) enter(call string, opts *Options) func() {
	if h.running.Add(1) > 1 {
		h.overlap.Store(true)
	}
	h.mu.Lock()
	h.calls = append(h.calls, call)
	if opts != nil {
		h.opts = append(h.opts, *opts)
	}
	h.mu.Unlock()
	return func() { h.running.Add(-1) }
}

func (h *fakeHost) recorded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

func (h *fakeHost) Pages(context.Context) ([]string, error) {
	defer h.enter("pages", nil)()
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.pages), nil
}

func (h *fakeHost) NewPage(_ context.Context, url string) (string, error) {
	defer h.enter("newPage "+url, nil)()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	id := fmt.Sprintf("new%d", h.nextID)
	h.pages = append(h.pages, id)
	if url == "" {
		url = "about:blank"
	}
	h.urls[id] = url
	return id, nil
}

func (h *fakeHost) URL(_ context.Context, page string) (string, error) {
	defer h.enter("url "+page, nil)()
	h.mu.Lock()
	defer h.mu.Unlock()
	u, ok := h.urls[page]
	if !ok {
		return "", fmt.Errorf("no page %s", page)
	}
	return u, nil
}

func (h *fakeHost) Title(_ context.Context, page string) (string, error) {
	defer h.enter("title "+page, nil)()
	return "Title of " + page, nil
}

func (h *fakeHost) Goto(_ context.Context, page, url string) error {
	defer h.enter("goto "+page+" "+url, nil)()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.urls[page] = url
	return nil
}

func (h *fakeHost) Act(ctx context.Context, page string, in ActInput, opts Options) (*ActResult, error) {
	what := in.Instruction
	if in.Action != nil {
		what = "action " + in.Action.Selector
	}
	defer h.enter("act "+what+" on "+page, &opts)()
	if h.block != nil {
		if err := h.block(ctx, in.Instruction); err != nil {
			return nil, err
		}
	}
	if in.Instruction == "fail" {
		return nil, errNoSuchButton
	}
	return &ActResult{
		Data: ActData{ActionDescription: what, Actions: []Action{{Selector: "xpath=/html/body/button", Description: what, Method: "click"}}, Message: "done", Success: true},
		Metadata: Metadata{
			Cache:    CacheMetadata{Status: "DISABLED"},
			ActionID: "act-" + what,
			Usage:    Usage{InputTokens: 100, OutputTokens: 10, InferenceTimeMs: 5},
		},
	}, nil
}

func (h *fakeHost) Observe(_ context.Context, page, instruction string, opts Options) (*ObserveResult, error) {
	defer h.enter("observe "+instruction+" on "+page, &opts)()
	return &ObserveResult{
		Data:     []Action{{Selector: "xpath=/html/body/a", Description: "a link"}},
		Metadata: Metadata{Cache: CacheMetadata{Status: "DISABLED"}, Usage: Usage{InputTokens: 50, OutputTokens: 5}},
	}, nil
}

func (h *fakeHost) Extract(_ context.Context, page, instruction string, schema json.RawMessage, opts Options) (*ExtractResult, error) {
	defer h.enter("extract "+instruction+" on "+page+" "+string(schema), &opts)()
	data := json.RawMessage(`{"extraction":"42"}`)
	if string(schema) != string(DefaultExtractSchema) {
		data = json.RawMessage(`{"total":42}`)
	}
	return &ExtractResult{
		Data:     data,
		Metadata: Metadata{Cache: CacheMetadata{Status: "DISABLED"}, Usage: Usage{InputTokens: 20, OutputTokens: 2, ReasoningTokens: 1}},
	}, nil
}
