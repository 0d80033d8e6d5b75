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
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Every test here drives a real Chromium (Debian's, at DefaultChromiumPath)
// on pages served on 127.0.0.1. None skips: a runner that cannot launch its
// browser is broken, and the tests say so.

const testToken = "test-token-6f1c2b9a7d"

// syncBuffer collects a test's logs; background goroutines may still log
// after the test ends, which t.Log would not allow.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testLogger logs at debug level into a buffer that is printed when the test
// fails.
func testLogger(t *testing.T) (*slog.Logger, *syncBuffer) {
	t.Helper()
	buf := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("runner log:\n%s", buf.String())
		}
	})
	return slogTo(buf), buf
}

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// loopbackEgress is the egress policy of most tests: their pages, proxies
// and model server listen on loopback, which the operator allows as make
// dev does.
func loopbackEgress() *egress.Policy {
	return egress.NewPolicy(egress.Config{AllowCIDRs: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
	}})
}

// hostsResolver answers localhost, as /etc/hosts does, and nothing else: no
// test sends a DNS query, not even for the hosts Chromium calls home to.
type hostsResolver struct{}

func (hostsResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	if host == "localhost" && network != "ip6" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host (tests resolve localhost only)", Name: host, IsNotFound: true}
}

// testConfig is a session with a local browser, loopback allowed and
// localhost the only name; mutate adjusts its spec.
func testConfig(mutate func(*v1alpha1.BrowserSessionSpec)) *Config {
	cfg := &Config{
		SessionName:     "test-session",
		Namespace:       "default",
		Token:           NewSecret(testToken),
		ChromiumPath:    DefaultChromiumPath,
		ShutdownTimeout: 10 * time.Second,
		Egress:          loopbackEgress(),
		Resolver:        hostsResolver{},
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

// secretVolume writes files as the kubelet lays out a Secret volume: the
// files, mode 0400, in a timestamped directory that ..data links to, and
// each name a link through ..data. It returns the volume's directory.
func secretVolume(t *testing.T, files map[string]string) string {
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

// attachConfig is testConfig for a session attached to the browser at
// cdpURL with headers: the values of its cdpUrlSecretRef and
// cdpHeadersSecretRef, as the runner gets them; mutate adjusts its launch
// options.
func attachConfig(cdpURL string, headers map[string]string, mutate func(*v1alpha1.LaunchOptions)) *Config {
	cfg := testConfig(func(s *v1alpha1.BrowserSessionSpec) {
		s.Browser.CDPURLSecretRef = &v1alpha1.SecretKeyReference{Name: "request", Key: "cdp-url"}
		if len(headers) > 0 {
			s.Browser.LaunchOptions.CDPHeadersSecretRef = &v1alpha1.SecretKeyReference{Name: "request", Key: "cdp-headers"}
		}
		if mutate != nil {
			mutate(s.Browser.LaunchOptions)
		}
	})
	cfg.Secrets.CDPURL = NewSecret(cdpURL)
	for k, v := range headers {
		if cfg.Secrets.CDPHeaders == nil {
			cfg.Secrets.CDPHeaders = map[string]Secret{}
		}
		cfg.Secrets.CDPHeaders[k] = NewSecret(v)
	}
	return cfg
}

func launchOptions(mutate func(*v1alpha1.LaunchOptions)) func(*v1alpha1.BrowserSessionSpec) {
	return func(s *v1alpha1.BrowserSessionSpec) { mutate(s.Browser.LaunchOptions) }
}

// cloudSettings makes the session a cloud one (which also runs on the
// runner pod) with browserSettings bs: os, fingerprint and blockAds exist
// only there.
func cloudSettings(bs *v1alpha1.BrowserSettings) func(*v1alpha1.BrowserSessionSpec) {
	return cloudParams(&v1alpha1.CloudSessionCreateParams{BrowserSettings: bs})
}

func cloudParams(p *v1alpha1.CloudSessionCreateParams) func(*v1alpha1.BrowserSessionSpec) {
	return func(s *v1alpha1.BrowserSessionSpec) {
		s.Browser = &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeCloud}
		s.CloudSessionCreateParams = p
	}
}

func ptrTo[T any](v T) *T { return &v }

// startTestBrowser starts cfg's browser and closes it when the test ends.
func startTestBrowser(t *testing.T, cfg *Config) *Browser {
	t.Helper()
	log, _ := testLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := StartBrowser(ctx, cfg, log)
	if err != nil {
		t.Fatalf("StartBrowser: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// testPage is a Page on b's tab for one test step.
func testPage(ctx context.Context, b *Browser) *Page {
	return b.pageFor(b.tabContext(ctx), 0)
}

// navigate loads url in b's tab with the runner's Navigate.
func navigate(t *testing.T, b *Browser, url string) (*rpc.NavigateResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := testPage(ctx, b)
	return Navigate(p.Context(), p, rpc.NavigateRequest{URL: url}, nil)
}

func mustNavigate(t *testing.T, b *Browser, url string) *rpc.NavigateResult {
	t.Helper()
	res, err := navigate(t, b, url)
	if err != nil {
		t.Fatalf("navigating to %s: %v", url, err)
	}
	return res
}

// evaluate runs expr in b's page and decodes its value into out.
func evaluate(t testing.TB, b *Browser, expr string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := chromedp.Run(b.tabContext(ctx), chromedp.Evaluate(expr, out)); err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
}

// pageServer serves html at / and records the requests it gets.
type pageServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
}

func newPageServer(t testing.TB, handler http.Handler) *pageServer {
	t.Helper()
	ps := &pageServer{}
	ps.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		ps.requests = append(ps.requests, r.Clone(context.Background()))
		ps.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	return ps
}

func (ps *pageServer) seen(match func(*http.Request) bool) []*http.Request {
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

func htmlHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	})
}

// rpcClient calls a runner's RPC.
type rpcClient struct {
	base  string
	token string
}

// call posts body to path and decodes a plain response: the status and the
// raw body.
func (c rpcClient) call(ctx context.Context, path string, body any) (int, []byte, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", rpc.ContentTypeJSON)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// mustCall is call with a test timeout; it fails the test on a transport
// error.
func (c rpcClient) mustCall(t *testing.T, path string, body any) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	status, out, err := c.call(ctx, path, body)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return status, out
}

func decodeError(t *testing.T, body []byte) *rpc.Error {
	t.Helper()
	var e rpc.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Code == "" {
		t.Fatalf("body %s is not an error body: %v", body, err)
	}
	return &e
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
