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

// Package cdpfilter decides what a client of a session's DevTools proxy
// may send to the browser. Each message a client sends is parsed strictly
// (`{id, method, params, sessionId}`, nothing else) and checked against one
// table of rules (rules.go): a message is forwarded as it came, rewritten
// (a client's download path becomes the session's), or refused with a CDP
// error reply for its id, which the proxy sends back instead of forwarding
// anything. A message that is not a CDP call with an id has no one to
// answer: the proxy closes the connection. What the browser sends is not
// this package's business.
//
//	f, err := cdpfilter.New(cdpfilter.Policy{DownloadsDir: dir})
//	v := f.Check(msg)
//	switch v.Action {
//	case cdpfilter.Forward, cdpfilter.Rewrite: // send v.Message to the browser
//	case cdpfilter.Refuse:                     // send v.Message to the client
//	case cdpfilter.Close:                      // close with v.Reason
//	}
//
// docs/runner.md ("The CDP proxy") lists the rules and their reasons.
package cdpfilter

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxMessageBytes bounds a message a client sends: the proxy must hold a
// whole message to check it. The browser's own messages are not bounded
// (the proxy streams them).
const MaxMessageBytes = 16 << 20

// Policy is what one session allows. The URLs a client may have the
// browser load follow the navigate rule, rpc.NavigateURLProblem, for every
// session.
type Policy struct {
	// DownloadsDir is the session's downloads directory, an absolute path;
	// empty when the session refuses downloads.
	DownloadsDir string
}

// Filter checks clients' messages against a Policy; each connection gets a
// Conn of it (NewConn).
type Filter struct {
	p Policy
}

// New returns the Filter of p.
func New(p Policy) (*Filter, error) {
	if d := p.DownloadsDir; d != "" && (!filepath.IsAbs(d) || filepath.Clean(d) != d || d == "/") {
		return nil, fmt.Errorf("cdpfilter: the downloads directory %q is not a clean absolute path below /", d)
	}
	return &Filter{p: p}, nil
}

// Action is what becomes of a message.
type Action string

const (
	// Forward means the message goes to the browser as it came.
	Forward Action = "forward"
	// Rewrite means a changed message goes to the browser.
	Rewrite Action = "rewrite"
	// Refuse means nothing goes to the browser; the client gets an error reply.
	Refuse Action = "refuse"
	// Close means the message is no CDP call that could be answered; the
	// proxy closes the connection, Reason its close reason.
	Close Action = "close"
)

// Verdict is the Filter's decision on one message.
type Verdict struct {
	Action Action
	// Message is what to send: to the browser when forwarded or
	// rewritten, to the client when refused; nil when closing.
	Message []byte
	// Method is the message's method, "" when it had none that could be
	// read; for logs.
	Method string
	// Reason says why a message was refused, rewritten or closed the
	// connection; it names members, never their values, so it may be
	// logged. A Close reason fits a WebSocket close frame.
	Reason string
}

// JSON-RPC error codes of the replies, as Chromium uses them.
const (
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeRefused        = -32000
)

// errorPrefix starts every refusal's message and close reason, so that a
// client can tell the proxy's refusals from the browser's errors.
const errorPrefix = "browserfleet: "

// maxMethodBytes bounds a method's name: Chromium's longest is under 60.
const maxMethodBytes = 128

// envelope is a client's message. Chromium reads these four members;
// anything else is refused, so that the proxy and the browser cannot read
// one message two ways.
type envelope struct {
	ID        *int64         `json:"id"`
	Method    string         `json:"method"`
	Params    jsontext.Value `json:"params,omitzero"`
	SessionID string         `json:"sessionId,omitzero"`
}

// check decides on one text message of a client; sessions says whether a
// target session may take the message's method.
func (f *Filter) check(msg []byte, sessions func(id, method string) string) Verdict {
	// Strict JSON (RFC 8259 with I-JSON's unique member names and valid
	// UTF-8, as jsontext checks by default, at every depth), member
	// names matched exactly: a message Chromium could read differently
	// from this parser never passes.
	if !jsontext.Value(msg).IsValid() {
		return closing("the message is not valid JSON")
	}
	var env envelope
	if err := jsonv2.Unmarshal(msg, &env, jsonv2.RejectUnknownMembers(true)); err != nil {
		id, sid := lenientID(msg)
		if id == nil {
			return closing("a message must be a JSON object with an integer id")
		}
		return refusal(id, sid, "", codeInvalidRequest, "a message has an integer id, a method, and optionally params (an object) and sessionId (a string): "+jsonError(err))
	}
	switch {
	case env.ID == nil:
		return closing("a message must be a JSON object with an integer id")
	case !validMethod(env.Method):
		return refusal(env.ID, env.SessionID, "", codeInvalidRequest, "method must be Domain.command")
	case len(env.Params) > 0 && env.Params.Kind() != '{' && env.Params.Kind() != 'n':
		return refusal(env.ID, env.SessionID, env.Method, codeInvalidParams, env.Method+": params must be an object")
	}
	if env.SessionID != "" {
		if problem := sessions(env.SessionID, env.Method); problem != "" {
			return refusal(env.ID, env.SessionID, env.Method, codeRefused, env.Method+": "+problem)
		}
	}
	out := decide(&f.p, env.Method, env.Params)
	switch {
	case out.refuse != "":
		code := out.code
		if code == 0 {
			code = codeRefused
		}
		return refusal(env.ID, env.SessionID, env.Method, code, env.Method+": "+out.refuse)
	case out.params != nil:
		env.Params = out.params
		b, err := jsonv2.Marshal(&env, jsonv2.Deterministic(true))
		if err != nil {
			// Only values this package made are marshalled.
			return refusal(env.ID, env.SessionID, env.Method, codeRefused, env.Method+": the message could not be rewritten")
		}
		return Verdict{Action: Rewrite, Message: b, Method: env.Method, Reason: out.rewrote}
	}
	return Verdict{Action: Forward, Message: msg, Method: env.Method}
}

// CheckBinary decides on a binary message: CDP is text, so it closes.
func CheckBinary() Verdict {
	return closing("CDP messages are text")
}

// TooLarge is the verdict on a message over MaxMessageBytes.
func TooLarge() Verdict {
	return closing(fmt.Sprintf("a message may be %d MiB at most", MaxMessageBytes>>20))
}

// validMethod holds a method to Domain.command in ASCII letters and
// digits, as every method of the protocol is: nothing else is worth
// forwarding, or logging.
func validMethod(m string) bool {
	dom, cmd, ok := strings.Cut(m, ".")
	return ok && len(m) <= maxMethodBytes && identifier(dom) && identifier(cmd)
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// lenientID reads the id and sessionId of a message that failed the strict
// parse, so that the client's call gets its error rather than no answer;
// nil when even that cannot be read.
func lenientID(msg []byte) (*int64, string) {
	var probe struct {
		ID        *int64 `json:"id"`
		SessionID string `json:"sessionId"`
	}
	if err := jsonv2.Unmarshal(msg, &probe, jsonv2.RejectUnknownMembers(false)); err != nil {
		// Not an object, or its id or sessionId of the wrong type: the
		// message says nothing reliable.
		return nil, ""
	}
	return probe.ID, probe.SessionID
}

// jsonError shortens a decoding error to what a client can act on, without
// the parser's Go type names.
func jsonError(err error) string {
	var se *jsonv2.SemanticError
	if errors.As(err, &se) {
		if p := strings.TrimPrefix(string(se.JSONPointer), "/"); p != "" {
			if errors.Is(err, jsonv2.ErrUnknownName) {
				return "unknown member " + p
			}
			return "member " + p + " has the wrong type"
		}
	}
	return "malformed"
}

// reply is a CDP error reply: Chromium's shape, with the id and the
// session of the call.
type reply struct {
	ID        int64      `json:"id"`
	SessionID string     `json:"sessionId,omitzero"`
	Error     replyError `json:"error"`
}

type replyError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func refusal(id *int64, sessionID, method string, code int, reason string) Verdict {
	b, err := jsonv2.Marshal(reply{ID: *id, SessionID: sessionID, Error: replyError{Code: code, Message: errorPrefix + reason}})
	if err != nil {
		// The reply holds only strings the strict parse accepted and
		// integers.
		b = fmt.Appendf(nil, `{"id":%d,"error":{"code":%d,"message":"browserfleet: refused"}}`, *id, codeRefused)
	}
	return Verdict{Action: Refuse, Message: b, Method: method, Reason: reason}
}

func closing(reason string) Verdict {
	return Verdict{Action: Close, Reason: errorPrefix + reason}
}
