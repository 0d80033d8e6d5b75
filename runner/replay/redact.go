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

package replay

import (
	"encoding/json"
	"fmt"
	"net/url"
)

// MaxValueBytes bounds the recorded parameters and result of one call;
// larger ones are recorded as a stub saying how large they were
// (`{"truncated":true,"bytes":n}`), so that one large extraction does not
// push out the rest of the history.
const MaxValueBytes = 8 << 10

// Redacted stands for what the history never keeps.
const Redacted = "[redacted]"

// Redact returns v as JSON without what must not be kept: the text fill and
// type actions put into a field (whatever the field: the runner cannot be
// sure it is not a password), the values of variables (their names stay),
// and in every URL (a "url" or "pageUrl" field) the user info, query values
// (their keys stay) and fragment.
func Redact(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return json.Marshal(redactNode(doc))
}

func redactNode(n any) any {
	switch n := n.(type) {
	case map[string]any:
		method, _ := n["method"].(string)
		for k, v := range n {
			switch {
			case k == "variables":
				if vars, ok := v.(map[string]any); ok {
					for name := range vars {
						vars[name] = Redacted
					}
					continue
				}
			case k == "arguments" && (method == "fill" || method == "type"):
				if args, ok := v.([]any); ok {
					for i := range args {
						args[i] = Redacted
					}
					continue
				}
			case k == "url" || k == "pageUrl":
				if u, ok := v.(string); ok {
					n[k] = RedactURL(u)
					continue
				}
			}
			n[k] = redactNode(v)
		}
		return n
	case []any:
		for i := range n {
			n[i] = redactNode(n[i])
		}
		return n
	}
	return n
}

// RedactURL keeps a URL's scheme, host, path and query keys; a data: URL
// keeps its scheme only, and what does not parse nothing.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Redacted
	}
	if u.Scheme == "data" {
		return "data:" + Redacted
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{Redacted}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// BoundedJSON encodes v for the history (Redact), or a stub when it is too
// large to keep (over MaxValueBytes) or cannot be encoded. Nothing
// (null) is recorded as {}.
func BoundedJSON(v any) json.RawMessage {
	raw, err := Redact(v)
	if err != nil {
		return json.RawMessage(`{"unrecorded":"encoding failed"}`)
	}
	if len(raw) > MaxValueBytes {
		return json.RawMessage(fmt.Sprintf(`{"truncated":true,"bytes":%d}`, len(raw)))
	}
	if string(raw) == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}
