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
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/proxy"
)

// proxyDialTimeout bounds connecting through the upstream proxy.
const proxyDialTimeout = 30 * time.Second

// authProxy is a loopback HTTP proxy between a launched browser and its
// LocalProxy: it forwards every request and tunnel to the LocalProxy with
// the proxy's credentials, which Chromium cannot take on its command line.
// Only the browser knows its address, and it takes no credentials of its
// own: like the browser's DevTools port, it is open to this machine.
type authProxy struct {
	ln       net.Listener
	srv      *http.Server
	upstream *url.URL
	auth     *proxy.Auth

	mu    sync.Mutex
	conns map[net.Conn]bool
}

func startAuthProxy(p *LocalProxy) (*authProxy, error) {
	server := p.Server
	if !strings.Contains(server, "://") {
		server = "http://" + server
	}
	up, err := url.Parse(server)
	if err != nil || up.Host == "" {
		return nil, invalid("LocalBrowserLaunchOptions.Proxy.Server", "%q is not a proxy such as http://proxy:3128 or socks5://proxy:1080", p.Server)
	}
	switch up.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return nil, invalid("LocalBrowserLaunchOptions.Proxy.Server", "scheme %q: want http, https or socks5", up.Scheme)
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the proxy's credentials bridge: %w", err)
	}
	a := &authProxy{ln: ln, upstream: up, auth: &proxy.Auth{User: p.Username, Password: p.Password}, conns: map[net.Conn]bool{}}
	withUser := *up
	withUser.User = url.UserPassword(p.Username, p.Password)
	forward := &httputil.ReverseProxy{
		// A proxy request's URL is absolute: it goes where it says.
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.Host = pr.In.Host },
		Transport: &http.Transport{Proxy: http.ProxyURL(&withUser), TLSHandshakeTimeout: proxyDialTimeout},
		// The browser sees a failure as a 502; the credentials must not
		// reach a log.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	a.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodConnect {
				a.tunnel(w, r)
				return
			}
			forward.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 30 * time.Second,
	}
	go func() { _ = a.srv.Serve(ln) }()
	return a, nil
}

// url is the proxy's address for --proxy-server.
func (a *authProxy) url() string { return "http://" + a.ln.Addr().String() }

// close stops the proxy and its tunnels.
func (a *authProxy) close() {
	_ = a.srv.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	for c := range a.conns {
		_ = c.Close()
	}
}

// tunnel answers a CONNECT with a tunnel through the upstream proxy.
func (a *authProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), proxyDialTimeout)
	defer cancel()
	up, err := a.dial(ctx, r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "tunnels are not supported", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = up.Close()
		_ = down.Close()
		return
	}
	a.track(up, down)
	go func() {
		// What the browser sent after its CONNECT is in buf.
		_, _ = io.Copy(up, io.MultiReader(buf, down))
		_ = up.Close()
	}()
	go func() {
		_, _ = io.Copy(down, up)
		_ = down.Close()
		a.untrack(up, down)
	}()
}

func (a *authProxy) track(conns ...net.Conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range conns {
		a.conns[c] = true
	}
}

func (a *authProxy) untrack(conns ...net.Conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range conns {
		delete(a.conns, c)
	}
}

// dial connects to addr through the upstream proxy, with its credentials.
func (a *authProxy) dial(ctx context.Context, addr string) (net.Conn, error) {
	d := &net.Dialer{}
	if strings.HasPrefix(a.upstream.Scheme, "socks5") {
		sd, err := proxy.SOCKS5("tcp", a.upstream.Host, a.auth, d)
		if err != nil {
			return nil, fmt.Errorf("the proxy %s: %w", a.upstream.Host, err)
		}
		c, err := sd.(proxy.ContextDialer).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("the proxy %s: %w", a.upstream.Host, err)
		}
		return c, nil
	}
	c, err := d.DialContext(ctx, "tcp", a.upstream.Host)
	if err != nil {
		return nil, fmt.Errorf("the proxy %s: %w", a.upstream.Host, err)
	}
	if a.upstream.Scheme == "https" {
		host, _, _ := net.SplitHostPort(a.upstream.Host)
		tc := tls.Client(c, &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("the proxy %s: %w", a.upstream.Host, err)
		}
		c = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	creds := base64.StdEncoding.EncodeToString([]byte(a.auth.User + ":" + a.auth.Password))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", addr, addr, creds)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("the proxy %s: %w", a.upstream.Host, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_ = c.Close()
		return nil, fmt.Errorf("the proxy %s refused the tunnel to %s: %s", a.upstream.Host, addr, resp.Status)
	}
	_ = c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// bufferedConn is a connection whose first bytes were read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
