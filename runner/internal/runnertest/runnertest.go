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

// Package runnertest holds what the runner's tests share: a session's
// configuration with loopback allowed, a logger that prints on failure, page
// servers on 127.0.0.1 and an RPC client. Product code never imports it.
package runnertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Token is the runner token of test sessions.
const Token = "test-token-6f1c2b9a7d"

// SyncBuffer collects a test's logs; background goroutines may still log
// after the test ends, which t.Log would not allow.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logger logs at debug level into a buffer that is printed when the test
// fails.
func Logger(t *testing.T) (*slog.Logger, *SyncBuffer) {
	t.Helper()
	buf := &SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("runner log:\n%s", buf.String())
		}
	})
	return SlogTo(buf), buf
}

// SlogTo logs at debug level to w.
func SlogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// LoopbackEgress is the egress policy of most tests: their pages, proxies
// and model server listen on loopback, which the operator allows as make
// dev does.
func LoopbackEgress() *egress.Policy {
	return egress.NewPolicy(egress.Config{AllowCIDRs: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
	}})
}

// HostsResolver answers localhost, as /etc/hosts does, and nothing else: no
// test sends a DNS query, not even for the hosts Chromium calls home to.
type HostsResolver struct{}

// LookupNetIP answers localhost only.
func (HostsResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	if host == "localhost" && network != "ip6" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host (tests resolve localhost only)", Name: host, IsNotFound: true}
}

// Config is a session with a local browser, loopback allowed and
// localhost the only name; mutate adjusts its spec.
func Config(mutate func(*v1alpha1.BrowserSessionSpec)) *config.Config {
	cfg := &config.Config{
		SessionName:  "test-session",
		Namespace:    "default",
		Token:        config.NewSecret(Token),
		ChromiumPath: config.DefaultChromiumPath,
		// As a runner pod: the headless-only build for headless sessions
		// where it is installed (.ci/run installs it), else Chromium.
		HeadlessShellPath: config.DefaultHeadlessShellPath,
		ShutdownTimeout:   10 * time.Second,
		Egress:            LoopbackEgress(),
		Resolver:          HostsResolver{},
		Spec: v1alpha1.BrowserSessionSpec{
			Model: v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini"},
			Browser: &v1alpha1.BrowserConfig{
				Type:          v1alpha1.BrowserTypeLocal,
				LaunchOptions: &v1alpha1.LaunchOptions{},
			},
		},
	}
	if mutate != nil {
		mutate(&cfg.Spec)
	}
	return cfg
}

// SecretVolume writes files as the kubelet lays out a Secret volume: the
// files, mode 0400, in a timestamped directory that ..data links to, and
// each name a link through ..data. It returns the volume's directory.
func SecretVolume(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "..2026_11_23_09_00_00.000000001")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, value := range files {
		if err := os.WriteFile(filepath.Join(data, name), []byte(value), 0o400); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// AttachConfig is Config for a session attached to the browser at
// cdpURL with headers: the values of its cdpUrlSecretRef and
// cdpHeadersSecretRef, as the runner gets them; mutate adjusts its launch
// options.
func AttachConfig(cdpURL string, headers map[string]string, mutate func(*v1alpha1.LaunchOptions)) *config.Config {
	cfg := Config(func(s *v1alpha1.BrowserSessionSpec) {
		s.Browser.CDPURLSecretRef = &v1alpha1.SecretKeyReference{Name: "request", Key: "cdp-url"}
		if len(headers) > 0 {
			s.Browser.LaunchOptions.CDPHeadersSecretRef = &v1alpha1.SecretKeyReference{Name: "request", Key: "cdp-headers"}
		}
		if mutate != nil {
			mutate(s.Browser.LaunchOptions)
		}
	})
	cfg.Secrets.CDPURL = config.NewSecret(cdpURL)
	for k, v := range headers {
		if cfg.Secrets.CDPHeaders == nil {
			cfg.Secrets.CDPHeaders = map[string]config.Secret{}
		}
		cfg.Secrets.CDPHeaders[k] = config.NewSecret(v)
	}
	return cfg
}

// LaunchOptions adjusts a session's launch options.
func LaunchOptions(mutate func(*v1alpha1.LaunchOptions)) func(*v1alpha1.BrowserSessionSpec) {
	return func(s *v1alpha1.BrowserSessionSpec) { mutate(s.Browser.LaunchOptions) }
}

// CloudSettings makes the session a cloud one (which also runs on the
// runner pod) with browserSettings bs: os, fingerprint and blockAds exist
// only there.
func CloudSettings(bs *v1alpha1.BrowserSettings) func(*v1alpha1.BrowserSessionSpec) {
	return CloudParams(&v1alpha1.CloudSessionCreateParams{BrowserSettings: bs})
}

// CloudParams makes the session a cloud one with params p.
func CloudParams(p *v1alpha1.CloudSessionCreateParams) func(*v1alpha1.BrowserSessionSpec) {
	return func(s *v1alpha1.BrowserSessionSpec) {
		s.Browser = &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeCloud}
		s.CloudSessionCreateParams = p
	}
}

// PageServer serves html at / and records the requests it gets.
type PageServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
}

// NewPageServer serves handler on loopback until the test ends.
func NewPageServer(t testing.TB, handler http.Handler) *PageServer {
	t.Helper()
	return NewPageServerOn(t, "127.0.0.1", handler)
}

// NewPageServerOn serves handler on ip until the test ends.
func NewPageServerOn(t testing.TB, ip string, handler http.Handler) *PageServer {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	ps := &PageServer{}
	ps.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		ps.requests = append(ps.requests, r.Clone(context.Background()))
		ps.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	ps.Listener = ln
	ps.Start()
	t.Cleanup(ps.Close)
	return ps
}

// Seen returns the requests that match.
func (ps *PageServer) Seen(match func(*http.Request) bool) []*http.Request {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out []*http.Request
	for _, r := range ps.requests {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}

// HTMLHandler serves body as HTML.
func HTMLHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, body)
	})
}

// Client calls a runner's RPC.
type Client struct {
	// Base is the runner's URL; Token its runner token, none when empty.
	Base  string
	Token string
}

// Call posts body to path and decodes a plain response: the status and the
// raw body.
func (c Client) Call(ctx context.Context, path string, body any) (int, []byte, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+path, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", rpc.ContentTypeJSON)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// MustCall is Call with a test timeout; it fails the test on a transport
// error.
func (c Client) MustCall(t *testing.T, path string, body any) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	status, out, err := c.Call(ctx, path, body)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return status, out
}

// Stream posts body asking for NDJSON and returns the status, the
// headers and the lines.
func (c Client) Stream(ctx context.Context, path string, body any) (int, http.Header, []rpc.StreamLine, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+path, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", rpc.ContentTypeNDJSON)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var lines []rpc.StreamLine
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l rpc.StreamLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return resp.StatusCode, resp.Header, lines, fmt.Errorf("line %q is not a stream line: %w", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return resp.StatusCode, resp.Header, lines, sc.Err()
}

// DecodeError decodes an RPC error body, failing the test on another.
func DecodeError(t *testing.T, body []byte) *rpc.Error {
	t.Helper()
	var e rpc.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Code == "" {
		t.Fatalf("body %s is not an error body: %v", body, err)
	}
	return &e
}

// WaitFor polls cond for up to a minute, failing the test after.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Want fails the test when got is not want.
func Want[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// WantContains fails the test when got lacks one of subs.
func WantContains(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("%s = %q, want it to contain %q", what, got, s)
		}
	}
}

// WantNotContains fails the test when got has one of subs.
func WantNotContains(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(got, s) {
			t.Errorf("%s = %q, want it not to contain %q", what, got, s)
		}
	}
}

// AuthProxy is a forward HTTP proxy that wants Basic credentials (unless
// user is empty) and sends every request it lets through to backend,
// whatever its host.
type AuthProxy struct {
	user, password string
	backend        *url.URL

	mu       sync.Mutex
	attempts []string // decoded "user:password" of each Proxy-Authorization
	refused  int
	served   int
}

// NewAuthProxy starts an AuthProxy until the test ends.
func NewAuthProxy(t *testing.T, user, password string, backend string) (*AuthProxy, *httptest.Server) {
	t.Helper()
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	p := &AuthProxy{user: user, password: password, backend: u}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv
}

// ServeHTTP checks the credentials and forwards.
func (p *AuthProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	creds, hasCreds := "", false
	if scheme, enc, ok := strings.Cut(r.Header.Get("Proxy-Authorization"), " "); ok && strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(enc); err == nil {
			creds, hasCreds = string(dec), true
		}
	}
	p.mu.Lock()
	if hasCreds {
		p.attempts = append(p.attempts, creds)
	}
	ok := p.user == "" || (hasCreds && creds == p.user+":"+p.password)
	if !ok {
		p.refused++
	} else {
		p.served++
	}
	p.mu.Unlock()
	if !ok {
		w.Header().Set("Proxy-Authenticate", `Basic realm="browserfleet-test"`)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect || !r.URL.IsAbs() {
		http.Error(w, "this test proxy forwards plain http only", http.StatusMethodNotAllowed)
		return
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Scheme, pr.Out.URL.Host = p.backend.Scheme, p.backend.Host
		pr.Out.Host = r.Host // the backend sees the host the page asked for
		pr.Out.Header.Del("Proxy-Authorization")
	}}
	rp.ServeHTTP(w, r)
}

// Stats returns the credentials each request offered, and how many were
// refused and served.
func (p *AuthProxy) Stats() (attempts []string, refused, served int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.attempts...), p.refused, p.served
}
