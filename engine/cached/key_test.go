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

package cached

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/cache"
)

func TestNormalizeURL(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"query sorted by name", "https://shop.example/list?b=2&a=1", "https://shop.example/list?a=1&b=2"},
		{"values of one name keep their order", "https://shop.example/?t=z&a=1&t=a", "https://shop.example/?a=1&t=z&t=a"},
		{"fragment dropped", "https://shop.example/item#reviews", "https://shop.example/item"},
		{"scheme and host lower-cased, path kept", "HTTPS://Shop.Example/Item", "https://shop.example/Item"},
		{"default port dropped", "https://shop.example:443/a", "https://shop.example/a"},
		{"http default port dropped", "http://shop.example:80/a", "http://shop.example/a"},
		{"other port kept", "http://127.0.0.1:8080/a", "http://127.0.0.1:8080/a"},
		{"empty path is /", "https://shop.example", "https://shop.example/"},
		{"empty query dropped", "https://shop.example/a?", "https://shop.example/a"},
		{"query re-encoded", "https://shop.example/s?q=a%20b", "https://shop.example/s?q=a+b"},
		{"IPv6 host keeps brackets", "http://[::1]:9000/x", "http://[::1]:9000/x"},
		{"opaque URL kept", "about:blank", "about:blank"},
		{"data URL loses only its fragment", "data:text/html,<p>hi</p>#x", "data:text/html,<p>hi</p>"},
		{"malformed query kept as is", "https://shop.example/?q=%zz", "https://shop.example/?q=%zz"},
		{"unparsable kept, trimmed", " http://[bad ", "http://[bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NormalizeURL(tc.in)); diff != "" {
				t.Errorf("NormalizeURL(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestKeyComposition(t *testing.T) {
	base := KeyInput{
		Method:          MethodExtract,
		URL:             "https://shop.example/list?a=1&b=2",
		Content:         "c0ffee",
		Instruction:     "the prices",
		VariableNames:   []string{"user", "password"},
		Schema:          json.RawMessage(`{"type":"object","properties":{"price":{"type":"number"}}}`),
		Selector:        "#main",
		IgnoreSelectors: []string{".ad", ".banner"},
		Frame:           "F1",
	}
	baseKey, err := base.Key()
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.CheckKey(baseKey); err != nil {
		t.Fatalf("the key is not the cache's form: %v", err)
	}
	for _, tc := range []struct {
		name    string
		change  func(*KeyInput)
		changes bool
	}{
		// What does not change the answer keeps the key.
		{"query order", func(k *KeyInput) { k.URL = "https://shop.example/list?b=2&a=1" }, false},
		{"fragment", func(k *KeyInput) { k.URL = "https://shop.example/list?a=1&b=2#top" }, false},
		{"host case", func(k *KeyInput) { k.URL = "https://SHOP.example/list?a=1&b=2" }, false},
		{"instruction's surrounding space", func(k *KeyInput) { k.Instruction = "  the prices\n" }, false},
		{"variable names' order", func(k *KeyInput) { k.VariableNames = []string{"password", "user"} }, false},
		{"schema's key order and spacing", func(k *KeyInput) {
			k.Schema = json.RawMessage(`{ "properties": {"price": {"type": "number"}}, "type": "object" }`)
		}, false},
		{"ignore selectors' order", func(k *KeyInput) { k.IgnoreSelectors = []string{".banner", ".ad"} }, false},
		// What changes the answer changes the key.
		{"method", func(k *KeyInput) { k.Method = MethodObserve }, true},
		{"path", func(k *KeyInput) { k.URL = "https://shop.example/other?a=1&b=2" }, true},
		{"query value", func(k *KeyInput) { k.URL = "https://shop.example/list?a=1&b=3" }, true},
		{"page content", func(k *KeyInput) { k.Content = "decade" }, true},
		{"instruction", func(k *KeyInput) { k.Instruction = "the names" }, true},
		{"instruction's case", func(k *KeyInput) { k.Instruction = "The prices" }, true},
		{"a variable name more", func(k *KeyInput) { k.VariableNames = append(k.VariableNames, "otp") }, true},
		{"no variables", func(k *KeyInput) { k.VariableNames = nil }, true},
		{"schema", func(k *KeyInput) {
			k.Schema = json.RawMessage(`{"type":"object","properties":{"price":{"type":"string"}}}`)
		}, true},
		{"no schema", func(k *KeyInput) { k.Schema = nil }, true},
		{"screenshot", func(k *KeyInput) { k.Screenshot = true }, true},
		{"selector", func(k *KeyInput) { k.Selector = "#aside" }, true},
		{"no selector", func(k *KeyInput) { k.Selector = "" }, true},
		{"an ignore selector less", func(k *KeyInput) { k.IgnoreSelectors = []string{".ad"} }, true},
		{"frame", func(k *KeyInput) { k.Frame = "F2" }, true},
		{"whole page", func(k *KeyInput) { k.Frame = "" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base
			in.VariableNames = append([]string(nil), base.VariableNames...)
			in.IgnoreSelectors = append([]string(nil), base.IgnoreSelectors...)
			tc.change(&in)
			key, err := in.Key()
			if err != nil {
				t.Fatal(err)
			}
			if changed := key != baseKey; changed != tc.changes {
				t.Errorf("key changed = %v, want %v", changed, tc.changes)
			}
		})
	}
}

func TestKeyRefusesASchemaThatIsNotJSON(t *testing.T) {
	for _, schema := range []string{`{"type":`, `{} {}`} {
		if _, err := (KeyInput{Method: MethodExtract, Schema: json.RawMessage(schema)}).Key(); err == nil {
			t.Errorf("schema %s: no error", schema)
		}
	}
}
