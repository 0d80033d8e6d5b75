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

// Package llmtest provides a scripted stand-in for model providers: an HTTP
// server on 127.0.0.1 that speaks enough of OpenAI's Chat Completions and
// Responses, Anthropic's Messages and Google's generateContent for their
// official Go SDKs to parse its answers, usage included. It answers from a queue of
// scripted replies and records every request, so that tests can assert on
// what a model was sent.
//
// Replies are text ([Text]), a JSON document ([JSON]), tool calls
// ([ToolCalls], each a [Call]), computer-use actions ([Computer], each a
// [ComputerAction] such as [Click]) or an HTTP error ([Status]). A recorded
// [Request] says which tools a request offered, its tool choice and the
// tool results it sent; its Text holds every text the model reads, tool
// call arguments and tool results included, so that a test can check
// that a secret never reached a model with strings.Contains on Text (and
// on Body).
//
//	srv := llmtest.NewServer(t)
//	srv.Enqueue(llmtest.Status(429).WithRetryAfter(0), llmtest.JSON(`{"ok":true}`).WithUsage(120, 15))
//	client, _ := llm.New(llm.Config{Model: "openai/gpt-4.1-mini", BaseURL: srv.BaseURL("openai")})
//	...
//	reqs := srv.Requests() // two, the retry included
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserfleet/browserfleet/engine/llm/provider"
)

// Provider names, for BaseURL.
const (
	OpenAI    = provider.OpenAI
	Anthropic = provider.Anthropic
	Google    = provider.Google
)

// Server is a scripted model server. It is safe for concurrent use.
type Server struct {
	t    testing.TB
	srv  *httptest.Server
	done chan struct{}

	mu       sync.Mutex
	queue    []Reply
	requests []Request
}

// Request is a request the Server received.
type Request struct {
	// Provider is the protocol the request spoke: OpenAI, Anthropic or
	// Google.
	Provider string
	Method   string
	Path     string
	Header   http.Header
	// Body is the raw body and JSON the decoded one.
	Body []byte
	JSON map[string]any
	// Model is the model the request named.
	Model string
	// Text is the text of the system prompt and of every message, in order,
	// one per line: what the model got to read. A tool call the request
	// sends back reads "<name> <arguments JSON>"; a tool result reads as
	// its text. Tool definitions are not in it (they are in Body).
	Text string
	// Images are the decoded images of every message, in order, those of
	// tool results included.
	Images [][]byte
	// Tools are the names of the tools the request offers, in order.
	Tools []string
	// ToolChoice is the request's tool choice in package llm's words:
	// "auto", "required" (OpenAI's required, Anthropic's any, Google's
	// ANY), "none", "tool:<name>" when one tool is forced, or empty when
	// the request sets none.
	ToolChoice string
	// ToolResults are the tool results the request sends, in order.
	ToolResults []ToolResult
}

// ToolResult is a tool result a request sent.
type ToolResult struct {
	// CallID is the id of the call it answers; empty for Google when the
	// call had none.
	CallID string
	// Name is the tool's name: Google's functionResponse name, and for
	// OpenAI and Anthropic the name of the call with CallID earlier in the
	// request.
	Name string
	// Text is the result's text: OpenAI's tool message content,
	// Anthropic's text blocks, Google's response "output" or "error".
	Text string
	// IsError is Anthropic's is_error, Google's "error" key, and for
	// OpenAI, whose wire has no flag, a text starting with "Error" (as
	// package llm writes a failed tool's).
	IsError bool
}

// NewServer starts a Server, closed when the test ends. A request the
// script has no reply for fails the test.
func NewServer(t testing.TB) *Server {
	t.Helper()
	return NewServerOn(t, "")
}

// NewServerOn is NewServer listening on address (host:port; port 0 picks a
// free one), for a suite whose runners may reach only some loopback
// addresses. An empty address is NewServer's 127.0.0.1.
func NewServerOn(t testing.TB, address string) *Server {
	t.Helper()
	s := &Server{t: t, done: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if address != "" {
		ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", address)
		if err != nil {
			t.Fatalf("llmtest: listening on %s: %v", address, err)
		}
		_ = s.srv.Listener.Close()
		s.srv.Listener = ln
	}
	s.srv.Start()
	t.Cleanup(func() {
		// Delayed replies stop waiting, so that Close need not wait for
		// them.
		close(s.done)
		s.srv.Close()
	})
	return s
}

// URL returns the server's root URL, http://127.0.0.1:port (or the
// address of NewServerOn).
func (s *Server) URL() string { return s.srv.URL }

// BaseURL returns what llm.Config.BaseURL should be for provider: the root
// URL plus "/v1" for OpenAI, whose SDK appends "chat/completions" to a base
// that carries the API version; the root URL for Anthropic ("/v1/messages")
// and Google ("/v1beta/models/{model}:generateContent").
func (s *Server) BaseURL(provider string) string {
	if provider == OpenAI {
		return s.srv.URL + "/v1"
	}
	return s.srv.URL
}

// Enqueue appends replies to the script; requests take them in order,
// whatever their protocol.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Pending returns how many scripted replies no request has taken yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	provider, model := route(r)
	if provider == "" {
		s.t.Errorf("llmtest: unexpected request %s %s", r.Method, r.URL.Path)
		http.Error(w, "llmtest: no such endpoint", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("llmtest: reading request body: %v", err)
		return
	}
	var decoded map[string]any
	if err := json.Unmarshal(body, &decoded); err != nil {
		s.t.Errorf("llmtest: %s %s: body is not a JSON object: %v", r.Method, r.URL.Path, err)
	}
	if model == "" {
		model, _ = decoded["model"].(string)
	}
	rec := *inspect(provider, decoded)
	rec.Provider = provider
	rec.Method = r.Method
	rec.Path = r.URL.Path
	rec.Header = r.Header.Clone()
	rec.Body = body
	rec.JSON = decoded
	rec.Model = model

	s.mu.Lock()
	s.requests = append(s.requests, rec)
	n := len(s.requests)
	reply, ok := Reply{}, len(s.queue) > 0
	if ok {
		reply, s.queue = s.queue[0], s.queue[1:]
	}
	s.mu.Unlock()

	if !ok {
		s.t.Errorf("llmtest: request %d (%s %s): no scripted reply left", n, r.Method, r.URL.Path)
		writeError(w, provider, Status(http.StatusInternalServerError).WithMessage("llmtest: no scripted reply left"))
		return
	}
	if reply.delay > 0 {
		timer := time.NewTimer(reply.delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
	if reply.release != nil {
		select {
		case <-reply.release:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
	if reply.kind == statusReply {
		writeError(w, provider, reply)
		return
	}
	var out any
	if strings.HasSuffix(r.URL.Path, "/responses") {
		out, err = responsesAnswer(model, n, reply, decoded)
	} else {
		out, err = answer(provider, model, n, reply, decoded)
	}
	if err != nil {
		s.t.Errorf("llmtest: request %d: %v", n, err)
		writeError(w, provider, Status(http.StatusInternalServerError).WithMessage("llmtest: "+err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// route returns the protocol and, for Google, the model of a request.
func route(r *http.Request) (provider, model string) {
	if r.Method != http.MethodPost {
		return "", ""
	}
	p := r.URL.Path
	switch p {
	case "/v1/chat/completions", "/chat/completions", "/v1/responses", "/responses":
		return OpenAI, ""
	case "/v1/messages":
		return Anthropic, ""
	}
	for _, prefix := range []string{"/v1beta/models/", "/v1/models/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			if m, ok := strings.CutSuffix(rest, ":generateContent"); ok && m != "" {
				return Google, m
			}
		}
	}
	return "", ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, fmt.Sprintf("llmtest: encoding answer: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
