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

package v1

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// openapiJSON is the OpenAPI 3.1 document of the /v1 API. Its request
// schemas are the ones the decoders of this package enforce, so the
// published contract and the server cannot disagree.
//
//go:embed openapi.json
var openapiJSON []byte

// documentURL is where the schema compiler files the document; schemas are
// compiled by JSON pointer into it. Nothing is fetched from it.
const documentURL = "https://browserfleet.io/v1/openapi.json"

// OpenAPI returns the OpenAPI 3.1 document of the /v1 API (version label
// 3.1.0), as GET /v1/openapi.json serves it. The caller may keep or change
// the slice.
func OpenAPI() []byte {
	return bytes.Clone(openapiJSON)
}

// parseDocument parses the embedded document for the schema compiler.
func parseDocument() (any, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapiJSON))
	if err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	return doc, nil
}

// newDocumentCompiler returns a compiler that holds the document. Every
// reference in it stays inside it: nothing is loaded from anywhere else.
func newDocumentCompiler(doc any) (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	// OpenAPI 3.1 schema objects are JSON Schema 2020-12.
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(documentURL, doc); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	return c, nil
}

// requestCompiler compiles the request schemas the decoders use. The
// document is part of the binary, so a failure is a programming error and
// panics at start-up rather than on the first request.
var requestCompiler = func() *jsonschema.Compiler {
	doc, err := parseDocument()
	if err != nil {
		panic(err)
	}
	c, err := newDocumentCompiler(doc)
	if err != nil {
		panic(err)
	}
	return c
}()

// requestSchema compiles components/schemas/<name> of the document.
func requestSchema(name string) *jsonschema.Schema {
	return requestCompiler.MustCompile(documentURL + "#/components/schemas/" + name)
}

// Route is one documented operation: an HTTP method and the OpenAPI path
// template, which is also the net/http ServeMux pattern
// ("/v1/sessions/{id}/act").
type Route struct {
	Method  string
	Pattern string
}

// methods are the operation keys of an OpenAPI path item, in upper case.
var methods = []string{
	http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete,
	http.MethodOptions, http.MethodHead, http.MethodPatch, http.MethodTrace,
}

// documentRoutes lists the operations of the document, sorted by pattern
// and method.
var documentRoutes = func() []Route {
	doc, err := parseDocument()
	if err != nil {
		panic(err)
	}
	paths, _ := doc.(map[string]any)["paths"].(map[string]any)
	var routes []Route
	for pattern, item := range paths {
		ops, _ := item.(map[string]any)
		for _, m := range methods {
			if _, ok := ops[strings.ToLower(m)]; ok {
				routes = append(routes, Route{Method: m, Pattern: pattern})
			}
		}
	}
	slices.SortFunc(routes, compareRoutes)
	return routes
}()

func compareRoutes(a, b Route) int {
	if c := strings.Compare(a.Pattern, b.Pattern); c != 0 {
		return c
	}
	return strings.Compare(a.Method, b.Method)
}

// Routes lists the operations the document describes, sorted by pattern and
// method, so that a test can hold the server's mux to exactly these.
func Routes() []Route {
	return slices.Clone(documentRoutes)
}

// Validator holds requests and responses to the document; the server's
// handler tests use it so that handlers cannot drift from what is published.
// Its schemas assert formats (uuid, date-time), which the document only
// annotates. It is safe for concurrent use.
type Validator struct {
	ops map[Route]*operationSchemas
}

// operationSchemas are the compiled schemas of one operation.
type operationSchemas struct {
	// request is the application/json request body's schema; nil when the
	// operation takes no body.
	request         *jsonschema.Schema
	requestRequired bool
	// responses maps a status key ("200", "4XX", "default") to its media
	// types; a response without content has an empty map.
	responses map[string]map[string]*mediaSchema
}

// mediaSchema validates one media type of a response.
type mediaSchema struct {
	// body validates a JSON body; nil for bodies that are not JSON.
	body *jsonschema.Schema
	// frame validates each event's data of a text/event-stream body.
	frame *jsonschema.Schema
}

// Media types the Validator knows how to check.
const (
	mediaJSON        = "application/json"
	mediaEventStream = "text/event-stream"
)

// NewValidator compiles every operation's schemas from the embedded
// document.
func NewValidator() (*Validator, error) {
	doc, err := parseDocument()
	if err != nil {
		return nil, err
	}
	c, err := newDocumentCompiler(doc)
	if err != nil {
		return nil, err
	}
	c.AssertFormat()
	root, _ := doc.(map[string]any)
	paths, _ := root["paths"].(map[string]any)
	v := &Validator{ops: map[Route]*operationSchemas{}}
	for pattern, item := range paths {
		itemMap, _ := item.(map[string]any)
		for _, m := range methods {
			op, ok := itemMap[strings.ToLower(m)].(map[string]any)
			if !ok {
				continue
			}
			ptr := "/paths/" + pointerEscape(pattern) + "/" + strings.ToLower(m)
			schemas, err := compileOperation(c, root, ptr, op)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, pattern, err)
			}
			v.ops[Route{Method: m, Pattern: pattern}] = schemas
		}
	}
	return v, nil
}

// compileOperation compiles the schemas of the operation at ptr.
func compileOperation(c *jsonschema.Compiler, root map[string]any, ptr string, op map[string]any) (*operationSchemas, error) {
	out := &operationSchemas{responses: map[string]map[string]*mediaSchema{}}
	if rb, ok := op["requestBody"].(map[string]any); ok {
		out.requestRequired, _ = rb["required"].(bool)
		content, _ := rb["content"].(map[string]any)
		if _, ok := content[mediaJSON]; !ok {
			return nil, errors.New("requestBody has no application/json content")
		}
		s, err := c.Compile(documentURL + "#" + ptr + "/requestBody/content/" + pointerEscape(mediaJSON) + "/schema")
		if err != nil {
			return nil, fmt.Errorf("request schema: %w", err)
		}
		out.request = s
	}
	responses, _ := op["responses"].(map[string]any)
	if len(responses) == 0 {
		return nil, errors.New("no responses")
	}
	for status, r := range responses {
		// A response may be a reference to components/responses; its
		// schemas are compiled where it is defined.
		rptr := ptr + "/responses/" + pointerEscape(status)
		resp, _ := r.(map[string]any)
		if ref, ok := resp["$ref"].(string); ok {
			target, ok := resolveLocal(root, ref)
			if !ok {
				return nil, fmt.Errorf("response %s: unresolved $ref %q", status, ref)
			}
			rptr, resp = strings.TrimPrefix(ref, "#"), target
		}
		media := map[string]*mediaSchema{}
		content, _ := resp["content"].(map[string]any)
		for mt, entry := range content {
			entryMap, _ := entry.(map[string]any)
			loc := documentURL + "#" + rptr + "/content/" + pointerEscape(mt)
			ms := &mediaSchema{}
			var err error
			switch mt {
			case mediaEventStream:
				if _, ok := entryMap["x-itemSchema"]; !ok {
					return nil, fmt.Errorf("response %s: %s has no x-itemSchema", status, mt)
				}
				ms.frame, err = c.Compile(loc + "/x-itemSchema")
			case mediaJSON:
				ms.body, err = c.Compile(loc + "/schema")
			}
			if err != nil {
				return nil, fmt.Errorf("response %s %s: %w", status, mt, err)
			}
			media[mt] = ms
		}
		out.responses[status] = media
	}
	return out, nil
}

// ValidateRequest checks a request body of the operation method pattern
// against its documented schema. An empty body is accepted only when the
// operation's body is optional.
func (v *Validator) ValidateRequest(method, pattern string, body []byte) error {
	op, ok := v.ops[Route{Method: method, Pattern: pattern}]
	if !ok {
		return fmt.Errorf("%s %s is not a documented operation", method, pattern)
	}
	empty := len(bytes.TrimSpace(body)) == 0
	switch {
	case op.request == nil && empty:
		return nil
	case op.request == nil:
		return fmt.Errorf("%s %s takes no request body", method, pattern)
	case empty && op.requestRequired:
		return fmt.Errorf("%s %s requires a request body", method, pattern)
	case empty:
		return nil
	}
	if err := validateJSON(op.request, body); err != nil {
		return fmt.Errorf("%s %s request: %w", method, pattern, err)
	}
	return nil
}

// ValidateResponse checks a response of the operation method pattern: the
// status must be documented (or covered by a range like 4XX, or default),
// the content type must be one the status documents, and the body must be
// valid against its schema. A text/event-stream body is checked frame by
// frame: each event's data against the frame schema, its event name against
// the data's status, and a finished or error event last.
func (v *Validator) ValidateResponse(method, pattern string, status int, contentType string, body []byte) error {
	op, ok := v.ops[Route{Method: method, Pattern: pattern}]
	if !ok {
		return fmt.Errorf("%s %s is not a documented operation", method, pattern)
	}
	code := strconv.Itoa(status)
	media, ok := op.responses[code]
	if !ok {
		media, ok = op.responses[code[:1]+"XX"]
	}
	if !ok {
		media, ok = op.responses["default"]
	}
	if !ok {
		return fmt.Errorf("%s %s: status %d is not documented", method, pattern, status)
	}
	if len(media) == 0 {
		if len(body) > 0 {
			return fmt.Errorf("%s %s: status %d has no documented body, got %d bytes", method, pattern, status, len(body))
		}
		return nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("%s %s: status %d: content type %q: %w", method, pattern, status, contentType, err)
	}
	ms, ok := media[mt]
	if !ok {
		return fmt.Errorf("%s %s: status %d: content type %q is not documented", method, pattern, status, mt)
	}
	switch {
	case ms.frame != nil:
		err = validateEventStream(ms.frame, body)
	case ms.body != nil:
		err = validateJSON(ms.body, body)
	}
	if err != nil {
		return fmt.Errorf("%s %s: status %d %s: %w", method, pattern, status, mt, err)
	}
	return nil
}

// validateJSON checks that body is one JSON value valid against s.
func validateJSON(s *jsonschema.Schema, body []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("body is not valid against the document: %w", err)
	}
	return nil
}

// Events that end a stream.
var terminalEvents = []string{"finished", "error"}

// validateEventStream checks an SSE body: frames separated by blank lines,
// each an `event:` line and a `data:` line valid against frame, comment
// lines ignored; the last frame, and only it, is terminal.
func validateEventStream(frame *jsonschema.Schema, body []byte) error {
	type event struct {
		name string
		data []string
	}
	var events []event
	cur := event{}
	flush := func() {
		if cur.name != "" || len(cur.data) > 0 {
			events = append(events, cur)
		}
		cur = event{}
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, len(body)+1)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			flush()
		case field == "":
			// A comment, such as the keep-alives.
		case field == "event":
			cur.name = value
		case field == "data":
			cur.data = append(cur.data, value)
		default:
			return fmt.Errorf("unexpected SSE field %q", field)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the stream: %w", err)
	}
	flush()
	if len(events) == 0 {
		return errors.New("the stream has no events")
	}
	for i, e := range events {
		if len(e.data) != 1 {
			return fmt.Errorf("event %d (%s): want one data line, got %d", i, e.name, len(e.data))
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(e.data[0]))
		if err != nil {
			return fmt.Errorf("event %d (%s): data is not JSON: %w", i, e.name, err)
		}
		if err := frame.Validate(doc); err != nil {
			return fmt.Errorf("event %d (%s): data is not valid against the document: %w", i, e.name, err)
		}
		data, _ := doc.(map[string]any)["data"].(map[string]any)
		if status, _ := data["status"].(string); status != e.name {
			return fmt.Errorf("event %d: event name %q differs from data.status %q", i, e.name, status)
		}
		last := i == len(events)-1
		if terminal := slices.Contains(terminalEvents, e.name); terminal != last {
			if last {
				return fmt.Errorf("the stream ends with %s, not finished or error", e.name)
			}
			return fmt.Errorf("event %d (%s) ends the stream but more events follow", i, e.name)
		}
	}
	return nil
}

// pointerEscape escapes a JSON pointer token (RFC 6901).
func pointerEscape(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// resolveLocal resolves a local reference ("#/components/...") in root.
func resolveLocal(root any, ref string) (map[string]any, bool) {
	ptr, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	cur := root
	for _, tok := range strings.Split(ptr, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	out, ok := cur.(map[string]any)
	return out, ok
}
