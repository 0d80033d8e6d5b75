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

package client

import (
	"errors"
	"fmt"
	"strings"
)

// Errors an instance's calls return; test with errors.Is.
var (
	// ErrBrowserInUse is Create's error for a handle that already backs an
	// open instance.
	ErrBrowserInUse = errors.New("the browser handle already backs an instance; close that instance first")
	// ErrBrowserClosed is the error of Create, and of a page's and the
	// context's calls, on a handle that was closed.
	ErrBrowserClosed = errors.New("the browser handle is closed")
	// ErrClosed is the error of an instance's operations after Close.
	ErrClosed = errors.New("the instance is closed")
	// ErrNoBrowser is Create's error when CreateOptions.Browser is nil.
	ErrNoBrowser = errors.New("CreateOptions.Browser is required")
	// ErrNoModel is the error of an operation that needs a model when
	// neither the instance (CreateOptions.Model or Generate) nor the call
	// (its Model option) names one. The service's model gateway, which
	// picks one, is not built yet.
	ErrNoModel = errors.New("no model is set for the instance or the call")
	// ErrInvalidArgument marks a call that cannot run as given; the
	// message names the field.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrSchemaViolation is Extract's error when the extracted value is
	// not valid against the schema derived from T.
	ErrSchemaViolation = errors.New("the extracted data does not match the schema")
	// ErrBatchDeadline is ExperimentalBatch's error when the batch passed
	// its Timeout.
	ErrBatchDeadline = errors.New("the batch passed its deadline")
)

// invalid returns an ErrInvalidArgument error naming the field.
func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, field, fmt.Sprintf(format, args...))
}

// APIError is a refusal of the service, for calls of a cloud handle: the
// HTTP status and the service's error body.
type APIError struct {
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Code is the service's error code, such as "INVALID_REQUEST".
	Code string
	// Message is the service's message.
	Message string
	// Issues name each field a 400 refused, with why.
	Issues []APIIssue
}

// APIIssue is one refused field of an APIError.
type APIIssue struct {
	Path    string
	Message string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the service answered %d", e.StatusCode)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	for _, is := range e.Issues {
		fmt.Fprintf(&b, "; %s: %s", is.Path, is.Message)
	}
	return b.String()
}

// BatchError is a JavaScript exception that ended an ExperimentalBatch
// script.
type BatchError struct {
	// Message is the exception's message (its toString()).
	Message string
	// Stack is the script's stack at the exception, when known.
	Stack string
}

func (e *BatchError) Error() string { return "the batch script threw: " + e.Message }
