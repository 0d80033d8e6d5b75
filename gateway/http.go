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

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// HeaderAPIKey carries the project key of /v1 callers (the API's own).
const HeaderAPIKey = "x-svc-api-key"

// Serve answers one call of project's: r's body is a GenerateRequest.
// The caller has authenticated r; project is the namespace it belongs to.
func (g *Gateway) Serve(w http.ResponseWriter, r *http.Request, project string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, refuse(http.StatusMethodNotAllowed, CodeBadRequest, "the model gateway takes POST"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		e := refuse(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "the request is larger than %d bytes", MaxRequestBytes)
		g.opts.Metrics.observe(project, "other", e.Code)
		writeError(w, e)
		return
	case err != nil:
		writeError(w, refuse(http.StatusBadRequest, CodeBadRequest, "reading the request: %s", err.Error()))
		return
	}
	var req GenerateRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		e := refuse(http.StatusBadRequest, CodeBadRequest, "the body is not a JSON {model, request}: %s", err.Error())
		g.opts.Metrics.observe(project, "other", e.Code)
		writeError(w, e)
		return
	}
	resp, err := g.Generate(r.Context(), project, req)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Status: http.StatusInternalServerError, Code: "INTERNAL", Message: "internal error"}
		}
		writeError(w, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// Endpoint is where a caller reaches the gateway, and how it
// authenticates: a runner with its session's token, the client library
// with its project key.
type Endpoint struct {
	url    string
	header http.Header
	http   *http.Client
}

// clientTimeout bounds one call through the gateway: the gateway's own
// bound of the provider's call, and the hop.
const clientTimeout = llm.DefaultTimeout + 10*time.Second

// NewRunnerEndpoint is the gateway on the API's runner listener at
// servicesURL, for the runner of session ("namespace/name") with its
// token. rt carries the calls; nil is http.DefaultTransport. The address
// is the operator's (the manager passes it), so the runner's egress gate,
// which is for what tenants make it reach, does not apply.
func NewRunnerEndpoint(servicesURL, session, token string, rt http.RoundTripper) (*Endpoint, error) {
	if token == "" || !strings.Contains(session, "/") {
		return nil, errors.New("model gateway client: a token and a namespace/name session are required")
	}
	h := http.Header{}
	h.Set("Authorization", rpc.AuthorizationScheme+" "+token)
	h.Set(rpc.HeaderRunnerSession, session)
	return newEndpoint(servicesURL, RunnerPathGenerate, h, rt)
}

// NewProjectEndpoint is the gateway of the API at apiURL for a caller
// with a project key.
func NewProjectEndpoint(apiURL, apiKey string, rt http.RoundTripper) (*Endpoint, error) {
	if apiKey == "" {
		return nil, errors.New("model gateway client: a project API key is required")
	}
	h := http.Header{}
	h.Set(HeaderAPIKey, apiKey)
	return newEndpoint(apiURL, PathGenerate, h, rt)
}

func newEndpoint(base, path string, h http.Header, rt http.RoundTripper) (*Endpoint, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("model gateway URL %q: want an absolute http or https URL without credentials", base)
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	h.Set("Content-Type", "application/json")
	return &Endpoint{url: strings.TrimSuffix(base, "/") + path, header: h, http: &http.Client{Transport: rt, Timeout: clientTimeout}}, nil
}

// Client is an llm.Client of model through the gateway: model is
// "provider/model" or ModelAuto.
func (e *Endpoint) Client(model string) *Client {
	if model == "" {
		model = ModelAuto
	}
	return &Client{e: e, model: model}
}

// Client calls one model through the gateway. Its errors are *llm.Error
// for a provider's failure (MODEL_ERROR, TIMEOUT), else *Error: a budget
// refusal matches ErrBudgetExceeded.
type Client struct {
	e     *Endpoint
	model string
}

var _ llm.Client = (*Client)(nil)

// Model implements llm.Client: the name the client was made with.
func (c *Client) Model() string { return c.model }

// Generate implements llm.Client.
func (c *Client) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	body, err := json.Marshal(GenerateRequest{Model: c.model, Request: WireRequest(req)})
	if err != nil {
		return nil, c.fail(0, fmt.Sprintf("encoding the request: %s", err.Error()), err)
	}
	if len(body) > MaxRequestBytes {
		return nil, &Error{Status: http.StatusRequestEntityTooLarge, Code: CodePayloadTooLarge, Message: fmt.Sprintf("the request is %d bytes, more than the gateway takes (%d)", len(body), MaxRequestBytes)}
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.e.url, bytes.NewReader(body))
	if err != nil {
		return nil, c.fail(0, err.Error(), err)
	}
	hr.Header = c.e.header.Clone()
	start := time.Now()
	resp, err := c.e.http.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, c.fail(0, "call abandoned: "+ctx.Err().Error(), ctx.Err())
		}
		return nil, c.fail(0, "calling the model gateway: "+err.Error(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, c.fail(0, "reading the model gateway's answer: "+err.Error(), err)
	}
	if len(data) > MaxResponseBytes {
		return nil, c.fail(0, fmt.Sprintf("the model gateway's answer is larger than %d bytes", MaxResponseBytes), llm.ErrInvalidOutput)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, c.refused(resp, data)
	}
	var out GenerateResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, c.fail(0, "the model gateway's answer is not JSON: "+err.Error(), llm.ErrInvalidOutput)
	}
	r := out.Response.LLM()
	if r.Usage.InferenceTimeMs == 0 {
		r.Usage.InferenceTimeMs = time.Since(start).Milliseconds()
	}
	return &r, nil
}

// refused is the error of a non-200 answer.
func (c *Client) refused(resp *http.Response, data []byte) error {
	var b ErrorBody
	if json.Unmarshal(data, &b) != nil || b.Code == "" {
		return c.fail(0, fmt.Sprintf("the model gateway answered %s", resp.Status), nil)
	}
	e := &Error{Status: resp.StatusCode, Code: b.Code, Message: b.Error}
	switch b.Code {
	case CodeModelError:
		return c.fail(0, b.Error, e)
	case CodeTimeout:
		return c.fail(0, b.Error, fmt.Errorf("%w: %w", context.DeadlineExceeded, e))
	}
	return e
}

// fail is an *llm.Error of the model, for the engine's and the runner's
// usual handling of a model that failed.
func (c *Client) fail(status int, msg string, err error) *llm.Error {
	prov, id, _ := strings.Cut(c.model, "/")
	if id == "" {
		prov, id = "gateway", c.model
	}
	return &llm.Error{Provider: prov, Model: id, StatusCode: status, Message: msg, Err: err}
}
