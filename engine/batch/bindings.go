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
	"strings"

	"github.com/dop251/goja"
	jsonv2 "github.com/go-json-experiment/json"
)

// bindings are the script's side of a batch: the batch context it is
// given, its page objects, and the conversions between JSON and its
// values. Only Run's goroutine touches them.
type bindings struct {
	r  *run
	rt *goja.Runtime
	// parse and stringify are the runtime's JSON.parse and
	// JSON.stringify; strictJSON is stringify's replacer that refuses
	// what JSON would silently drop.
	parse, stringify goja.Callable
	strictJSON       goja.Value
	errorCtor        goja.Value
	rangeErrorCtor   goja.Value
	// pages maps a page id to its object, so that a page is the same
	// object (===) wherever the script meets it; pageIDs is the reverse.
	pages   map[string]*goja.Object
	pageIDs map[*goja.Object]string
	// opErrors maps the Error objects of failed operations to their Go
	// errors, for a rejection the script lets through.
	opErrors map[*goja.Object]error
}

// strictJSONSource refuses a function or symbol anywhere in the result,
// which JSON.stringify would drop without a word.
const strictJSONSource = `(function (key, value) {
	var t = typeof value;
	if (t === "function" || t === "symbol") {
		throw new TypeError((key === "" ? "the value" : "the value at key " + JSON.stringify(key)) + " is a " + t);
	}
	return value;
})`

func newBindings(r *run) (*bindings, error) {
	b := &bindings{
		r: r, rt: r.rt,
		pages:    map[string]*goja.Object{},
		pageIDs:  map[*goja.Object]string{},
		opErrors: map[*goja.Object]error{},
	}
	jsonObj := b.rt.Get("JSON").ToObject(b.rt)
	var ok1, ok2 bool
	b.parse, ok1 = goja.AssertFunction(jsonObj.Get("parse"))
	b.stringify, ok2 = goja.AssertFunction(jsonObj.Get("stringify"))
	if !ok1 || !ok2 {
		return nil, errors.New("batch: the JavaScript runtime has no JSON")
	}
	replacer, err := b.rt.RunString(strictJSONSource)
	if err != nil {
		return nil, fmt.Errorf("batch: compiling the JSON replacer: %w", err)
	}
	b.strictJSON = replacer
	b.errorCtor = b.rt.Get("Error")
	b.rangeErrorCtor = b.rt.Get("RangeError")
	return b, nil
}

// start compiles the source, calls the function with the batch context
// and the input, and returns what it returned.
func (b *bindings) start() (goja.Value, error) {
	src := strings.TrimRight(strings.TrimSpace(b.r.call.Source), "; \t\r\n")
	if src == "" {
		return nil, fmt.Errorf("%w: source is empty; give a function expression such as async (batch, input) => {...}", ErrInvalid)
	}
	// The parentheses make a function declaration an expression; the
	// newline ends a trailing line comment. A source they do not fit
	// (an expression statement followed by a comment, say) is compiled
	// as a script, whose completion value is its last expression's.
	prg, err := goja.Compile("batch.js", "("+src+"\n)", false)
	if err != nil {
		var serr error
		if prg, serr = goja.Compile("batch.js", src, false); serr != nil {
			return nil, fmt.Errorf("%w: source: %s", ErrInvalid, err.Error())
		}
	}
	fnValue, err := b.rt.RunProgram(prg)
	if err != nil {
		return nil, b.vmError(err)
	}
	fn, ok := goja.AssertFunction(fnValue)
	if !ok {
		return nil, fmt.Errorf("%w: source must be a function expression, such as async (batch, input) => {...}; it is a %s", ErrInvalid, typeOf(fnValue))
	}
	input := goja.Undefined()
	if b.r.call.Input != nil {
		input, err = b.parse(goja.Undefined(), b.rt.ToValue(string(b.r.call.Input)))
		if err != nil {
			return nil, fmt.Errorf("%w: input: %s", ErrInvalid, err.Error())
		}
	}
	ctx, err := b.context()
	if err != nil {
		return nil, err
	}
	v, err := fn(goja.Undefined(), ctx, input)
	if err != nil {
		return nil, b.vmError(err)
	}
	return v, nil
}

// context is the batch context the function gets.
func (b *bindings) context() (*goja.Object, error) {
	o := b.rt.NewObject()
	browserCtx := b.rt.NewObject()
	members := []struct {
		obj  *goja.Object
		name string
		fn   func(goja.FunctionCall) goja.Value
	}{
		{o, "act", b.act},
		{o, "observe", b.observe},
		{o, "extract", b.extract},
		{o, "metrics", b.metrics},
		{browserCtx, "pages", b.pagesCall},
		{browserCtx, "newPage", b.newPage},
		{browserCtx, "activePage", b.activePage},
		{browserCtx, "setActivePage", b.setActivePage},
	}
	for _, m := range members {
		if err := m.obj.DefineDataProperty(m.name, b.rt.ToValue(m.fn), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return nil, fmt.Errorf("batch: defining %s: %w", m.name, err)
		}
	}
	// page is fixed at the start: setActivePage does not move it.
	if err := o.DefineDataProperty("page", b.page(b.r.call.Page), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return nil, fmt.Errorf("batch: defining page: %w", err)
	}
	if err := o.DefineDataProperty("context", browserCtx, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return nil, fmt.Errorf("batch: defining context: %w", err)
	}
	return o, nil
}

// page is the object of the page id: {id, url(), title(), goto(url)}.
func (b *bindings) page(id string) *goja.Object {
	if o := b.pages[id]; o != nil {
		return o
	}
	o := b.rt.NewObject()
	def := func(name string, v goja.Value) {
		_ = o.DefineDataProperty(name, v, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	def("id", b.rt.ToValue(id))
	def("url", b.rt.ToValue(func(goja.FunctionCall) goja.Value {
		return b.r.enqueue(&job{name: "page.url", toJS: b.plain,
			do: func(ctx context.Context) (any, error) { return b.r.host.URL(ctx, id) }})
	}))
	def("title", b.rt.ToValue(func(goja.FunctionCall) goja.Value {
		return b.r.enqueue(&job{name: "page.title", toJS: b.plain,
			do: func(ctx context.Context) (any, error) { return b.r.host.Title(ctx, id) }})
	}))
	def("goto", b.rt.ToValue(func(c goja.FunctionCall) goja.Value {
		url, ok := c.Argument(0).Export().(string)
		if !ok || url == "" {
			return b.rejected(b.typeError("page.goto takes a URL (a string)"))
		}
		return b.r.enqueue(&job{name: "page.goto", toJS: b.plain,
			do: func(ctx context.Context) (any, error) { return nil, b.r.host.Goto(ctx, id, url) }})
	}))
	b.pages[id], b.pageIDs[o] = o, id
	return o
}

// pageID is the id of a page the script names: one of its page objects,
// or a page id.
func (b *bindings) pageID(v goja.Value) (string, bool) {
	if o, ok := v.(*goja.Object); ok {
		id, ok := b.pageIDs[o]
		return id, ok
	}
	if s, ok := v.Export().(string); ok && s != "" {
		return s, true
	}
	return "", false
}

// target is the page an operation acts on: its options' page, else the
// active page when it runs (so that a setActivePage queued before it
// counts).
func (r *run) target(page string) string {
	if page != "" {
		return page
	}
	return r.active
}

func (b *bindings) act(c goja.FunctionCall) goja.Value {
	in, err := b.actInput(c.Argument(0))
	if err != nil {
		return b.rejected(b.typeError("act: %s", err.Error()))
	}
	page, opts, err := b.options("act", c.Argument(1), actOptions)
	if err != nil {
		return b.rejected(b.typeError("%s", err.Error()))
	}
	return b.r.enqueue(&job{name: "act", toJS: b.viaJSON, do: func(ctx context.Context) (any, error) {
		res, err := b.r.host.Act(ctx, b.r.target(page), in, opts)
		if err != nil {
			return nil, err
		}
		if res.Data.Actions == nil {
			res.Data.Actions = []Action{}
		}
		b.r.usage.Act = b.r.usage.Act.Add(res.Metadata.Usage)
		return res, nil
	}})
}

func (b *bindings) actInput(v goja.Value) (ActInput, error) {
	if s, ok := v.Export().(string); ok {
		if strings.TrimSpace(s) == "" {
			return ActInput{}, errors.New("the instruction is empty")
		}
		return ActInput{Instruction: s}, nil
	}
	o, ok := v.(*goja.Object)
	if !ok || isArray(o) {
		return ActInput{}, fmt.Errorf("takes an instruction (a string) or an action (an object with a selector), not %s", typeOf(v))
	}
	var a Action
	if err := b.decodeStrict(o, &a); err != nil {
		return ActInput{}, fmt.Errorf("the action: %s", err.Error())
	}
	if a.Selector == "" {
		return ActInput{}, errors.New("the action has no selector")
	}
	return ActInput{Action: &a}, nil
}

func (b *bindings) observe(c goja.FunctionCall) goja.Value {
	var instruction string
	optsArg := c.Argument(1)
	switch v := c.Argument(0); {
	case goja.IsUndefined(v) || goja.IsNull(v):
	case isString(v):
		instruction = v.String()
	case isPlainObject(v) && goja.IsUndefined(optsArg):
		// observe(options): no instruction.
		optsArg = v
	default:
		return b.rejected(b.typeError("observe takes an instruction (a string, or undefined for every action) and options, not %s", typeOf(v)))
	}
	page, opts, err := b.options("observe", optsArg, observeOptions)
	if err != nil {
		return b.rejected(b.typeError("%s", err.Error()))
	}
	return b.r.enqueue(&job{name: "observe", toJS: b.viaJSON, do: func(ctx context.Context) (any, error) {
		res, err := b.r.host.Observe(ctx, b.r.target(page), instruction, opts)
		if err != nil {
			return nil, err
		}
		if res.Data == nil {
			res.Data = []Action{}
		}
		b.r.usage.Observe = b.r.usage.Observe.Add(res.Metadata.Usage)
		return res, nil
	}})
}

func (b *bindings) extract(c goja.FunctionCall) goja.Value {
	instruction, ok := c.Argument(0).Export().(string)
	if !ok || strings.TrimSpace(instruction) == "" {
		return b.rejected(b.typeError("extract takes an instruction (a non-empty string), then a JSON Schema (undefined for {extraction: string}) and options"))
	}
	schema := DefaultExtractSchema
	if v := c.Argument(1); !goja.IsUndefined(v) && !goja.IsNull(v) {
		if !isPlainObject(v) {
			return b.rejected(b.typeError("extract: the schema must be a JSON Schema object, not %s", typeOf(v)))
		}
		s, err := b.toJSON(v)
		if err != nil {
			return b.rejected(b.typeError("extract: the schema is not JSON: %s", err.Error()))
		}
		schema = s
	}
	page, opts, err := b.options("extract", c.Argument(2), extractOptions)
	if err != nil {
		return b.rejected(b.typeError("%s", err.Error()))
	}
	return b.r.enqueue(&job{name: "extract", toJS: b.viaJSON, do: func(ctx context.Context) (any, error) {
		res, err := b.r.host.Extract(ctx, b.r.target(page), instruction, schema, opts)
		if err != nil {
			return nil, err
		}
		b.r.usage.Extract = b.r.usage.Extract.Add(res.Metadata.Usage)
		return res, nil
	}})
}

func (b *bindings) metrics(goja.FunctionCall) goja.Value {
	return b.r.enqueue(&job{name: "metrics", toJS: b.viaJSON, do: func(context.Context) (any, error) {
		return b.r.call.Metrics.Plus(b.r.usage), nil
	}})
}

func (b *bindings) pagesCall(goja.FunctionCall) goja.Value {
	return b.r.enqueue(&job{name: "context.pages", toJS: b.pageList, do: func(ctx context.Context) (any, error) {
		return b.r.host.Pages(ctx)
	}})
}

func (b *bindings) newPage(c goja.FunctionCall) goja.Value {
	var url string
	if v := c.Argument(0); !goja.IsUndefined(v) && !goja.IsNull(v) {
		s, ok := v.Export().(string)
		if !ok {
			return b.rejected(b.typeError("context.newPage takes a URL (a string, or nothing for about:blank), not %s", typeOf(v)))
		}
		url = s
	}
	return b.r.enqueue(&job{name: "context.newPage", toJS: b.pageValue, do: func(ctx context.Context) (any, error) {
		id, err := b.r.host.NewPage(ctx, url)
		if err != nil {
			return nil, err
		}
		b.r.active = id
		return id, nil
	}})
}

func (b *bindings) activePage(goja.FunctionCall) goja.Value {
	return b.r.enqueue(&job{name: "context.activePage", toJS: b.pageValue, do: func(ctx context.Context) (any, error) {
		ids, err := b.r.host.Pages(ctx)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ids, b.r.active) {
			// The active page closed: the first page takes its
			// place, as in the client library's context.
			if len(ids) == 0 {
				return nil, errors.New("the browser has no open page")
			}
			b.r.active = ids[0]
		}
		return b.r.active, nil
	}})
}

func (b *bindings) setActivePage(c goja.FunctionCall) goja.Value {
	id, ok := b.pageID(c.Argument(0))
	if !ok {
		return b.rejected(b.typeError("context.setActivePage takes a page of the batch (batch.page, or one context.pages() or context.newPage() gave)"))
	}
	return b.r.enqueue(&job{name: "context.setActivePage", toJS: b.plain, do: func(ctx context.Context) (any, error) {
		ids, err := b.r.host.Pages(ctx)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ids, id) {
			return nil, fmt.Errorf("page %s is not open", id)
		}
		b.r.active = id
		return nil, nil
	}})
}

// The conversions of an operation's value to the promise's.

// plain is a string, or undefined for nil.
func (b *bindings) plain(v any) (goja.Value, error) {
	if v == nil {
		return goja.Undefined(), nil
	}
	return b.rt.ToValue(v), nil
}

// viaJSON is v as JSON.parse gives it: plain objects and arrays.
func (b *bindings) viaJSON(v any) (goja.Value, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	return b.parse(goja.Undefined(), b.rt.ToValue(string(raw)))
}

func (b *bindings) pageValue(v any) (goja.Value, error) {
	return b.page(v.(string)), nil
}

func (b *bindings) pageList(v any) (goja.Value, error) {
	ids := v.([]string)
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = b.page(id)
	}
	return b.rt.NewArray(out...), nil
}

// toJSON is v as JSON, refusing what JSON cannot carry: a function or a
// symbol anywhere, a cycle, a BigInt. undefined is null.
func (b *bindings) toJSON(v goja.Value) ([]byte, error) {
	if v == nil || goja.IsUndefined(v) {
		return []byte("null"), nil
	}
	out, err := b.stringify(goja.Undefined(), v, b.strictJSON)
	if err != nil {
		err = b.vmError(err)
		var se *ScriptError
		if errors.As(err, &se) {
			se.Message = "the result is not JSON: " + se.Message
		}
		return nil, err
	}
	s := out.String()
	if len(s) > MaxResultBytes {
		return nil, fmt.Errorf("%w: the result is %d bytes of JSON, more than the bound of %d", ErrLimit, len(s), MaxResultBytes)
	}
	return []byte(s), nil
}

// decodeStrict decodes a script's object into v through JSON, refusing
// keys v has no field for.
func (b *bindings) decodeStrict(o *goja.Object, v any) error {
	raw, err := b.toJSON(o)
	if err != nil {
		return err
	}
	// JSON v2: field names match exactly, and unknown ones are errors.
	if err := jsonv2.Unmarshal(raw, v, jsonv2.RejectUnknownMembers(true)); err != nil {
		return errors.New(jsonMessage(err))
	}
	return nil
}

// Errors the script sees.

func (b *bindings) typeError(format string, args ...any) goja.Value {
	// NewTypeError formats its first argument with the rest.
	return b.rt.NewTypeError(append([]any{format}, args...)...)
}

func (b *bindings) rangeError(msg string) goja.Value {
	o, err := b.rt.New(b.rangeErrorCtor, b.rt.ToValue(msg))
	if err != nil {
		return b.rt.ToValue(msg)
	}
	return o
}

// operationError is the Error a failed operation rejects with: its
// message, and the operation's name as `operation`.
func (b *bindings) operationError(name string, err error) goja.Value {
	o, nerr := b.rt.New(b.errorCtor, b.rt.ToValue(name+": "+err.Error()))
	if nerr != nil {
		return b.rt.ToValue(name + ": " + err.Error())
	}
	_ = o.Set("operation", name)
	b.opErrors[o] = err
	return o
}

// rejected is a promise rejected with reason.
func (b *bindings) rejected(reason goja.Value) goja.Value {
	p, _, reject := b.rt.NewPromise()
	_ = reject(reason)
	return b.rt.ToValue(p)
}

// vmError turns an error of a call into goja into Run's: an interrupt is
// its reason, a stack overflow ErrLimit, an exception a *ScriptError.
func (b *bindings) vmError(err error) error {
	var (
		interrupted *goja.InterruptedError
		overflow    *goja.StackOverflowError
		ex          *goja.Exception
	)
	switch {
	case errors.As(err, &interrupted):
		if reason, ok := interrupted.Value().(error); ok {
			return reason
		}
		return fmt.Errorf("the script was interrupted: %v", interrupted.Value())
	case errors.As(err, &overflow):
		return fmt.Errorf("%w: the script's calls went deeper than %d frames", ErrLimit, MaxCallStackSize)
	case errors.As(err, &ex):
		return b.scriptError(ex.Value(), stackOf(ex.String()))
	}
	return err
}

// scriptError is the *ScriptError of a thrown value or rejection reason:
// its toString(), its stack when it is an Error (else stack), and the Go
// error of the operation it came from.
func (b *bindings) scriptError(v goja.Value, stack string) *ScriptError {
	se := &ScriptError{Message: b.describe(v), Stack: stack}
	if o, ok := v.(*goja.Object); ok {
		if s := o.Get("stack"); s != nil && !goja.IsUndefined(s) {
			se.Stack = strings.TrimRight(s.String(), "\n")
		}
		se.Cause = b.opErrors[o]
	}
	return se
}

// describe is v's toString(), or a fallback when that throws.
func (b *bindings) describe(v goja.Value) (s string) {
	if v == nil {
		return "undefined"
	}
	if ex := b.rt.Try(func() { s = v.String() }); ex != nil {
		return "a value whose toString() throws (" + typeOf(v) + ")"
	}
	return s
}

// Kinds of values.

func typeOf(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if o, ok := v.(*goja.Object); ok {
		if _, fn := goja.AssertFunction(o); fn {
			return "function"
		}
		if isArray(o) {
			return "array"
		}
		return "object"
	}
	switch v.ExportType().Kind().String() {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int64", "float64":
		return "number"
	}
	if goja.IsBigInt(v) {
		return "bigint"
	}
	return "symbol"
}

func isString(v goja.Value) bool {
	_, ok := v.Export().(string)
	return ok
}

func isArray(o *goja.Object) bool { return o.ClassName() == "Array" }

// isPlainObject reports whether v is an object that is neither an array
// nor a function.
func isPlainObject(v goja.Value) bool {
	return typeOf(v) == "object"
}

// jsonMessage words a JSON v2 decoding error by the field it names and what
// was wrong, never quoting the value (it may be a key).
func jsonMessage(err error) string {
	var se *jsonv2.SemanticError
	if errors.As(err, &se) {
		field := strings.TrimPrefix(string(se.JSONPointer), "/")
		switch {
		case errors.Is(se.Err, jsonv2.ErrUnknownName):
			return fmt.Sprintf("unknown field %q", field)
		case field != "" && se.JSONKind != 0:
			return fmt.Sprintf("%s must not be a JSON %s", field, se.JSONKind)
		}
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
