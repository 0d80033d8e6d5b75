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

package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// maxSchemaDepth bounds recursion through a schema, and through $ref chains,
// so that a cyclic or absurd schema fails instead of overflowing the stack.
const maxSchemaDepth = 64

// wrapKey is the property that holds the answer when a schema whose root is
// not an object is wrapped for a provider that needs an object root.
const wrapKey = "value"

// structuredOutput is a caller's Schema as sent to one provider, with what
// is needed to turn the provider's answer back into a document valid against
// the caller's schema.
type structuredOutput struct {
	name        string
	description string
	// wire is the schema as sent.
	wire map[string]any
	// wrapped says the answer is {"value": <document>}.
	wrapped bool
	// restore, when set, is the caller's schema: properties it leaves
	// optional were made required and nullable on the wire, and their nulls
	// are dropped from the answer.
	restore map[string]any
}

// schemaOptions says what a provider needs of a schema.
type schemaOptions struct {
	// objectRoot wraps a schema whose root is not an object.
	objectRoot bool
	// strict adapts the schema with AdaptSchemaForStrict.
	strict bool
	// adapt, when set, rewrites the schema for the provider.
	adapt func(map[string]any) (map[string]any, error)
}

// newStructuredOutput prepares s for a provider.
func newStructuredOutput(s *Schema, opts schemaOptions) (*structuredOutput, error) {
	o := &structuredOutput{name: schemaName(s.Name), description: s.Description}
	wire := deepCopy(s.JSON).(map[string]any)
	if opts.objectRoot && !isObjectSchema(wire) {
		wire = wrapRoot(wire)
		o.wrapped = true
	}
	if opts.strict {
		adapted, err := AdaptSchemaForStrict(wire)
		if err != nil {
			return nil, err
		}
		wire = adapted
		o.restore = s.JSON
	}
	if opts.adapt != nil {
		adapted, err := opts.adapt(wire)
		if err != nil {
			return nil, err
		}
		wire = adapted
	}
	o.wire = wire
	return o, nil
}

// decode checks that text is one JSON document and maps it back to the
// caller's schema: unwrapped, and without the nulls strict adaptation
// allowed where the caller's schema allows none.
func (o *structuredOutput) decode(text string) (string, error) {
	text = strings.TrimSpace(text)
	dec := json.NewDecoder(strings.NewReader(text))
	// Numbers stay as written: an id like 12345678901234567890 must survive.
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return "", fmt.Errorf("%w: answer is not a JSON document: %w", ErrInvalidOutput, err)
	}
	if dec.More() {
		return "", fmt.Errorf("%w: answer holds more than one JSON document", ErrInvalidOutput)
	}
	if !o.wrapped && o.restore == nil {
		return text, nil
	}
	if o.wrapped {
		obj, ok := doc.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%w: answer is not the object the schema asked for", ErrInvalidOutput)
		}
		if doc, ok = obj[wrapKey]; !ok {
			return "", fmt.Errorf("%w: answer lacks the %q property the schema requires", ErrInvalidOutput, wrapKey)
		}
	}
	if o.restore != nil {
		doc = dropAddedNulls(doc, o.restore, o.restore, 0)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// The document goes back to a page or a user, not into HTML.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return "", fmt.Errorf("%w: re-encoding the answer: %w", ErrInvalidOutput, err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

var invalidNameChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// schemaName returns name in the form OpenAI (json_schema name) and
// Anthropic (tool name) accept: ^[a-zA-Z0-9_-]{1,64}$.
func schemaName(name string) string {
	name = invalidNameChars.ReplaceAllString(name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return "response"
	}
	return name
}

// isObjectSchema reports whether a schema's root describes an object and
// nothing else, as OpenAI's response format and Anthropic's tool input
// require.
func isObjectSchema(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case nil:
		_, hasProps := s["properties"]
		_, hasRef := s["$ref"]
		_, hasAnyOf := s["anyOf"]
		_, hasOneOf := s["oneOf"]
		return hasProps && !hasRef && !hasAnyOf && !hasOneOf
	}
	return false
}

// wrapRoot returns an object schema whose one required property, "value",
// is s. Definitions move to the new root so that "#/$defs/..." references
// still resolve.
func wrapRoot(s map[string]any) map[string]any {
	inner := maps.Clone(s)
	w := map[string]any{
		"type":                 "object",
		"properties":           map[string]any{wrapKey: inner},
		"required":             []any{wrapKey},
		"additionalProperties": false,
	}
	for _, k := range []string{"$defs", "definitions"} {
		if v, ok := inner[k]; ok {
			w[k] = v
			delete(inner, k)
		}
	}
	delete(inner, "$schema")
	delete(inner, "$id")
	return w
}

// dropAddedNulls removes, from objects in doc, null properties that schema
// leaves optional and does not allow to be null: strict adaptation made them
// nullable so that the model could leave them out. It follows properties,
// items, $ref and allOf; under anyOf it cannot know the branch and stops.
func dropAddedNulls(doc any, schema any, root map[string]any, depth int) any {
	s, ok := resolveSchema(schema, root)
	if !ok || depth > maxSchemaDepth {
		return doc
	}
	switch v := doc.(type) {
	case map[string]any:
		props, required := objectShape(s, root)
		for k, pv := range v {
			ps, known := props[k]
			if !known {
				continue
			}
			if pv == nil && !required[k] && !allowsNull(ps, root, 0) {
				delete(v, k)
				continue
			}
			v[k] = dropAddedNulls(pv, ps, root, depth+1)
		}
	case []any:
		if items, ok := s["items"]; ok {
			for i := range v {
				v[i] = dropAddedNulls(v[i], items, root, depth+1)
			}
		}
	}
	return doc
}

// objectShape returns the properties and required names of an object
// schema, its allOf members' included.
func objectShape(s map[string]any, root map[string]any) (map[string]any, map[string]bool) {
	props := map[string]any{}
	required := map[string]bool{}
	var collect func(s map[string]any, depth int)
	collect = func(s map[string]any, depth int) {
		if depth > maxSchemaDepth {
			return
		}
		if p, ok := s["properties"].(map[string]any); ok {
			for k, v := range p {
				if _, seen := props[k]; !seen {
					props[k] = v
				}
			}
		}
		for _, r := range asSlice(s["required"]) {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
		for _, sub := range asSlice(s["allOf"]) {
			if m, ok := resolveSchema(sub, root); ok {
				collect(m, depth+1)
			}
		}
	}
	collect(s, 0)
	return props, required
}

// allowsNull reports whether null is valid against schema as far as its
// type, nullable, enum, const and anyOf/oneOf say.
func allowsNull(schema any, root map[string]any, depth int) bool {
	if b, ok := schema.(bool); ok {
		return b
	}
	s, ok := resolveSchema(schema, root)
	if !ok || depth > maxSchemaDepth {
		return true
	}
	if n, _ := s["nullable"].(bool); n {
		return true
	}
	if c, ok := s["const"]; ok {
		return c == nil
	}
	if e, ok := s["enum"]; ok {
		return slices.Contains(asSlice(e), nil)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[k]; ok {
			return slices.ContainsFunc(asSlice(branches), func(b any) bool { return allowsNull(b, root, depth+1) })
		}
	}
	switch t := s["type"].(type) {
	case string:
		return t == "null"
	case []any:
		return slices.Contains(t, any("null"))
	case []string:
		return slices.Contains(t, "null")
	}
	return true
}

// resolveSchema returns schema as a map, following local $refs.
func resolveSchema(schema any, root map[string]any) (map[string]any, bool) {
	s, ok := schema.(map[string]any)
	for i := 0; ok && i < maxSchemaDepth; i++ {
		ref, isRef := s["$ref"].(string)
		if !isRef {
			return s, true
		}
		var err error
		if s, err = lookupRef(root, ref); err != nil {
			return nil, false
		}
	}
	return nil, false
}

// lookupRef resolves a local reference into the root's $defs or
// definitions, the only kinds model providers accept.
func lookupRef(root map[string]any, ref string) (map[string]any, error) {
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		name, ok := strings.CutPrefix(ref, prefix)
		if !ok {
			continue
		}
		name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
		defs, _ := root[strings.TrimSuffix(strings.TrimPrefix(prefix, "#/"), "/")].(map[string]any)
		if def, ok := defs[name].(map[string]any); ok {
			return def, nil
		}
		return nil, fmt.Errorf("$ref %q: no such definition", ref)
	}
	return nil, fmt.Errorf("$ref %q: only references into #/$defs or #/definitions are supported", ref)
}

// mergeAllOf folds the members of s's allOf into s, since no provider's
// strict subset has allOf: properties and required are united, other
// keywords kept from s or else taken from the first member that has them.
func mergeAllOf(s map[string]any, root map[string]any, depth int) (map[string]any, error) {
	members, ok := s["allOf"]
	if !ok {
		return s, nil
	}
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("allOf nested deeper than %d", maxSchemaDepth)
	}
	out := maps.Clone(s)
	delete(out, "allOf")
	props, _ := out["properties"].(map[string]any)
	props = maps.Clone(props)
	required := asSlice(out["required"])
	for i, m := range asSlice(members) {
		sub, ok := m.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("allOf[%d]: not a schema object", i)
		}
		if ref, ok := sub["$ref"].(string); ok {
			def, err := lookupRef(root, ref)
			if err != nil {
				return nil, fmt.Errorf("allOf[%d]: %w", i, err)
			}
			sub = def
		}
		sub, err := mergeAllOf(sub, root, depth+1)
		if err != nil {
			return nil, fmt.Errorf("allOf[%d]: %w", i, err)
		}
		for k, v := range sub {
			switch k {
			case "properties":
				p, _ := v.(map[string]any)
				for name, ps := range p {
					if props == nil {
						props = map[string]any{}
					}
					if _, seen := props[name]; !seen {
						props[name] = ps
					}
				}
			case "required":
				for _, r := range asSlice(v) {
					if !slices.Contains(required, r) {
						required = append(required, r)
					}
				}
			default:
				if _, set := out[k]; !set {
					out[k] = v
				}
			}
		}
	}
	if props != nil {
		out["properties"] = props
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out, nil
}

// asSlice returns v as []any, accepting the []string a Go caller may have
// written instead of decoded JSON.
func asSlice(v any) []any {
	switch s := v.(type) {
	case []any:
		return s
	case []string:
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = x
		}
		return out
	}
	return nil
}

// schemaTypes returns the names in a schema's type keyword.
func schemaTypes(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []string:
		return slices.Clone(t)
	case []any:
		var out []string
		for _, x := range t {
			if name, ok := x.(string); ok {
				out = append(out, name)
			}
		}
		return out
	}
	return nil
}

// annotate appends dropped keywords to a schema's description, so that
// the model still reads the constraints the provider cannot enforce.
func annotate(s map[string]any, dropped map[string]any) {
	if len(dropped) == 0 {
		return
	}
	keys := slices.Collect(maps.Keys(dropped))
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		b, err := json.Marshal(dropped[k])
		if err != nil {
			b = []byte(fmt.Sprint(dropped[k]))
		}
		parts = append(parts, k+": "+string(b))
	}
	note := "Constraints: " + strings.Join(parts, ", ") + "."
	if d, _ := s["description"].(string); d != "" {
		note = d + "\n" + note
	}
	s["description"] = note
}

// metaKeywords are dropped without a note: they say nothing to a model.
var metaKeywords = map[string]bool{"$schema": true, "$id": true, "$comment": true, "$anchor": true, "$vocabulary": true}

// deepCopy copies decoded JSON, so that adapting a schema never changes the
// caller's.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	}
	return v
}
