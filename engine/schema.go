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
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/browserfleet/browserfleet/engine/action"
)

// methods are those the model may answer with: all but scrollIntoView,
// which the engine does by itself before each action.
var methods = slices.DeleteFunc(slices.Clone(action.Methods), func(m string) bool { return m == action.ScrollIntoView })

func elementIDSchema(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

// actAnswerSchema is what the model answers an act with.
func actAnswerSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"elementId":   elementIDSchema("the id of the element to act on, like 0-123; empty when no element fits"),
			"method":      map[string]any{"type": "string", "enum": methods},
			"arguments":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"description": map[string]any{"type": "string", "description": "what the action does, in a few words"},
			"twoStep":     map[string]any{"type": "boolean", "description": "true when a second action on what this one opens is needed"},
		},
		"required":             []any{"elementId", "method", "arguments", "description", "twoStep"},
		"additionalProperties": false,
	}
}

type actAnswer struct {
	ElementID   string   `json:"elementId"`
	Method      string   `json:"method"`
	Arguments   []string `json:"arguments"`
	Description string   `json:"description"`
	TwoStep     bool     `json:"twoStep"`
}

// observeAnswerSchema is what the model answers an observe with.
func observeAnswerSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"elements": map[string]any{
				"type": "array",
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"elementId":   elementIDSchema("the id of the element, like 0-123"),
						"description": map[string]any{"type": "string"},
						"method":      map[string]any{"type": "string", "enum": methods},
						"arguments":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
					},
					"required":             []any{"elementId", "description", "method", "arguments"},
					"additionalProperties": false,
				},
			},
		},
		"required":             []any{"elements"},
		"additionalProperties": false,
	}
}

type observeAnswer struct {
	Elements []actAnswer `json:"elements"`
}

// extractionSchema is the schema of an extract given only an instruction.
var extractionSchema = json.RawMessage(`{"type":"object","properties":{"extraction":{"type":"string"}},"required":["extraction"],"additionalProperties":false}`)

// ExtractionSchema is the JSON Schema of what an extract given only an
// instruction answers: {"extraction": "..."}.
func ExtractionSchema() json.RawMessage { return append(json.RawMessage(nil), extractionSchema...) }

// schema is a caller's JSON Schema, compiled for validation.
type schema struct {
	doc      map[string]any
	compiled *jsonschema.Schema
}

// compileSchema parses and compiles a caller's JSON Schema. Formats such as
// uri are asserted, so that a link the model got wrong is caught.
func compileSchema(raw json.RawMessage) (*schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema must be a JSON object")
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	// No loader: a caller's $ref may point inside its schema only, never at
	// a file of the runner pod or a URL the pod would fetch.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource("schema.json", doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	compiled, err := c.Compile("schema.json")
	if err != nil {
		return nil, fmt.Errorf("schema is not a valid JSON Schema: %w", err)
	}
	return &schema{doc: obj, compiled: compiled}, nil
}

// ValidateJSON checks doc against the JSON Schema schema, the way Extract
// checks a model's answer (formats such as uri asserted, no $ref outside
// the schema). The error says where doc breaks the schema; a schema that
// is not a valid JSON Schema is an error wrapping ErrInvalidArgument.
func ValidateJSON(schema, doc json.RawMessage) error {
	sch, err := compileSchema(schema)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return sch.validate(doc)
}

// validate checks a document against the schema.
func (s *schema) validate(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.compiled.Validate(v)
}

// linkPlan marks where, in a document valid against a schema, the model
// answers link element ids that are to become URLs.
type linkPlan struct {
	link  bool
	props map[string]*linkPlan
	items *linkPlan
}

// isLinkSchema says whether a schema node asks for a URL.
func isLinkSchema(node map[string]any) bool {
	if t, _ := node["type"].(string); t != "string" {
		return false
	}
	switch f, _ := node["format"].(string); f {
	case "uri", "url", "iri", "uri-reference", "iri-reference":
		return true
	}
	return false
}

// withLinkIDs returns a copy of a schema in which every URL field asks for a
// link element's id instead, and the plan to map the answer back. Link URLs
// are long and easy to misspell; ids are short and checked against the page.
func withLinkIDs(node map[string]any) (map[string]any, *linkPlan) {
	if isLinkSchema(node) {
		desc, _ := node["description"].(string)
		return elementIDSchema(strings.TrimSpace(desc + " (answer the id of the link element, like 0-123)")), &linkPlan{link: true}
	}
	out := make(map[string]any, len(node))
	for k, v := range node {
		out[k] = v
	}
	var plan *linkPlan
	if props, ok := node["properties"].(map[string]any); ok {
		newProps := make(map[string]any, len(props))
		for name, p := range props {
			newProps[name] = p
			if pm, ok := p.(map[string]any); ok {
				sub, subPlan := withLinkIDs(pm)
				newProps[name] = sub
				if subPlan != nil {
					if plan == nil {
						plan = &linkPlan{props: map[string]*linkPlan{}}
					}
					plan.props[name] = subPlan
				}
			}
		}
		out["properties"] = newProps
	}
	if items, ok := node["items"].(map[string]any); ok {
		sub, subPlan := withLinkIDs(items)
		out["items"] = sub
		if subPlan != nil {
			if plan == nil {
				plan = &linkPlan{}
			}
			plan.items = subPlan
		}
	}
	return out, plan
}

// apply maps link ids in v back to URLs. An id the page does not have is
// left as answered, for validation to refuse.
func (p *linkPlan) apply(v any, urls map[string]string) any {
	if p == nil || v == nil {
		return v
	}
	switch {
	case p.link:
		if id, ok := v.(string); ok {
			if u, ok := urls[strings.Trim(strings.TrimSpace(id), "[]")]; ok {
				return u
			}
		}
		return v
	case p.items != nil:
		if arr, ok := v.([]any); ok {
			for i := range arr {
				arr[i] = p.items.apply(arr[i], urls)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for name, sub := range p.props {
			if val, ok := obj[name]; ok {
				obj[name] = sub.apply(val, urls)
			}
		}
	}
	return v
}
