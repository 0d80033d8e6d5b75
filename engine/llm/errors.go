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

package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

var (
	// ErrInvalidRequest is wrapped by errors about a Request that cannot be
	// sent, found before anything goes on the wire.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrInvalidOutput is wrapped by errors about an answer that cannot be
	// used: a refusal, no content, or, with a Schema, no JSON document
	// (typically cut off by MaxOutputTokens).
	ErrInvalidOutput = errors.New("unusable model output")
)

// Error is the error of a failed Generate call, and of New once the model
// name is understood. Its message names the provider and the model and
// carries the provider's status and message; it never contains the API key
// nor the value of a credential-bearing header (Authorization, *-Key,
// *-Token, ...).
type Error struct {
	// Provider and Model name the model that failed.
	Provider string
	Model    string
	// StatusCode is the provider's HTTP status, or 0 when no answer came
	// (timeout, network failure) or the answer was unusable.
	StatusCode int
	// Message is the provider's error message, or what went wrong, with
	// secrets redacted.
	Message string
	// Attempts is how many HTTP requests the call made, retries included.
	Attempts int
	// Err is the underlying error: an SDK error, context.DeadlineExceeded
	// when Config.Timeout ran out, the context's error when the caller gave
	// up, or one of this package's sentinel errors. Its own text is not part
	// of Error's and may, for SDK errors, hold raw provider diagnostics.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteByte('/')
	b.WriteString(e.Model)
	b.WriteString(": ")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
		if text := http.StatusText(e.StatusCode); text != "" {
			b.WriteString(" " + text)
		}
		if e.Message != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Message)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// redacted is what replaces a secret in error messages.
const redacted = "[REDACTED]"

// minSecretLen is the shortest secret redact hides: replacing every "a" of
// a message because a test key is "a" would only garble it.
const minSecretLen = 4

// redact removes secrets from s. SDK errors may quote request details, and
// some providers echo a rejected key back in their message.
func redact(s string, secrets []string) string {
	for _, secret := range secrets {
		if len(secret) >= minSecretLen {
			s = strings.ReplaceAll(s, secret, redacted)
		}
	}
	return s
}

// sensitiveHeaderWords mark header names whose values are credentials,
// such as a gateway's Authorization or a proxy's X-Proxy-Token.
var sensitiveHeaderWords = []string{"auth", "key", "token", "secret", "cookie", "password", "signature"}

// secretsOf returns what must never appear in an error of a client built
// from cfg: the API key, and the values of headers that carry credentials,
// with and without their scheme ("Bearer ...").
func secretsOf(cfg Config) []string {
	secrets := []string{cfg.APIKey}
	for name, value := range cfg.Headers {
		lower := strings.ToLower(name)
		for _, w := range sensitiveHeaderWords {
			if strings.Contains(lower, w) {
				secrets = append(secrets, value)
				if _, cred, ok := strings.Cut(value, " "); ok {
					secrets = append(secrets, strings.TrimSpace(cred))
				}
				break
			}
		}
	}
	return secrets
}
