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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Issue is one problem with a request body, as it appears in the error
// envelope's `issues`: Path is dotted with [i] for array indices
// (`browser.launchOptions.viewport.width`,
// `cloudSessionCreateParams.proxies[0].server`); "" is the body itself.
type Issue struct {
	// Path locates the offending value.
	Path string `json:"path"`
	// Message says what is wrong with it.
	Message string `json:"message"`
}

// ValidationError is a refused request body: every issue found, not just the
// first, sorted by path so that replies are stable. The HTTP layer answers it
// with 400 and `issues`.
type ValidationError struct {
	// Issues are the problems found; never empty.
	Issues []Issue `json:"issues"`
}

// Error summarises the issues in one line.
func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Issues))
	for _, is := range e.Issues {
		if is.Path == "" {
			parts = append(parts, is.Message)
			continue
		}
		parts = append(parts, is.Path+": "+is.Message)
	}
	return "invalid request body: " + strings.Join(parts, "; ")
}

// startSchema is the start body's schema, components/schemas/SessionStartRequest
// of the OpenAPI document: the server enforces the very schema it publishes.
var startSchema = requestSchema("SessionStartRequest")

// DecodeStart decodes and validates a session start body.
//
// Which objects are closed: `browser.launchOptions` (with its `proxy` and
// `viewport`) refuses unknown fields, because the spec says so and the
// reference server's schema is strict there. Every other object accepts and
// ignores unknown fields, as the reference server does (its objects strip
// unknown keys): existing clients send extra fields (SDK version, client
// language, v2 options) and must keep working. Ignored fields never reach
// the BrowserSession, whose schema is closed everywhere.
//
// Beyond the spec's types, enums and required fields, DecodeStart enforces
// what the BrowserSession's schema would refuse later, so that a client gets
// a 400 naming the field instead of a failed create: the bounds and patterns
// of the CRD (no negative timeouts or viewports, integral milliseconds,
// `<provider>/<model>` model names) and its CEL rules across fields
// (crossFieldIssues), and what the runner would refuse of the launch
// options (launchIssues). Decoding is case-sensitive: `ModelName` is not
// `modelName`.
//
// DecodeStart refuses every launchOptions.executablePath; DecodeStartWith
// takes the operator's list.
func DecodeStart(body []byte) (*StartRequest, *ValidationError) {
	return DecodeStartWith(body, StartOptions{})
}

// StartOptions are the operator's settings a start body is checked
// against.
type StartOptions struct {
	// AllowedExecutables are the browser binaries a session's
	// launchOptions.executablePath may name (the API's
	// --allowed-executable, the same list as the manager's
	// runner.allowedExecutables). Empty: none.
	AllowedExecutables []string
	// AcceptedRegions are the regions cloudSessionCreateParams.region may
	// name (the API's --accepted-region, the same list as the manager's
	// runner.regions.accepted). Empty: every region of the schema.
	AcceptedRegions []string
	// Gateway says the deployment has a model gateway: modelName may then
	// be omitted or auto (the gateway's default model). Without one a
	// start must name its model.
	Gateway bool
}

// Issues of a start's modelName without a gateway.
const (
	issueModelRequired = "is required (this deployment has no model gateway to serve a session without a model)"
	issueAutoNoGateway = "auto names the model gateway's default model, and this deployment has no model gateway; name a model, <provider>/<model>"
)

// modelIssues checks modelName against whether a gateway serves the
// deployment; the schema checks its form.
func modelIssues(doc any, opts StartOptions) []Issue {
	if opts.Gateway {
		return nil
	}
	root, ok := doc.(map[string]any)
	if !ok {
		// Not an object: the schema said so.
		return nil
	}
	name, present := root["modelName"]
	switch {
	case !present:
		return []Issue{{Path: "modelName", Message: issueModelRequired}}
	case name == ModelAuto:
		return []Issue{{Path: "modelName", Message: issueAutoNoGateway}}
	}
	return nil
}

// ModelAuto is the model name of the gateway's default model.
const ModelAuto = "auto"

// DecodeStartWith decodes and validates a session start body as DecodeStart
// does, with the operator's settings.
func DecodeStartWith(body []byte, opts StartOptions) (*StartRequest, *ValidationError) {
	doc, issues, verr := checkBody(body, startSchema)
	if verr != nil {
		return nil, verr
	}
	issues = append(issues, crossFieldIssues(doc)...)
	issues = append(issues, launchIssues(doc, opts)...)
	issues = append(issues, modelIssues(doc, opts)...)
	issues = append(issues, regionIssues(doc, opts)...)
	if len(issues) > 0 {
		return nil, &ValidationError{Issues: sortIssues(issues)}
	}
	var req StartRequest
	if verr := decodeChecked(body, &req); verr != nil {
		return nil, verr
	}
	return &req, nil
}

// checkBody runs what every decoder does first: the body must be one JSON
// value without duplicate member names, and it is validated against schema.
// It returns the untyped document, for the checks across fields that the
// schema cannot express, and the schema's issues. A body that is not
// acceptable JSON at all ends decoding: verr is set.
func checkBody(body []byte, schema *jsonschema.Schema) (doc any, issues []Issue, verr *ValidationError) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil, &ValidationError{Issues: []Issue{{Path: "", Message: "request body is empty; want a JSON object"}}}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return nil, nil, &ValidationError{Issues: []Issue{{Path: "", Message: "request body is not valid JSON: " + err.Error()}}}
	}
	// encoding/json, under the schema validator, keeps the last of duplicate
	// names while a client may have meant the first; refuse them, as the
	// typed decode does.
	var probe any
	if err := jsonv2.Unmarshal(body, &probe); err != nil {
		return nil, nil, &ValidationError{Issues: []Issue{{Path: "", Message: "request body is not acceptable JSON: " + err.Error()}}}
	}
	if err := schema.Validate(doc); err != nil {
		var verr *jsonschema.ValidationError
		if !errors.As(err, &verr) {
			return nil, nil, &ValidationError{Issues: []Issue{{Path: "", Message: err.Error()}}}
		}
		issues = schemaIssues(verr, doc)
	}
	return doc, issues, nil
}

// decodeChecked decodes a body that checkBody admitted into v, with the
// case-sensitive JSON v2 decoder, so that only the exact names the schema
// validated reach the Go value.
func decodeChecked(body []byte, v any) *ValidationError {
	if err := jsonv2.Unmarshal(body, v); err != nil {
		// The schema admitted the body, so this is a mismatch between the
		// schema and the Go types: still the client's answer is a 400.
		return &ValidationError{Issues: []Issue{{Path: "", Message: "request body does not decode: " + err.Error()}}}
	}
	return nil
}

// schemaIssues flattens the validator's error tree into issues: one per
// leaf, with a clean path and message. When a value has the wrong type,
// other complaints about the same value (an enum, a bound) are dropped:
// they only repeat it.
func schemaIssues(root *jsonschema.ValidationError, doc any) []Issue {
	var leaves []*jsonschema.ValidationError
	var issues []Issue
	var walk func(e, parent *jsonschema.ValidationError)
	walk = func(e, parent *jsonschema.ValidationError) {
		if pn, ok := e.ErrorKind.(*kind.PropertyNames); ok {
			// The causes locate the name as an instance of its own: the
			// issue belongs to the member the name is of. The object is
			// located by the parent, the schema applied to it: the
			// validator (v6.0.3) shares this error's location slice with
			// later errors, which overwrite it.
			loc := e.InstanceLocation
			if parent != nil {
				loc = parent.InstanceLocation
			}
			path := joinPath(dottedPath(loc, doc), pn.Property)
			for _, l := range leafErrors(e) {
				issues = append(issues, Issue{Path: path, Message: "invalid name: " + kindMessage(l)})
			}
			return
		}
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c, e)
		}
	}
	walk(root, nil)

	typeWrong := map[string]bool{}
	for _, l := range leaves {
		if _, ok := l.ErrorKind.(*kind.Type); ok {
			typeWrong[dottedPath(l.InstanceLocation, doc)] = true
		}
	}
	for _, l := range leaves {
		path := dottedPath(l.InstanceLocation, doc)
		switch k := l.ErrorKind.(type) {
		case *kind.Type:
			issues = append(issues, Issue{Path: path, Message: typeMessage(k)})
		case *kind.Required:
			// The path names the missing field, not the object it is missing
			// from: that is the field the client has to add.
			for _, m := range k.Missing {
				issues = append(issues, Issue{Path: joinPath(path, m), Message: "is required"})
			}
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				issues = append(issues, Issue{Path: joinPath(path, p), Message: "unknown field"})
			}
		default:
			if typeWrong[path] {
				continue
			}
			issues = append(issues, Issue{Path: path, Message: kindMessage(l)})
		}
	}
	return issues
}

// leafErrors returns the errors without causes under e.
func leafErrors(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leafErrors(c)...)
	}
	return out
}

// kindMessage words a leaf error. schemaIssues words type, required and
// unknown fields itself, to locate the latter two at the field.
func kindMessage(l *jsonschema.ValidationError) string {
	switch k := l.ErrorKind.(type) {
	case *kind.Enum:
		want := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			want = append(want, display(w))
		}
		return fmt.Sprintf("must be one of %s; got %s", strings.Join(want, ", "), display(k.Got))
	case *kind.Const:
		return fmt.Sprintf("must be %s", display(k.Want))
	case *kind.Minimum:
		return "must be at least " + ratString(k.Want)
	case *kind.Maximum:
		return "must be at most " + ratString(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be greater than " + ratString(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be less than " + ratString(k.Want)
	case *kind.MinLength:
		if k.Want == 1 {
			return "must not be empty"
		}
		return fmt.Sprintf("must be at least %d characters long", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long", k.Want)
	case *kind.Pattern:
		if m, ok := patternMessages[k.Want]; ok {
			return m
		}
		return fmt.Sprintf("must match the pattern %s", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items", k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items", k.Want)
	case *kind.MaxProperties:
		if k.Want == 1 {
			return "must have at most 1 entry"
		}
		return fmt.Sprintf("must have at most %d entries", k.Want)
	case *kind.UniqueItems:
		return fmt.Sprintf("must not contain duplicates (items %d and %d are equal)", k.Duplicates[0], k.Duplicates[1])
	case *kind.Format:
		return fmt.Sprintf("must be a valid %s: %v", k.Want, k.Err)
	case *kind.Type:
		return typeMessage(k)
	case *kind.Required:
		return "misses " + strings.Join(k.Missing, ", ")
	case *kind.AdditionalProperties:
		return "has unknown fields " + strings.Join(k.Properties, ", ")
	case *kind.Not, *kind.FalseSchema:
		return "is not allowed"
	default:
		return "is invalid (" + strings.Join(l.ErrorKind.KeywordPath(), "/") + ")"
	}
}

// patternMessages say in words what the schema's patterns require.
var patternMessages = map[string]string{
	`^(auto|[A-Za-z0-9._-]+/[^\s]+)$`:        "must be provider-prefixed, <provider>/<model>, for example openai/gpt-4.1-mini, or auto (the model gateway's default model)",
	`^(wss?|https?)://`:                      "must be a ws://, wss://, http:// or https:// URL",
	`^[A-Za-z]{2}$`:                          "must be an ISO 3166-1 alpha-2 country code, for example US",
	`^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$`: "must be a locale such as en-US",
	`^https?://`:                             "must be an http:// or https:// URL",
	`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`:         "must be letters, digits, '-', '_' and '.', not starting with '.'",
	v1alpha1.DataDirNamePattern:              "must be a directory name, not a path: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
}

// typeMessage words a wrong type; "integer" gets its own words because the
// value is a number, just not a whole one.
func typeMessage(k *kind.Type) string {
	want := make([]string, 0, len(k.Want))
	for _, w := range k.Want {
		want = append(want, article(w))
	}
	if len(k.Want) == 1 && k.Want[0] == "integer" && k.Got == "number" {
		return "must be a whole number"
	}
	return fmt.Sprintf("must be %s; got %s", strings.Join(want, " or "), article(k.Got))
}

// article names a JSON type with its article, as in "must be an array".
func article(t string) string {
	switch t {
	case "array", "object", "integer":
		return "an " + t
	case "null":
		return "null"
	default:
		return "a " + t
	}
}

// display shows a JSON value in a message.
func display(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// ratString prints a bound without a trailing ".0" or a fraction like 1/10.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// dottedPath turns a JSON-pointer token list into the issue path form. A
// token is an array index only if the value at that point of the document is
// an array: a userMetadata key "0" stays a key.
func dottedPath(tokens []string, doc any) string {
	var b strings.Builder
	cur := doc
	for _, t := range tokens {
		switch v := cur.(type) {
		case []any:
			b.WriteString("[" + t + "]")
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(v) {
				cur = v[i]
			} else {
				cur = nil
			}
		case map[string]any:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(t)
			cur = v[t]
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(t)
			cur = nil
		}
	}
	return b.String()
}

// joinPath appends a field name to a path.
func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// sortIssues orders issues by path, then message, and drops exact
// duplicates (a field may fail the same way through two schema branches).
func sortIssues(issues []Issue) []Issue {
	sort.SliceStable(issues, func(i, j int) bool {
		if issues[i].Path != issues[j].Path {
			return issues[i].Path < issues[j].Path
		}
		return issues[i].Message < issues[j].Message
	})
	out := issues[:0]
	for i, is := range issues {
		if i > 0 && is == issues[i-1] {
			continue
		}
		out = append(out, is)
	}
	return out
}

// MaxUserMetadataBytes bounds a session's userMetadata, as compact JSON:
// it is stored in the session and shown in every list.
const MaxUserMetadataBytes = 16 << 10

// crossFieldIssues checks the rules the BrowserSession's CEL validations
// enforce across fields. It reads the untyped document, tolerating wrong
// types (the schema reports those), so that these issues are reported
// together with the schema's rather than after the client fixed those.
func crossFieldIssues(doc any) []Issue {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	var issues []Issue
	add := func(path, msg string) { issues = append(issues, Issue{Path: path, Message: msg}) }

	browser, hasBrowser := root["browser"].(map[string]any)
	// An omitted type is cloud, the CRD's default. A type the schema refuses
	// decides nothing: its own issue is enough.
	btype, typeKnown := string(BrowserTypeCloud), true
	if hasBrowser {
		if t, present := browser["type"]; present {
			s, _ := t.(string)
			btype = s
			typeKnown = s == string(BrowserTypeLocal) || s == string(BrowserTypeCloud)
		}
	}
	if hasBrowser && typeKnown && btype != string(BrowserTypeLocal) {
		if _, ok := browser["cdpUrl"]; ok {
			add("browser.cdpUrl", "requires browser.type local")
		}
		if _, ok := browser["launchOptions"]; ok {
			add("browser.launchOptions", "requires browser.type local")
		}
	}
	if _, ok := root["cloudSessionCreateParams"]; ok && hasBrowser && typeKnown && btype != string(BrowserTypeCloud) {
		add("cloudSessionCreateParams", "requires browser.type cloud or no browser")
	}
	if c, ok := root["cloudSessionCreateParams"].(map[string]any); ok {
		if md, ok := c["userMetadata"]; ok {
			if raw, err := json.Marshal(md); err == nil && len(raw) > MaxUserMetadataBytes {
				add("cloudSessionCreateParams.userMetadata", fmt.Sprintf("is %d bytes of JSON; at most %d", len(raw), MaxUserMetadataBytes))
			}
		}
	}

	credentials := func(path string, server any) {
		if s, ok := server.(string); ok && v1alpha1.ProxyServerHasUserInfo(s) {
			add(path, "must not carry credentials (user:password@): use username and password")
		}
	}
	if hasBrowser {
		if lo, ok := browser["launchOptions"].(map[string]any); ok {
			if p, ok := lo["proxy"].(map[string]any); ok {
				credentials("browser.launchOptions.proxy.server", p["server"])
			}
			if v, _ := lo["preserveUserDataDir"].(bool); v {
				if _, ok := lo["userDataDir"]; !ok {
					add("browser.launchOptions.preserveUserDataDir", "requires userDataDir")
				}
			}
			// The headers go with the browser to attach to (the CRD's
			// cdpHeadersSecretRef requires cdpUrlSecretRef); without one
			// they would make the session's create fail.
			if h, _ := lo["cdpHeaders"].(map[string]any); len(h) > 0 {
				_, top := browser["cdpUrl"]
				_, inner := lo["cdpUrl"]
				if !top && !inner {
					add("browser.launchOptions.cdpHeaders", "requires cdpUrl")
				}
			}
		}
	}

	csp, _ := root["cloudSessionCreateParams"].(map[string]any)
	if csp == nil {
		return issues
	}
	if proxies, ok := csp["proxies"].([]any); ok {
		for i, p := range proxies {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			base := fmt.Sprintf("cloudSessionCreateParams.proxies[%d]", i)
			if dp, ok := pm["domainPattern"].(string); ok {
				if _, err := v1alpha1.DomainPatternRegexp(dp); err != nil {
					add(base+".domainPattern", err.Error())
				}
			}
			switch pm["type"] {
			case string(ProxyTypeExternal):
				if _, ok := pm["server"]; !ok {
					add(base+".server", "is required for an external proxy")
				}
				credentials(base+".server", pm["server"])
				if _, ok := pm["geolocation"]; ok {
					add(base+".geolocation", "applies only to a cloud proxy")
				}
			case string(ProxyTypeCloud):
				for _, f := range []string{"server", "username", "password"} {
					if _, ok := pm[f]; ok {
						add(base+"."+f, "applies only to an external proxy")
					}
				}
			}
		}
	}
	if bs, ok := csp["browserSettings"].(map[string]any); ok {
		// The captcha's image and answer field go together (the runner
		// has no captcha detection of its own).
		_, img := bs["captchaImageSelector"]
		_, in := bs["captchaInputSelector"]
		switch {
		case in && !img:
			add("cloudSessionCreateParams.browserSettings.captchaImageSelector", "is required with captchaInputSelector")
		case img && !in:
			add("cloudSessionCreateParams.browserSettings.captchaInputSelector", "is required with captchaImageSelector")
		}
		if fp, ok := bs["fingerprint"].(map[string]any); ok {
			if sc, ok := fp["screen"].(map[string]any); ok {
				const base = "cloudSessionCreateParams.browserSettings.fingerprint.screen"
				for _, dim := range []string{"Width", "Height"} {
					lo, okLo := number(sc["min"+dim])
					hi, okHi := number(sc["max"+dim])
					if okLo && okHi && lo > hi {
						add(base+".min"+dim, "must not exceed max"+dim)
					}
				}
			}
		}
	}
	return issues
}

// launchIssues checks what the runner would refuse of the launch options:
// a switch off the allowlist of api/v1alpha1 (or a value it does not
// allow), and an executablePath the operator does not allow. (That
// userDataDir and downloadsPath are names is the schema's pattern.)
func launchIssues(doc any, opts StartOptions) []Issue {
	root, _ := doc.(map[string]any)
	browser, _ := root["browser"].(map[string]any)
	lo, _ := browser["launchOptions"].(map[string]any)
	if lo == nil {
		return nil
	}
	var issues []Issue
	if args, ok := lo["args"].([]any); ok {
		for i, a := range args {
			if s, ok := a.(string); ok {
				if err := v1alpha1.ValidateLaunchArg(s); err != nil {
					issues = append(issues, Issue{Path: fmt.Sprintf("browser.launchOptions.args[%d]", i), Message: err.Error()})
				}
			}
		}
	}
	if p, ok := lo["executablePath"].(string); ok && !rpc.ExecutableAllowed(p, opts.AllowedExecutables) {
		issues = append(issues, Issue{Path: "browser.launchOptions.executablePath", Message: "is not a browser this service allows; leave it out to use the runner's Chromium"})
	}
	return issues
}

// regionIssues checks cloudSessionCreateParams.region against the
// operator's accepted regions; the schema checks that it is a region.
func regionIssues(doc any, opts StartOptions) []Issue {
	if len(opts.AcceptedRegions) == 0 {
		return nil
	}
	root, _ := doc.(map[string]any)
	params, _ := root["cloudSessionCreateParams"].(map[string]any)
	region, ok := params["region"].(string)
	// One that is no region at all the schema refused already.
	if !ok || !slices.Contains(v1alpha1.Regions, v1alpha1.Region(region)) || slices.Contains(opts.AcceptedRegions, region) {
		return nil
	}
	return []Issue{{Path: "cloudSessionCreateParams.region", Message: fmt.Sprintf(
		"is not a region this service runs browsers in; it accepts %s", strings.Join(opts.AcceptedRegions, ", "))}}
}

// number reads a JSON number of the untyped document.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case interface{ Float64() (float64, error) }:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}
