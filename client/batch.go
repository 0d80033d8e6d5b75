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

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/engine/batch"
)

// groupBatch names a batch's span; its operations' usage counts in their
// own groups.
const groupBatch opGroup = "batch"

// ExperimentalBatch runs a JavaScript function next to the engine, so
// that the operations it makes avoid a round trip each. source is the
// function's text, such as
//
//	async (batch, input) => {
//		await batch.act("click the " + input.button + " button");
//		return (await batch.extract("the order total")).data;
//	}
//
// input is marshalled to JSON (nil is undefined); the function's return
// value is decoded into result, a non-nil pointer (undefined decodes as
// null). A local handle runs the function in this process; a cloud handle
// in the session's runner, in one HTTP call. docs/client.md
// (ExperimentalBatch) describes the batch context, the errors and the
// bounds. Experimental: it can change in patch releases.
func (c *Client) ExperimentalBatch(ctx context.Context, source string, input, result any, opts *BatchOptions) error {
	if opts == nil {
		opts = &BatchOptions{}
	}
	if rv := reflect.ValueOf(result); result == nil || rv.Kind() != reflect.Pointer || rv.IsNil() {
		return invalid("result", "must be a non-nil pointer, such as &v; got %T", result)
	}
	switch {
	case strings.TrimSpace(source) == "":
		return invalid("source", "is empty; give a function expression such as async (batch, input) => {...}")
	case len(source) > batch.MaxSourceBytes:
		return invalid("source", "is %d bytes; at most %d", len(source), batch.MaxSourceBytes)
	case opts.Timeout < 0:
		return invalid("BatchOptions.Timeout", "must not be negative, got %v", opts.Timeout)
	case opts.Page != nil && opts.Page.b != c.browser:
		return invalid("BatchOptions.Page", "is a page of another browser handle than the instance's")
	}
	var in json.RawMessage
	if input != nil {
		raw, err := json.Marshal(input)
		if err != nil {
			return invalid("input", "cannot be marshalled to JSON: %s", err.Error())
		}
		if len(raw) > batch.MaxInputBytes {
			return invalid("input", "is %d bytes of JSON; at most %d", len(raw), batch.MaxInputBytes)
		}
		in = raw
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultBatchTimeout
	}
	var out json.RawMessage
	err := c.run(ctx, groupBatch, "", func(ctx context.Context) (*Metadata, error) {
		active, err := c.browser.Context().ActivePage(ctx)
		if err != nil {
			return nil, err
		}
		page := opts.Page
		if page == nil {
			page = active
		}
		c.mu.Lock()
		metrics := c.metrics
		c.mu.Unlock()
		raw, usage, err := c.rt.batch(ctx, batchCall{source: source, input: in, page: page, active: active, timeout: timeout, metrics: metrics})
		if err != nil {
			return nil, err
		}
		// The usage counts in the groups of the operations that spent
		// it; the batch's metadata, for its span and log line, has the
		// sum (run counts nothing for the batch group itself).
		md := &Metadata{}
		c.mu.Lock()
		for g, u := range usage {
			c.metrics.add(g, u)
			md.Usage = md.Usage.plus(u)
		}
		c.mu.Unlock()
		out = raw
		return md, nil
	})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, result); err != nil {
		return fmt.Errorf("decoding the batch's result into %T: %w", result, err)
	}
	return nil
}

// batchScriptError is a script's exception: a *BatchError that also wraps
// the error of the batch operation it came from, when it did.
type batchScriptError struct {
	*BatchError
	cause error
}

func (e *batchScriptError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.BatchError}
	}
	return []error{e.BatchError, e.cause}
}

// batchError gives engine/batch's errors the client's meaning: an
// exception is a *BatchError, the deadline ErrBatchDeadline, a source or
// input the engine refused ErrInvalidArgument.
func batchError(err error, timeout time.Duration) error {
	var se *batch.ScriptError
	switch {
	case errors.As(err, &se):
		return &batchScriptError{BatchError: &BatchError{Message: se.Message, Stack: se.Stack}, cause: se.Cause}
	case errors.Is(err, batch.ErrDeadline):
		return fmt.Errorf("%w of %v: no operation started after it, and the script was stopped", ErrBatchDeadline, timeout)
	case errors.Is(err, batch.ErrInvalid):
		return fmt.Errorf("%w: %s", ErrInvalidArgument, strings.TrimPrefix(err.Error(), batch.ErrInvalid.Error()+": "))
	}
	return fmt.Errorf("batch: %w", err)
}

// groupUsage is a batch's usage as the metrics' groups.
func groupUsage(g batch.GroupUsage) map[opGroup]Usage {
	return map[opGroup]Usage{groupAct: Usage(g.Act), groupObserve: Usage(g.Observe), groupExtract: Usage(g.Extract)}
}

// plus returns the sum of u and o.
func (u Usage) plus(o Usage) Usage {
	return Usage(batch.Usage(u).Add(batch.Usage(o)))
}
