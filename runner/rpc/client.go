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

package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/runner/replay"
)

// maxErrorBodyBytes bounds how much of a failed plain response the Client
// reads: an error body is one short JSON object, and a proxy in between
// may answer with a page of HTML.
const maxErrorBodyBytes = 64 << 10

// Client calls one runner's RPC on behalf of the API and manager pods. It is
// safe for concurrent use; the runner itself runs page operations one at a
// time, in arrival order.
type Client struct {
	endpoint string
	token    string
	http     *http.Client
}

// runnerHTTP is the HTTP client of runners that the API and the manager
// share. It has no overall timeout: an operation runs for as long as its own
// options.timeout, a streamed call or a followed task for as long as it
// goes on; each call's context bounds it instead. Runners are pods of the
// cluster: never through a proxy. Keep-alive probes notice a runner whose
// node went away while a stream is quiet.
var runnerHTTP = &http.Client{Transport: &http.Transport{
	Proxy: nil,
	DialContext: (&net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 15 * time.Second,
	}).DialContext,
	MaxIdleConnsPerHost: 4,
	IdleConnTimeout:     90 * time.Second,
}}

// Transport is the transport of the runners' shared client, for a caller
// that reaches runners other than through a Client (the API's CDP proxy).
func Transport() http.RoundTripper { return runnerHTTP.Transport }

// NewClient returns a client of the runner at endpoint, its base URL
// ("http://10.0.0.7:8080"), that presents token on every call but Health.
// A nil httpClient is the runners' shared client (no proxy, 10 s dials,
// keep-alive probes, no overall timeout). A given httpClient should have no
// overall Timeout: an operation can run for minutes, and streamed calls for
// as long as they log; bound each call with its context instead.
func NewClient(endpoint, token string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = runnerHTTP
	}
	return &Client{endpoint: strings.TrimRight(endpoint, "/"), token: token, http: httpClient}
}

// Act runs act on the runner. With a non-nil onLog the call is streamed and
// onLog receives each log line as it arrives, on the calling goroutine (a slow
// onLog slows the stream, never drops lines); otherwise the runner answers
// once, at the end.
//
// A failure the runner reports is an *Error with the runner's code. A runner
// that cannot be reached, or that drops the connection before the outcome,
// gives an *Error with CodeRunnerUnreachable that also wraps the network
// error. Cancelling ctx aborts the call, and the runner cancels the
// operation; the error then wraps ctx.Err().
func (c *Client) Act(ctx context.Context, req ActRequest, onLog func(LogLine)) (*Result[ActResult], error) {
	return call[ActResult](ctx, c, ActPath, req, onLog)
}

// Observe runs observe on the runner. onLog, errors and cancellation are as
// for Act.
func (c *Client) Observe(ctx context.Context, req ObserveRequest, onLog func(LogLine)) (*Result[[]Action], error) {
	return call[[]Action](ctx, c, ObservePath, req, onLog)
}

// Extract runs extract on the runner; the result is the extracted JSON value
// as the runner wrote it. onLog, errors and cancellation are as for Act.
func (c *Client) Extract(ctx context.Context, req ExtractRequest, onLog func(LogLine)) (*Result[json.RawMessage], error) {
	return call[json.RawMessage](ctx, c, ExtractPath, req, onLog)
}

// Navigate loads a URL in the runner's page. onLog, errors and cancellation
// are as for Act.
func (c *Client) Navigate(ctx context.Context, req NavigateRequest, onLog func(LogLine)) (*Result[NavigateResult], error) {
	return call[NavigateResult](ctx, c, NavigatePath, req, onLog)
}

// Replay asks the runner for its session's history of calls. Errors are
// as for Act.
func (c *Client) Replay(ctx context.Context) (*replay.Replay, error) {
	resp, err := c.do(ctx, http.MethodGet, ReplayPath, nil, ContentTypeJSON) //nolint:bodyclose // closeBody drains and closes it
	if err != nil {
		return nil, err
	}
	defer closeBody(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(ctx, ReplayPath, resp)
	}
	var rep replay.Replay
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return nil, c.readError(ctx, ReplayPath, "reading the replay", err)
	}
	if rep.Pages == nil {
		rep.Pages = []replay.Page{}
	}
	return &rep, nil
}

// actionIDKey is the context key of WithActionID.
type actionIDKey struct{}

// WithActionID returns a context whose operation calls tell the runner
// their id (HeaderActionID), the one the caller answers with.
func WithActionID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, actionIDKey{}, id)
}

// Health asks the runner whether it serves calls. Both of its answers, 200
// "ready" and 503 with "starting", "crashed" or "stopping", are a Health and
// no error: the caller decides what a runner that is not ready means. Any
// other answer, and a runner that cannot be reached, is an error as for Act.
// Health sends no token: the runner needs none for it.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint+HealthPath, nil)
	if err != nil {
		return nil, fmt.Errorf("building the runner health request: %w", err)
	}
	req.Header.Set("Accept", ContentTypeJSON)
	resp, err := c.http.Do(req) //nolint:bodyclose // closeBody drains and closes it
	if err != nil {
		return nil, c.transportError(ctx, HealthPath, err)
	}
	defer closeBody(resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return nil, c.statusError(ctx, HealthPath, resp)
	}
	var h Health
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxErrorBodyBytes)).Decode(&h); err != nil || h.Status == "" {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("runner %s: %w", HealthPath, ctxErr)
		}
		// A 503 without a Health body comes from something in between
		// (a proxy, a load balancer), not from the runner.
		return nil, &Error{Code: CodeRunnerUnreachable, Message: fmt.Sprintf("the runner's %s answered %d without a health status", HealthPath, resp.StatusCode)}
	}
	return &h, nil
}

// call posts body to path and reads the result, streamed when onLog is set.
func call[T any](ctx context.Context, c *Client, path string, body any, onLog func(LogLine)) (*Result[T], error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the runner %s request: %w", path, err)
	}
	accept := ContentTypeJSON
	if onLog != nil {
		accept = ContentTypeNDJSON
	}
	resp, err := c.do(ctx, http.MethodPost, path, raw, accept) //nolint:bodyclose // closeBody drains and closes it
	if err != nil {
		return nil, err
	}
	defer closeBody(resp.Body)

	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(ctx, path, resp)
	}
	// The response's type, not what was asked for, decides how to read
	// it: a runner that ignores Accept still answers correctly.
	if mediaType(resp.Header.Get("Content-Type")) == ContentTypeNDJSON {
		return readStream[T](ctx, c, path, resp.Body, onLog)
	}
	var res Result[T]
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return nil, c.readError(ctx, path, "reading the result", err)
	}
	return &res, nil
}

// readStream reads StreamLines until the result or error line. A json.Decoder
// rather than a line scanner reads them, so that no line length limit cuts a
// large extraction short.
func readStream[T any](ctx context.Context, c *Client, path string, body io.Reader, onLog func(LogLine)) (*Result[T], error) {
	dec := json.NewDecoder(body)
	for {
		var line StreamLine
		if err := dec.Decode(&line); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, c.readError(ctx, path, "the stream ended before the result", err)
		}
		switch line.Type {
		case StreamLog:
			if onLog == nil {
				continue
			}
			var l LogLine
			if err := json.Unmarshal(line.Data, &l); err != nil {
				return nil, fmt.Errorf("runner %s: decoding a log line: %w", path, err)
			}
			onLog(l)
		case StreamResult:
			var res Result[T]
			if err := json.Unmarshal(line.Data, &res); err != nil {
				return nil, fmt.Errorf("runner %s: decoding the result: %w", path, err)
			}
			return &res, nil
		case StreamError:
			var e Error
			if err := json.Unmarshal(line.Data, &e); err != nil || e.Code == "" {
				return nil, &Error{Code: CodeInternal, Message: fmt.Sprintf("the runner's %s stream ended with an unreadable error line", path)}
			}
			return nil, &e
		default:
			// A line type this client does not know comes from a newer
			// runner; skipping it keeps older API pods working.
		}
	}
}

// transportError classifies a failed round trip: the caller's cancellation,
// or a runner that cannot be reached. http.Client's errors name the URL
// (with any password stripped) but never a header, so the token stays out.
func (c *Client) transportError(ctx context.Context, path string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("runner %s: %w", path, ctxErr)
	}
	return fmt.Errorf("%w: %w", &Error{Code: CodeRunnerUnreachable, Message: fmt.Sprintf("the runner at %s cannot be reached", c.endpoint)}, err)
}

// readError classifies a response body that broke off: the caller's
// cancellation, or a runner whose connection dropped (it crashed, its pod
// was deleted).
func (c *Client) readError(ctx context.Context, path, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("runner %s: %w", path, ctxErr)
	}
	return fmt.Errorf("%w: %w", &Error{Code: CodeRunnerUnreachable, Message: fmt.Sprintf("runner %s: %s", path, what)}, err)
}

// statusError reads the Error body of a non-200 response. A body without a
// code comes from something in between (a proxy's 502 page); it is reported
// by its status, without quoting it.
func (c *Client) statusError(ctx context.Context, path string, resp *http.Response) error {
	var e Error
	err := json.NewDecoder(io.LimitReader(resp.Body, maxErrorBodyBytes)).Decode(&e)
	if err == nil && e.Code != "" {
		return &e
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("runner %s: %w", path, ctxErr)
	}
	return &Error{Code: codeOfStatus(resp.StatusCode), Message: fmt.Sprintf("runner %s answered %s without an error body", path, resp.Status)}
}

// codeOfStatus guesses a code for a failed response that carries none.
func codeOfStatus(status int) ErrorCode {
	switch status {
	case http.StatusUnauthorized:
		return CodeUnauthorized
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return CodeRunnerUnreachable
	default:
		return CodeInternal
	}
}

// mediaType returns the media type of a Content-Type header, "" when it
// cannot be parsed.
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return mt
}

// closeBody drains a little of what is left so that the connection can be
// reused, then closes the body.
func closeBody(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	_ = body.Close()
}
