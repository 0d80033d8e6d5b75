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

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// startBody is every start's body: no browser settings, so that the
// session's launch settings are the default ones a pool's template can
// match (poolTemplate). The model is never called: acts are given as
// actions.
const startBody = `{"modelName": "openai/gpt-4.1-mini"}`

// defaultStart is startBody decoded as the API decodes it.
func defaultStart() (*serverv1.StartRequest, error) {
	req, verr := serverv1.DecodeStartWith([]byte(startBody), serverv1.StartOptions{})
	if verr != nil {
		return nil, fmt.Errorf("decoding the start body: %w", verr)
	}
	return req, nil
}

// maxReply bounds a plain reply read into memory.
const maxReply = 1 << 20

// apiClient calls the /v1 API with the project's key.
type apiClient struct {
	base string
	key  string
	hc   *http.Client
}

func newAPIClient(base, key string) *apiClient {
	return &apiClient{base: strings.TrimSuffix(base, "/"), key: key, hc: &http.Client{Transport: newTransport()}}
}

// apiError is a call the API refused or failed.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// envelope is a plain reply.
type envelope struct {
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Error   string          `json:"error"`
	Code    string          `json:"code"`
}

func (a *apiClient) request(ctx context.Context, method, path, body string) (*http.Request, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("x-svc-api-key", a.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// call makes a plain call and decodes data into out (if not nil).
func (a *apiClient) call(ctx context.Context, method, path, body string, out any) error {
	req, err := a.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return fmt.Errorf("%s %s: reading the reply: %w", method, path, err)
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: %d, not JSON: %.200s", method, path, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK || !env.Success {
		return &apiError{Status: resp.StatusCode, Code: env.Code, Message: env.Error}
	}
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("%s %s: decoding data: %w", method, path, err)
		}
	}
	return nil
}

// ping checks the key: the list answers 200 only to a known one.
func (a *apiClient) ping(ctx context.Context) error {
	return a.call(ctx, http.MethodGet, "/v1/sessions?limit=1", "", nil)
}

// start starts a session and returns its id and how long the answer took.
func (a *apiClient) start(ctx context.Context) (string, time.Duration, error) {
	var data struct {
		SessionID string `json:"sessionId"`
	}
	began := time.Now()
	err := a.call(ctx, http.MethodPost, "/v1/sessions/start", startBody, &data)
	took := time.Since(began)
	if err == nil && data.SessionID == "" {
		err = fmt.Errorf("start answered no sessionId")
	}
	return data.SessionID, took, err
}

// end ends a session. It runs on a context of its own, so that sessions
// are ended even when the run's deadline has passed.
func (a *apiClient) end(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return a.call(ctx, http.MethodPost, "/v1/sessions/"+id+"/end", "", nil)
}

// navigate loads url in the session's page.
func (a *apiClient) navigate(ctx context.Context, id, url string) error {
	body, _ := json.Marshal(map[string]any{"url": url, "options": map[string]any{"waitUntil": "load"}})
	return a.call(ctx, http.MethodPost, "/v1/sessions/"+id+"/navigate", string(body), nil)
}

// act clicks the element of a CSS selector, given as an action: no model.
func (a *apiClient) act(ctx context.Context, id, selector string) error {
	body, _ := json.Marshal(map[string]any{"input": map[string]any{"selector": selector, "method": "click", "description": "the load button"}})
	var data struct {
		Result struct {
			Success bool   `json:"success"`
			Message string `json:"message"`
		} `json:"result"`
	}
	if err := a.call(ctx, http.MethodPost, "/v1/sessions/"+id+"/act", string(body), &data); err != nil {
		return err
	}
	if !data.Result.Success {
		return fmt.Errorf("act did not succeed: %s", data.Result.Message)
	}
	return nil
}

// openStream makes a streamed call and returns the stream once the API
// answered 200 text/event-stream; any other answer is an error.
func (a *apiClient) openStream(ctx context.Context, path, body string) (*eventStream, error) {
	req, err := a.request(ctx, http.MethodPost, path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-stream-response", "true")
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer func() { _ = resp.Body.Close() }()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxReply))
		var env envelope
		_ = json.Unmarshal(raw, &env)
		return nil, &apiError{Status: resp.StatusCode, Code: env.Code, Message: env.Error}
	}
	return &eventStream{body: resp.Body, r: bufio.NewReader(resp.Body)}, nil
}

// eventStream reads the frames of one SSE reply.
type eventStream struct {
	body io.ReadCloser
	r    *bufio.Reader
}

// maxFrameLine bounds one line of a frame.
const maxFrameLine = 1 << 20

// next returns the next frame's event name and data; comment lines
// (keep-alives) are skipped.
func (s *eventStream) next() (event string, data []byte, err error) {
	for {
		line, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long data line: read the rest of it, within the bound.
			rest := bytes.Clone(line)
			for errors.Is(err, bufio.ErrBufferFull) && len(rest) < maxFrameLine {
				line, err = s.r.ReadSlice('\n')
				rest = append(rest, line...)
			}
			line = rest
		}
		if err != nil {
			return event, data, err
		}
		text := strings.TrimRight(string(line), "\r\n")
		switch {
		case text == "":
			if event != "" || data != nil {
				return event, data, nil
			}
		case strings.HasPrefix(text, ":"):
		case strings.HasPrefix(text, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(text, "event:"))
		case strings.HasPrefix(text, "data:"):
			data = append(data, strings.TrimSpace(strings.TrimPrefix(text, "data:"))...)
		}
	}
}

// until reads frames until one named want, and reports whether it came;
// a stream that ends first, or with another final frame, did not.
func (s *eventStream) until(want string) (bool, string, error) {
	for {
		event, data, err := s.next()
		if err != nil {
			return false, "", err
		}
		switch event {
		case want:
			return true, string(data), nil
		case "finished", "error":
			return false, fmt.Sprintf("%s: %.300s", event, data), nil
		}
	}
}

func (s *eventStream) close() { _ = s.body.Close() }
