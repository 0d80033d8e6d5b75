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
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Retries live in an http.RoundTripper under every SDK, rather than in each
// SDK's options, because the three SDKs disagree: OpenAI's and Anthropic's
// also retry 408, 409 and connection errors, Google's retries nothing by
// default and ignores Retry-After. One transport gives every provider the
// same policy: only 429 and 5xx answers are retried, after the delay the
// provider asked for in Retry-After (or retry-after-ms), else after an
// exponential backoff with jitter, and never beyond the call's deadline. The
// SDKs' own retries are turned off (MaxRetries 0 for OpenAI and Anthropic;
// Google's are off unless HTTPOptions.RetryOptions is set, which it is not).

const (
	// defaultRetryBaseDelay is the first backoff step; step n waits about
	// base*2^n.
	defaultRetryBaseDelay = 500 * time.Millisecond
	// maxBackoff caps one backoff step.
	maxBackoff = 8 * time.Second
	// maxRetryAfter is the longest wait a Retry-After may impose. A provider
	// asking for more is saying "not soon": the call fails at once with its
	// answer rather than holding the caller.
	maxRetryAfter = 60 * time.Second
	// drainLimit bounds how much of a discarded answer is read so that its
	// connection can be reused.
	drainLimit = 64 << 10
)

// retryTransport repeats requests answered with 429 or 5xx.
type retryTransport struct {
	next       http.RoundTripper
	maxRetries int
	baseDelay  time.Duration
}

// newHTTPClient returns a copy of base (or of a default client) whose
// transport retries as retryTransport does.
func newHTTPClient(base *http.Client, maxRetries int, baseDelay time.Duration) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &retryTransport{next: next, maxRetries: maxRetries, baseDelay: baseDelay}
	return c
}

// RoundTrip implements http.RoundTripper.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	getBody, buffered, err := replayableBody(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	trace := traceOf(ctx)
	for attempt := 0; ; attempt++ {
		r := req
		if getBody != nil && (attempt > 0 || buffered) {
			// The first attempt sends the caller's body unless buffering
			// consumed it; every later one a fresh copy.
			r = req.Clone(ctx)
			if r.Body, err = getBody(); err != nil {
				return nil, err
			}
		}
		resp, err := t.next.RoundTrip(r)
		trace.record(resp)
		if err != nil || attempt >= t.maxRetries || !retryableStatus(resp.StatusCode) {
			return resp, err
		}
		delay, ok := retryAfter(resp.Header, time.Now())
		if !ok {
			delay = backoff(t.baseDelay, attempt)
		}
		if delay > maxRetryAfter || !fitsDeadline(ctx, delay) {
			// Waiting could not end in an answer in time: hand the provider's
			// refusal to the SDK now, so the caller learns why.
			return resp, nil
		}
		discard(resp)
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// replayableBody returns a function yielding fresh copies of req's body, or
// nil when req has none. SDKs set GetBody; a body without it is read into
// memory, which buffered reports.
func replayableBody(req *http.Request) (getBody func() (io.ReadCloser, error), buffered bool, err error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, false, nil
	}
	if req.GetBody != nil {
		return req.GetBody, false, nil
	}
	b, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, false, err
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, true, nil
}

// retryableStatus reports whether an answer with this status may be
// followed by a better one: rate limiting and server-side failures.
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500 && code <= 599
}

// retryAfter returns the wait a provider asked for: retry-after-ms
// (OpenAI, Anthropic) in milliseconds, or Retry-After in seconds or as an
// HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return seconds(ms / 1000), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return seconds(s), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// seconds converts a wait in seconds to a Duration without overflowing:
// waits of more than a day, far beyond maxRetryAfter anyway, become a day.
func seconds(s float64) time.Duration {
	const day = 24 * time.Hour
	if s >= day.Seconds() {
		return day
	}
	return time.Duration(s * float64(time.Second))
}

// backoff returns the wait before retry attempt+1: base*2^attempt capped at
// maxBackoff, less up to a quarter of jitter so that clients that failed
// together do not retry together.
func backoff(base time.Duration, attempt int) time.Duration {
	d := maxBackoff
	if attempt < 30 {
		d = min(base<<attempt, maxBackoff)
	}
	if j := int64(d / 4); j > 0 {
		d -= time.Duration(rand.Int64N(j))
	}
	return d
}

// fitsDeadline reports whether waiting delay still leaves time before ctx's
// deadline.
func fitsDeadline(ctx context.Context, delay time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) > delay
}

// discard reads a little of an unwanted answer and closes it, so that its
// connection goes back to the pool.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	_ = resp.Body.Close()
}

// callTrace records what the HTTP requests of one call met, so that its
// error can say how often the call was tried and with what last status,
// even where an SDK's error forgets the status.
type callTrace struct {
	attempts   atomic.Int32
	lastStatus atomic.Int32
}

// traceKey is the context key of a call's trace.
type traceKey struct{}

// withCallTrace returns a context whose HTTP requests are recorded in the
// returned trace.
func withCallTrace(ctx context.Context) (context.Context, *callTrace) {
	t := new(callTrace)
	return context.WithValue(ctx, traceKey{}, t), t
}

// traceOf returns the trace of ctx, or nil.
func traceOf(ctx context.Context) *callTrace {
	t, _ := ctx.Value(traceKey{}).(*callTrace)
	return t
}

func (t *callTrace) record(resp *http.Response) {
	if t == nil {
		return
	}
	t.attempts.Add(1)
	if resp != nil {
		t.lastStatus.Store(int32(resp.StatusCode))
	}
}
