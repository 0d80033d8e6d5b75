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

package search_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/internal/testing/searchtest"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/search"
)

const braveKey = "brave-subscription-token-do-not-leak"

func TestNewRefusesBadConfigs(t *testing.T) {
	tests := []struct {
		name string
		cfg  search.Config
		want string
	}{
		{name: "unknown provider", cfg: search.Config{Provider: "google"}, want: `provider "google"`},
		{name: "brave without key", cfg: search.Config{Provider: search.ProviderBrave}, want: "needs an API key"},
		{name: "searxng without endpoint", cfg: search.Config{Provider: search.ProviderSearXNG}, want: "needs an endpoint"},
		{name: "searxng with key", cfg: search.Config{Provider: search.ProviderSearXNG, Endpoint: "http://127.0.0.1/search", APIKey: "k"}, want: "takes no API key"},
		{name: "relative endpoint", cfg: search.Config{Provider: search.ProviderSearXNG, Endpoint: "/search"}, want: "absolute http or https"},
		{name: "file endpoint", cfg: search.Config{Provider: search.ProviderSearXNG, Endpoint: "file:///etc/passwd"}, want: "absolute http or https"},
		{name: "credentials in endpoint", cfg: search.Config{Provider: search.ProviderSearXNG, Endpoint: "http://u:p@127.0.0.1/search"}, want: "credentials in the URL"},
		{name: "too many results", cfg: search.Config{Provider: search.ProviderBrave, APIKey: "k", Results: 11}, want: "want 1 to 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := search.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New(%+v) = %v, want an error containing %q", tt.cfg, err, tt.want)
			}
		})
	}
}

func TestCheckQuery(t *testing.T) {
	tests := []struct {
		q    string
		want bool
	}{
		{q: "browserfleet operator", want: true},
		{q: "", want: false},
		{q: "   ", want: false},
		{q: "\xff\xfe", want: false},
		{q: strings.Repeat("é", search.MaxQueryRunes), want: true},
		{q: strings.Repeat("a", search.MaxQueryRunes+1), want: false},
	}
	for _, tt := range tests {
		err := search.CheckQuery(tt.q)
		if (err == nil) != tt.want || (err != nil && !errors.Is(err, search.ErrInvalidQuery)) {
			t.Errorf("CheckQuery(%.20q) = %v, want ok=%v", tt.q, err, tt.want)
		}
	}
}

func TestBraveProvider(t *testing.T) {
	brave := searchtest.NewBrave(t, braveKey)
	brave.Answer("kubernetes operator",
		searchtest.Hit{Title: "<strong>Operator</strong> pattern", URL: "https://kubernetes.io/docs/concepts/extend-kubernetes/operator/", Description: "Operators are &quot;software extensions&quot;"},
		searchtest.Hit{Title: "no url"},
		searchtest.Hit{Title: strings.Repeat("t", 400), URL: "https://example.com/long"},
		searchtest.Hit{Title: "fourth", URL: "https://example.com/4"},
	)
	p, err := search.New(search.Config{Provider: search.ProviderBrave, Endpoint: brave.URL, APIKey: braveKey, Results: 3})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Search(context.Background(), "kubernetes operator")
	if err != nil {
		t.Fatal(err)
	}
	want := []search.Result{
		{Title: "Operator pattern", URL: "https://kubernetes.io/docs/concepts/extend-kubernetes/operator/", Description: `Operators are "software extensions"`},
		{Title: strings.Repeat("t", 299) + "…", URL: "https://example.com/long"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]searchtest.Request{{Query: "kubernetes operator", Count: 3, KeyOK: true}}, brave.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestBraveProviderErrorsKeepTheKeyOut(t *testing.T) {
	brave := searchtest.NewBrave(t, "another key")
	p, err := search.New(search.Config{Provider: search.ProviderBrave, Endpoint: brave.URL, APIKey: braveKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Search(context.Background(), "anything")
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Search with a wrong key = %v, want the provider's 401", err)
	}
	if strings.Contains(err.Error(), braveKey) {
		t.Errorf("error %q holds the key", err)
	}
}

func TestSearXNGProvider(t *testing.T) {
	var gotQuery, gotFormat string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery, gotFormat = r.URL.Query().Get("q"), r.URL.Query().Get("format")
		_, _ = w.Write([]byte(`{"query":"x","results":[{"title":"One","url":"https://one.example/","content":"first <b>hit</b>","engine":"ddg"},{"title":"Two","url":"https://two.example/"}]}`))
	}))
	t.Cleanup(srv.Close)
	p, err := search.New(search.Config{Provider: search.ProviderSearXNG, Endpoint: srv.URL + "/search?language=en"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Search(context.Background(), "x y")
	if err != nil {
		t.Fatal(err)
	}
	want := []search.Result{{Title: "One", URL: "https://one.example/", Description: "first hit"}, {Title: "Two", URL: "https://two.example/"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if gotQuery != "x y" || gotFormat != "json" {
		t.Errorf("the provider got q=%q format=%q, want q=%q format=json", gotQuery, gotFormat, "x y")
	}
}

func TestProviderFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		timeout time.Duration
		want    string
	}{
		{name: "not JSON", handler: func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) }, want: "not SearXNG's JSON"},
		{name: "server error", handler: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "secret internals", http.StatusInternalServerError)
		}, want: "answered 500 Internal Server Error"},
		{name: "too large", handler: func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"results":[{"title":"` + strings.Repeat("a", 5<<20) + `"}]}`))
		}, want: "larger than"},
		{name: "slow", handler: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, timeout: 50 * time.Millisecond, want: "Client.Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			p, err := search.New(search.Config{Provider: search.ProviderSearXNG, Endpoint: srv.URL, Timeout: tt.timeout})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Search(context.Background(), "q")
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret internals") {
				t.Fatalf("Search = %v, want an error containing %q and not the provider's body", err, tt.want)
			}
		})
	}
}

// fakeSearcher answers from a map, or fails, or blocks until release
// closes.
type fakeSearcher struct {
	hits    []search.Result
	err     error
	started chan struct{}
	release chan struct{}
	mu      sync.Mutex
	queries []string
}

func (f *fakeSearcher) Search(ctx context.Context, q string) ([]search.Result, error) {
	f.mu.Lock()
	f.queries = append(f.queries, q)
	f.mu.Unlock()
	if f.release != nil {
		f.started <- struct{}{}
		<-f.release
	}
	return f.hits, f.err
}

const (
	relaySession = "team-a/0f0e0d0c-session"
	relayToken   = "runner-token"
)

func startRelay(t *testing.T, s search.Searcher, maxInFlight int) (string, *[]string) {
	t.Helper()
	var mu sync.Mutex
	outcomes := &[]string{}
	h, err := search.NewRelay(search.RelayOptions{
		Searcher: s,
		Authenticate: func(_ context.Context, r *http.Request) (string, error) {
			if r.Header.Get(rpc.HeaderRunnerSession) == relaySession && r.Header.Get("Authorization") == "Bearer "+relayToken {
				return relaySession, nil
			}
			return "", search.ErrUnauthorized
		},
		MaxInFlight: maxInFlight,
		Observe: func(o string) {
			mu.Lock()
			defer mu.Unlock()
			*outcomes = append(*outcomes, o)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(search.RelayPath, h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + search.RelayPath, outcomes
}

func TestRelayRoundTrip(t *testing.T) {
	hits := []search.Result{{Title: "Go", URL: "https://go.dev/", Description: "The Go language"}}
	f := &fakeSearcher{hits: hits}
	url, outcomes := startRelay(t, f, 0)
	c, err := search.NewRelayClient(url, relaySession, relayToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Search(context.Background(), "golang")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hits, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"golang"}, f.queries); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"success"}, *outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

func TestRelayRefusals(t *testing.T) {
	f := &fakeSearcher{err: errors.New("search provider brave answered 503 Service Unavailable")}
	url, _ := startRelay(t, f, 0)
	tests := []struct {
		name           string
		session, token string
		query          string
		want           string
	}{
		{name: "wrong token", session: relaySession, token: "guess", query: "q", want: "serves runners only"},
		{name: "another session", session: "team-b/other", token: relayToken, query: "q", want: "serves runners only"},
		{name: "provider failure", session: relaySession, token: relayToken, query: "q", want: "answered 503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := search.NewRelayClient(url, tt.session, tt.token, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Search(context.Background(), tt.query)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Search = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if len(f.queries) != 1 {
		t.Errorf("the provider got %d searches, want 1 (refused callers never reach it)", len(f.queries))
	}
	// A raw request with a bad body never reaches the provider either.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"query": ""}`))
	req.Header.Set("Authorization", "Bearer "+relayToken)
	req.Header.Set(rpc.HeaderRunnerSession, relaySession)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an empty query got %d, want 400", resp.StatusCode)
	}
}

func TestRelayBoundsSearchesInFlight(t *testing.T) {
	f := &fakeSearcher{started: make(chan struct{}), release: make(chan struct{})}
	url, _ := startRelay(t, f, 1)
	c, err := search.NewRelayClient(url, relaySession, relayToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Search(context.Background(), "first")
		done <- err
	}()
	<-f.started
	_, err = c.Search(context.Background(), "second")
	if err == nil || !strings.Contains(err.Error(), "as many searches as it may at once (1)") {
		t.Errorf("a second search while one runs = %v, want it refused as busy", err)
	}
	close(f.release)
	if err := <-done; err != nil {
		t.Errorf("the first search: %v", err)
	}
}
