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
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSubstitute(t *testing.T) {
	vars := map[string]Variable{"password": {Value: "hunter2"}, "user": {Value: "ada"}}
	cases := map[string]struct {
		args []string
		want []string
	}{
		"one placeholder":     {args: []string{"%password%"}, want: []string{"hunter2"}},
		"inside text":         {args: []string{"login %user% now"}, want: []string{"login ada now"}},
		"two in one argument": {args: []string{"%user%:%password%"}, want: []string{"ada:hunter2"}},
		"unknown name kept":   {args: []string{"100%off%"}, want: []string{"100%off%"}},
		"no placeholders":     {args: []string{"Enter"}, want: []string{"Enter"}},
		"no arguments":        {args: nil, want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, substitute(tc.args, vars)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidVariableName(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "user.name": true, "api-key_2": true,
		"": false, "two words": false, "a%b": false, "pässword": false,
	} {
		if got := ValidVariableName(name); got != want {
			t.Errorf("ValidVariableName(%q) = %v, want %v", name, got, want)
		}
	}
	if got := SubstituteVariables("%user%/%nope%", map[string]Variable{"user": {Value: "ada"}}); got != "ada/%nope%" {
		t.Errorf("SubstituteVariables = %q", got)
	}
}

func TestDescribeVariablesNeverShowsValues(t *testing.T) {
	got := describeVariables(map[string]Variable{
		"password": {Value: "hunter2", Description: "the account password"},
		"city":     {Value: "Lisbon"},
	})
	want := "Variables you may use in arguments. Write them exactly as %name%; their values are filled in when the action runs, and you never see them:\n" +
		"- %city%\n- %password%: the account password\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRedact(t *testing.T) {
	got := redact(`typing "hunter2" failed`, map[string]Variable{"password": {Value: "hunter2"}})
	if diff := cmp.Diff(`typing "%password%" failed`, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWithLinkIDs(t *testing.T) {
	urls := map[string]string{"0-7": "http://127.0.0.1/a", "1-9": "http://127.0.0.2/b"}
	cases := map[string]struct {
		schema    string
		answer    string
		wantAsked string
		wantData  string
	}{
		"a top-level link field": {
			schema:    `{"type":"object","properties":{"title":{"type":"string"},"url":{"type":"string","format":"uri"}}}`,
			answer:    `{"title":"A","url":"0-7"}`,
			wantAsked: `{"type":"object","properties":{"title":{"type":"string"},"url":{"type":"string","description":"(answer the id of the link element, like 0-123)"}}}`,
			wantData:  `{"title":"A","url":"http://127.0.0.1/a"}`,
		},
		"links in an array of objects": {
			schema:   `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"href":{"type":"string","format":"url","description":"where it goes"}}}}}}`,
			answer:   `{"items":[{"href":"[0-7]"},{"href":"1-9"}]}`,
			wantData: `{"items":[{"href":"http://127.0.0.1/a"},{"href":"http://127.0.0.2/b"}]}`,
		},
		"an unknown id is left for validation to refuse": {
			schema:   `{"type":"object","properties":{"url":{"type":"string","format":"uri"}}}`,
			answer:   `{"url":"0-99"}`,
			wantData: `{"url":"0-99"}`,
		},
		"no link fields": {
			schema:   `{"type":"object","properties":{"n":{"type":"integer"}}}`,
			answer:   `{"n":3}`,
			wantData: `{"n":3}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal([]byte(tc.schema), &doc); err != nil {
				t.Fatal(err)
			}
			asked, plan := withLinkIDs(doc)
			if tc.wantAsked != "" {
				var want map[string]any
				if err := json.Unmarshal([]byte(tc.wantAsked), &want); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, asked); diff != "" {
					t.Errorf("schema asked (-want +got):\n%s", diff)
				}
			}
			var answer any
			if err := json.Unmarshal([]byte(tc.answer), &answer); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(plan.apply(answer, urls))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantData, string(got)); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileSchemaValidates(t *testing.T) {
	sch, err := compileSchema(json.RawMessage(`{"type":"object","properties":{"price":{"type":"number"},"url":{"type":"string","format":"uri"}},"required":["price"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for doc, ok := range map[string]bool{
		`{"price": 3.5}`:                         true,
		`{"price": "3.5"}`:                       false,
		`{}`:                                     false,
		`{"price": 1, "url": "http://a.test/x"}`: true,
		`{"price": 1, "url": "0-99"}`:            false,
	} {
		if err := sch.validate([]byte(doc)); (err == nil) != ok {
			t.Errorf("validate(%s) = %v, want valid=%v", doc, err, ok)
		}
	}
	if _, err := compileSchema(json.RawMessage(`{"type": 12}`)); err == nil {
		t.Error("an invalid schema compiled")
	}
	if _, err := compileSchema(json.RawMessage(`[1]`)); err == nil {
		t.Error("a schema that is not an object compiled")
	}
	// A $ref outside the schema would have the runner read its own files.
	secret := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := compileSchema(json.RawMessage(`{"$ref": "file://` + secret + `"}`)); err == nil {
		t.Error("a schema with a file $ref compiled")
	}
}

func TestNewLines(t *testing.T) {
	before := "[0-1] combobox: Size\n[0-2] button: Buy"
	after := "[0-1] combobox: Size (expanded)\n  [0-5] option: Small\n  [0-6] option: Large\n[0-2] button: Buy"
	want := "[0-1] combobox: Size (expanded)\n  [0-5] option: Small\n  [0-6] option: Large"
	if diff := cmp.Diff(want, newLines(before, after)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestValidateJSON(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	for _, tc := range []struct {
		name       string
		schema     json.RawMessage
		doc        string
		ok         bool
		invalidArg bool
	}{
		{name: "valid", schema: schema, doc: `{"n": 2}`, ok: true},
		{name: "wrong type", schema: schema, doc: `{"n": "2"}`},
		{name: "missing field", schema: schema, doc: `{}`},
		{name: "not JSON", schema: schema, doc: `{n`},
		{name: "bad schema", schema: json.RawMessage(`{"type": 12}`), doc: `{}`, invalidArg: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateJSON(tc.schema, json.RawMessage(tc.doc))
			if (err == nil) != tc.ok {
				t.Errorf("ValidateJSON = %v, want valid=%v", err, tc.ok)
			}
			if errors.Is(err, ErrInvalidArgument) != tc.invalidArg {
				t.Errorf("ValidateJSON = %v, want ErrInvalidArgument=%v", err, tc.invalidArg)
			}
		})
	}
}
