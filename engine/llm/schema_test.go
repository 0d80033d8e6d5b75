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
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStructuredOutputDecode(t *testing.T) {
	// page is a caller's schema: title required, subtitle optional and not
	// nullable, note optional and nullable.
	page := obj{
		"type": "object",
		"properties": obj{
			"title":    obj{"type": "string"},
			"subtitle": obj{"type": "string"},
			"note":     obj{"type": []any{"string", "null"}},
			"links":    obj{"type": "array", "items": obj{"$ref": "#/$defs/link"}},
		},
		"required": []any{"title"},
		"$defs": obj{"link": obj{
			"type":       "object",
			"properties": obj{"href": obj{"type": "string"}, "rel": obj{"type": "string"}},
			"required":   []any{"href"},
		}},
	}
	list := obj{"type": "array", "items": obj{"type": "integer"}}
	tests := []struct {
		name   string
		schema obj
		opts   schemaOptions
		answer string
		want   string
		// wantErr, when set, is the error decode must return instead.
		wantErr error
	}{
		{"as is without adaptation", page, schemaOptions{}, ` {"title":"T","subtitle":null} `, `{"title":"T","subtitle":null}`, nil},
		{"strict nulls dropped where not allowed", page, schemaOptions{objectRoot: true, strict: true},
			`{"title":"T","subtitle":null,"note":null,"links":[{"href":"/a","rel":null}]}`,
			`{"links":[{"href":"/a"}],"note":null,"title":"T"}`, nil},
		{"required null kept", obj{"type": "object", "properties": obj{"a": obj{"type": "string"}}, "required": []any{"a"}},
			schemaOptions{strict: true}, `{"a":null}`, `{"a":null}`, nil},
		{"wrapped root unwrapped", list, schemaOptions{objectRoot: true, strict: true}, `{"value":[1,2,3]}`, `[1,2,3]`, nil},
		{"big numbers survive", list, schemaOptions{objectRoot: true}, `{"value":[12345678901234567890]}`, `[12345678901234567890]`, nil},
		{"html not escaped", obj{"type": "string"}, schemaOptions{objectRoot: true}, `{"value":"<a href=\"x\">&</a>"}`, `"<a href=\"x\">&</a>"`, nil},
		{"not JSON", page, schemaOptions{}, `Sorry.`, "", ErrInvalidOutput},
		{"cut off", page, schemaOptions{}, `{"title":"T`, "", ErrInvalidOutput},
		{"two documents", page, schemaOptions{}, `{} {}`, "", ErrInvalidOutput},
		{"wrapper missing", list, schemaOptions{objectRoot: true}, `[1]`, "", ErrInvalidOutput},
		{"wrapper lacks value", list, schemaOptions{objectRoot: true}, `{"values":[1]}`, "", ErrInvalidOutput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := newStructuredOutput(&Schema{JSON: tc.schema}, tc.opts)
			if err != nil {
				t.Fatalf("newStructuredOutput: %v", err)
			}
			got, err := out.decode(tc.answer)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("decode(%q) error = %v, want %v", tc.answer, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode(%q): %v", tc.answer, err)
			}
			if got != tc.want {
				t.Errorf("decode(%q) = %s, want %s", tc.answer, got, tc.want)
			}
		})
	}
}

func TestWrapRoot(t *testing.T) {
	in := obj{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "array",
		"items":   obj{"$ref": "#/$defs/item"},
		"$defs":   obj{"item": obj{"type": "string"}},
	}
	want := obj{
		"type":                 "object",
		"properties":           obj{"value": obj{"type": "array", "items": obj{"$ref": "#/$defs/item"}}},
		"required":             []any{"value"},
		"additionalProperties": false,
		"$defs":                obj{"item": obj{"type": "string"}},
	}
	if diff := cmp.Diff(want, wrapRoot(in)); diff != "" {
		t.Errorf("wrapRoot (-want +got):\n%s", diff)
	}
	if _, ok := in["$defs"]; !ok {
		t.Error("wrapRoot changed its input")
	}
}

func TestIsObjectSchema(t *testing.T) {
	tests := []struct {
		schema obj
		want   bool
	}{
		{obj{"type": "object"}, true},
		{obj{"properties": obj{}}, true},
		{obj{"type": "array"}, false},
		{obj{"type": []any{"object", "null"}}, false},
		{obj{"anyOf": []any{obj{"type": "object"}}}, false},
		{obj{"$ref": "#/$defs/x", "properties": obj{}}, false},
		{obj{}, false},
	}
	for _, tc := range tests {
		if got := isObjectSchema(tc.schema); got != tc.want {
			t.Errorf("isObjectSchema(%v) = %v, want %v", tc.schema, got, tc.want)
		}
	}
}

func TestSchemaName(t *testing.T) {
	long := "a123456789b123456789c123456789d123456789e123456789f123456789g123456789"
	tests := map[string]string{
		"":                "response",
		"extract_result":  "extract_result",
		"page data (v2)!": "page_data__v2__",
		long:              long[:64],
	}
	for in, want := range tests {
		if got := schemaName(in); got != want {
			t.Errorf("schemaName(%q) = %q, want %q", in, got, want)
		}
	}
}
