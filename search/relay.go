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

package search

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

	"github.com/go-logr/logr"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// RelayPath is the relay's path on the API pod's runner listener: POST a
// RelayRequest, get a RelayResponse, or a RelayError with a non-200
// status.
const RelayPath = "/runner/v1/search"

// DefaultMaxInFlight bounds the searches a relay runs at once.
const DefaultMaxInFlight = 32

// RelayRequest is the body of a call to the relay.
type RelayRequest struct {
	// Query is what to search for (CheckQuery).
	Query string `json:"query"`
}

// RelayResponse is the relay's answer.
type RelayResponse struct {
	// Results are the hits, best first.
	Results []Result `json:"results"`
}

// RelayError is the body of every non-200 answer of the relay.
type RelayError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// OutcomeSuccess is the outcome RelayOptions.Observe is told of a search
// that answered; the others are the codes below.
const OutcomeSuccess = "success"

// Codes of RelayError, one per HTTP status the relay answers with.
const (
	CodeBadRequest   = "BAD_REQUEST"    // 400
	CodeUnauthorized = "UNAUTHORIZED"   // 401
	CodeBusy         = "BUSY"           // 429: MaxInFlight searches run
	CodeFailed       = "SEARCH_FAILED"  // 502: the provider failed
	CodeTimeout      = "SEARCH_TIMEOUT" // 504: the provider did not answer in time
)

// ErrUnauthorized is a caller that is not the runner of a session.
var ErrUnauthorized = errors.New("unauthorized")

// RelayOptions configure NewRelay.
type RelayOptions struct {
	// Searcher is the operator's provider. Required.
	Searcher Searcher
	// Authenticate returns the session ("namespace/name") whose runner
	// sent r, or an error wrapping ErrUnauthorized. Required.
	Authenticate func(ctx context.Context, r *http.Request) (string, error)
	// MaxInFlight bounds the searches run at once; more are refused with
	// CodeBusy. Zero is DefaultMaxInFlight.
	MaxInFlight int
	// Observe, when set, is told each call's outcome: OutcomeSuccess or
	// its code.
	Observe func(outcome string)
	// Logger logs each refused or failed search, without its query.
	Logger logr.Logger
}

// NewRelay returns the relay's handler, for RelayPath. It runs a runner's
// search with the operator's provider, whose key stays in the API pod.
func NewRelay(opts RelayOptions) (http.Handler, error) {
	if opts.Searcher == nil || opts.Authenticate == nil {
		return nil, errors.New("search relay: a Searcher and an Authenticate func are required")
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.Observe == nil {
		opts.Observe = func(string) {}
	}
	return &relay{opts: opts, slots: make(chan struct{}, opts.MaxInFlight)}, nil
}

type relay struct {
	opts  RelayOptions
	slots chan struct{}
}

func (h *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.fail(w, http.StatusMethodNotAllowed, CodeBadRequest, "the search relay takes POST")
		return
	}
	session, err := h.opts.Authenticate(r.Context(), r)
	if err != nil {
		if !errors.Is(err, ErrUnauthorized) {
			h.opts.Logger.Error(err, "authenticating a runner's search")
		}
		w.Header().Set("WWW-Authenticate", rpc.AuthorizationScheme)
		h.fail(w, http.StatusUnauthorized, CodeUnauthorized, "the search relay serves runners only, with their session's token")
		return
	}
	var req RelayRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRelayRequest+1))
	switch {
	case err != nil:
		h.fail(w, http.StatusBadRequest, CodeBadRequest, "reading the request: "+err.Error())
		return
	case len(body) > maxRelayRequest:
		h.fail(w, http.StatusRequestEntityTooLarge, CodeBadRequest, fmt.Sprintf("the request is larger than %d bytes", maxRelayRequest))
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		h.fail(w, http.StatusBadRequest, CodeBadRequest, "the request is not a JSON {query}: "+err.Error())
		return
	}
	if err := CheckQuery(req.Query); err != nil {
		h.fail(w, http.StatusBadRequest, CodeBadRequest, "query: "+err.Error())
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		h.fail(w, http.StatusTooManyRequests, CodeBusy, fmt.Sprintf("the relay runs as many searches as it may at once (%d); try again shortly", cap(h.slots)))
		return
	}
	hits, err := h.opts.Searcher.Search(r.Context(), req.Query)
	if err != nil {
		status, code := http.StatusBadGateway, CodeFailed
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			status, code = http.StatusGatewayTimeout, CodeTimeout
		}
		h.opts.Logger.Info("search failed", "session", session, "err", err.Error())
		h.fail(w, status, code, err.Error())
		return
	}
	if hits == nil {
		hits = []Result{}
	}
	h.opts.Observe(OutcomeSuccess)
	w.Header().Set("Content-Type", rpc.ContentTypeJSON)
	_ = json.NewEncoder(w).Encode(RelayResponse{Results: hits})
}

func (h *relay) fail(w http.ResponseWriter, status int, code, msg string) {
	h.opts.Observe(code)
	w.Header().Set("Content-Type", rpc.ContentTypeJSON)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(RelayError{Error: msg, Code: code})
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// RelayClient is a runner's Searcher: it asks the API pod's relay.
type RelayClient struct {
	url     string
	token   string
	session string
	http    *http.Client
}

// NewRelayClient returns the client of the relay at relayURL (the API's
// runner listener and RelayPath) for the runner of session
// ("namespace/name") with its token. rt carries the calls; nil is
// http.DefaultTransport. The relay is the operator's, not the session's,
// so the runner's egress gate does not apply: the relay address comes
// from the manager, never from a tenant.
func NewRelayClient(relayURL, session, token string, rt http.RoundTripper) (*RelayClient, error) {
	u, err := url.Parse(relayURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("search relay URL %q: want an absolute http or https URL without credentials", relayURL)
	}
	if token == "" || !strings.Contains(session, "/") {
		return nil, errors.New("search relay client: a token and a namespace/name session are required")
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	// The relay bounds the provider's call by DefaultTimeout; a little
	// more covers the hop.
	return &RelayClient{url: relayURL, token: token, session: session, http: &http.Client{Transport: rt, Timeout: DefaultTimeout + 5*time.Second}}, nil
}

// Search asks the relay.
func (c *RelayClient) Search(ctx context.Context, query string) ([]Result, error) {
	if err := CheckQuery(query); err != nil {
		return nil, err
	}
	body, err := json.Marshal(RelayRequest{Query: query})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	req.Header.Set("Content-Type", rpc.ContentTypeJSON)
	req.Header.Set("Authorization", rpc.AuthorizationScheme+" "+c.token)
	req.Header.Set(rpc.HeaderRunnerSession, c.session)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("search: calling the API's relay: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRelayAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("search: reading the relay's answer: %w", err)
	}
	if len(data) > maxRelayAnswer {
		return nil, fmt.Errorf("search: the relay's answer is larger than %d bytes", maxRelayAnswer)
	}
	if resp.StatusCode != http.StatusOK {
		var e RelayError
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("search: %s", e.Error)
		}
		return nil, fmt.Errorf("search: the relay answered %s", resp.Status)
	}
	var out RelayResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("search: the relay's answer is not JSON: %w", err)
	}
	return clean(out.Results, MaxResults), nil
}
