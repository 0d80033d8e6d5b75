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

package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// Providers an operator may configure.
const (
	// ProviderBrave is Brave's Web Search API, with a subscription token.
	ProviderBrave = "brave"
	// ProviderSearXNG is a SearXNG instance with its JSON output enabled
	// (search.formats includes json), typically one the operator runs.
	ProviderSearXNG = "searxng"
)

// DefaultBraveEndpoint is Brave's web search endpoint.
const DefaultBraveEndpoint = "https://api.search.brave.com/res/v1/web/search"

// DefaultTimeout bounds one call to a provider.
const DefaultTimeout = 10 * time.Second

// Config is an operator's search provider.
type Config struct {
	// Provider is ProviderBrave or ProviderSearXNG.
	Provider string
	// Endpoint is the provider's search URL: for Brave default
	// DefaultBraveEndpoint; for SearXNG its /search URL, required.
	Endpoint string
	// APIKey is Brave's subscription token (required for Brave, refused
	// for SearXNG, which has none).
	APIKey string
	// Results is how many hits a search returns: 1 to MaxResults, zero is
	// DefaultResults.
	Results int
	// Timeout bounds one call; zero is DefaultTimeout.
	Timeout time.Duration
	// Transport carries the calls; nil is a transport of this package's
	// own, which honours the process's proxy environment.
	Transport http.RoundTripper
}

// New returns the provider cfg configures.
func New(cfg Config) (Searcher, error) {
	if cfg.Provider == ProviderBrave && cfg.Endpoint == "" {
		cfg.Endpoint = DefaultBraveEndpoint
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Results == 0 {
		cfg.Results = DefaultResults
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	rt := cfg.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 8
		rt = t
	}
	p := &provider{cfg: cfg, http: &http.Client{Transport: rt, Timeout: cfg.Timeout}}
	return p, nil
}

func (c Config) validate() error {
	switch c.Provider {
	case ProviderBrave:
		if c.APIKey == "" {
			return errors.New("search: the brave provider needs an API key (its subscription token)")
		}
	case ProviderSearXNG:
		if c.Endpoint == "" {
			return errors.New("search: the searxng provider needs an endpoint, the instance's /search URL")
		}
		if c.APIKey != "" {
			return errors.New("search: the searxng provider takes no API key")
		}
	default:
		return fmt.Errorf("search: provider %q: want %s or %s", c.Provider, ProviderBrave, ProviderSearXNG)
	}
	u, err := url.Parse(c.Endpoint)
	switch {
	case err != nil:
		return fmt.Errorf("search: endpoint: %w", err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return fmt.Errorf("search: endpoint %q: want an absolute http or https URL", c.Endpoint)
	case u.User != nil:
		return errors.New("search: endpoint: credentials in the URL are refused; give the key as the API key")
	case u.Fragment != "":
		return fmt.Errorf("search: endpoint %q: no fragment", c.Endpoint)
	}
	if c.Results < 0 || c.Results > MaxResults {
		return fmt.Errorf("search: results %d: want 1 to %d", c.Results, MaxResults)
	}
	if c.Timeout < 0 {
		return errors.New("search: timeout must not be negative")
	}
	return nil
}

type provider struct {
	cfg  Config
	http *http.Client
}

// Search calls the provider once; no retries, the agent decides.
func (p *provider) Search(ctx context.Context, query string) ([]Result, error) {
	if err := CheckQuery(query); err != nil {
		return nil, err
	}
	u, _ := url.Parse(p.cfg.Endpoint) // validated in New
	q := u.Query()
	q.Set("q", query)
	switch p.cfg.Provider {
	case ProviderBrave:
		q.Set("count", strconv.Itoa(p.cfg.Results))
	case ProviderSearXNG:
		q.Set("format", "json")
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if p.cfg.Provider == ProviderBrave {
		req.Header.Set("X-Subscription-Token", p.cfg.APIKey)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		// Only the request's URL and the transport's error: the key
		// travels in a header, which errors never show.
		return nil, fmt.Errorf("search provider %s: %w", p.cfg.Provider, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		// The body is not repeated: it is the provider's, unbounded in
		// what it says.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("search provider %s answered %s", p.cfg.Provider, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProviderBytes+1))
	if err != nil {
		return nil, fmt.Errorf("search provider %s: reading the answer: %w", p.cfg.Provider, err)
	}
	if len(body) > maxProviderBytes {
		return nil, fmt.Errorf("search provider %s: the answer is larger than %d bytes", p.cfg.Provider, maxProviderBytes)
	}
	var hits []Result
	switch p.cfg.Provider {
	case ProviderBrave:
		hits, err = decodeBrave(body)
	case ProviderSearXNG:
		hits, err = decodeSearXNG(body)
	}
	if err != nil {
		return nil, fmt.Errorf("search provider %s: %w", p.cfg.Provider, err)
	}
	return clean(hits, p.cfg.Results), nil
}

// decodeBrave reads the web results of Brave's answer
// (https://api-dashboard.search.brave.com/app/documentation/web-search/responses).
func decodeBrave(body []byte) ([]Result, error) {
	var a struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("the answer is not Brave's JSON: %w", err)
	}
	out := make([]Result, 0, len(a.Web.Results))
	for _, r := range a.Web.Results {
		out = append(out, Result{Title: plain(r.Title), URL: r.URL, Description: plain(r.Description)})
	}
	return out, nil
}

// decodeSearXNG reads SearXNG's JSON output (format=json).
func decodeSearXNG(body []byte) ([]Result, error) {
	var a struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("the answer is not SearXNG's JSON: %w", err)
	}
	out := make([]Result, 0, len(a.Results))
	for _, r := range a.Results {
		out = append(out, Result{Title: plain(r.Title), URL: r.URL, Description: plain(r.Content)})
	}
	return out, nil
}

// tags matches the markup providers put in snippets (Brave bolds the
// query's words).
var tags = regexp.MustCompile(`<[^>]*>`)

// plain is a snippet as text.
func plain(s string) string { return html.UnescapeString(tags.ReplaceAllString(s, "")) }
