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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/propagation"

	"github.com/browserfleet/browserfleet/tracing"
)

// Bounds of the service's answers the library reads: an extract's value or
// a page's text can be large, an error is a few lines.
const (
	maxAnswerBytes = 32 << 20
	maxErrorBytes  = 64 << 10
)

// headerAPIKey carries the project's service API key.
const headerAPIKey = "x-svc-api-key"

// cloudAPI calls the service's /v1 with one key.
type cloudAPI struct {
	// base is the service origin, without /v1 and a trailing slash.
	base string
	key  string
	http *http.Client
}

// newCloudAPI checks the service's origin and key, taking the environment's
// where the options give none.
func newCloudAPI(rawURL, key string) (*cloudAPI, error) {
	if rawURL == "" {
		rawURL = os.Getenv(EnvAPIURL)
	}
	if key == "" {
		key = os.Getenv(EnvAPIKey)
	}
	base, err := serviceOrigin(rawURL)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, invalid("APIKey", "required: the project's service API key (or $%s)", EnvAPIKey)
	}
	// A transport of the handle's own: closing the handle lets its idle
	// connections go without touching the process's default.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &cloudAPI{base: base, key: key, http: &http.Client{Transport: tr}}, nil
}

// serviceOrigin checks an APIURL: an http or https URL with a host, whose
// path (a reverse proxy's prefix) does not end in /v1.
func serviceOrigin(raw string) (string, error) {
	if raw == "" {
		return "", invalid("APIURL", "required: the service's origin, such as https://browserfleet.example.com (or $%s)", EnvAPIURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", invalid("APIURL", "must be an http or https URL with a host")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", invalid("APIURL", "must be the service's origin, without credentials, query or fragment")
	}
	base := strings.TrimRight(u.String(), "/")
	if strings.HasSuffix(base, "/v1") {
		return "", invalid("APIURL", "give the service's origin without the /v1 suffix")
	}
	return base, nil
}

// with is a copy of a that calls rawURL (when set) with key (when set),
// sharing its connections.
func (a *cloudAPI) with(rawURL, key string) (*cloudAPI, error) {
	c := *a
	if rawURL != "" {
		base, err := serviceOrigin(rawURL)
		if err != nil {
			return nil, err
		}
		c.base = base
	}
	if key != "" {
		c.key = key
	}
	return &c, nil
}

// envelope is the service's success answer: {"success": true, "data": ...}.
type envelope[T any] struct {
	Success bool `json:"success"`
	Data    T    `json:"data"`
}

// errorBody is the service's error answer.
type errorBody struct {
	Error  string `json:"error"`
	Code   string `json:"code"`
	Issues []struct {
		Path    string `json:"path"`
		Message string `json:"message"`
	} `json:"issues"`
	// Stack comes with BATCH_SCRIPT_ERROR.
	Stack string `json:"stack"`
}

// do calls method path (below the origin, "/v1/...") with body as JSON (nil:
// none) and decodes the answer's data into out (nil: none). Every request
// carries the key and ctx's trace context (W3C traceparent), so that the
// service continues the caller's trace. Cancelling ctx aborts the call;
// the service then cancels what the call started. A refusal is an
// *APIError.
func (a *cloudAPI) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encoding the request: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return fmt.Errorf("making the request: %w", err)
	}
	req.Header.Set(headerAPIKey, a.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	tracing.Propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := a.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, path, context.Cause(ctx))
		}
		// url.Error quotes the URL, which holds no secret: the key is
		// a header.
		return fmt.Errorf("calling the service: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return a.refusal(resp)
	}
	raw, err := readBounded(resp.Body, maxAnswerBytes)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, path, context.Cause(ctx))
		}
		return fmt.Errorf("reading the service's answer to %s %s: %w", method, path, err)
	}
	var env envelope[json.RawMessage]
	if err := json.Unmarshal(raw, &env); err != nil || !env.Success {
		return fmt.Errorf("the service's answer to %s %s is not a success envelope", method, path)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("decoding the service's answer to %s %s: %w", method, path, err)
	}
	return nil
}

// refusal makes the *APIError of a non-200 answer.
func (a *cloudAPI) refusal(resp *http.Response) error {
	e := &APIError{StatusCode: resp.StatusCode}
	raw, _ := readBounded(resp.Body, maxErrorBytes)
	var body errorBody
	if json.Unmarshal(raw, &body) == nil && (body.Error != "" || body.Code != "") {
		e.Code, e.Message = body.Code, body.Error
		for _, is := range body.Issues {
			e.Issues = append(e.Issues, APIIssue{Path: is.Path, Message: is.Message})
		}
		if body.Stack != "" {
			return &stackedAPIError{APIError: e, stack: body.Stack}
		}
		return e
	}
	// Not the service's envelope: a proxy's page, say. Its status says
	// enough; its body is not ours to repeat.
	e.Message = http.StatusText(resp.StatusCode)
	return e
}

// errTooLarge is readBounded's error past its bound.
var errTooLarge = errors.New("the answer is too large")

// readBounded reads r to its end, failing past limit bytes.
func readBounded(r io.Reader, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, limit)
	}
	return raw, nil
}

// sessionPath is the path of a session's endpoint.
func sessionPath(id, endpoint string) string {
	p := "/v1/sessions/" + url.PathEscape(id)
	if endpoint != "" {
		p += "/" + endpoint
	}
	return p
}

// startData is start's data.
type startData struct {
	SessionID string  `json:"sessionId"`
	CDPURL    *string `json:"cdpUrl"`
	Available bool    `json:"available"`
}

// sessionView is the part of GET /v1/sessions/{id}'s data the library
// reads.
type sessionView struct {
	SessionID string  `json:"sessionId"`
	Phase     string  `json:"phase"`
	Message   string  `json:"message"`
	CDPURL    *string `json:"cdpUrl"`
}

// start starts a session and waits until it is ready.
func (a *cloudAPI) start(ctx context.Context, body *startWire) (*startData, error) {
	var d startData
	if err := a.do(ctx, http.MethodPost, "/v1/sessions/start", body, &d); err != nil {
		return nil, err
	}
	if d.SessionID == "" {
		return nil, errors.New("the service's answer names no session")
	}
	return &d, nil
}

// session reads a session.
func (a *cloudAPI) session(ctx context.Context, id string) (*sessionView, error) {
	var v sessionView
	if err := a.do(ctx, http.MethodGet, sessionPath(id, ""), nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// end ends a session; ending one that ended already succeeds.
func (a *cloudAPI) end(ctx context.Context, id string) error {
	return a.do(ctx, http.MethodPost, sessionPath(id, "end"), nil, nil)
}
