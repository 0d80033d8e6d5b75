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
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"

	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// The cloud handle's wire: what the library sends is held to the service's
// OpenAPI document with the server's own validator (the library may not
// import the server; its tests may), and so are the answers the fake
// service below gives it.

const (
	testKey     = "svc-key-of-the-handle"
	testSession = "0b8e6f2c-5d1a-4c1e-9a43-3b2f8d7e6a11"
	testAction  = "0b8e6f2c-5d1a-4c1e-9a43-3b2f8d7e6a12"
)

// svcRequest is one request the fake service got.
type svcRequest struct {
	method, path string
	header       http.Header
	body         map[string]any
}

// fakeService answers /v1 as the service would, holding every request and
// answer to the OpenAPI document.
type fakeService struct {
	t   *testing.T
	v   *serverv1.Validator
	srv *httptest.Server

	mu   sync.Mutex
	seen []svcRequest
	// raw, when set, serves the requests instead, unchecked: a proxy's
	// answer, a service that hangs.
	raw http.HandlerFunc
}

// serveRaw makes h serve the fake's requests from now on.
func (f *fakeService) serveRaw(h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.raw = h
}

func newFakeService(t *testing.T) *fakeService {
	t.Helper()
	v, err := serverv1.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeService{t: t, v: v}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// patternOf is the OpenAPI path of a request.
func patternOf(path string) string {
	if path == "/v1/sessions/start" {
		return path
	}
	rest, ok := strings.CutPrefix(path, "/v1/sessions/")
	if !ok {
		return path
	}
	if _, endpoint, ok := strings.Cut(rest, "/"); ok {
		return "/v1/sessions/{id}/" + endpoint
	}
	return "/v1/sessions/{id}"
}

const cannedMetadata = `{"cache":{"status":"DISABLED"},"usage":{"inputTokens":120,"outputTokens":7,"reasoningTokens":2,"cachedInputTokens":30,"inferenceTimeMs":45}}`

func cannedAnswer(pattern string) string {
	switch pattern {
	case "/v1/sessions/start":
		return `{"success":true,"data":{"sessionId":"` + testSession + `","cdpUrl":"ws://127.0.0.1:1/x","available":true}}`
	case "/v1/sessions/{id}/act":
		return `{"success":true,"data":{"result":{"success":true,"message":"done","actionDescription":"the button",` +
			`"actions":[{"selector":"xpath=/html/body/button","description":"the button","method":"click","arguments":[]}]},` +
			`"actionId":"` + testAction + `","metadata":` + cannedMetadata + `}}`
	case "/v1/sessions/{id}/observe":
		return `{"success":true,"data":{"result":[{"selector":"xpath=/html/body/a","description":"a link","method":"click","arguments":[]}],` +
			`"actionId":"` + testAction + `","metadata":` + cannedMetadata + `}}`
	case "/v1/sessions/{id}/extract":
		return `{"success":true,"data":{"result":{"title":"Example"},"actionId":"` + testAction + `","metadata":` + cannedMetadata + `}}`
	case "/v1/sessions/{id}/end":
		return `{"success":true}`
	}
	return `{"success":false,"error":"no such route","code":"NOT_FOUND"}`
}

func (f *fakeService) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	h := f.raw
	f.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	pattern := patternOf(r.URL.Path)
	if err := f.v.ValidateRequest(r.Method, pattern, raw); err != nil {
		f.t.Errorf("the library sent a body the document refuses: %v\n%s", err, raw)
	}
	var body map[string]any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &body)
	}
	f.mu.Lock()
	f.seen = append(f.seen, svcRequest{r.Method, r.URL.Path, r.Header.Clone(), body})
	f.mu.Unlock()
	out := cannedAnswer(pattern)
	if err := f.v.ValidateResponse(r.Method, pattern, http.StatusOK, "application/json", []byte(out)); err != nil {
		f.t.Errorf("the fake answered what the document refuses: %v", err)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, out)
}

func (f *fakeService) requests() []svcRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]svcRequest(nil), f.seen...)
}

func (f *fakeService) last() svcRequest {
	f.t.Helper()
	s := f.requests()
	if len(s) == 0 {
		f.t.Fatal("the service got no request")
	}
	return s[len(s)-1]
}

// runtimeFor opens a cloud runtime on the fake for cfg.
func runtimeFor(t *testing.T, f *fakeService, cfg *instanceConfig) runtime {
	t.Helper()
	api, err := newCloudAPI(f.srv.URL, testKey)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := (&cloudDriver{api: api, sessionID: testSession}).open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// asJSON is v as decoded JSON, to compare with what the fake saw.
func asJSON(t *testing.T, v string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		t.Fatalf("%s: %v", v, err)
	}
	return m
}

func TestStartBody(t *testing.T) {
	v, err := serverv1.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts CloudBrowserLaunchOptions
		want string
	}{
		{"model only", CloudBrowserLaunchOptions{ModelName: "openai/gpt-4.1-mini"},
			`{"modelName":"openai/gpt-4.1-mini","browser":{"type":"cloud"}}`},
		{"no model: the gateway's", CloudBrowserLaunchOptions{},
			`{"browser":{"type":"cloud"}}`},
		{"the session's cache, on", CloudBrowserLaunchOptions{ModelName: "openai/gpt-4.1-mini", Cache: CacheEnabled(true)},
			`{"modelName":"openai/gpt-4.1-mini","browser":{"type":"cloud"},"cache":true}`},
		{"the session's cache, with a threshold", CloudBrowserLaunchOptions{Cache: CacheWithThreshold(3)},
			`{"browser":{"type":"cloud"},"cache":{"threshold":3}}`},
		{"every field", CloudBrowserLaunchOptions{
			ModelName: "anthropic/claude-sonnet-4-5",
			BrowserSettings: &CloudBrowserSettings{
				BlockAds: true, SolveCaptchas: true, Viewport: &Viewport{Width: 1024, Height: 768}, AdvancedStealth: true,
				CaptchaImageSelector: "#captcha img", CaptchaInputSelector: "#captcha input",
				Context: &CloudBrowserContext{ID: "ctx-1", Persist: true}, ExtensionID: "ext-1",
				Fingerprint: &CloudFingerprint{Browsers: []string{"chrome"}, Devices: []string{"desktop"}, HTTPVersion: "2",
					Locales: []string{"en-US"}, OperatingSystems: []string{"linux"}, Screen: &CloudScreen{MinWidth: 800, MaxWidth: 1920}},
				LogSession: true, RecordSession: true, OS: "linux", Verified: true,
			},
			Proxies:      ProxiesEnabled(),
			Region:       "eu-central-1",
			Timeout:      90*time.Minute + 500*time.Millisecond,
			KeepAlive:    true,
			UserMetadata: map[string]json.RawMessage{"team": json.RawMessage(`"qa"`), "run": json.RawMessage(`7`)},
		}, `{"modelName":"anthropic/claude-sonnet-4-5","browser":{"type":"cloud"},"cloudSessionCreateParams":{
			"browserSettings":{"advancedStealth":true,"blockAds":true,"captchaImageSelector":"#captcha img","captchaInputSelector":"#captcha input",
				"context":{"id":"ctx-1","persist":true},"extensionId":"ext-1",
				"fingerprint":{"browsers":["chrome"],"devices":["desktop"],"httpVersion":"2","locales":["en-US"],"operatingSystems":["linux"],
					"screen":{"maxWidth":1920,"minWidth":800}},
				"logSession":true,"os":"linux","recordSession":true,"solveCaptchas":true,"verified":true,"viewport":{"width":1024,"height":768}},
			"keepAlive":true,"proxies":true,"region":"eu-central-1","timeout":5401,"userMetadata":{"team":"qa","run":7}}}`},
		{"a list of proxies", CloudBrowserLaunchOptions{ModelName: "openai/gpt-4.1-mini", Proxies: &CloudProxies{Enabled: true, List: []CloudProxy{
			{Type: CloudProxyService, Geolocation: &CloudProxyGeolocation{Country: "DE", City: "Berlin"}},
			{Type: CloudProxyExternal, Server: "http://proxy.example:3128", Username: "u", Password: "p", DomainPattern: "*.example.com"},
		}}}, `{"modelName":"openai/gpt-4.1-mini","browser":{"type":"cloud"},"cloudSessionCreateParams":{"proxies":[
			{"type":"cloud","geolocation":{"country":"DE","city":"Berlin"}},
			{"type":"external","domainPattern":"*.example.com","server":"http://proxy.example:3128","username":"u","password":"p"}]}}`},
		{"an empty list of proxies is none", CloudBrowserLaunchOptions{ModelName: "openai/gpt-4.1-mini", Proxies: &CloudProxies{List: []CloudProxy{}}},
			`{"modelName":"openai/gpt-4.1-mini","browser":{"type":"cloud"},"cloudSessionCreateParams":{"proxies":[]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := startBody(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(body)
			if err := v.ValidateRequest(http.MethodPost, "/v1/sessions/start", raw); err != nil {
				t.Errorf("the document refuses the body: %v\n%s", err, raw)
			}
			if diff := cmp.Diff(asJSON(t, tt.want), asJSON(t, string(raw))); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStartBodyRefusals(t *testing.T) {
	tests := []struct {
		name string
		opts CloudBrowserLaunchOptions
		want string
	}{
		{"a threshold of zero", CloudBrowserLaunchOptions{Cache: CacheWithThreshold(0)}, "invalid argument: CloudBrowserLaunchOptions.Cache: the threshold must be"},
		{"a threshold over the bound", CloudBrowserLaunchOptions{Cache: CacheWithThreshold(1001)}, "invalid argument: CloudBrowserLaunchOptions.Cache: the threshold must be"},
		{"negative timeout", CloudBrowserLaunchOptions{ModelName: "openai/x", Timeout: -time.Second}, "invalid argument: Timeout: must not be negative"},
		{"over a week", CloudBrowserLaunchOptions{ModelName: "openai/x", Timeout: 8 * 24 * time.Hour}, "invalid argument: Timeout: must be at most 168h0m0s"},
	}
	for _, tt := range tests {
		_, err := startBody(tt.opts)
		if !errors.Is(err, ErrInvalidArgument) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestServiceOrigin(t *testing.T) {
	tests := []struct {
		raw, want, err string
	}{
		{"https://fleet.example.com", "https://fleet.example.com", ""},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080", ""},
		{"https://gw.example.com/browserfleet/", "https://gw.example.com/browserfleet", ""},
		{"", "", "APIURL: required"},
		{"https://fleet.example.com/v1", "", "APIURL: give the service's origin without the /v1 suffix"},
		{"ftp://fleet.example.com", "", "APIURL: must be an http or https URL with a host"},
		{"fleet.example.com", "", "APIURL: must be an http or https URL with a host"},
		{"https://user:pw@fleet.example.com", "", "APIURL: must be the service's origin, without credentials"},
	}
	for _, tt := range tests {
		got, err := serviceOrigin(tt.raw)
		if tt.err != "" {
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("serviceOrigin(%q) = %v, want an error with %q", tt.raw, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("serviceOrigin(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
		}
	}
	t.Setenv(EnvAPIURL, "http://from-the-env.example")
	t.Setenv(EnvAPIKey, "env-key")
	api, err := newCloudAPI("", "")
	if err != nil || api.base != "http://from-the-env.example" || api.key != "env-key" {
		t.Errorf("from the environment: %+v, %v", api, err)
	}
	t.Setenv(EnvAPIKey, "")
	if _, err := newCloudAPI("http://x.example", ""); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "APIKey") {
		t.Errorf("no key: %v, want an error naming APIKey", err)
	}
}

func TestCloudOperations(t *testing.T) {
	f := newFakeService(t)
	page := &Page{id: "TAB-2"}
	cfg := &instanceConfig{systemPrompt: "be brief", selfHeal: true, domSettleTimeout: 1500 * time.Millisecond}
	rt := runtimeFor(t, f, cfg)
	model := &ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: "sk-model", Headers: map[string]string{"X-Team": "qa"}, BaseURL: "http://llm.example/v1"}
	common := opCall{model: model, selector: "#main", ignore: []string{".ads"}, timeout: 2500 * time.Millisecond,
		variables: Variables{"user": {Value: "ada", Description: "the user's name"}}}
	wantMetadata := Metadata{Cache: CacheMetadata{Status: CacheStatusDISABLED}, ActionID: testAction,
		Usage: Usage{InputTokens: 120, OutputTokens: 7, ReasoningTokens: 2, CachedInputTokens: 30, InferenceTimeMs: 45}}
	wantModel := map[string]any{"modelName": "openai/gpt-4.1-mini", "apiKey": "sk-model", "headers": map[string]any{"X-Team": "qa"}, "baseURL": "http://llm.example/v1"}
	ctx := context.Background()

	t.Run("act by instruction", func(t *testing.T) {
		res, err := rt.act(ctx, page, actCall{opCall: common, instruction: "click %user%'s profile"})
		if err != nil {
			t.Fatal(err)
		}
		want := &ActResult{Data: ActData{ActionDescription: "the button", Message: "done", Success: true,
			Actions: []Action{{Selector: "xpath=/html/body/button", Description: "the button", Method: "click", Arguments: []string{}}}}, Metadata: wantMetadata}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		got := f.last()
		wantBody := map[string]any{"input": "click %user%'s profile", "frameId": "TAB-2", "options": map[string]any{
			"model": wantModel, "selector": "#main", "ignoreSelectors": []any{".ads"}, "timeout": 2500.0,
			"variables":    map[string]any{"user": map[string]any{"value": "ada", "description": "the user's name"}},
			"systemPrompt": "be brief", "domSettleTimeoutMs": 1500.0, "selfHeal": true}}
		if diff := cmp.Diff(wantBody, got.body); diff != "" {
			t.Errorf("body (-want +got):\n%s", diff)
		}
		if got.path != "/v1/sessions/"+testSession+"/act" || got.header.Get(headerAPIKey) != testKey {
			t.Errorf("sent %s with key %q", got.path, got.header.Get(headerAPIKey))
		}
	})

	t.Run("act with an observed action", func(t *testing.T) {
		action := Action{Selector: "xpath=/html/body/a", Description: "a link", Method: "click", Arguments: []string{}}
		if _, err := rt.act(ctx, page, actCall{action: &action}); err != nil {
			t.Fatal(err)
		}
		wantBody := map[string]any{"input": map[string]any{"selector": "xpath=/html/body/a", "description": "a link", "method": "click"},
			"frameId": "TAB-2", "options": map[string]any{"systemPrompt": "be brief", "domSettleTimeoutMs": 1500.0, "selfHeal": true}}
		if diff := cmp.Diff(wantBody, f.last().body); diff != "" {
			t.Errorf("body (-want +got):\n%s", diff)
		}
	})

	t.Run("observe", func(t *testing.T) {
		res, err := rt.observe(ctx, page, observeCall{opCall: common, instruction: "find links"})
		if err != nil {
			t.Fatal(err)
		}
		want := &ObserveResult{Data: []Action{{Selector: "xpath=/html/body/a", Description: "a link", Method: "click", Arguments: []string{}}}, Metadata: wantMetadata}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		opts := f.last().body["options"].(map[string]any)
		if _, ok := opts["selfHeal"]; ok {
			t.Error("observe sent act's selfHeal")
		}
		if diff := cmp.Diff(wantModel, opts["model"]); diff != "" {
			t.Errorf("model (-want +got):\n%s", diff)
		}
	})

	t.Run("extract", func(t *testing.T) {
		schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)
		data, md, err := rt.extract(ctx, page, extractCall{opCall: common, instruction: "the title", schema: schema, screenshot: true})
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != `{"title":"Example"}` {
			t.Errorf("data %s", data)
		}
		if diff := cmp.Diff(wantMetadata, md); diff != "" {
			t.Errorf("metadata (-want +got):\n%s", diff)
		}
		body := f.last().body
		opts := body["options"].(map[string]any)
		if _, ok := opts["variables"]; ok {
			t.Error("extract sent variables, which are not extract's")
		}
		if opts["screenshot"] != true || body["instruction"] != "the title" || body["schema"] == nil {
			t.Errorf("body %v", body)
		}
	})

	t.Run("no page, no settings", func(t *testing.T) {
		bare := runtimeFor(t, f, &instanceConfig{})
		if _, err := bare.observe(ctx, nil, observeCall{}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{"options": map[string]any{}}, f.last().body); diff != "" {
			t.Errorf("body (-want +got):\n%s", diff)
		}
	})
}

func TestCloudInstanceKeyAndTrace(t *testing.T) {
	f := newFakeService(t)
	rt := runtimeFor(t, f, &instanceConfig{apiKey: "the-instance's-key"})
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	if _, err := rt.observe(ctx, nil, observeCall{}); err != nil {
		t.Fatal(err)
	}
	h := f.last().header
	if got := h.Get(headerAPIKey); got != "the-instance's-key" {
		t.Errorf("key %q, want the instance's", got)
	}
	if got := h.Get("traceparent"); got != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Errorf("traceparent %q", got)
	}
}

func TestCloudRefusals(t *testing.T) {
	f := newFakeService(t)
	rt := runtimeFor(t, f, &instanceConfig{})
	tests := []struct {
		name   string
		status int
		body   string
		want   *APIError
	}{
		{"a refused body, with its issues", http.StatusBadRequest,
			`{"success":false,"error":"invalid request body","code":"INVALID_REQUEST","issues":[{"path":"options.timeout","message":"must be at most 600000"}]}`,
			&APIError{StatusCode: 400, Code: "INVALID_REQUEST", Message: "invalid request body", Issues: []APIIssue{{Path: "options.timeout", Message: "must be at most 600000"}}}},
		{"a session that ended", http.StatusConflict, `{"success":false,"error":"session x has ended","code":"SESSION_ENDED"}`,
			&APIError{StatusCode: 409, Code: "SESSION_ENDED", Message: "session x has ended"}},
		{"a proxy's page", http.StatusBadGateway, `<html>bad gateway</html>`,
			&APIError{StatusCode: 502, Message: "Bad Gateway"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Answered raw: a proxy's page is not the document's.
			f.serveRaw(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			_, err := rt.act(context.Background(), nil, actCall{instruction: "x"})
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err %v, want an *APIError", err)
			}
			if diff := cmp.Diff(tt.want, apiErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCloudAnswersAreBounded(t *testing.T) {
	f := newFakeService(t)
	rt := runtimeFor(t, f, &instanceConfig{})
	f.serveRaw(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"success":true,"data":{"result":{"pageText":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range maxAnswerBytes>>20 + 1 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, `"}}}`)
	})
	_, _, err := rt.extract(context.Background(), nil, extractCall{})
	if !errors.Is(err, errTooLarge) {
		t.Errorf("err %v, want the answer refused as too large", err)
	}
}

func TestCloudCancel(t *testing.T) {
	f := newFakeService(t)
	rt := runtimeFor(t, f, &instanceConfig{})
	arrived, gone, end := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(end)
	f.serveRaw(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a caller that went away once it has read
		// the body, as the service does.
		_, _ = io.ReadAll(r.Body)
		close(arrived)
		select {
		case <-r.Context().Done():
			close(gone)
		case <-end:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := rt.act(ctx, nil, actCall{instruction: "wait"})
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	select {
	case <-gone:
	case <-time.After(60 * time.Second):
		t.Fatal("the service never saw the call go away")
	}
}

func TestCloudDriver(t *testing.T) {
	f := newFakeService(t)
	api, err := newCloudAPI(f.srv.URL, testKey)
	if err != nil {
		t.Fatal(err)
	}
	gen := func(context.Context, GenerateRequest) (GenerateResult, error) { return GenerateResult{}, nil }
	_, err = (&cloudDriver{api: api, sessionID: testSession}).open(context.Background(), &instanceConfig{generate: gen})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "Generate") {
		t.Errorf("open with Generate: %v, want ErrInvalidArgument naming Generate", err)
	}
	if _, err := (&cloudDriver{api: api}).open(context.Background(), &instanceConfig{apiURL: "https://x.example/v1"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("open with a bad APIURL: %v", err)
	}
	long := &instanceConfig{systemPrompt: strings.Repeat("é", maxCloudSystemPrompt+1)}
	if _, err := (&cloudDriver{api: api}).open(context.Background(), long); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "SystemPrompt") {
		t.Errorf("open with a prompt over the service's bound: %v", err)
	}

	// A connected session is only let go; a launched one is ended.
	if err := (&cloudDriver{api: api, sessionID: testSession}).close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("closing a connected handle made %d requests", n)
	}
	if err := (&cloudDriver{api: api, sessionID: testSession, launched: true}).close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.last(); got.method != http.MethodPost || got.path != "/v1/sessions/"+testSession+"/end" {
		t.Errorf("closing a launched handle sent %s %s", got.method, got.path)
	}
}

func TestCacheWire(t *testing.T) {
	tests := []struct {
		name string
		c    *Caching
		want string
	}{
		{"none: the session's", nil, `null`},
		{"off", CacheEnabled(false), `false`},
		{"on", CacheEnabled(true), `true`},
		{"a threshold", CacheWithThreshold(4), `{"threshold":4}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(cacheWire(tt.c))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(raw)); diff != "" {
				t.Errorf("wire (-want +got):\n%s", diff)
			}
		})
	}
}
