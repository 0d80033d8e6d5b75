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

package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
)

// proxyAuth answers the proxy's authentication challenges with the
// session's credentials. Chromium takes no credentials on its command line,
// so the runner intercepts the tab's requests with the Fetch domain: every
// request is continued at once, and an authRequired from the proxy is
// answered with the username and password. A proxy that challenges the same
// request again refused them; the challenge is then cancelled, so the
// request fails at once instead of looping, and the refusal is counted for
// the operation to report.
type proxyAuth struct {
	username string
	password Secret
	log      *slog.Logger

	mu       sync.Mutex
	answered map[fetch.RequestID]bool
	refused  atomic.Int64
}

// maxAnswered bounds the memory of answered challenges; a page making that
// many proxy-authenticated requests without a refusal loses nothing when it
// is reset.
const maxAnswered = 4096

func newProxyAuth(username string, password Secret, log *slog.Logger) *proxyAuth {
	return &proxyAuth{username: username, password: password, log: log, answered: map[fetch.RequestID]bool{}}
}

// enable starts answering on the tab. tab is the long-lived tab context the
// listener runs in; ctx bounds enabling.
func (a *proxyAuth) enable(tab, ctx context.Context) error {
	exec := cdp.WithExecutor(tab, chromedp.FromContext(tab).Target)
	chromedp.ListenTarget(tab, func(ev any) {
		// Listeners run on chromedp's event loop and must not block on
		// a command: answer from a goroutine.
		switch ev := ev.(type) {
		case *fetch.EventRequestPaused:
			go func() { _ = fetch.ContinueRequest(ev.RequestID).Do(exec) }()
		case *fetch.EventAuthRequired:
			go a.answer(exec, ev)
		}
	})
	err := chromedp.Run(ctx, fetch.Enable().
		WithHandleAuthRequests(true).
		WithPatterns([]*fetch.RequestPattern{{URLPattern: "*"}}))
	if err != nil {
		return fmt.Errorf("enabling proxy authentication: %w", err)
	}
	return nil
}

func (a *proxyAuth) answer(ctx context.Context, ev *fetch.EventAuthRequired) {
	resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseDefault}
	if ev.AuthChallenge != nil && ev.AuthChallenge.Source == fetch.AuthChallengeSourceProxy {
		a.mu.Lock()
		again := a.answered[ev.RequestID]
		if len(a.answered) >= maxAnswered {
			clear(a.answered)
		}
		a.answered[ev.RequestID] = true
		a.mu.Unlock()
		if again {
			a.refused.Add(1)
			a.log.Warn("the proxy refused the session's credentials", "proxy", ev.AuthChallenge.Origin, "username", a.username)
			resp.Response = fetch.AuthChallengeResponseResponseCancelAuth
		} else {
			resp = &fetch.AuthChallengeResponse{
				Response: fetch.AuthChallengeResponseResponseProvideCredentials,
				Username: a.username,
				Password: a.password.Reveal(),
			}
		}
	}
	// A server's (not the proxy's) challenge gets Chromium's default: a
	// headless browser cancels it and the page sees the 401.
	_ = fetch.ContinueWithAuth(ev.RequestID, resp).Do(ctx)
}

// refusals counts the challenges cancelled because the proxy refused the
// credentials. Nil-safe: a session without proxy credentials has none.
func (a *proxyAuth) refusals() int64 {
	if a == nil {
		return 0
	}
	return a.refused.Load()
}
