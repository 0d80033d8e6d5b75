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

package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/runnertoken"
	"github.com/browserfleet/browserfleet/server/apikey"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// Codes of operations, beyond those of errors.go; the runner's own codes
// (TIMEOUT, MODEL_ERROR, SCHEMA_VIOLATION, ...) pass through as they are.
const (
	// CodeSessionNotReady (409): the session is not Ready yet.
	CodeSessionNotReady = "SESSION_NOT_READY"
	// CodeRunnerUnreachable (502): the session's runner cannot be reached.
	CodeRunnerUnreachable = string(rpc.CodeRunnerUnreachable)
)

// errShuttingDown cancels the operations still running when the server's
// shutdown grace has passed.
var errShuttingDown = errors.New("the API server is shutting down")

// operation is one call forwarded to a session's runner.
type operation struct {
	// name is the endpoint: act, observe, extract, navigate.
	name string
	// stream is the caller's wantsStream.
	stream bool
	// model is the per-call model's name, "" for the session's.
	model string
	// metadata adds data.metadata to the success: act, observe, extract.
	// The server-side cache serves exactly these: the call's setting is
	// resolved (cacheSetting) from cacheOption, its options.cache.
	metadata    bool
	cacheOption *serverv1.CacheOption
	// call runs the operation on the runner with the call's cache setting
	// (nil: off). onLog is nil for a plain call.
	call func(ctx context.Context, c *rpc.Client, setting *cache.Setting, onLog func(rpc.LogLine)) (opResult, error)
}

// opResult is what an operation's call answers.
type opResult struct {
	result any
	usage  rpc.Usage
	// cache is what the server-side cache did; nil is DISABLED.
	cache *cache.Report
}

// readySession looks up the session of a call and checks that it can take
// operations. It answers the call itself when not.
func (s *server) readySession(w http.ResponseWriter, r *http.Request, project apikey.Project) (*v1alpha1.BrowserSession, bool) {
	bs, ok := s.pathSession(w, r, project)
	if !ok || refuseUnready(w, bs) {
		return nil, false
	}
	return bs, true
}

// refuseUnready answers 409 for a session that cannot take calls (it is
// over, or not Ready yet) and reports whether it did.
func refuseUnready(w http.ResponseWriter, bs *v1alpha1.BrowserSession) bool {
	if over(bs) {
		msg := fmt.Sprintf("session %s has %s", bs.Name, strings.ToLower(string(phaseOfEnded(bs))))
		if phaseOf(bs) == v1alpha1.BrowserSessionEnding {
			msg = fmt.Sprintf("session %s is ending", bs.Name)
		}
		if phaseOf(bs) == v1alpha1.BrowserSessionFailed && bs.Status.Message != "" {
			msg += ": " + bs.Status.Message
		}
		writeError(w, http.StatusConflict, CodeSessionEnded, msg)
		return true
	}
	if phaseOf(bs) != v1alpha1.BrowserSessionReady || bs.Status.Endpoint == "" {
		writeError(w, http.StatusConflict, CodeSessionNotReady,
			fmt.Sprintf("session %s is %s, not Ready; wait for it to be Ready", bs.Name, phaseOf(bs)))
		return true
	}
	return false
}

// readyRunner looks up the session of a call, checks that it can take
// operations, and returns a client of its runner. It answers the call
// itself when not.
func (s *server) readyRunner(w http.ResponseWriter, r *http.Request, project apikey.Project) (*v1alpha1.BrowserSession, *rpc.Client, bool) {
	bs, ok := s.readySession(w, r, project)
	if !ok {
		return nil, nil, false
	}
	c, err := s.runnerClient(r.Context(), bs)
	if errors.Is(err, runnertoken.ErrMissing) {
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "the session's runner is not ready to take calls yet; retry")
		return nil, nil, false
	}
	if err != nil {
		s.log.Error(err, "getting runner client", "namespace", bs.Namespace, "session", bs.Name)
		writeInternal(w)
		return nil, nil, false
	}
	return bs, c, true
}

// operate runs op on the session's runner and answers the call, plainly or
// as a stream. Failures found before the operation starts (no such session,
// not ready) are plain JSON errors even for a streamed call: a stream's
// status is always 200, and these deserve their own.
func (s *server) operate(w http.ResponseWriter, r *http.Request, project apikey.Project, op operation) {
	bs, c, ok := s.readyRunner(w, r, project)
	if !ok {
		return
	}
	var setting *cache.Setting
	if op.metadata {
		var issue *serverv1.Issue
		if setting, issue = s.cacheSetting(r, op.cacheOption, bs); !s.acceptable(w, nil, issue) {
			return
		}
	}

	ctx, cancel := s.operationContext(r.Context())
	defer cancel()

	var resp responder = plain{w: w}
	var onLog func(rpc.LogLine)
	if op.stream {
		st, ok := s.openStream(w)
		if !ok {
			return
		}
		defer st.Close()
		_ = st.Connected()
		resp = streamed{st}
		onLog = resp.log
	}

	// The runner records the call in the session's history under the id
	// the caller gets.
	actionID := uuid.NewString()
	started := time.Now()
	res, err := op.call(rpc.WithActionID(ctx, actionID), c, setting, onLog)
	ended := time.Now()
	usage := res.usage

	model := op.model
	if model == "" {
		model = bs.Spec.Model.Name
	}
	s.opts.Metrics.ObserveOperation(op.name, outcomeOf(err), op.stream, ended.Sub(started))
	s.opts.Metrics.AddTokens(model, usage.InputTokens, usage.OutputTokens, usage.ReasoningTokens, usage.CachedInputTokens)

	if err != nil && r.Context().Err() != nil {
		// The caller went away; the runner has been told to stop. No one
		// is left to answer.
		s.log.V(1).Info("caller went away", "operation", op.name, "namespace", bs.Namespace, "session", bs.Name)
		return
	}
	if err != nil {
		s.failOperation(ctx, resp, bs, op.name, err)
		return
	}
	var md *serverv1.Metadata
	if op.metadata {
		md = serverv1.NewMetadata(res.cache, usage)
	}
	resp.succeed(res.result, actionID, md)
}

// operationContext is the request's context, cancelled too when the
// server's shutdown grace has passed.
func (s *server) operationContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(s.abort, func() { cancel(errShuttingDown) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// failOperation answers a failed operation with the runner's code and the
// status of DESIGN.md.
func (s *server) failOperation(ctx context.Context, resp responder, bs *v1alpha1.BrowserSession, name string, err error) {
	if errors.Is(context.Cause(ctx), errShuttingDown) {
		resp.fail(http.StatusServiceUnavailable, CodeUnavailable, "the API server is shutting down; retry the call")
		return
	}
	var e *rpc.Error
	if !errors.As(err, &e) {
		s.log.Error(err, "operation failed", "operation", name, "namespace", bs.Namespace, "session", bs.Name)
		resp.fail(http.StatusInternalServerError, CodeInternal, "internal error")
		return
	}
	switch e.Code {
	case rpc.CodeBadRequest:
		// The runner refused what decoding let through; the caller
		// still gets the envelope of a refused body.
		resp.failIssues("invalid request body", []serverv1.Issue{{Path: "", Message: e.Message}})
	case rpc.CodeUnauthorized, rpc.CodeNotFound, rpc.CodeMethodNotAllowed, rpc.CodePayloadTooLarge:
		// The runner refused the API pod itself: a version skew or a
		// replaced token. Not the caller's fault, and no detail is theirs.
		s.log.Error(err, "runner refused the call", "operation", name, "namespace", bs.Namespace, "session", bs.Name)
		resp.fail(http.StatusBadGateway, CodeRunnerUnreachable, "the session's runner refused the call")
	case rpc.CodeBrowserStarting:
		resp.fail(http.StatusConflict, CodeSessionNotReady, e.Message)
	case rpc.CodeSessionBusy:
		if p, ok := resp.(plain); ok {
			// The earlier operations take seconds; ask for no fewer.
			p.w.Header().Set("Retry-After", "1")
		}
		resp.fail(http.StatusTooManyRequests, string(e.Code), e.Message)
	case rpc.CodeInternal:
		s.log.Error(err, "runner failed", "operation", name, "namespace", bs.Namespace, "session", bs.Name)
		resp.fail(http.StatusInternalServerError, CodeInternal, e.Message)
	default:
		resp.fail(rpc.HTTPStatus(e.Code), string(e.Code), e.Message)
	}
}

// outcomeOf names an operation's outcome for the metrics.
func outcomeOf(err error) string {
	if err == nil {
		return "success"
	}
	if code := rpc.CodeOf(err); code != "" {
		return string(code)
	}
	if errors.Is(err, context.Canceled) {
		return string(rpc.CodeCanceled)
	}
	return string(rpc.CodeInternal)
}

// act serves POST /v1/sessions/{id}/act.
func (s *server) act(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	req, stream, ok := decodeCachedOperation(s, w, r, serverv1.DecodeAct, func(b *serverv1.ActBody) *bool { return b.StreamResponse })
	if !ok {
		return
	}
	s.operate(w, r, project, operation{
		name: "act", stream: stream, model: modelName(req.Request.Options.Model), metadata: true, cacheOption: req.Cache,
		call: forward(req.Request, (*rpc.Client).Act, func(q *rpc.ActRequest, c *cache.Setting) { q.Options.Cache = c }),
	})
}

// observe serves POST /v1/sessions/{id}/observe.
func (s *server) observe(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	req, stream, ok := decodeCachedOperation(s, w, r, serverv1.DecodeObserve, func(b *serverv1.ObserveBody) *bool { return b.StreamResponse })
	if !ok {
		return
	}
	s.operate(w, r, project, operation{
		name: "observe", stream: stream, model: modelName(req.Request.Options.Model), metadata: true, cacheOption: req.Cache,
		call: forward(req.Request, (*rpc.Client).Observe, func(q *rpc.ObserveRequest, c *cache.Setting) { q.Options.Cache = c }),
	})
}

// extract serves POST /v1/sessions/{id}/extract.
func (s *server) extract(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	req, stream, ok := decodeCachedOperation(s, w, r, serverv1.DecodeExtract, func(b *serverv1.ExtractBody) *bool { return b.StreamResponse })
	if !ok {
		return
	}
	s.operate(w, r, project, operation{
		name: "extract", stream: stream, model: modelName(req.Request.Options.Model), metadata: true, cacheOption: req.Cache,
		call: forward(req.Request, (*rpc.Client).Extract, func(q *rpc.ExtractRequest, c *cache.Setting) { q.Options.Cache = c }),
	})
}

// navigate serves POST /v1/sessions/{id}/navigate.
func (s *server) navigate(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	req, stream, ok := decodeOperation(s, w, r, serverv1.DecodeNavigate, func(b *serverv1.NavigateBody) *bool { return b.StreamResponse })
	if !ok {
		return
	}
	s.operate(w, r, project, operation{
		name: "navigate", stream: stream,
		call: forward(req.Request, (*rpc.Client).Navigate, nil),
	})
}

// forward makes an operation's call from a runner client method;
// withCache puts the call's cache setting into the request (nil: the
// operation has none).
func forward[R, T any](req R, method func(*rpc.Client, context.Context, R, func(rpc.LogLine)) (*rpc.Result[T], error),
	withCache func(*R, *cache.Setting)) func(context.Context, *rpc.Client, *cache.Setting, func(rpc.LogLine)) (opResult, error) {
	return func(ctx context.Context, c *rpc.Client, setting *cache.Setting, onLog func(rpc.LogLine)) (opResult, error) {
		if withCache != nil {
			withCache(&req, setting)
		}
		res, err := method(c, ctx, req, onLog)
		if err != nil {
			return opResult{}, err
		}
		out := opResult{result: res.Result, usage: res.Usage, cache: res.Cache}
		// An empty list is [], never null: the document says array.
		if actions, ok := any(res.Result).([]rpc.Action); ok && actions == nil {
			out.result = []rpc.Action{}
		}
		return out, nil
	}
}

// decodeOperation reads and decodes an operation's body and decides whether
// it streams. It answers a refused body or stream header itself, with every
// issue of both.
func decodeOperation[T any](s *server, w http.ResponseWriter, r *http.Request,
	decode func([]byte) (*T, *serverv1.ValidationError), flag func(*T) *bool) (req *T, stream, ok bool) {
	return decodeOperationWith(s, w, r, decode, flag, nil)
}

// decodeCachedOperation is decodeOperation for the operations the
// server-side cache serves (act, observe, extract): a refused
// x-cache-bypass header is one more issue.
func decodeCachedOperation[T any](s *server, w http.ResponseWriter, r *http.Request,
	decode func([]byte) (*T, *serverv1.ValidationError), flag func(*T) *bool) (req *T, stream, ok bool) {
	return decodeOperationWith(s, w, r, decode, flag, bypassIssue(r))
}

// decodeOperationWith is decodeOperation with one more issue of the
// request's headers, or nil.
func decodeOperationWith[T any](s *server, w http.ResponseWriter, r *http.Request,
	decode func([]byte) (*T, *serverv1.ValidationError), flag func(*T) *bool, header *serverv1.Issue) (req *T, stream, ok bool) {
	body, ok := s.readBody(w, r)
	if !ok {
		return nil, false, false
	}
	req, verr := decode(body)
	var streamFlag *bool
	if req != nil {
		streamFlag = flag(req)
	}
	stream, issue := wantsStream(r, streamFlag)
	if !s.acceptable(w, verr, issue, header) {
		return nil, false, false
	}
	return req, stream, true
}

// acceptable answers a refused body or stream header and reports whether
// the call may go on.
func (s *server) acceptable(w http.ResponseWriter, verr *serverv1.ValidationError, more ...*serverv1.Issue) bool {
	var issues []serverv1.Issue
	if verr != nil {
		issues = append(issues, verr.Issues...)
	}
	for _, issue := range more {
		if issue != nil {
			issues = append(issues, *issue)
		}
	}
	if len(issues) == 0 {
		return true
	}
	writeIssues(w, (&serverv1.ValidationError{Issues: issues}).Error(), issues)
	return false
}

// modelName is a per-call model's name, "" when the call uses the
// session's.
func modelName(m *rpc.ModelConfig) string {
	if m == nil {
		return ""
	}
	return m.ModelName
}
