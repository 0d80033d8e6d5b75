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
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// authProxy is a forward HTTP proxy that wants Basic credentials (unless
// user is empty) and sends every request it lets through to backend,
// whatever its host.
type authProxy struct {
	user, password string
	backend        *url.URL

	mu       sync.Mutex
	attempts []string // decoded "user:password" of each Proxy-Authorization
	refused  int
	served   int
}

func newAuthProxy(t *testing.T, user, password string, backend string) (*authProxy, *httptest.Server) {
	t.Helper()
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	p := &authProxy{user: user, password: password, backend: u}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv
}

func (p *authProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

func (p *authProxy) stats() (attempts []string, refused, served int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.attempts...), p.refused, p.served
}

func TestProxyWithCredentials(t *testing.T) {
	backend := newPageServer(t, htmlHandler(`<!doctype html><title>through the proxy</title>`))
	const user, password = "fleet-user", "correct-horse-battery"
	tests := []struct {
		name     string
		password string // what the session's secret holds
		wantCode rpc.ErrorCode
	}{
		{name: "right password", password: password},
		{name: "wrong password", password: "wrong-password", wantCode: rpc.CodeProxyAuthFailed},
		{name: "missing password", password: "", wantCode: rpc.CodeProxyAuthFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy, proxySrv := newAuthProxy(t, user, password, backend.URL)
			cfg := testConfig(launchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Proxy = &v1alpha1.LaunchProxy{
					Server:            proxySrv.URL,
					Username:          user,
					PasswordSecretRef: &v1alpha1.SecretKeyReference{Name: "proxy", Key: "password"},
				}
			}))
			cfg.Secrets.LaunchProxyPassword = NewSecret(tt.password)
			b := startTestBrowser(t, cfg)

			// A host only the proxy can reach: the page loads through it
			// or not at all.
			res, err := navigate(t, b, "http://site.test/")
			attempts, refused, served := proxy.stats()
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("navigate through the proxy: %v", err)
				}
				want(t, "status", res.Status, 200)
				var title string
				evaluate(t, b, "document.title", &title)
				want(t, "title", title, "through the proxy")
				if served == 0 {
					t.Errorf("the proxy served nothing")
				}
				for _, a := range attempts {
					want(t, "credentials the proxy saw", a, user+":"+password)
				}
				if got := backend.seen(func(r *http.Request) bool { return r.Host == "site.test" }); len(got) == 0 {
					t.Errorf("the backend saw no request for site.test")
				}
				return
			}
			if err == nil {
				t.Fatalf("navigate through the proxy with a %s = %+v, want an error", tt.name, res)
			}
			want(t, "error code", rpc.CodeOf(err), tt.wantCode)
			if served != 0 || refused == 0 {
				t.Errorf("proxy served %d and refused %d requests, want only refusals", served, refused)
			}
			if tt.password != "" && len(attempts) == 0 {
				t.Errorf("the proxy never saw the credentials")
			}
			for _, a := range attempts {
				want(t, "credentials the proxy saw", a, user+":"+tt.password)
			}
			t.Logf("navigate failed as it should: %v", err)
		})
	}
}
