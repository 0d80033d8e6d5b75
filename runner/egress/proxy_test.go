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

package egress

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/google/go-cmp/cmp"
)

// Every connection these tests make goes to a loopback address. The
// policy under test allows 127.0.0.2 only; canaries listen on 127.0.0.3
// and 127.0.0.1 (Linux routes all of 127.0.0.0/8 to lo) and must see
// nothing.

const (
	allowedIP = "127.0.0.2"
	canaryIP  = "127.0.0.3"
)

func testPolicy() *Policy {
	return NewPolicy(Config{AllowCIDRs: prefixes(allowedIP + "/32")})
}

// canary is a listener that counts the connections it accepts and serves
// HTTP on them.
type canary struct {
	net.Listener
	accepted atomic.Int64
}

func newCanary(t *testing.T, ip string) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	c := &canary{Listener: ln}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "canary")
	})}
	go srv.Serve(c)
	t.Cleanup(func() { srv.Close() })
	return c
}

func (c *canary) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err == nil {
		c.accepted.Add(1)
	}
	return conn, err
}

func (c *canary) port() string {
	_, p, _ := net.SplitHostPort(c.Addr().String())
	return p
}

// closedPort is a port on ip where nothing listens.
func closedPort(t *testing.T, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return p
}

func startProxy(t *testing.T, d *Dialer, route Router) *Proxy {
	t.Helper()
	p, err := StartProxy(ProxyOptions{Dialer: d, Route: route, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// rawConnect sends a CONNECT to the proxy and returns everything it answers
// up to its closing the connection, or the tunnel when it says 200.
func rawConnect(t *testing.T, p *Proxy, target string) (string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}) //nolint:bodyclose // a CONNECT answer's body is the tunnel, handed on or read below
	if err != nil {
		t.Fatalf("reading the CONNECT answer for %s: %v", target, err)
	}
	if resp.StatusCode == http.StatusOK {
		_ = c.SetReadDeadline(time.Time{})
		return resp.Status, &bufferedConn{Conn: c, r: br}
	}
	rest, _ := io.ReadAll(br)
	c.Close()
	var b strings.Builder
	resp.Body = nil
	_ = resp.Write(&b)
	return b.String() + string(rest), nil
}

// proxyGet fetches url through the proxy (plain HTTP) and returns the status
// and body.
func proxyGet(t *testing.T, p *Proxy, target string) (int, string) {
	t.Helper()
	proxyURL, _ := url.Parse(p.URL())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := client.Get(target)
	if err != nil {
		t.Fatalf("GET %s through the proxy: %v", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestProxyDeniesUniformly(t *testing.T) {
	open := newCanary(t, canaryIP)
	closed := closedPort(t, canaryIP)
	onLocalhost := newCanary(t, "127.0.0.1")
	p := startProxy(t, &Dialer{Policy: testPolicy()}, nil)

	targets := []struct {
		name, host, reason string
	}{
		{"an open port", canaryIP + ":" + open.port(), ReasonLoopback},
		{"a closed port", canaryIP + ":" + closed, ReasonLoopback},
		{"a name resolving to the canary", "localhost:" + onLocalhost.port(), ReasonLoopback},
		{"the proxy itself", p.Addr().String(), ReasonOwnPort},
	}
	var connects, bodies []string
	for _, tt := range targets {
		t.Run(tt.name, func(t *testing.T) {
			before := p.Seq()
			answer, tunnel := rawConnect(t, p, tt.host)
			if tunnel != nil {
				tunnel.Close()
				t.Fatalf("CONNECT %s was let through", tt.host)
			}
			want := "HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
			if diff := cmp.Diff(want, answer); diff != "" {
				t.Errorf("CONNECT %s answer (-want +got):\n%s", tt.host, diff)
			}
			connects = append(connects, answer)

			status, body := proxyGet(t, p, "http://"+tt.host+"/")
			if status != http.StatusForbidden {
				t.Errorf("GET http://%s/ = %d, want 403", tt.host, status)
			}
			hostname, _, _ := net.SplitHostPort(tt.host)
			wantBody := "the egress policy refuses connections to " + hostname + " (" + tt.reason + ")\n"
			if diff := cmp.Diff(wantBody, body); diff != "" {
				t.Errorf("GET body (-want +got):\n%s", diff)
			}
			bodies = append(bodies, body)

			ev, ok := p.Failure(HostPort(tt.host, "80"), before)
			if !ok || ev.Kind != EventDenied || ev.Message != strings.TrimSuffix(wantBody, "\n") {
				t.Errorf("event for %s = %+v (found %v), want a denial", tt.host, ev, ok)
			}
		})
	}
	// The answers for the open and the closed port are the same.
	if connects[0] != connects[1] || bodies[0] != bodies[1] {
		t.Errorf("an open and a closed port are answered differently:\n%q / %q\n%q / %q", connects[0], connects[1], bodies[0], bodies[1])
	}
	if n := open.accepted.Load() + onLocalhost.accepted.Load(); n != 0 {
		t.Errorf("the canaries accepted %d connections, want none", n)
	}
}

func TestProxyAllowsAndTunnels(t *testing.T) {
	// A TLS server and a plain one on the allowed address.
	ln, err := net.Listen("tcp", allowedIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure "+r.Host)
	}))
	tlsSrv.Listener = ln
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	plainLn, err := net.Listen("tcp", allowedIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	plain := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "identity")
		io.WriteString(w, "plain "+r.URL.Path)
	}))
	plain.Listener = plainLn
	plain.Start()
	t.Cleanup(plain.Close)

	p := startProxy(t, &Dialer{Policy: testPolicy()}, nil)

	status, body := proxyGet(t, p, plain.URL+"/page")
	if status != 200 || body != "plain /page" {
		t.Errorf("GET through the proxy = %d %q", status, body)
	}

	proxyURL, _ := url.Parse(p.URL())
	tr := tlsSrv.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(proxyURL)
	// httptest's certificate names 127.0.0.1 and example.com.
	tr.TLSClientConfig.ServerName = "example.com"
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get(tlsSrv.URL + "/")
	if err != nil {
		t.Fatalf("GET over a CONNECT tunnel: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "secure " + strings.TrimPrefix(tlsSrv.URL, "https://"); string(b) != want {
		t.Errorf("body over the tunnel %q, want %q", b, want)
	}
	if p.Seq() != 0 {
		t.Errorf("%d failures recorded, want none", p.Seq())
	}
}

// upstreamProxy is an HTTP proxy that wants Basic credentials and connects
// every request and tunnel to backend, whatever its host: names like
// site.test are never resolved.
type upstreamProxy struct {
	user, password string
	backend        string

	mu       sync.Mutex
	attempts []string
	served   int
	refused  int
}

func newUpstreamProxy(t *testing.T, ip, user, password, backend string) (*upstreamProxy, string) {
	t.Helper()
	up := &upstreamProxy{user: user, password: password, backend: backend}
	gp := goproxy.NewProxyHttpServer()
	gp.Logger = debugLogger{slog.New(slog.DiscardHandler)}
	toBackend := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, backend)
	}
	gp.Tr = &http.Transport{DialContext: toBackend}
	gp.ConnectDial = func(network, _ string) (net.Conn, error) { return toBackend(context.Background(), network, "") }
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		creds := ""
		if enc, ok := strings.CutPrefix(r.Header.Get("Proxy-Authorization"), "Basic "); ok {
			dec, _ := base64.StdEncoding.DecodeString(enc)
			creds = string(dec)
		}
		up.mu.Lock()
		if creds != "" {
			up.attempts = append(up.attempts, creds)
		}
		ok := creds == user+":"+password
		if ok {
			up.served++
		} else {
			up.refused++
		}
		up.mu.Unlock()
		if !ok {
			w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
			http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
			return
		}
		gp.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return up, ln.Addr().String()
}

func (u *upstreamProxy) stats() (attempts []string, served, refused int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.attempts...), u.served, u.refused
}

// socks5Server is a SOCKS5 server (RFC 1928 with RFC 1929 credentials)
// that connects every request to backend.
func socks5Server(t *testing.T, ip, user, password, backend string) (addr string, served *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	served = &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// A scripted SOCKS5 server: a short read or write ends the
			// exchange, which the test sees as a failed connection.
			//nolint:errcheck // see above
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				buf := make([]byte, 2)
				if _, err := io.ReadFull(r, buf); err != nil || buf[0] != 5 {
					return
				}
				methods := make([]byte, buf[1])
				io.ReadFull(r, methods)
				c.Write([]byte{5, 2})
				io.ReadFull(r, buf[:2])
				u := make([]byte, buf[1])
				io.ReadFull(r, u)
				io.ReadFull(r, buf[:1])
				pw := make([]byte, buf[0])
				io.ReadFull(r, pw)
				if string(u) != user || string(pw) != password {
					c.Write([]byte{1, 1})
					return
				}
				c.Write([]byte{1, 0})
				head := make([]byte, 4)
				io.ReadFull(r, head)
				switch head[3] {
				case 1:
					io.ReadFull(r, make([]byte, 4+2))
				case 3:
					io.ReadFull(r, buf[:1])
					io.ReadFull(r, make([]byte, int(buf[0])+2))
				case 4:
					io.ReadFull(r, make([]byte, 16+2))
				}
				b, err := net.Dial("tcp", backend)
				if err != nil {
					c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
					return
				}
				defer b.Close()
				served.Add(1)
				c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
				go io.Copy(b, r)
				io.Copy(c, b)
			}()
		}
	}()
	return ln.Addr().String(), served
}

// failingResolver fails the test if anything is looked up: through an
// upstream, host names are the upstream's to resolve.
type failingResolver struct {
	t       *testing.T
	answers map[string]string
}

func (r failingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r.answers[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	r.t.Errorf("the proxy looked %s up", host)
	return nil, &net.DNSError{Err: "not looked up in tests", Name: host}
}

func TestProxyUpstreams(t *testing.T) {
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "backend saw "+r.Host)
	}))
	ln, err := net.Listen("tcp", allowedIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	backend.Listener = ln
	backend.Start()
	t.Cleanup(backend.Close)
	backendAddr := ln.Addr().String()
	const user, password = "fleet-user", "correct-horse"

	httpUp, httpUpAddr := newUpstreamProxy(t, allowedIP, user, password, backendAddr)
	socksAddr, socksServed := socks5Server(t, allowedIP, user, password, backendAddr)
	deniedUp := newCanary(t, canaryIP)

	tests := []struct {
		name     string
		upstream string
		password string
		bypass   string
		target   string
		wantGet  int    // status of a plain GET of target
		wantBody string // body of a successful GET
		wantKind EventKind
		wantMsg  string
	}{
		{name: "http upstream, right password", upstream: "http://" + httpUpAddr, password: password, target: "site.test", wantGet: 200, wantBody: "backend saw site.test"},
		{name: "http upstream, wrong password", upstream: "http://" + httpUpAddr, password: "wrong", target: "site.test", wantGet: 502,
			wantKind: EventProxyAuthFailed, wantMsg: "the proxy " + httpUpAddr + " refused the session's credentials"},
		{name: "socks5 upstream, right password", upstream: "socks5://" + socksAddr, password: password, target: "site.test", wantGet: 200, wantBody: "backend saw site.test"},
		{name: "socks5 upstream, wrong password", upstream: "socks5://" + socksAddr, password: "wrong", target: "site.test", wantGet: 502,
			wantKind: EventProxyAuthFailed, wantMsg: "the proxy " + socksAddr + " refused the session's credentials"},
		{name: "an upstream at a denied address", upstream: "http://" + deniedUp.Addr().String(), password: password, target: "site.test", wantGet: 403,
			wantKind: EventDenied, wantMsg: "the egress policy refuses connections to the session's proxy " + canaryIP + " (" + ReasonLoopback + ")"},
		{name: "a bypassed host connects directly, allowed", upstream: "http://" + httpUpAddr, password: password, bypass: "direct.test",
			target: "direct.test:" + strings.Split(backendAddr, ":")[1], wantGet: 200, wantBody: "backend saw direct.test:" + strings.Split(backendAddr, ":")[1]},
		{name: "a bypassed host connects directly, denied", upstream: "http://" + httpUpAddr, password: password, bypass: ".test",
			target: "canary.test:" + deniedUp.port(), wantGet: 403,
			wantKind: EventDenied, wantMsg: "the egress policy refuses connections to canary.test (" + ReasonLoopback + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := ParseUpstream(tt.upstream)
			if err != nil {
				t.Fatal(err)
			}
			resolver := failingResolver{t: t, answers: map[string]string{"direct.test": allowedIP, "canary.test": canaryIP}}
			up := &Upstream{URL: u, Username: user, Password: tt.password}
			p := startProxy(t, &Dialer{Policy: testPolicy(), Resolver: resolver}, BypassRouter(up, tt.bypass))
			httpAttemptsBefore, _, _ := httpUp.stats()

			status, body := proxyGet(t, p, "http://"+tt.target+"/")
			if status != tt.wantGet {
				t.Errorf("GET = %d %q, want %d", status, body, tt.wantGet)
			}
			if tt.wantBody != "" && body != tt.wantBody {
				t.Errorf("GET body %q, want %q", body, tt.wantBody)
			}
			host := HostPort(tt.target, "80")
			ev, failed := p.Failure(host, 0)
			if tt.wantKind == "" {
				if failed {
					t.Errorf("unexpected event %+v", ev)
				}
			} else if !failed || ev.Kind != tt.wantKind || ev.Message != tt.wantMsg {
				t.Errorf("event for %s = %+v, want %s %q", host, ev, tt.wantKind, tt.wantMsg)
			}

			// A tunnel (as for https and WebSockets) goes the same way.
			tunnelTarget := HostPort(tt.target, "443")
			before := p.Seq()
			answer, tunnel := rawConnect(t, p, tunnelTarget)
			if tt.wantKind == "" {
				if tunnel == nil {
					t.Fatalf("CONNECT %s = %q, want a tunnel", tunnelTarget, answer)
				}
				// The backend speaks plain HTTP at the far end.
				fmt.Fprintf(tunnel, "GET / HTTP/1.1\r\nHost: tunnelled.test\r\nConnection: close\r\n\r\n")
				resp, err := http.ReadResponse(bufio.NewReader(tunnel), nil)
				if err != nil {
					t.Fatalf("reading through the tunnel: %v", err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				tunnel.Close()
				if string(b) != "backend saw tunnelled.test" {
					t.Errorf("through the tunnel %q", b)
				}
			} else {
				if tunnel != nil {
					tunnel.Close()
					t.Fatalf("CONNECT %s let through", tunnelTarget)
				}
				ev, ok := p.Failure(tunnelTarget, before)
				if !ok || ev.Kind != tt.wantKind || ev.Message != tt.wantMsg {
					t.Errorf("CONNECT event = %+v, want %s %q", ev, tt.wantKind, tt.wantMsg)
				}
			}

			if strings.HasPrefix(tt.upstream, "http:") && tt.upstream == "http://"+httpUpAddr && tt.bypass == "" {
				attempts, _, _ := httpUp.stats()
				for _, a := range attempts[len(httpAttemptsBefore):] {
					if a != user+":"+tt.password {
						t.Errorf("the upstream saw credentials %q, want %q", a, user+":"+tt.password)
					}
				}
				if len(attempts) == len(httpAttemptsBefore) {
					t.Errorf("the upstream saw no credentials")
				}
			}
		})
	}
	if deniedUp.accepted.Load() != 0 {
		t.Errorf("the denied upstream accepted %d connections", deniedUp.accepted.Load())
	}
	if socksServed.Load() == 0 {
		t.Errorf("the SOCKS5 upstream served nothing")
	}
}

func TestParseUpstream(t *testing.T) {
	tests := []struct {
		server  string
		want    string
		wantErr string
	}{
		{server: "proxy.example:3128", want: "http://proxy.example:3128"},
		{server: "http://proxy.example", want: "http://proxy.example:80"},
		{server: "https://proxy.example", want: "https://proxy.example:443"},
		{server: "socks5://10.0.0.1", want: "socks5://10.0.0.1:1080"},
		{server: "http://[2001:db8::1]:8080", want: "http://[2001:db8::1]:8080"},
		{server: "socks4://proxy.example:1080", wantErr: `proxy server scheme "socks4" is not supported: use socks5, http or https`},
		{server: "socks4a://proxy.example:1080", wantErr: `proxy server scheme "socks4a" is not supported: use socks5, http or https`},
		{server: "ftp://proxy.example:21", wantErr: `proxy server scheme "ftp" is not http, https or socks5`},
		{server: "http://user:pass@proxy.example:3128", wantErr: "proxy server must not carry credentials: use username and passwordSecretRef"},
		{server: "http://proxy.example:3128/path", wantErr: "proxy server is not [scheme://]host:port: it has a path, query or fragment"},
		{server: "http://", wantErr: "proxy server is not [scheme://]host:port"},
		{server: "", wantErr: "proxy server is not [scheme://]host:port"},
	}
	for _, tt := range tests {
		u, err := ParseUpstream(tt.server)
		got, gotErr := "", ""
		if u != nil {
			got = u.String()
		}
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.wantErr {
			t.Errorf("ParseUpstream(%q) = %q, %q; want %q, %q", tt.server, got, gotErr, tt.want, tt.wantErr)
		}
	}
}
