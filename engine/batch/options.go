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
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// The options each operation takes, in the order an error lists them.
var (
	actOptions     = []string{"page", "timeout", "variables", "model", "selector", "ignoreSelectors", "cache"}
	observeOptions = actOptions
	extractOptions = []string{"page", "timeout", "model", "selector", "ignoreSelectors", "screenshot", "cache"}
)

// maxTimeoutMs bounds an operation's timeout option: a day, as the HTTP
// API's options.timeout.
const maxTimeoutMs = 24 * 60 * 60 * 1000

// options checks an operation's options object (undefined and null are
// none) and returns the page it names ("" for the active page) and the
// rest. Errors name the option.
func (b *bindings) options(op string, v goja.Value, allowed []string) (string, Options, error) {
	var opts Options
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return "", opts, nil
	}
	o, ok := v.(*goja.Object)
	if !ok || !isPlainObject(v) {
		return "", opts, fmt.Errorf("%s: options must be an object, not %s", op, typeOf(v))
	}
	var page string
	for _, key := range o.Keys() {
		val := o.Get(key)
		if goja.IsUndefined(val) {
			continue
		}
		if !slices.Contains(allowed, key) {
			return "", opts, fmt.Errorf("%s: options.%s is not an option of %s; it takes %s", op, key, op, strings.Join(allowed, ", "))
		}
		var err error
		switch key {
		case "page":
			var ok bool
			if page, ok = b.pageID(val); !ok {
				err = errors.New("must be a page of the batch (batch.page, or one context.pages() or context.newPage() gave) or a page id")
			}
		case "timeout":
			opts.Timeout, err = timeoutOption(val)
		case "variables":
			opts.Variables, err = variablesOption(val)
		case "model":
			opts.Model, err = b.modelOption(val)
		case "selector":
			opts.Selector, err = stringOption(val)
		case "ignoreSelectors":
			opts.IgnoreSelectors, err = stringsOption(val)
		case "screenshot":
			opts.Screenshot, err = boolOption(val)
		case "cache":
			opts.Cache, err = b.cacheOption(val)
		}
		if err != nil {
			return "", Options{}, fmt.Errorf("%s: options.%s %s", op, key, err.Error())
		}
	}
	return page, opts, nil
}

func timeoutOption(v goja.Value) (time.Duration, error) {
	if typeOf(v) != "number" {
		return 0, fmt.Errorf("must be a number of milliseconds, not %s", typeOf(v))
	}
	ms := v.ToFloat()
	if math.IsNaN(ms) || ms < 0 || ms > maxTimeoutMs {
		return 0, fmt.Errorf("must be between 0 and %d milliseconds", maxTimeoutMs)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// variablesOption reads {name: value} where a value is a string, number
// or boolean, or {value, description}.
func variablesOption(v goja.Value) (map[string]Variable, error) {
	o, ok := v.(*goja.Object)
	if !ok || !isPlainObject(v) {
		return nil, fmt.Errorf("must be an object of name to value, not %s", typeOf(v))
	}
	out := map[string]Variable{}
	for _, name := range o.Keys() {
		val := o.Get(name)
		if vo, ok := val.(*goja.Object); ok && isPlainObject(val) {
			text, err := primitive(vo.Get("value"))
			if err != nil {
				return nil, fmt.Errorf("%s.value %s", name, err.Error())
			}
			desc := vo.Get("description")
			var d string
			if desc != nil && !goja.IsUndefined(desc) {
				if d, ok = desc.Export().(string); !ok {
					return nil, fmt.Errorf("%s.description must be a string", name)
				}
			}
			out[name] = Variable{Value: text, Description: d}
			continue
		}
		text, err := primitive(val)
		if err != nil {
			return nil, fmt.Errorf("%s %s", name, err.Error())
		}
		out[name] = Variable{Value: text}
	}
	return out, nil
}

// primitive is a variable's text: a string as is, a number or boolean as
// JavaScript's String() writes it.
func primitive(v goja.Value) (string, error) {
	switch typeOf(v) {
	case "string", "number", "boolean":
		return v.String(), nil
	}
	return "", fmt.Errorf("must be a string, a number or a boolean, not %s", typeOf(v))
}

// modelOption reads a model name, or {modelName, apiKey, baseURL, headers}.
func (b *bindings) modelOption(v goja.Value) (*Model, error) {
	if s, ok := v.Export().(string); ok {
		if s == "" {
			return nil, errors.New("must not be empty")
		}
		return &Model{ModelName: s}, nil
	}
	o, ok := v.(*goja.Object)
	if !ok || !isPlainObject(v) {
		return nil, fmt.Errorf("must be a model name or {modelName, apiKey, baseURL, headers}, not %s", typeOf(v))
	}
	var m Model
	if err := b.decodeStrict(o, &m); err != nil {
		// decodeStrict's messages name fields and kinds, never values:
		// the object may hold a key.
		return nil, err
	}
	if m.ModelName == "" {
		return nil, errors.New("needs a modelName")
	}
	return &m, nil
}

func stringOption(v goja.Value) (string, error) {
	s, ok := v.Export().(string)
	if !ok {
		return "", fmt.Errorf("must be a string, not %s", typeOf(v))
	}
	return s, nil
}

func stringsOption(v goja.Value) ([]string, error) {
	o, ok := v.(*goja.Object)
	if !ok || !isArray(o) {
		return nil, fmt.Errorf("must be an array of strings, not %s", typeOf(v))
	}
	n := o.Get("length").ToInteger()
	out := make([]string, 0, n)
	for i := range n {
		s, ok := o.Get(strconv.FormatInt(i, 10)).Export().(string)
		if !ok {
			return nil, fmt.Errorf("[%d] must be a string", i)
		}
		out = append(out, s)
	}
	return out, nil
}

func boolOption(v goja.Value) (bool, error) {
	t, ok := v.Export().(bool)
	if !ok {
		return false, fmt.Errorf("must be a boolean, not %s", typeOf(v))
	}
	return t, nil
}

// cacheOption reads true, false, or {threshold: n} with n a positive
// integer.
func (b *bindings) cacheOption(v goja.Value) (*Cache, error) {
	if t, ok := v.Export().(bool); ok {
		return &Cache{Enabled: t}, nil
	}
	o, ok := v.(*goja.Object)
	if !ok || !isPlainObject(v) {
		return nil, fmt.Errorf("must be a boolean or {threshold: n}, not %s", typeOf(v))
	}
	var c struct {
		Threshold *float64 `json:"threshold"`
	}
	if err := b.decodeStrict(o, &c); err != nil {
		return nil, err
	}
	if c.Threshold == nil || *c.Threshold < 1 || *c.Threshold != math.Trunc(*c.Threshold) || *c.Threshold > math.MaxInt32 {
		return nil, errors.New("threshold must be a positive integer")
	}
	return &Cache{Enabled: true, Threshold: int(*c.Threshold)}, nil
}
