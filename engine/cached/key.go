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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// keyVersion is the version of the key's composition: changing what a key
// hashes changes it, so that older entries are never read as newer ones.
const keyVersion = 1

// KeyInput is what a cache key hashes: everything that changes the
// answer of the call, and nothing that does not. The model is not in it
// (changing models keeps the cache), nor are the variables' values.
type KeyInput struct {
	// Method is act, observe or extract.
	Method string
	// URL is the page's URL; Key normalizes it (NormalizeURL).
	URL string
	// Content is the fingerprint of what the model would see
	// (engine.Fingerprint's Content).
	Content string
	// Instruction is the call's instruction; Key trims it.
	Instruction string
	// VariableNames are the names of the call's variables; Key sorts them.
	VariableNames []string
	// Schema is extract's JSON Schema; Key canonicalizes it (keys sorted,
	// no insignificant space).
	Schema json.RawMessage
	// Screenshot is extract's screenshot option: the model sees more.
	Screenshot bool
	// Selector and IgnoreSelectors are the call's scope; the order of
	// IgnoreSelectors does not matter.
	Selector        string
	IgnoreSelectors []string
	// Frame is the DevTools frame id the call is scoped to; empty for the
	// whole page.
	Frame string
}

// hashed is the JSON a key hashes: fixed field order, normalized values.
type hashed struct {
	Version         int             `json:"v"`
	Method          string          `json:"method"`
	URL             string          `json:"url"`
	Content         string          `json:"content"`
	Instruction     string          `json:"instruction"`
	VariableNames   []string        `json:"variableNames"`
	Schema          json.RawMessage `json:"schema,omitempty"`
	Screenshot      bool            `json:"screenshot,omitempty"`
	Selector        string          `json:"selector,omitempty"`
	IgnoreSelectors []string        `json:"ignoreSelectors,omitempty"`
	Frame           string          `json:"frame,omitempty"`
}

// Key returns the hex SHA-256 of the normalized input. The only error is
// a schema that is not JSON.
func (in KeyInput) Key() (string, error) {
	h := hashed{
		Version:       keyVersion,
		Method:        in.Method,
		URL:           NormalizeURL(in.URL),
		Content:       in.Content,
		Instruction:   strings.TrimSpace(in.Instruction),
		VariableNames: sorted(in.VariableNames),
		Screenshot:    in.Screenshot,
		Selector:      strings.TrimSpace(in.Selector),
		Frame:         in.Frame,
	}
	if len(in.IgnoreSelectors) > 0 {
		h.IgnoreSelectors = sorted(in.IgnoreSelectors)
	}
	if len(in.Schema) > 0 && string(in.Schema) != "null" {
		s, err := canonicalJSON(in.Schema)
		if err != nil {
			return "", fmt.Errorf("cache key: schema: %w", err)
		}
		h.Schema = s
	}
	b, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("cache key: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	if out == nil {
		out = []string{}
	}
	slices.Sort(out)
	return out
}

// canonicalJSON re-encodes a JSON document with object keys sorted and no
// insignificant space; numbers keep their text.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return json.Marshal(v)
}

// NormalizeURL is the URL as a key sees it: scheme and host lower-cased,
// the scheme's default port dropped, an empty path made "/", query
// parameters sorted by name (values of one name keep their order) and
// re-encoded, the fragment dropped. A URL that does not parse is kept as
// given, trimmed.
func NormalizeURL(raw string) string {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Fragment, u.RawFragment = "", ""
	if u.Opaque != "" {
		// about:blank, data:..., mailto:...: no host or path to normalize.
		return u.String()
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	if u.Path == "" && u.Host != "" {
		u.Path, u.RawPath = "/", ""
	}
	u.ForceQuery = false
	if u.RawQuery != "" {
		if q, err := url.ParseQuery(u.RawQuery); err == nil {
			// Encode sorts by name and keeps each name's values in order.
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}
