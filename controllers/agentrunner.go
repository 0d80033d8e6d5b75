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

package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// agentRunner is what the dispatcher asks of a session's runner: the agent
// task paths of the runner RPC (runner/rpc/agent.go). Errors are as
// rpc.Client's: an *rpc.Error with the runner's code, CodeRunnerUnreachable
// for a runner that cannot be reached or whose connection dropped, or the
// context's error once ctx is done.
type agentRunner interface {
	// StartAgentTask starts the task, or answers the one the runner
	// already has under req.UID.
	StartAgentTask(ctx context.Context, req *rpc.AgentTaskRequest) (*rpc.AgentTaskState, error)
	// FollowAgentTask calls onStep with every step from index from as it
	// happens and returns the task's final state.
	FollowAgentTask(ctx context.Context, uid string, from int, onStep func(index int, step rpc.AgentAction)) (*rpc.AgentTaskState, error)
	// CancelAgentTask stops the task and answers its state.
	CancelAgentTask(ctx context.Context, uid string) (*rpc.AgentTaskState, error)
}

// runnerHTTP is the manager's HTTP client of runners. It has no overall
// timeout: a followed task streams for as long as it runs; each call's
// context bounds it instead (TaskConfig.CallTimeout, the task's deadline).
// Keep-alive probes notice a runner whose node went away while a stream
// is quiet.
var runnerHTTP = &http.Client{Transport: &http.Transport{
	Proxy: nil, // runners are pods of the cluster: never through a proxy
	DialContext: (&net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 15 * time.Second,
	}).DialContext,
	MaxIdleConnsPerHost:   2,
	IdleConnTimeout:       90 * time.Second,
	ResponseHeaderTimeout: 30 * time.Second,
}}

// maxRunnerErrorBytes bounds how much of a failed response is read: an
// error body is one short JSON object.
const maxRunnerErrorBytes = 64 << 10

// maxAgentStateBytes bounds an AgentTaskState the runner answers: every
// step of a task, each a few KB at most (the runner truncates page text).
const maxAgentStateBytes = 64 << 20

// httpAgentRunner calls the agent task paths of one runner over HTTP, as
// the runner RPC's contract has them.
type httpAgentRunner struct {
	endpoint string
	token    string
	http     *http.Client
}

func newHTTPAgentRunner(endpoint, token string, c *http.Client) *httpAgentRunner {
	return &httpAgentRunner{endpoint: strings.TrimRight(endpoint, "/"), token: token, http: c}
}

func (c *httpAgentRunner) StartAgentTask(ctx context.Context, req *rpc.AgentTaskRequest) (*rpc.AgentTaskState, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the agent task request: %w", err)
	}
	return c.state(ctx, http.MethodPost, rpc.AgentTasksPath, bytes.NewReader(body), http.StatusOK, http.StatusCreated)
}

func (c *httpAgentRunner) CancelAgentTask(ctx context.Context, uid string) (*rpc.AgentTaskState, error) {
	return c.state(ctx, http.MethodDelete, rpc.AgentTaskPath(url.PathEscape(uid)), nil, http.StatusOK)
}

// state makes one call whose answer is an AgentTaskState.
func (c *httpAgentRunner) state(ctx context.Context, method, path string, body io.Reader, ok ...int) (*rpc.AgentTaskState, error) {
	resp, err := c.do(ctx, method, path, body, rpc.ContentTypeJSON)
	if err != nil {
		return nil, err
	}
	defer drainClose(resp.Body)
	if !slices.Contains(ok, resp.StatusCode) {
		return nil, c.statusError(ctx, method, path, resp)
	}
	var st rpc.AgentTaskState
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAgentStateBytes)).Decode(&st); err != nil {
		return nil, c.readError(ctx, method, path, err)
	}
	return &st, nil
}

func (c *httpAgentRunner) FollowAgentTask(ctx context.Context, uid string, from int, onStep func(int, rpc.AgentAction)) (*rpc.AgentTaskState, error) {
	path := rpc.AgentTaskPath(url.PathEscape(uid)) + "?" + rpc.ParamFrom + "=" + strconv.Itoa(from)
	resp, err := c.do(ctx, http.MethodGet, path, nil, rpc.ContentTypeNDJSON)
	if err != nil {
		return nil, err
	}
	defer drainClose(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(ctx, http.MethodGet, path, resp)
	}
	// A json.Decoder rather than a line scanner: no line length limit cuts
	// the final state, which holds every step, short.
	dec := json.NewDecoder(resp.Body)
	for {
		var ev rpc.AgentTaskEvent
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, c.readError(ctx, http.MethodGet, path, err)
		}
		switch {
		case ev.State != nil:
			return ev.State, nil
		case ev.Step != nil:
			onStep(ev.Index, *ev.Step)
		}
	}
}

func (c *httpAgentRunner) do(ctx context.Context, method, path string, body io.Reader, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+path, body)
	if err != nil {
		return nil, fmt.Errorf("building the runner request %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", rpc.ContentTypeJSON)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("Authorization", rpc.AuthorizationScheme+" "+c.token)
	resp, err := c.http.Do(req) //nolint:bodyclose // the callers close it
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("runner %s %s: %w", method, path, ctxErr)
		}
		// http.Client's errors name the URL, never a header: the token
		// stays out.
		return nil, fmt.Errorf("%w: %w", &rpc.Error{Code: rpc.CodeRunnerUnreachable, Message: fmt.Sprintf("the runner at %s cannot be reached", c.endpoint)}, err)
	}
	return resp, nil
}

// statusError reads the rpc.Error of a failed answer; one without a code
// comes from something in between and is named by its status.
func (c *httpAgentRunner) statusError(ctx context.Context, method, path string, resp *http.Response) error {
	var e rpc.Error
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxRunnerErrorBytes)).Decode(&e); err == nil && e.Code != "" {
		return &e
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("runner %s %s: %w", method, path, ctxErr)
	}
	code := rpc.CodeInternal
	switch resp.StatusCode {
	case http.StatusNotFound:
		code = rpc.CodeNotFound
	case http.StatusUnauthorized:
		code = rpc.CodeUnauthorized
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		code = rpc.CodeRunnerUnreachable
	}
	return &rpc.Error{Code: code, Message: fmt.Sprintf("the runner's %s %s answered %s without an error body", method, path, resp.Status)}
}

// readError classifies an answer that broke off: the caller's
// cancellation, or a runner whose connection dropped.
func (c *httpAgentRunner) readError(ctx context.Context, method, path string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("runner %s %s: %w", method, path, ctxErr)
	}
	return fmt.Errorf("%w: %w", &rpc.Error{Code: rpc.CodeRunnerUnreachable, Message: fmt.Sprintf("the runner's answer to %s %s broke off", method, path)}, err)
}

// drainClose reads a little of what is left, so that the connection can be
// reused, then closes the body.
func drainClose(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	_ = body.Close()
}
