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
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// driver is what a handle's kind does for an instance: the local driver
// runs the engine in-process on the page's DevTools target; the cloud
// driver calls the service's /v1 for the session, whose runner runs the
// engine next to the browser.
type driver interface {
	// open checks the instance's configuration against what the handle can
	// honour (a cloud handle refuses Generate) and makes what its
	// operations need. It fails with an error naming the field.
	open(ctx context.Context, cfg *instanceConfig) (runtime, error)
	// close ends the handle (Browser.Close), after the CDP connection's
	// pages are let go.
	close(ctx context.Context) error
}

// runtime runs an open instance's operations. Calls never overlap: the
// Client serialises them. A call's ctx carries the instance's trace span.
type runtime interface {
	act(ctx context.Context, p *Page, call actCall) (*ActResult, error)
	observe(ctx context.Context, p *Page, call observeCall) (*ObserveResult, error)
	// extract returns the extracted value as JSON, which the Client
	// validates against the call's schema and decodes.
	extract(ctx context.Context, p *Page, call extractCall) (json.RawMessage, Metadata, error)
	// batch runs a batch script and returns its result as JSON ("null"
	// for undefined) and the usage of each group of the operations the
	// script ran, which the Client adds to its metrics.
	batch(ctx context.Context, call batchCall) (json.RawMessage, map[opGroup]Usage, error)
	// close releases what open made; the browser stays as it is.
	close(ctx context.Context) error
}

// opGroup is a group of Metrics.
type opGroup string

const (
	groupAct     opGroup = "act"
	groupObserve opGroup = "observe"
	groupExtract opGroup = "extract"
)

// instanceConfig is CreateOptions resolved: what every operation of the
// instance starts from.
type instanceConfig struct {
	apiKey           string
	apiURL           string
	model            *ModelConfig
	generate         GenerateFunc
	systemPrompt     string
	selfHeal         bool
	domSettleTimeout time.Duration
	cache            *Caching
	logger           *slog.Logger
	tracer           trace.Tracer
}

// opCall is what every operation's call carries, resolved against the
// instance: the model and cache setting in effect, the locators as the
// engine's selectors.
type opCall struct {
	model     *ModelConfig
	cache     *Caching
	selector  string
	ignore    []string
	timeout   time.Duration
	variables Variables
}

type actCall struct {
	opCall
	instruction string
	action      *Action
}

type observeCall struct {
	opCall
	instruction string
}

type extractCall struct {
	opCall
	instruction string
	schema      json.RawMessage
	screenshot  bool
}

type batchCall struct {
	source string
	// input is the script's input as JSON; nil is undefined.
	input json.RawMessage
	// page is batch.page; active is the active page at the start.
	page, active *Page
	timeout      time.Duration
	// metrics are the instance's counters at the start, which the
	// script's metrics() adds the batch's own to.
	metrics Metrics
}

// Client is an instance attached to a browser handle. Its methods are safe
// for concurrent use; operations run one at a time, in call order.
type Client struct {
	browser *Browser
	cfg     *instanceConfig
	rt      runtime
	// Built by the core piece: the lock that serialises operations, the
	// metrics, the close state and its first result.
}

// Create attaches an instance to opts.Browser and returns it initialized.
func Create(ctx context.Context, opts CreateOptions) (*Client, error) { return nil, errUnbuilt }

// Initialized reports whether the instance can serve calls: true from
// Create until Close.
func (c *Client) Initialized() bool { return false }

// Browser is the handle the instance was created with.
func (c *Client) Browser() *Browser { return c.browser }

// Close releases what the instance holds (engines, trace exporter) and
// frees its handle for another instance; the browser stays open. Later
// calls return the first call's result.
func (c *Client) Close(ctx context.Context) error { return errUnbuilt }

// Act performs an action: one the model infers from a natural-language
// instruction (ActInstruction), or one Observe returned (ObservedAction),
// which runs with no model call.
func (c *Client) Act(ctx context.Context, instruction Instruction, opts *ActOptions) (*ActResult, error) {
	return nil, errUnbuilt
}

// Observe lists the actions the page offers that match instruction; nil
// lists everything actionable.
func (c *Client) Observe(ctx context.Context, instruction *string, opts *ObserveOptions) (*ObserveResult, error) {
	return nil, errUnbuilt
}

// Extract reads structured data off a page as a T: a JSON Schema derived
// from T (with github.com/invopop/jsonschema: `json` names, `jsonschema`
// tags, omitempty fields optional) tells the model what to answer, the
// answer is validated against it and decoded into Data.
func Extract[T any](ctx context.Context, c *Client, instruction string, opts *ExtractOptions) (*ExtractResult[T], error) {
	return nil, errUnbuilt
}

// Metrics returns the instance's counters. Reading does not reset them.
func (c *Client) Metrics(ctx context.Context) (Metrics, error) { return Metrics{}, errUnbuilt }

// Instruction is what Act does: a natural-language instruction or an action
// Observe returned.
type Instruction struct {
	text   string
	action *Action
}

// ActInstruction is an instruction in natural language.
func ActInstruction(text string) Instruction { return Instruction{text: text} }

// ObservedAction is an action to perform as is, with no model call.
func ObservedAction(action Action) Instruction { return Instruction{action: &action} }
