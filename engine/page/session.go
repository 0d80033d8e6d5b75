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

package page

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/go-json-experiment/json/jsontext"
)

// releaseTimeout bounds the clean-up calls that free remote objects.
const releaseTimeout = 2 * time.Second

// session is one DevTools session: the tab's, or an out-of-process frame's.
// Commands go through chromedp's executor for that session; results are
// decoded into the small structs of this package rather than cdproto's, so
// that an enum value newer than cdproto cannot fail a whole reply.
type session struct {
	target target.ID
	id     target.SessionID
	exec   cdp.Executor
	// alive ends when Chrome detaches the session. Calls bound to it fail
	// fast instead of waiting for a reply that will never come.
	alive context.Context
	kill  context.CancelCauseFunc
}

func newSession(parent context.Context, tid target.ID, sid target.SessionID, exec cdp.Executor) *session {
	alive, kill := context.WithCancelCause(parent)
	return &session{target: tid, id: sid, exec: exec, alive: alive, kill: kill}
}

// bind returns a context that carries the session as the cdp executor and
// ends when either ctx or the session does.
func (s *session) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.alive, func() { cancel(context.Cause(s.alive)) })
	return cdp.WithExecutor(ctx, s.exec), func() { stop(); cancel(nil) }
}

// call sends one command and decodes its result into res, which may be nil.
func (s *session) call(ctx context.Context, method string, params, res any) error {
	bctx, done := s.bind(ctx)
	defer done()
	err := s.exec.Execute(bctx, method, params, res)
	if err != nil && bctx.Err() != nil {
		// Report why the call was cut short (the caller's deadline or the
		// session's detachment) rather than a bare "context canceled".
		if cause := context.Cause(bctx); cause != nil {
			return cause
		}
	}
	return err
}

// do runs a cdproto command (anything with Do(ctx) error) on the session.
func (s *session) do(ctx context.Context, cmd interface{ Do(context.Context) error }) error {
	bctx, done := s.bind(ctx)
	defer done()
	err := cmd.Do(bctx)
	if err != nil && bctx.Err() != nil {
		if cause := context.Cause(bctx); cause != nil {
			return cause
		}
	}
	return err
}

// remoteObject is the part of Runtime.RemoteObject this package reads.
type remoteObject struct {
	Type     string         `json:"type"`
	Subtype  string         `json:"subtype"`
	ObjectID string         `json:"objectId"`
	Value    jsontext.Value `json:"value"`
	// Description is the value's string form, e.g. "Error: message\n at ...".
	Description string `json:"description"`
}

// exceptionDetails is the part of Runtime.ExceptionDetails this package reads.
type exceptionDetails struct {
	Text      string        `json:"text"`
	Exception *remoteObject `json:"exception"`
}

type evalResult struct {
	Result           remoteObject      `json:"result"`
	ExceptionDetails *exceptionDetails `json:"exceptionDetails"`
}

// jsError turns a JavaScript exception into a Go error carrying its message.
func jsError(d *exceptionDetails) error {
	if d == nil {
		return nil
	}
	msg := d.Text
	switch {
	case d.Exception == nil:
	case d.Exception.Description != "":
		// Keep "Error: message", drop the stack.
		msg, _, _ = strings.Cut(d.Exception.Description, "\n")
	case len(d.Exception.Value) > 0:
		msg = strings.Trim(string(d.Exception.Value), `"`)
	}
	msg = strings.TrimPrefix(msg, "Uncaught ")
	return errors.New(strings.TrimPrefix(msg, "Error: "))
}

// evaluate runs expression in the session's main frame and returns its result
// as a remote object (byValue false) or a JSON value (byValue true).
func (s *session) evaluate(ctx context.Context, expression string, byValue bool) (*remoteObject, error) {
	var r evalResult
	err := s.call(ctx, "Runtime.evaluate", map[string]any{
		"expression":    expression,
		"returnByValue": byValue,
		"objectGroup":   objectGroupFor(ctx, s),
	}, &r)
	if err != nil {
		return nil, err
	}
	if err := jsError(r.ExceptionDetails); err != nil {
		return nil, err
	}
	return &r.Result, nil
}

// callOn calls the JavaScript function fn with this bound to the remote
// object objectID. Arguments are passed by value. With byValue the result is
// serialised to JSON in res.Value; otherwise res.ObjectID refers to it.
func (s *session) callOn(ctx context.Context, objectID, fn string, byValue bool, args ...any) (*remoteObject, error) {
	callArgs := make([]map[string]any, len(args))
	for i, a := range args {
		callArgs[i] = map[string]any{"value": a}
	}
	var r evalResult
	err := s.call(ctx, "Runtime.callFunctionOn", map[string]any{
		"functionDeclaration": fn,
		"objectId":            objectID,
		"arguments":           callArgs,
		"returnByValue":       byValue,
		"awaitPromise":        true,
		"objectGroup":         objectGroupFor(ctx, s),
	}, &r)
	if err != nil {
		return nil, err
	}
	if err := jsError(r.ExceptionDetails); err != nil {
		return nil, err
	}
	return &r.Result, nil
}

// resolveNode returns a remote object for the DOM node with backend id id.
func (s *session) resolveNode(ctx context.Context, id cdp.BackendNodeID) (string, error) {
	var r struct {
		Object remoteObject `json:"object"`
	}
	if err := s.call(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": id, "objectGroup": objectGroupFor(ctx, s)}, &r); err != nil {
		return "", err
	}
	if r.Object.ObjectID == "" {
		return "", fmt.Errorf("node %d has no JavaScript object", id)
	}
	return r.Object.ObjectID, nil
}

// describedNode is the part of DOM.Node this package reads.
type describedNode struct {
	NodeType        int               `json:"nodeType"`
	NodeName        string            `json:"nodeName"`
	BackendNodeID   cdp.BackendNodeID `json:"backendNodeId"`
	FrameID         cdp.FrameID       `json:"frameId"`
	ShadowRootType  string            `json:"shadowRootType"`
	Children        []*describedNode  `json:"children"`
	ShadowRoots     []*describedNode  `json:"shadowRoots"`
	ContentDocument *describedNode    `json:"contentDocument"`
}

// describe runs DOM.describeNode. It does not need the DOM domain's node ids,
// so it leaves chromedp's own DOM bookkeeping alone.
func (s *session) describe(ctx context.Context, params map[string]any) (*describedNode, error) {
	var r struct {
		Node describedNode `json:"node"`
	}
	if err := s.call(ctx, "DOM.describeNode", params, &r); err != nil {
		return nil, err
	}
	return &r.Node, nil
}

// objectGroupPrefix names the groups of remote objects this package
// creates, apart from the page's own.
const objectGroupPrefix = "browserfleet-page-"

var objectGroupSeq atomic.Uint64

// objectScope collects the remote objects one operation creates, in every
// session it touches, so that they can be freed together without freeing
// those of an operation running concurrently.
type objectScope struct {
	name     string
	mu       sync.Mutex
	sessions map[*session]bool
}

type objectScopeKey struct{}

// withObjects returns a context whose remote objects belong to a new scope,
// and the function that releases them.
func withObjects(ctx context.Context) (context.Context, func()) {
	o := &objectScope{
		name:     objectGroupPrefix + strconv.FormatUint(objectGroupSeq.Add(1), 10),
		sessions: make(map[*session]bool),
	}
	return context.WithValue(ctx, objectScopeKey{}, o), func() { o.release(ctx) }
}

// objectGroupFor names the object group of ctx's scope, noting that s holds
// objects of it.
func objectGroupFor(ctx context.Context, s *session) string {
	o, _ := ctx.Value(objectScopeKey{}).(*objectScope)
	if o == nil {
		// Unscoped objects live until the page navigates.
		return objectGroupPrefix + "unscoped"
	}
	o.mu.Lock()
	o.sessions[s] = true
	o.mu.Unlock()
	return o.name
}

// release frees the scope's objects. It is best effort and runs even when
// ctx has ended: a failure only leaks objects until the page navigates.
func (o *objectScope) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	o.mu.Lock()
	defer o.mu.Unlock()
	for s := range o.sessions {
		_ = s.call(ctx, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": o.name}, nil)
	}
}
