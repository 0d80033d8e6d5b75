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

package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/store"
)

const (
	token  = "runner-token-s3cr3t"
	apiKey = "bf_project-key-s3cr3t"
	key    = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// api is a small stand-in of the API's cache endpoints over cache.Local
// (the API's real handler lives in server/): each pair of paths with its
// own authentication, the error envelope on failure.
type api struct {
	local cache.Local
	calls atomic.Int32
	// fail, when set, answers every call with this status and message.
	fail    int
	failMsg string
}

func (a *api) handler() http.Handler {
	mux := http.NewServeMux()
	runner := func(r *http.Request) bool {
		return r.Header.Get(rpc.HeaderRunnerSession) == "ns1/s1" && r.Header.Get("Authorization") == rpc.AuthorizationScheme+" "+token
	}
	project := func(r *http.Request) bool { return r.Header.Get(cache.HeaderAPIKey) == apiKey }
	for path, auth := range map[string]func(*http.Request) bool{
		cache.RunnerPathGet: runner, cache.RunnerPathSet: runner,
		cache.PathGet: project, cache.PathSet: project,
	} {
		get := strings.HasSuffix(path, "/get")
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			a.calls.Add(1)
			switch {
			case a.fail != 0:
				envelope(w, a.fail, "FAILED", a.failMsg)
			case !auth(r):
				envelope(w, http.StatusUnauthorized, "UNAUTHORIZED", "unknown key")
			case get:
				var req cache.GetRequest
				_ = json.NewDecoder(r.Body).Decode(&req)
				resp, err := a.local.Get(r.Context(), req)
				if err != nil {
					envelope(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
					return
				}
				_ = json.NewEncoder(w).Encode(resp)
			default:
				var req cache.SetRequest
				_ = json.NewDecoder(r.Body).Decode(&req)
				if err := a.local.Set(r.Context(), req); err != nil {
					envelope(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
					return
				}
				_, _ = w.Write([]byte(`{"success":true}`))
			}
		})
	}
	return mux
}

func envelope(w http.ResponseWriter, status int, code, msg string) {
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"success": false, "error": msg, "code": code})
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func newAPI(t *testing.T) *api {
	mem := store.NewMemory(store.MemoryOptions{})
	t.Cleanup(func() { _ = mem.Close() })
	return &api{local: cache.Local{Store: mem, Project: "ns1"}}
}

func TestClientMissThenHit(t *testing.T) {
	a := newAPI(t)
	base := serve(t, a.handler())
	for _, tc := range []struct {
		name string
		opts cache.ClientOptions
		// key differs by case: the cases share the API's store.
		key string
	}{
		{"runner paths with the session's token", cache.ClientOptions{BaseURL: base, Runner: true, Session: "ns1/s1", Token: token}, strings.Repeat("a", 64)},
		{"/v1 paths with the project key", cache.ClientOptions{BaseURL: base + "/", APIKey: apiKey}, strings.Repeat("b", 64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := cache.NewClient(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			k := tc.key
			got, err := c.Get(ctx, cache.GetRequest{Key: k, Threshold: 1})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&cache.GetResponse{Count: 1, Threshold: 1, MissReason: cache.MissNotCached}, got); diff != "" {
				t.Errorf("first get (-want +got):\n%s", diff)
			}
			entry := cache.Entry{Method: "observe", Value: json.RawMessage(`[{"selector":"xpath=/html[1]/body[1]/button[1]"}]`), Usage: cache.Usage{InputTokens: 10, OutputTokens: 2}}
			if err := c.Set(ctx, cache.SetRequest{Key: k, Entry: entry}); err != nil {
				t.Fatal(err)
			}
			got, err = c.Get(ctx, cache.GetRequest{Key: k, Threshold: 1})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&cache.GetResponse{Count: 2, Threshold: 1, Hit: true, Entry: &entry}, got); diff != "" {
				t.Errorf("second get (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientErrors(t *testing.T) {
	ctx := context.Background()
	entry := cache.Entry{Method: "act", Value: json.RawMessage(`{}`)}
	for _, tc := range []struct {
		name    string
		status  int
		msg     string
		opts    func(base string) cache.ClientOptions
		call    func(c *cache.Client) error
		want    string
		tooBig  bool
		noCalls bool
	}{
		{
			name: "a wrong token is refused", opts: func(b string) cache.ClientOptions {
				return cache.ClientOptions{BaseURL: b, Runner: true, Session: "ns1/s1", Token: "another-" + token}
			},
			call: func(c *cache.Client) error {
				_, err := c.Get(ctx, cache.GetRequest{Key: key, Threshold: 1})
				return err
			},
			want: "401 UNAUTHORIZED: unknown key",
		},
		{
			name: "a message that echoes the key is redacted", status: http.StatusServiceUnavailable, msg: "store down for " + apiKey,
			opts: func(b string) cache.ClientOptions { return cache.ClientOptions{BaseURL: b, APIKey: apiKey} },
			call: func(c *cache.Client) error { return c.Set(ctx, cache.SetRequest{Key: key, Entry: entry}) },
			want: "503 FAILED: store down for [redacted]",
		},
		{
			name: "413 is ErrTooLarge", status: http.StatusRequestEntityTooLarge, msg: "entry too large",
			opts: func(b string) cache.ClientOptions { return cache.ClientOptions{BaseURL: b, APIKey: apiKey} },
			call: func(c *cache.Client) error { return c.Set(ctx, cache.SetRequest{Key: key, Entry: entry}) },
			want: "413 FAILED: entry too large", tooBig: true,
		},
		{
			name: "a bad key is refused before any call",
			opts: func(b string) cache.ClientOptions { return cache.ClientOptions{BaseURL: b, APIKey: apiKey} },
			call: func(c *cache.Client) error {
				_, err := c.Get(ctx, cache.GetRequest{Key: "short", Threshold: 1})
				return err
			},
			want: "key must be a hex SHA-256", noCalls: true,
		},
		{
			name: "a bad threshold is refused before any call",
			opts: func(b string) cache.ClientOptions { return cache.ClientOptions{BaseURL: b, APIKey: apiKey} },
			call: func(c *cache.Client) error {
				_, err := c.Get(ctx, cache.GetRequest{Key: key, Threshold: 0})
				return err
			},
			want: "threshold must be from 1 to 1000, not 0", noCalls: true,
		},
		{
			name: "an entry over the bound is refused before any call",
			opts: func(b string) cache.ClientOptions { return cache.ClientOptions{BaseURL: b, APIKey: apiKey} },
			call: func(c *cache.Client) error {
				big := cache.Entry{Method: "extract", Value: json.RawMessage(`"` + strings.Repeat("x", cache.MaxEntryBytes) + `"`)}
				return c.Set(ctx, cache.SetRequest{Key: key, Entry: big})
			},
			want: "at most 1048576", tooBig: true, noCalls: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAPI(t)
			a.fail, a.failMsg = tc.status, tc.msg
			c, err := cache.NewClient(tc.opts(serve(t, a.handler())))
			if err != nil {
				t.Fatal(err)
			}
			err = tc.call(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			for _, secret := range []string{token, apiKey} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error %q holds a secret", err)
				}
			}
			if got := errors.Is(err, store.ErrTooLarge); got != tc.tooBig {
				t.Errorf("errors.Is(err, store.ErrTooLarge) = %v, want %v", got, tc.tooBig)
			}
			if n := a.calls.Load(); (n == 0) != tc.noCalls {
				t.Errorf("%d calls reached the API", n)
			}
		})
	}
}

func TestClientBoundsTheAnswer(t *testing.T) {
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"count":1,"threshold":1,"missReason":"`))
		_, _ = w.Write([]byte(strings.Repeat("x", cache.MaxBodyBytes)))
		_, _ = w.Write([]byte(`"}`))
	}))
	c, err := cache.NewClient(cache.ClientOptions{BaseURL: base, APIKey: apiKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), cache.GetRequest{Key: key, Threshold: 1}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("error %v, want the answer refused as too large", err)
	}
}

func TestNewClientRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts cache.ClientOptions
		want string
	}{
		{"no scheme", cache.ClientOptions{BaseURL: "api:8080", APIKey: apiKey}, "want an absolute http or https URL"},
		{"credentials in the URL", cache.ClientOptions{BaseURL: "http://user:hunter2@127.0.0.1:1", APIKey: apiKey}, "without credentials"},
		{"a query", cache.ClientOptions{BaseURL: "http://127.0.0.1:1/?a=1", APIKey: apiKey}, "query"},
		{"no key", cache.ClientOptions{BaseURL: "http://127.0.0.1:1"}, "an API key is required"},
		{"a runner without token", cache.ClientOptions{BaseURL: "http://127.0.0.1:1", Runner: true, Session: "ns/s"}, "token"},
		{"a runner without namespace", cache.ClientOptions{BaseURL: "http://127.0.0.1:1", Runner: true, Session: "s", Token: token}, "namespace/name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cache.NewClient(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error %q holds the URL's password", err)
			}
		})
	}
}

// The runner's headers are rpc's, which this package cannot import.
func TestClientUsesTheRunnerRPCsHeaders(t *testing.T) {
	var got http.Header
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		_, _ = w.Write([]byte(`{"success":true}`))
	}))
	c, err := cache.NewClient(cache.ClientOptions{BaseURL: base, Runner: true, Session: "ns1/s1", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(context.Background(), cache.SetRequest{Key: key, Entry: cache.Entry{Method: "act", Value: json.RawMessage(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	req := &http.Request{Header: got}
	if tok, ok := rpc.BearerToken(req); !ok || tok != token {
		t.Errorf("token %q, want the session's", tok)
	}
	if s := got.Get(rpc.HeaderRunnerSession); s != "ns1/s1" {
		t.Errorf("session header %q", s)
	}
}
