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

package cache

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

	"github.com/browserfleet/browserfleet/store"
)

// Headers of the cache endpoints. The runner's two are runner/rpc's
// HeaderRunnerSession and AuthorizationScheme, which this package cannot
// import (rpc imports it); a test keeps them equal.
const (
	// HeaderAPIKey carries the project key on the /v1 endpoints.
	HeaderAPIKey = "x-svc-api-key"
	// headerRunnerSession names a runner's session, "namespace/name".
	headerRunnerSession = "X-Browserfleet-Session"
	// authorizationScheme is the scheme of a runner's token.
	authorizationScheme = "Bearer"
)

// maxSetAnswerBytes bounds the answer to a set, {"success": true} or an
// error envelope.
const maxSetAnswerBytes = 64 << 10

// ClientOptions configure NewClient.
type ClientOptions struct {
	// BaseURL is the API's address: the runner listener's (the runner's
	// --services-url) with Runner, else the /v1 API's root (a client
	// library's APIURL). An absolute http or https URL without
	// credentials; a path prefix is kept.
	BaseURL string
	// Runner calls the runner paths (RunnerPathGet, RunnerPathSet) with
	// the session's runner token; otherwise the /v1 paths with APIKey.
	Runner bool
	// Session is the runner's session, "namespace/name"; with Runner.
	Session string
	// Token is the session's runner token; with Runner.
	Token string
	// APIKey is the project's key; without Runner.
	APIKey string
	// HTTPClient carries the calls; nil is a client of its own. Each call
	// is bounded by its context (the engine's by StoreTimeout).
	HTTPClient *http.Client
}

// Client is a Store over the API's cache endpoints. It is safe for
// concurrent use. Its errors never carry the token or the key.
type Client struct {
	get, set string
	opts     ClientOptions
	http     *http.Client
}

var _ Store = (*Client)(nil)

// NewClient returns the client of the cache endpoints at opts.BaseURL.
func NewClient(opts ClientOptions) (*Client, error) {
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("cache client: base URL %q: want an absolute http or https URL without credentials, query or fragment", redactURL(opts.BaseURL))
	}
	if opts.Runner {
		if opts.Token == "" {
			return nil, errors.New("cache client: a runner needs its session's token")
		}
		if ns, name, ok := strings.Cut(opts.Session, "/"); !ok || ns == "" || name == "" {
			return nil, fmt.Errorf("cache client: session %q: want namespace/name", opts.Session)
		}
	} else if opts.APIKey == "" {
		return nil, errors.New("cache client: an API key is required")
	}
	c := &Client{opts: opts, http: opts.HTTPClient}
	if c.http == nil {
		c.http = &http.Client{Timeout: StoreTimeout * 2}
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	if opts.Runner {
		c.get, c.set = base+RunnerPathGet, base+RunnerPathSet
	} else {
		c.get, c.set = base+PathGet, base+PathSet
	}
	return c, nil
}

// StatusError is an answer of the API other than 200.
type StatusError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code and Message are the error envelope's, when it had one.
	Code    string
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("the API answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("the API answered %d %s: %s", e.StatusCode, e.Code, e.Message)
}

// Unwrap makes an entry the API refused as too large errors.Is
// store.ErrTooLarge.
func (e *StatusError) Unwrap() error {
	if e.StatusCode == http.StatusRequestEntityTooLarge {
		return store.ErrTooLarge
	}
	return nil
}

// Get looks the key up.
func (c *Client) Get(ctx context.Context, req GetRequest) (*GetResponse, error) {
	if err := CheckKey(req.Key); err != nil {
		return nil, fmt.Errorf("cache get: %w", err)
	}
	if err := CheckThreshold(req.Threshold); err != nil {
		return nil, fmt.Errorf("cache get: %w", err)
	}
	var resp GetResponse
	if err := c.call(ctx, c.get, req, MaxBodyBytes, &resp); err != nil {
		return nil, fmt.Errorf("cache get: %w", err)
	}
	if resp.Hit && resp.Entry == nil {
		return nil, errors.New("cache get: the API answered a hit without an entry")
	}
	return &resp, nil
}

// Set stores the entry under the key.
func (c *Client) Set(ctx context.Context, req SetRequest) error {
	if err := CheckKey(req.Key); err != nil {
		return fmt.Errorf("cache set: %w", err)
	}
	if len(req.Entry.Value) == 0 || req.Entry.Method == "" {
		return errors.New("cache set: entry must have a method and a value")
	}
	if n := len(req.Entry.Value); n > MaxEntryBytes {
		return fmt.Errorf("cache set: entry is %d bytes; at most %d: %w", n, MaxEntryBytes, store.ErrTooLarge)
	}
	if err := c.call(ctx, c.set, req, maxSetAnswerBytes, nil); err != nil {
		return fmt.Errorf("cache set: %w", err)
	}
	return nil
}

// call posts body to u and decodes a 200 answer of at most limit bytes
// into out (nil: the answer is read and dropped).
func (c *Client) call(ctx context.Context, u string, body any, limit int64, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding the request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.opts.Runner {
		req.Header.Set("Authorization", authorizationScheme+" "+c.opts.Token)
		req.Header.Set(headerRunnerSession, c.opts.Session)
	} else {
		req.Header.Set(HeaderAPIKey, c.opts.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("calling the API: %s", c.redact(err.Error()))
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("reading the API's answer: %s", c.redact(err.Error()))
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("the API's answer is larger than %d bytes", limit)
	}
	if resp.StatusCode != http.StatusOK {
		var env struct {
			Error string `json:"error"`
			Code  string `json:"code"`
		}
		se := &StatusError{StatusCode: resp.StatusCode}
		if json.Unmarshal(data, &env) == nil {
			se.Code, se.Message = env.Code, c.redact(env.Error)
		}
		return se
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("the API's answer is not the expected JSON: %w", err)
	}
	return nil
}

// redact removes the client's secrets from a message that came from
// elsewhere: an API that echoed them must not make this client leak them.
func (c *Client) redact(s string) string {
	for _, secret := range []string{c.opts.Token, c.opts.APIKey} {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

// redactURL keeps a malformed base URL's credentials out of an error.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if _, rest, ok := strings.Cut(raw, "@"); ok {
		return "[redacted]@" + rest
	}
	return raw
}
