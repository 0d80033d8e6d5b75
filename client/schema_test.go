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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type schemaItem struct {
	Name  string    `json:"name" jsonschema:"description=the item's name"`
	Price float64   `json:"price,omitempty" jsonschema:"minimum=0"`
	URL   string    `json:"url" jsonschema:"format=uri"`
	Tags  []string  `json:"tags,omitempty"`
	When  time.Time `json:"when"`
	Kind  string    `json:"kind" jsonschema:"enum=new,enum=used"`
	Note  string    `json:"-"`
	local int
}

// An unexported field is no part of the schema.
var _ = schemaItem{local: 1}

type schemaPage struct {
	Items []schemaItem `json:"items"`
	Total int          `json:"total"`
	Shop  struct {
		Open bool
	} `json:"shop"`
}

type schemaTree struct {
	Name     string        `json:"name"`
	Children []*schemaTree `json:"children"`
}

type schemaHolder struct {
	Tree schemaTree `json:"tree"`
}

func TestExtractSchemaDerivation(t *testing.T) {
	item := `{"type":"object","additionalProperties":false,
		"properties":{
			"name":{"type":"string","description":"the item's name"},
			"price":{"type":"number","minimum":0},
			"url":{"type":"string","format":"uri"},
			"tags":{"type":"array","items":{"type":"string"}},
			"when":{"type":"string","format":"date-time"},
			"kind":{"type":"string","enum":["new","used"]}},
		"required":["name","url","when","kind"]}`
	for _, tc := range []struct {
		name   string
		schema func() (json.RawMessage, error)
		want   string
	}{
		{"a struct: json names, jsonschema tags, omitempty optional, no $schema or $ref", schemaOf[schemaItem], item},
		{"a pointer is its element", schemaOf[*schemaItem], item},
		{"nested structs and slices inline", schemaOf[schemaPage], `{"type":"object","additionalProperties":false,
			"properties":{
				"items":{"type":"array","items":` + item + `},
				"total":{"type":"integer"},
				"shop":{"type":"object","additionalProperties":false,"properties":{"Open":{"type":"boolean"}},"required":["Open"]}},
			"required":["items","total","shop"]}`},
		{"a slice", schemaOf[[]string], `{"type":"array","items":{"type":"string"}}`},
		{"a string", schemaOf[string], `{"type":"string"}`},
		{"a map", schemaOf[map[string]int], `{"type":"object","additionalProperties":{"type":"integer"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := tc.schema()
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
		})
	}
	for name, schema := range map[string]func() (json.RawMessage, error){
		"a recursive type":           schemaOf[schemaTree],
		"a type holding a recursive": schemaOf[schemaHolder],
	} {
		t.Run(name+" is refused", func(t *testing.T) {
			if _, err := schema(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "schemaTree") {
				t.Errorf("err = %v, want ErrInvalidArgument naming the type", err)
			}
		})
	}
}

// answer is a Generate callback that answers every call with text.
func answer(text string) GenerateFunc {
	return func(context.Context, GenerateRequest) (GenerateResult, error) {
		return GenerateResult{Text: text, Usage: Usage{InputTokens: 10, OutputTokens: 2, InferenceTimeMs: 1}}, nil
	}
}

func TestExtractValidatesAndDecodes(t *testing.T) {
	ctx := testCtx(t)
	p := openPage(t, nil, "/list")
	type listing struct {
		Items []struct {
			Name  string  `json:"name"`
			Price float64 `json:"price"`
		} `json:"items"`
		Note string `json:"note,omitempty"`
	}
	t.Run("a valid answer is decoded", func(t *testing.T) {
		c := newInstance(t, CreateOptions{Generate: answer(`{"items":[{"name":"Item 1","price":3},{"name":"Item 2","price":6}]}`)})
		res, err := Extract[listing](ctx, c, "the items", &ExtractOptions{Page: p})
		if err != nil {
			t.Fatal(err)
		}
		want := listing{Items: []struct {
			Name  string  `json:"name"`
			Price float64 `json:"price"`
		}{{"Item 1", 3}, {"Item 2", 6}}}
		if diff := cmp.Diff(want, res.Data); diff != "" {
			t.Errorf("data (-want +got):\n%s", diff)
		}
	})
	t.Run("an answer the schema refuses is ErrSchemaViolation", func(t *testing.T) {
		c := newInstance(t, CreateOptions{Generate: answer(`{"items":[{"name":"Item 1","price":"cheap"}]}`)})
		_, err := Extract[listing](ctx, c, "the items", &ExtractOptions{Page: p})
		if !errors.Is(err, ErrSchemaViolation) {
			t.Errorf("err = %v, want ErrSchemaViolation", err)
		}
		if m, _ := c.Metrics(ctx); m.ExtractPromptTokens != 0 {
			t.Errorf("the failed extract counted: %+v", m)
		}
	})
	t.Run("an empty instruction is refused", func(t *testing.T) {
		c := newInstance(t, CreateOptions{Generate: answer(`{}`)})
		if _, err := Extract[listing](ctx, c, "", nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("err = %v, want ErrInvalidArgument", err)
		}
	})
}
