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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// StartAgentTask starts the agent task req.UID on the runner, or finds the
// one it already has under that UID (created false; req is then ignored):
// calling it again after a restart re-attaches to the task and never starts
// a second run. A runner whose browser is not up answers BROWSER_STARTING;
// one that runs another task AGENT_BUSY. Other errors are as for Act.
func (c *Client) StartAgentTask(ctx context.Context, req AgentTaskRequest) (state *AgentTaskState, created bool, err error) {
	raw, err := json.Marshal(req)
	if err != nil {
		// The request holds secrets; the encoding error does not quote
		// it.
		return nil, false, fmt.Errorf("encoding the runner %s request: %w", AgentTasksPath, err)
	}
	resp, err := c.do(ctx, http.MethodPost, AgentTasksPath, raw, ContentTypeJSON) //nolint:bodyclose // closeBody drains and closes it
	if err != nil {
		return nil, false, err
	}
	defer closeBody(resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return nil, false, c.statusError(ctx, AgentTasksPath, resp)
	}
	st, err := c.decodeState(ctx, AgentTasksPath, resp.Body)
	if err != nil {
		return nil, false, err
	}
	return st, resp.StatusCode == http.StatusCreated, nil
}

// AgentTask returns the state of the runner's task uid; an unknown uid is
// NOT_FOUND (the runner never had it, restarted since, or let it go: it
// keeps the latest finished tasks only). Errors are as for Act.
func (c *Client) AgentTask(ctx context.Context, uid string) (*AgentTaskState, error) {
	return c.taskState(ctx, http.MethodGet, uid)
}

// CancelAgentTask stops the runner's task uid if it runs and returns its
// state once its run has stopped (Cancelled), or as it is when it was
// already over. Errors are as for AgentTask.
func (c *Client) CancelAgentTask(ctx context.Context, uid string) (*AgentTaskState, error) {
	return c.taskState(ctx, http.MethodDelete, uid)
}

// taskState makes a call on the task uid that the runner answers with the
// task's state: GET and DELETE.
func (c *Client) taskState(ctx context.Context, method, uid string) (*AgentTaskState, error) {
	path := AgentTaskPath(url.PathEscape(uid))
	resp, err := c.do(ctx, method, path, nil, ContentTypeJSON) //nolint:bodyclose // closeBody drains and closes it
	if err != nil {
		return nil, err
	}
	defer closeBody(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(ctx, path, resp)
	}
	return c.decodeState(ctx, path, resp.Body)
}

// FollowAgentTask follows the runner's task uid: onEvent receives each
// step from index from on as the runner has it, then the final state (an
// event with State set), after which FollowAgentTask returns nil. onEvent
// runs on the calling goroutine; an error it returns ends the follow and is
// returned as it is. A stream that ends before the final state (the runner
// went away) is RUNNER_UNREACHABLE: follow again from the steps received.
// Other errors are as for AgentTask; cancelling ctx stops following, never
// the task.
func (c *Client) FollowAgentTask(ctx context.Context, uid string, from int, onEvent func(AgentTaskEvent) error) error {
	path := AgentTaskPath(url.PathEscape(uid))
	resp, err := c.do(ctx, http.MethodGet, path+"?"+ParamFrom+"="+strconv.Itoa(max(from, 0)), nil, ContentTypeNDJSON)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		defer closeBody(resp.Body)
		return c.statusError(ctx, path, resp)
	}
	// Closed without draining: a follow that stops early leaves a stream
	// that would not end until the task does.
	defer func() { _ = resp.Body.Close() }()
	if mt := mediaType(resp.Header.Get("Content-Type")); mt != ContentTypeNDJSON {
		return &Error{Code: CodeInternal, Message: fmt.Sprintf("runner %s answered %q instead of a stream", path, mt)}
	}
	// A json.Decoder rather than a line scanner: no line length limit
	// cuts a step that read a large page.
	dec := json.NewDecoder(resp.Body)
	for {
		var ev AgentTaskEvent
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return c.readError(ctx, path, "the stream ended before the task's final state", err)
		}
		if ev.Step == nil && ev.State == nil {
			// An event this client does not know, from a newer runner.
			continue
		}
		if err := onEvent(ev); err != nil {
			return err
		}
		if ev.State != nil {
			return nil
		}
	}
}

// do sends one request with the token (and the operation's id, when ctx
// carries one: WithActionID) and returns the response, or the error of a
// failed round trip (transportError). Every call but Health's goes through
// it.
func (c *Client) do(ctx context.Context, method, path string, body []byte, accept string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+path, rd)
	if err != nil {
		return nil, fmt.Errorf("building the runner %s request: %w", method+" "+path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ContentTypeJSON)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("Authorization", AuthorizationScheme+" "+c.token)
	if id, ok := ctx.Value(actionIDKey{}).(string); ok && id != "" {
		req.Header.Set(HeaderActionID, id)
	}
	injectTrace(ctx, req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, path, err)
	}
	return resp, nil
}

// decodeState reads an AgentTaskState body.
func (c *Client) decodeState(ctx context.Context, path string, body io.Reader) (*AgentTaskState, error) {
	var st AgentTaskState
	if err := json.NewDecoder(body).Decode(&st); err != nil {
		return nil, c.readError(ctx, path, "reading the agent task's state", err)
	}
	if st.UID == "" || st.Phase == "" {
		return nil, &Error{Code: CodeInternal, Message: fmt.Sprintf("runner %s answered a state without uid or phase", path)}
	}
	if st.Actions == nil {
		st.Actions = []AgentAction{}
	}
	return &st, nil
}
