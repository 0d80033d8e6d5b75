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
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/browserfleet/browserfleet/engine/llm/provider"
)

// backend is one provider's side of a Client.
type backend interface {
	// generate makes the call; req has been validated.
	generate(ctx context.Context, req *Request) (*Response, error)
	// apiError returns the HTTP status and the provider's message of an
	// error the provider answered with, if err is one.
	apiError(err error) (status int, message string, ok bool)
}

// client is the provider-neutral half of every Client: validation, the
// per-call timeout, timing and error reporting.
type client struct {
	provider string
	model    string
	timeout  time.Duration
	// secrets are redacted from errors.
	secrets []string
	backend backend
}

// New returns a Client for cfg.Model. It fails on a malformed model name
// (ErrInvalidModel), an unknown provider (ErrUnknownProvider) or a Config
// the provider's SDK refuses; it makes no request.
func New(cfg Config) (Client, error) {
	c, httpClient, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	switch c.provider {
	case provider.OpenAI:
		c.backend = newOpenAI(cfg, c.model, httpClient)
	case provider.Anthropic:
		c.backend = newAnthropic(cfg, c.model, httpClient)
	case provider.Google:
		c.backend, err = newGoogle(cfg, c.model, httpClient)
	}
	if err != nil {
		return nil, c.sdkError(err)
	}
	return c, nil
}

// newClient returns the provider-neutral half of a client of cfg.Model,
// without its backend, and the HTTP client its SDK must use.
func newClient(cfg Config) (*client, *http.Client, error) {
	prov, model, err := ParseModel(cfg.Model, cfg.Provider)
	if err != nil {
		return nil, nil, err
	}
	c := &client{provider: prov, model: model, secrets: secretsOf(cfg), timeout: cfg.Timeout}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if cfg.BaseURL != "" {
		if err := checkBaseURL(cfg.BaseURL); err != nil {
			return nil, nil, c.fail(0, err.Error(), err)
		}
	}
	retries := cfg.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	return c, newHTTPClient(cfg.HTTPClient, retries, defaultRetryBaseDelay), nil
}

// sdkError is the error of an SDK that refused a Config. The SDK's error
// is not kept: genai's quote the whole ClientConfig, API key included.
func (c *client) sdkError(err error) *Error {
	msg := redact(err.Error(), c.secrets)
	return c.fail(0, msg, errors.New(msg))
}

// call runs one model call under the per-call timeout and turns its
// failure into an *Error; it returns how long the call took.
func (c *client) call(ctx context.Context, errorsOf func(error) (int, string, bool), do func(ctx context.Context) error) (time.Duration, error) {
	callCtx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	callCtx, trace := withCallTrace(callCtx)
	start := time.Now()
	err := do(callCtx)
	elapsed := time.Since(start)
	if err != nil {
		e := c.classify(ctx, callCtx, err, trace, errorsOf)
		e.Attempts = int(trace.attempts.Load())
		return elapsed, e
	}
	return elapsed, nil
}

// Model implements Client.
func (c *client) Model() string { return c.provider + "/" + c.model }

// Generate implements Client.
func (c *client) Generate(ctx context.Context, req Request) (*Response, error) {
	if err := validateRequest(&req); err != nil {
		return nil, c.fail(0, err.Error(), err)
	}
	var resp *Response
	elapsed, err := c.call(ctx, c.backend.apiError, func(ctx context.Context) error {
		var err error
		resp, err = c.backend.generate(ctx, &req)
		return err
	})
	if err != nil {
		return nil, err
	}
	resp.Usage.InferenceTimeMs = elapsed.Milliseconds()
	return resp, nil
}

// classify turns a failed call into an *Error saying why it failed.
func (c *client) classify(parent, call context.Context, err error, trace *callTrace, errorsOf func(error) (int, string, bool)) *Error {
	switch {
	case parent.Err() != nil:
		// The caller gave up; its reason is the cause, whatever the SDK
		// made of it.
		return c.fail(0, "call abandoned: "+parent.Err().Error(), parent.Err())
	case errors.Is(call.Err(), context.DeadlineExceeded):
		return c.fail(0, fmt.Sprintf("timed out after %s", c.timeout), context.DeadlineExceeded)
	}
	if status, msg, ok := errorsOf(err); ok {
		if last := int(trace.lastStatus.Load()); status == 0 && last >= 400 {
			// The SDK lost the status (genai reads it from the body,
			// which a proxy may not shape); the transport saw it.
			status = last
		}
		return c.fail(status, msg, err)
	}
	return c.fail(0, err.Error(), err)
}

// fail returns the *Error of this client with msg redacted.
func (c *client) fail(status int, msg string, err error) *Error {
	return &Error{
		Provider:   c.provider,
		Model:      c.model,
		StatusCode: status,
		Message:    redact(msg, c.secrets),
		Err:        err,
	}
}

// checkBaseURL refuses a BaseURL no SDK could use, before any request.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid BaseURL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("invalid BaseURL %q: want an absolute http or https URL", u.Redacted())
	}
	return nil
}

// imageTypes are the image types every provider accepts.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// validateRequest refuses what no provider would take, so that the caller
// learns it without a round trip, and fills in defaults.
func validateRequest(req *Request) error {
	if len(req.Messages) == 0 {
		return fmt.Errorf("%w: no messages", ErrInvalidRequest)
	}
	if req.MaxOutputTokens < 0 {
		return fmt.Errorf("%w: negative MaxOutputTokens %d", ErrInvalidRequest, req.MaxOutputTokens)
	}
	msgs := slices.Clone(req.Messages)
	for i, m := range msgs {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return fmt.Errorf("%w: message %d: role %q is neither %q nor %q", ErrInvalidRequest, i, m.Role, RoleUser, RoleAssistant)
		}
		if len(m.Parts) == 0 {
			return fmt.Errorf("%w: message %d has no parts", ErrInvalidRequest, i)
		}
		parts := slices.Clone(m.Parts)
		for j, p := range parts {
			switch {
			case p.ToolCall != nil || p.ToolResult != nil:
				if p.ToolCall != nil && p.ToolResult != nil || p.Text != "" || len(p.Image) > 0 {
					return fmt.Errorf("%w: message %d part %d holds more than one of text, image, ToolCall and ToolResult", ErrInvalidRequest, i, j)
				}
			case len(p.Image) > 0 && p.Text != "":
				return fmt.Errorf("%w: message %d part %d has both text and an image", ErrInvalidRequest, i, j)
			case len(p.Image) > 0 && m.Role != RoleUser:
				return fmt.Errorf("%w: message %d: only user messages may carry images", ErrInvalidRequest, i)
			case len(p.Image) > 0:
				if p.MIMEType == "" {
					parts[j].MIMEType = "image/png"
				} else if !slices.Contains(imageTypes, p.MIMEType) {
					return fmt.Errorf("%w: message %d part %d: image type %q is not one of %v", ErrInvalidRequest, i, j, p.MIMEType, imageTypes)
				}
			case p.Text == "":
				return fmt.Errorf("%w: message %d part %d is empty", ErrInvalidRequest, i, j)
			}
		}
		msgs[i].Parts = parts
	}
	if err := validateToolParts(req, msgs); err != nil {
		return err
	}
	req.Messages = msgs
	if req.Schema != nil && len(req.Schema.JSON) == 0 {
		return fmt.Errorf("%w: Schema has no JSON schema", ErrInvalidRequest)
	}
	return validateTools(req)
}
