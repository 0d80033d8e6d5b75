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
	"errors"
	"fmt"
	"net/http"
)

// ErrorCode says, for programs, why a call failed. The API pod maps it to its
// own status codes; the runner answers with HTTPStatus(code).
type ErrorCode string

// Error codes of the runner RPC.
const (
	// CodeBadRequest: the body is not valid JSON or misses a required field.
	CodeBadRequest ErrorCode = "BAD_REQUEST"
	// CodeUnauthorized: the runner token is missing or invalid.
	CodeUnauthorized ErrorCode = "UNAUTHORIZED"
	// CodeNotFound: no such path.
	CodeNotFound ErrorCode = "NOT_FOUND"
	// CodeMethodNotAllowed: the path exists with another method.
	CodeMethodNotAllowed ErrorCode = "METHOD_NOT_ALLOWED"
	// CodePayloadTooLarge: the body exceeds MaxRequestBytes.
	CodePayloadTooLarge ErrorCode = "PAYLOAD_TOO_LARGE"
	// CodeBrowserStarting: the browser is not up yet; retry shortly.
	CodeBrowserStarting ErrorCode = "BROWSER_STARTING"
	// CodeBrowserCrashed: the browser exited or its DevTools connection
	// dropped. The session cannot recover; the message says why.
	CodeBrowserCrashed ErrorCode = "BROWSER_CRASHED"
	// CodeShuttingDown: the runner is stopping its browser.
	CodeShuttingDown ErrorCode = "SHUTTING_DOWN"
	// CodeTimeout: the operation ran out of its options.timeout.
	CodeTimeout ErrorCode = "TIMEOUT"
	// CodeCanceled: the caller went away before the operation finished.
	CodeCanceled ErrorCode = "CANCELED"
	// CodeNavigationFailed: the page could not be loaded (DNS, TLS,
	// connection, proxy errors); the message carries Chromium's net error.
	CodeNavigationFailed ErrorCode = "NAVIGATION_FAILED"
	// CodeProxyAuthFailed: the browser's proxy refused its credentials.
	CodeProxyAuthFailed ErrorCode = "PROXY_AUTH_FAILED"
	// CodeEgressDenied: the runner's egress policy refused a connection
	// the operation needed (the page's document, the model's endpoint).
	// The message names the host and the kind of address, never whether
	// anything listens there.
	CodeEgressDenied ErrorCode = "EGRESS_DENIED"
	// CodeSessionBusy: as many operations as the runner lets wait
	// (--max-queued-operations) already wait for their turn on the
	// session's page; retry after the earlier ones have finished.
	CodeSessionBusy ErrorCode = "SESSION_BUSY"
	// CodeAgentBusy (409): another agent task runs in the session; one
	// runs at a time.
	CodeAgentBusy ErrorCode = "AGENT_BUSY"
	// CodeSchemaViolation: the model's extraction is not valid against the
	// caller's schema; the message says where. Retrying may help, a
	// looser schema or a clearer instruction more.
	CodeSchemaViolation ErrorCode = "SCHEMA_VIOLATION"
	// CodeModelError: the model provider failed the call (an HTTP error,
	// an unusable answer, no answer in its own time limit). The message
	// names the provider, the model and the provider's status and message,
	// never a key.
	CodeModelError ErrorCode = "MODEL_ERROR"
	// CodeBudgetExceeded (429): the project has spent its model gateway
	// token budget for the window; the message says how much and when
	// calls resume. No model was called.
	CodeBudgetExceeded ErrorCode = "BUDGET_EXCEEDED"
	// CodeEngineError: the engine failed in a way no other code names.
	CodeEngineError ErrorCode = "ENGINE_ERROR"
	// CodeRunnerUnreachable: the runner could not be reached, or its
	// connection dropped before the call's outcome arrived. The runner never
	// answers with it; the Client makes it up.
	CodeRunnerUnreachable ErrorCode = "RUNNER_UNREACHABLE"
	// CodeInternal: a bug in the runner.
	CodeInternal ErrorCode = "INTERNAL"
)

// StatusClientClosedRequest is the status recorded for an operation whose
// caller went away (nginx's 499); the caller never sees it.
const StatusClientClosedRequest = 499

// HTTPStatus is the status the runner answers a plain (not streamed) call
// that failed with code.
func HTTPStatus(code ErrorCode) int {
	switch code {
	case CodeBadRequest:
		return http.StatusBadRequest
	case CodeEgressDenied:
		return http.StatusForbidden
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeNotFound:
		return http.StatusNotFound
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeBrowserStarting, CodeBrowserCrashed, CodeShuttingDown:
		return http.StatusServiceUnavailable
	case CodeTimeout:
		return http.StatusGatewayTimeout
	case CodeCanceled:
		return StatusClientClosedRequest
	case CodeNavigationFailed, CodeProxyAuthFailed, CodeModelError, CodeRunnerUnreachable:
		return http.StatusBadGateway
	case CodeSchemaViolation, CodeBatchScriptError, CodeBatchLimit, CodeLaunchMismatch:
		return http.StatusUnprocessableEntity
	case CodeBatchDeadline:
		return http.StatusGatewayTimeout
	case CodeSessionBusy, CodeBudgetExceeded:
		return http.StatusTooManyRequests
	case CodeAgentBusy, CodeNotClaimed, CodeAlreadyClaimed:
		return http.StatusConflict
	default:
		return http.StatusInternalServerError
	}
}

// Error is the body of every failed call, {"error": "...", "code": "..."},
// and the error the engine and the runner return to say which code a failure
// has. Messages are for people and never carry a secret.
type Error struct {
	Message string    `json:"error"`
	Code    ErrorCode `json:"code"`
	// Stack is a batch script's stack (CodeBatchScriptError), when known.
	Stack string `json:"stack,omitempty"`
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	return string(e.Code) + ": " + e.Message
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, &rpc.Error{Code: rpc.CodeTimeout}) matches any timeout.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// CodeOf returns the code of the first *Error in err's chain, or "" when
// there is none.
func CodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
