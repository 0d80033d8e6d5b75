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
	"fmt"
	"maps"
	"slices"
	"sort"
)

// Keywords OpenAI's strict structured output accepts, by the type they
// constrain. Anything else is dropped and noted in the description.
var (
	strictCommonKeywords = []string{"type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs", "definitions"}
	strictStringKeywords = []string{"pattern", "format"}
	strictNumberKeywords = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
	strictArrayKeywords  = []string{"items", "minItems", "maxItems"}
	strictObjectKeywords = []string{"properties", "required", "additionalProperties"}
	// strictFormats are the string formats strict mode understands.
	strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
	// anyValueTypes stands for a schema that allows anything, which strict
	// mode cannot say: every scalar, null included.
	anyValueTypes = []any{"string", "number", "boolean", "null"}
)

// AdaptSchemaForStrict returns a copy of schema that OpenAI's strict
// structured output accepts, so that a schema written for validation is
// adapted rather than refused:
//
//   - every object lists all its properties in required, and properties the
//     schema left optional become nullable (the answer carries null where
//     the model would have left them out);
//   - every object has additionalProperties false (a map-like object thus
//     becomes an empty one);
//   - keywords strict mode rejects (minLength, maxLength, uniqueItems,
//     patternProperties, default, examples, ...) and keywords that do not
//     apply to the schema's type (pattern on a number) are dropped, and
//     noted in the description so the model still reads them; string
//     formats strict mode does not know are dropped the same way;
//   - allOf is merged into its schema, oneOf becomes anyOf, OpenAPI's
//     nullable: true becomes a null type, a $ref loses its siblings, and an
//     empty or true schema becomes "any scalar or null".
//
// The root should describe an object, as strict mode requires; Generate
// wraps other roots itself. The error reports schemas that are malformed
// (a property that is not a schema, a $ref that does not resolve, a false
// schema), not ones strict mode merely dislikes.
func AdaptSchemaForStrict(schema map[string]any) (map[string]any, error) {
	if len(schema) == 0 {
		return nil, fmt.Errorf("schema is empty")
	}
	root := deepCopy(schema).(map[string]any)
	a := strictAdapter{root: root}
	out, err := a.node(root, "#", 0)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// strictAdapter carries the root, against which references resolve.
type strictAdapter struct {
	root map[string]any
}

// node adapts one schema found at path.
func (a *strictAdapter) node(v any, path string, depth int) (map[string]any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%s: schema nested deeper than %d", path, maxSchemaDepth)
	}
	var s map[string]any
	switch x := v.(type) {
	case bool:
		if !x {
			return nil, fmt.Errorf("%s: a false schema allows nothing and cannot be adapted", path)
		}
		return map[string]any{"type": slices.Clone(anyValueTypes)}, nil
	case map[string]any:
		s = x
	default:
		return nil, fmt.Errorf("%s: not a schema object but %T", path, v)
	}

	if ref, ok := s["$ref"].(string); ok {
		// Strict mode wants a reference alone; what it points at is adapted
		// with the definitions.
		if _, err := lookupRef(a.root, ref); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return map[string]any{"$ref": ref}, nil
	}
	s, err := mergeAllOf(s, a.root, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s = maps.Clone(s)
	if oneOf, ok := s["oneOf"]; ok {
		s["anyOf"] = append(slices.Clone(asSlice(s["anyOf"])), asSlice(oneOf)...)
		delete(s, "oneOf")
	}

	types := schemaTypes(s)
	if len(types) == 0 {
		// Infer what the schema plainly describes, as validators would not
		// but strict mode needs.
		switch {
		case hasAny(s, "properties"):
			types = []string{"object"}
		case hasAny(s, "items"):
			types = []string{"array"}
		}
		if len(types) == 1 {
			s["type"] = types[0]
		}
	}
	if n, _ := s["nullable"].(bool); n && len(types) > 0 && !slices.Contains(types, "null") {
		types = append(types, "null")
		s["type"] = toAnySlice(types)
	}
	delete(s, "nullable")

	allowed := map[string]bool{}
	for _, k := range strictCommonKeywords {
		allowed[k] = true
	}
	has := func(t ...string) bool {
		return slices.ContainsFunc(types, func(x string) bool { return slices.Contains(t, x) })
	}
	if has("string") {
		for _, k := range strictStringKeywords {
			allowed[k] = true
		}
	}
	if has("number", "integer") {
		for _, k := range strictNumberKeywords {
			allowed[k] = true
		}
	}
	if has("array") {
		for _, k := range strictArrayKeywords {
			allowed[k] = true
		}
	}
	if has("object") {
		for _, k := range strictObjectKeywords {
			allowed[k] = true
		}
	}

	out := map[string]any{}
	dropped := map[string]any{}
	for k, val := range s {
		switch {
		case metaKeywords[k]:
		case k == "additionalProperties" || k == "required":
			// Rewritten below for objects, meaningless for anything else.
		case k == "format" && allowed[k] && !slices.Contains(strictFormats, fmt.Sprint(val)):
			dropped[k] = val
		case (k == "exclusiveMinimum" || k == "exclusiveMaximum") && !isNumber(val):
			// Draft 4's boolean form, which strict mode does not take.
			dropped[k] = val
		case allowed[k]:
			out[k] = val
		default:
			dropped[k] = val
		}
	}

	if defs, ok := s["$defs"]; ok {
		if out["$defs"], err = a.schemaMap(defs, path+"/$defs", depth); err != nil {
			return nil, err
		}
	}
	if defs, ok := s["definitions"]; ok {
		if out["definitions"], err = a.schemaMap(defs, path+"/definitions", depth); err != nil {
			return nil, err
		}
	}
	if anyOf, ok := s["anyOf"]; ok {
		branches := asSlice(anyOf)
		if branches == nil {
			return nil, fmt.Errorf("%s/anyOf: not a list", path)
		}
		adapted := make([]any, 0, len(branches))
		for i, b := range branches {
			ab, err := a.node(b, fmt.Sprintf("%s/anyOf/%d", path, i), depth+1)
			if err != nil {
				return nil, err
			}
			adapted = append(adapted, ab)
		}
		out["anyOf"] = adapted
	}
	if has("array") {
		items, ok := s["items"]
		if !ok || isTupleItems(items) {
			if ok {
				dropped["items"] = items
			}
			items = true
		}
		if out["items"], err = a.node(items, path+"/items", depth+1); err != nil {
			return nil, err
		}
	}
	if has("object") {
		if err := a.object(s, out, dropped, path, depth); err != nil {
			return nil, err
		}
	}
	if _, typed := out["type"]; !typed && !hasAny(out, "anyOf", "enum", "const") {
		// Nothing says what the value is, which strict mode refuses.
		out["type"] = slices.Clone(anyValueTypes)
	}
	annotate(out, dropped)
	return out, nil
}

// object rewrites the object keywords of s into out: all properties
// adapted and required, the optional ones nullable, and no additional
// properties.
func (a *strictAdapter) object(s, out, dropped map[string]any, path string, depth int) error {
	props := map[string]any{}
	if p, ok := s["properties"]; ok {
		pm, ok := p.(map[string]any)
		if !ok {
			return fmt.Errorf("%s/properties: not an object but %T", path, p)
		}
		props = pm
	}
	required := map[string]bool{}
	for _, r := range asSlice(s["required"]) {
		if name, ok := r.(string); ok {
			required[name] = true
		}
	}
	names := slices.Collect(maps.Keys(props))
	sort.Strings(names)
	adapted := make(map[string]any, len(props))
	for _, name := range names {
		ps, err := a.node(props[name], path+"/properties/"+name, depth+1)
		if err != nil {
			return err
		}
		if !required[name] {
			ps = a.nullable(ps)
		}
		adapted[name] = ps
	}
	out["properties"] = adapted
	out["required"] = toAnySlice(names)
	if ap, ok := s["additionalProperties"]; ok && ap != false {
		dropped["additionalProperties"] = ap
	}
	out["additionalProperties"] = false
	return nil
}

// schemaMap adapts every schema of a $defs-like map.
func (a *strictAdapter) schemaMap(v any, path string, depth int) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not an object but %T", path, v)
	}
	out := make(map[string]any, len(m))
	for k, def := range m {
		d, err := a.node(def, path+"/"+k, depth+1)
		if err != nil {
			return nil, err
		}
		out[k] = d
	}
	return out, nil
}

// nullable returns an adapted schema that also allows null.
func (a *strictAdapter) nullable(s map[string]any) map[string]any {
	if allowsNull(s, a.root, 0) {
		return s
	}
	null := map[string]any{"type": "null"}
	switch {
	case hasAny(s, "$ref", "const"):
		return map[string]any{"anyOf": []any{s, null}}
	case hasAny(s, "anyOf"):
		s["anyOf"] = append(asSlice(s["anyOf"]), null)
		return s
	}
	if types := schemaTypes(s); len(types) > 0 {
		s["type"] = toAnySlice(append(types, "null"))
	}
	if e, ok := s["enum"]; ok {
		s["enum"] = append(slices.Clone(asSlice(e)), nil)
	}
	return s
}

func hasAny(s map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}

// isTupleItems reports draft 4's tuple form of items, a list of schemas.
func isTupleItems(v any) bool {
	_, ok := v.([]any)
	return ok
}

func isNumber(v any) bool {
	switch v.(type) {
	case float64, float32, int, int64, int32, uint, uint64, uint32:
		return true
	}
	_, ok := v.(interface{ Float64() (float64, error) })
	return ok
}

func toAnySlice(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}
