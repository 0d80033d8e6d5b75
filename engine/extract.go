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

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
)

// ExtractOptions say what to extract.
type ExtractOptions struct {
	// Instruction says what to extract. Without a schema the answer is
	// {"extraction": "..."}.
	Instruction string
	// Schema is the JSON Schema the answer must be valid against. It needs
	// an instruction.
	Schema json.RawMessage
	// Selector scopes the snapshot to one element's subtree.
	Selector string
	// IgnoreSelectors leave these elements out of the snapshot.
	IgnoreSelectors []string
	// Screenshot shows the model a screenshot of the tab's viewport
	// besides the snapshot's text, at most ScreenshotMaxSize pixels a
	// side.
	Screenshot bool
	Model      llm.Client
	Timeout    time.Duration
	Progress   func(Log)
}

// ScreenshotMaxSize bounds the sides of the screenshot an extract shows
// the model, in pixels; a larger viewport is scaled down. Providers scale
// larger images down themselves, at the caller's cost in tokens.
const ScreenshotMaxSize = 1280

// ExtractResult is the extracted document.
type ExtractResult struct {
	// Data is valid against the caller's schema; {"extraction": ...} with
	// only an instruction; {"pageText": ...} with neither.
	Data  json.RawMessage
	Usage llm.Usage
}

// ErrSchemaViolation is returned when the model's answer is not valid against
// the caller's schema.
var ErrSchemaViolation = errors.New("the extracted data does not match the schema")

// Extract reads structured data off the page.
func (e *Engine) Extract(ctx context.Context, opts ExtractOptions) (*ExtractResult, error) {
	ctx, cancel := withTimeout(ctx, opts.Timeout)
	defer cancel()
	if len(opts.Schema) > 0 && opts.Instruction == "" {
		return nil, fmt.Errorf("%w: a schema needs an instruction", ErrInvalidArgument)
	}
	if err := checkScope(opts.Selector, opts.IgnoreSelectors); err != nil {
		return nil, err
	}
	var sch *schema
	if len(opts.Schema) > 0 {
		var err error
		if sch, err = compileSchema(opts.Schema); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
		}
	}
	snap, err := e.snapshot(ctx, page.SnapshotOptions{Selector: opts.Selector, IgnoreSelectors: opts.IgnoreSelectors})
	if err != nil {
		return nil, err
	}
	if opts.Instruction == "" {
		data, err := json.Marshal(map[string]string{"pageText": snap.Tree})
		return &ExtractResult{Data: data}, err
	}
	call := callOptions{Model: opts.Model, Progress: opts.Progress}
	model, err := e.model(call)
	if err != nil {
		return nil, err
	}
	if sch == nil {
		if sch, err = compileSchema(extractionSchema); err != nil {
			return nil, err
		}
	}
	asked, plan := withLinkIDs(sch.doc)

	var images [][]byte
	if opts.Screenshot {
		shot, err := e.page.Screenshot(ctx, page.ScreenshotOptions{MaxWidth: ScreenshotMaxSize, MaxHeight: ScreenshotMaxSize})
		if err != nil {
			return nil, fmt.Errorf("taking the screenshot: %w", err)
		}
		images = append(images, shot.PNG)
	}
	call.progress("extraction", "asking %s to extract", model.Model())
	var answer any
	usage, err := e.ask(ctx, model, extractSystem, userPrompt(opts.Instruction, snap.Tree), "extraction", asked, &answer, images...)
	if err != nil {
		return nil, err
	}
	answer = plan.apply(answer, snap.URLs)
	data, err := json.Marshal(answer)
	if err != nil {
		return nil, fmt.Errorf("encoding the extraction: %w", err)
	}
	if err := sch.validate(data); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchemaViolation, err)
	}
	return &ExtractResult{Data: data, Usage: usage}, nil
}
