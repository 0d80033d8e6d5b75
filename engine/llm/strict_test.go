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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// obj is shorthand for a schema literal.
type obj = map[string]any

func TestAdaptSchemaForStrict(t *testing.T) {
	anyScalar := []any{"string", "number", "boolean", "null"}
	tests := []struct {
		name string
		in   obj
		want obj
	}{{
		name: "already strict",
		in: obj{
			"type":                 "object",
			"properties":           obj{"a": obj{"type": "string"}},
			"required":             []any{"a"},
			"additionalProperties": false,
		},
		want: obj{
			"type":                 "object",
			"properties":           obj{"a": obj{"type": "string"}},
			"required":             []any{"a"},
			"additionalProperties": false,
		},
	}, {
		name: "optional properties become required and nullable",
		in: obj{
			"type": "object",
			"properties": obj{
				"id":    obj{"type": "string"},
				"count": obj{"type": "integer"},
				"tags":  obj{"type": []any{"array", "null"}, "items": obj{"type": "string"}},
			},
			"required": []any{"id"},
		},
		want: obj{
			"type": "object",
			"properties": obj{
				"id":    obj{"type": "string"},
				"count": obj{"type": []any{"integer", "null"}},
				// Already nullable: left alone.
				"tags": obj{"type": []any{"array", "null"}, "items": obj{"type": "string"}},
			},
			"required":             []any{"count", "id", "tags"},
			"additionalProperties": false,
		},
	}, {
		name: "additionalProperties forced false, a map schema noted",
		in: obj{
			"type":                 "object",
			"properties":           obj{"a": obj{"type": "string"}},
			"required":             []any{"a"},
			"additionalProperties": obj{"type": "string"},
		},
		want: obj{
			"type":                 "object",
			"properties":           obj{"a": obj{"type": "string"}},
			"required":             []any{"a"},
			"additionalProperties": false,
			"description":          `Constraints: additionalProperties: {"type":"string"}.`,
		},
	}, {
		name: "unsupported and misplaced keywords dropped and noted",
		in: obj{
			"type": "object",
			"properties": obj{
				"name":  obj{"type": "string", "description": "Full name.", "minLength": 1, "maxLength": 80, "pattern": "^[A-Z]"},
				"age":   obj{"type": "integer", "minimum": 0, "pattern": "^[0-9]+$"},
				"when":  obj{"type": "string", "format": "date-time"},
				"site":  obj{"type": "string", "format": "uri"},
				"items": obj{"type": "array", "items": obj{"type": "string"}, "minItems": 1, "uniqueItems": true},
				"mode":  obj{"type": "string", "enum": []any{"a", "b"}, "default": "a", "examples": []any{"b"}},
			},
			"required":      []any{"name", "age", "when", "site", "items", "mode"},
			"minProperties": 1,
			"$schema":       "https://json-schema.org/draft/2020-12/schema",
		},
		want: obj{
			"type": "object",
			"properties": obj{
				"name":  obj{"type": "string", "pattern": "^[A-Z]", "description": "Full name.\nConstraints: maxLength: 80, minLength: 1."},
				"age":   obj{"type": "integer", "minimum": 0, "description": `Constraints: pattern: "^[0-9]+$".`},
				"when":  obj{"type": "string", "format": "date-time"},
				"site":  obj{"type": "string", "description": `Constraints: format: "uri".`},
				"items": obj{"type": "array", "items": obj{"type": "string"}, "minItems": 1, "description": "Constraints: uniqueItems: true."},
				"mode":  obj{"type": "string", "enum": []any{"a", "b"}, "description": `Constraints: default: "a", examples: ["b"].`},
			},
			"required":             []any{"age", "items", "mode", "name", "site", "when"},
			"additionalProperties": false,
			"description":          "Constraints: minProperties: 1.",
		},
	}, {
		name: "nested objects in arrays adapted",
		in: obj{
			"type": "object",
			"properties": obj{
				"links": obj{"type": "array", "items": obj{
					"type":       "object",
					"properties": obj{"href": obj{"type": "string"}, "text": obj{"type": "string"}},
					"required":   []any{"href"},
				}},
			},
			"required": []any{"links"},
		},
		want: obj{
			"type": "object",
			"properties": obj{
				"links": obj{"type": "array", "items": obj{
					"type":                 "object",
					"properties":           obj{"href": obj{"type": "string"}, "text": obj{"type": []any{"string", "null"}}},
					"required":             []any{"href", "text"},
					"additionalProperties": false,
				}},
			},
			"required":             []any{"links"},
			"additionalProperties": false,
		},
	}, {
		name: "optional enum, const, anyOf and $ref become nullable",
		in: obj{
			"type": "object",
			"properties": obj{
				"method": obj{"type": "string", "enum": []any{"click", "fill"}},
				"kind":   obj{"const": "act"},
				"value":  obj{"anyOf": []any{obj{"type": "string"}, obj{"type": "number"}}},
				"target": obj{"$ref": "#/$defs/target"},
			},
			"$defs": obj{
				"target": obj{"type": "object", "properties": obj{"xpath": obj{"type": "string"}}},
			},
		},
		want: obj{
			"type": "object",
			"properties": obj{
				"method": obj{"type": []any{"string", "null"}, "enum": []any{"click", "fill", nil}},
				"kind":   obj{"anyOf": []any{obj{"const": "act"}, obj{"type": "null"}}},
				"value":  obj{"anyOf": []any{obj{"type": "string"}, obj{"type": "number"}, obj{"type": "null"}}},
				"target": obj{"anyOf": []any{obj{"$ref": "#/$defs/target"}, obj{"type": "null"}}},
			},
			"required":             []any{"kind", "method", "target", "value"},
			"additionalProperties": false,
			"$defs": obj{
				"target": obj{
					"type":                 "object",
					"properties":           obj{"xpath": obj{"type": []any{"string", "null"}}},
					"required":             []any{"xpath"},
					"additionalProperties": false,
				},
			},
		},
	}, {
		name: "allOf merged, oneOf to anyOf, nullable to a null type",
		in: obj{
			"allOf": []any{
				obj{"$ref": "#/definitions/base"},
				obj{"properties": obj{"extra": obj{"type": "string", "nullable": true}}, "required": []any{"extra"}},
			},
			"definitions": obj{
				"base": obj{"type": "object", "properties": obj{"id": obj{"oneOf": []any{obj{"type": "string"}, obj{"type": "integer"}}}}, "required": []any{"id"}},
			},
		},
		want: obj{
			"type": "object",
			"properties": obj{
				"id":    obj{"anyOf": []any{obj{"type": "string"}, obj{"type": "integer"}}},
				"extra": obj{"type": []any{"string", "null"}},
			},
			"required":             []any{"extra", "id"},
			"additionalProperties": false,
			"definitions": obj{
				"base": obj{
					"type":                 "object",
					"properties":           obj{"id": obj{"anyOf": []any{obj{"type": "string"}, obj{"type": "integer"}}}},
					"required":             []any{"id"},
					"additionalProperties": false,
				},
			},
		},
	}, {
		name: "untyped schemas inferred or made any scalar",
		in: obj{
			"properties": obj{
				"anything": obj{},
				"list":     obj{"items": true},
				"bare":     obj{"description": "Whatever fits."},
				"tuple":    obj{"type": "array", "items": []any{obj{"type": "string"}}},
			},
			"required": []any{"anything", "list", "bare", "tuple"},
		},
		want: obj{
			"type": "object",
			"properties": obj{
				"anything": obj{"type": anyScalar},
				"list":     obj{"type": "array", "items": obj{"type": anyScalar}},
				"bare":     obj{"type": anyScalar, "description": "Whatever fits."},
				"tuple":    obj{"type": "array", "items": obj{"type": anyScalar}, "description": `Constraints: items: [{"type":"string"}].`},
			},
			"required":             []any{"anything", "bare", "list", "tuple"},
			"additionalProperties": false,
		},
	}, {
		name: "Go string slices accepted",
		in: obj{
			"type":       "object",
			"properties": obj{"a": obj{"type": []string{"string", "null"}}, "b": obj{"type": "boolean"}},
			"required":   []string{"a"},
		},
		want: obj{
			"type":                 "object",
			"properties":           obj{"a": obj{"type": []string{"string", "null"}}, "b": obj{"type": []any{"boolean", "null"}}},
			"required":             []any{"a", "b"},
			"additionalProperties": false,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := deepCopy(tc.in)
			got, err := AdaptSchemaForStrict(tc.in)
			if err != nil {
				t.Fatalf("AdaptSchemaForStrict: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("adapted schema (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, any(tc.in)); diff != "" {
				t.Errorf("input schema changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestAdaptSchemaForStrictErrors(t *testing.T) {
	tests := []struct {
		name string
		in   obj
		want string
	}{
		{"empty", nil, "schema is empty"},
		{"false schema", obj{"type": "object", "properties": obj{"never": false}}, "#/properties/never: a false schema"},
		{"properties not an object", obj{"type": "object", "properties": []any{"a"}}, "#/properties: not an object"},
		{"property not a schema", obj{"type": "object", "properties": obj{"a": "string"}}, "#/properties/a: not a schema object"},
		{"dangling $ref", obj{"type": "object", "properties": obj{"a": obj{"$ref": "#/$defs/missing"}}}, `#/properties/a: $ref "#/$defs/missing": no such definition`},
		{"remote $ref", obj{"allOf": []any{obj{"$ref": "https://example.com/s.json"}}}, "only references into #/$defs or #/definitions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AdaptSchemaForStrict(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAdaptSchemaForGemini(t *testing.T) {
	tests := []struct {
		name string
		in   obj
		want obj
	}{{
		name: "documented keywords kept, optional stays optional",
		in: obj{
			"type":                 "object",
			"properties":           obj{"a": obj{"type": "string", "format": "date"}, "b": obj{"type": "integer", "minimum": 1}},
			"required":             []any{"a"},
			"additionalProperties": false,
			"propertyOrdering":     []any{"a", "b"},
		},
		want: obj{
			"type":                 "object",
			"properties":           obj{"a": obj{"type": "string", "format": "date"}, "b": obj{"type": "integer", "minimum": 1}},
			"required":             []any{"a"},
			"additionalProperties": false,
			"propertyOrdering":     []any{"a", "b"},
		},
	}, {
		name: "const to enum, others dropped and noted, allOf merged",
		in: obj{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"allOf": []any{obj{"type": "object", "properties": obj{
				"kind":  obj{"const": "act"},
				"name":  obj{"type": "string", "minLength": 2, "description": "Name."},
				"items": obj{"type": "array", "items": obj{"type": "string", "pattern": "^x"}},
			}}},
		},
		want: obj{
			"type": "object",
			"properties": obj{
				"kind":  obj{"enum": []any{"act"}},
				"name":  obj{"type": "string", "description": "Name.\nConstraints: minLength: 2."},
				"items": obj{"type": "array", "items": obj{"type": "string", "description": `Constraints: pattern: "^x".`}},
			},
		},
	}, {
		name: "nothing but $-keywords beside a $ref",
		in: obj{
			"type":       "array",
			"items":      obj{"$ref": "#/$defs/x", "description": "An x."},
			"$defs":      obj{"x": obj{"type": "string"}},
			"uniqueItem": true,
		},
		want: obj{
			"type":        "array",
			"items":       obj{"$ref": "#/$defs/x"},
			"$defs":       obj{"x": obj{"type": "string"}},
			"description": "Constraints: uniqueItem: true.",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := adaptSchemaForGemini(tc.in)
			if err != nil {
				t.Fatalf("adaptSchemaForGemini: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("adapted schema (-want +got):\n%s", diff)
			}
		})
	}
}
