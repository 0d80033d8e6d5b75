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

package cdpfilter

import (
	"bytes"
	"net/url"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
)

// MaxSessions bounds the target sessions one connection has attached at a
// time; a session past it is not recorded, so its commands are refused.
const MaxSessions = 4096

// Conn is the filter of one client connection. Besides the table, it holds
// the target sessions the browser attached for this client: a message
// with a sessionId passes only when the browser announced that session
// (Target.attachedToTarget, which Chromium sends before the reply to
// Target.attachToTarget) for a target that is a web page, frame or worker.
// The browser's own pages (browser_ui targets such as chrome://omnibox-popup,
// whose script has WebUI bindings) can be attached to, but take no
// commands but ownPageCommands.
type Conn struct {
	f *Filter

	mu sync.Mutex
	// sessions maps the sessions the browser announced to whether
	// they take commands.
	sessions map[string]bool
}

// NewConn returns the filter of one connection.
func (f *Filter) NewConn() *Conn {
	return &Conn{f: f, sessions: map[string]bool{}}
}

// Check decides on one text message of the client.
func (c *Conn) Check(msg []byte) Verdict {
	return c.f.check(msg, c.sessionProblem)
}

func (c *Conn) sessionProblem(id, method string) string {
	c.mu.Lock()
	usable, ok := c.sessions[id]
	c.mu.Unlock()
	switch {
	case !ok:
		return "sessionId names no session the browser attached on this connection"
	case !usable && !ownPageCommands[method]:
		return "the session's target is one of the browser's own pages, which take no commands through this proxy"
	}
	return ""
}

// ownPageCommands are what a session to one of the browser's own pages
// takes: what clients send to every target they attach to, and which only
// let it go on (a target waiting for its debugger) or attach its children
// (the browser's own pages too, so as unusable).
var ownPageCommands = map[string]bool{
	"Runtime.runIfWaitingForDebugger": true,
	"Target.setAutoAttach":            true,
}

// The browser's messages that Observe reads; every other one streams to
// the client unread. Chromium writes the method first in an event.
var watched = [][]byte{
	[]byte(`{"method":"Target.attachedToTarget",`),
	[]byte(`{"method":"Target.detachedFromTarget",`),
}

// WatchBytes is how much of a browser's message Watched needs.
const WatchBytes = len(`{"method":"Target.detachedFromTarget",`)

// Watched says whether a browser's message that starts with head (its
// first WatchBytes bytes, or all of a shorter one) is one Observe must see
// before the client does.
func Watched(head []byte) bool {
	for _, w := range watched {
		if bytes.HasPrefix(head, w) {
			return true
		}
	}
	return false
}

// Observe records the session a browser's event announces or ends. It
// must see the event before the client does, so that the client cannot
// name the session first.
func (c *Conn) Observe(msg []byte) {
	var ev struct {
		Method string `json:"method"`
		Params struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"targetInfo"`
		} `json:"params"`
	}
	if err := jsonv2.Unmarshal(msg, &ev, jsonv2.RejectUnknownMembers(false)); err != nil || ev.Params.SessionID == "" {
		// Unread, the session stays unknown: its commands are refused.
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev.Method {
	case "Target.attachedToTarget":
		if len(c.sessions) < MaxSessions {
			c.sessions[ev.Params.SessionID] = webTarget(ev.Params.TargetInfo.Type, ev.Params.TargetInfo.URL)
		}
	case "Target.detachedFromTarget":
		delete(c.sessions, ev.Params.SessionID)
	}
}

// targetTypes are the targets a client may drive: the browser itself, its
// tabs and pages, their frames and workers.
var targetTypes = map[string]bool{
	"browser":        true,
	"tab":            true,
	"page":           true,
	"iframe":         true,
	"worker":         true,
	"shared_worker":  true,
	"service_worker": true,
}

// webTarget says whether a target of type typ at rawURL is the session's
// web content: one of targetTypes, at a URL of the web (or none yet).
func webTarget(typ, rawURL string) bool {
	if !targetTypes[typ] {
		return false
	}
	if rawURL == "" {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "data", "about":
		return true
	case "blob":
		// A blob's URL holds its creator's origin: a web page's, or
		// null for an opaque one; never one of the browser's pages.
		inner := u.Opaque
		if strings.HasPrefix(inner, "null/") {
			return true
		}
		o, err := url.Parse(inner)
		return err == nil && (strings.EqualFold(o.Scheme, "http") || strings.EqualFold(o.Scheme, "https"))
	}
	return false
}
