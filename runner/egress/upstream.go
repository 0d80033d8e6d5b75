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
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"
	"golang.org/x/net/proxy"
)

// Upstream is a proxy the egress proxy sends some of the browser's traffic
// through: the session's own proxy.
type Upstream struct {
	// URL is the proxy's scheme (http, https or socks5), host and port,
	// without user info.
	URL *url.URL
	// Username and Password are sent to it: as Basic Proxy-Authorization
	// to an HTTP proxy, by RFC 1929 to a SOCKS5 one.
	Username string
	Password string
}

// Router picks the upstream proxy of a host (HostPort's form), or nil to
// connect directly. Either way the connection passes the policy: the
// upstream's own address is checked, the host's is left to the upstream.
type Router func(host string) *Upstream

// ParseUpstream reads a proxy server as Chromium and Playwright take it,
// [scheme://]host:port, http when the scheme is absent. SOCKS4 has no
// well-kept Go client and is refused, as are user info (credentials go in
// Username and Password) and paths.
func ParseUpstream(server string) (*url.URL, error) {
	s := server
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("proxy server is not [scheme://]host:port")
	}
	if u.User != nil {
		return nil, errors.New("proxy server must not carry credentials: use username and passwordSecretRef")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("proxy server is not [scheme://]host:port: it has a path, query or fragment")
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	case "socks4", "socks4a":
		return nil, fmt.Errorf("proxy server scheme %q is not supported: use socks5, http or https", u.Scheme)
	default:
		return nil, fmt.Errorf("proxy server scheme %q is not http, https or socks5", u.Scheme)
	}
	if u.Port() == "" {
		switch u.Scheme {
		case "http":
			u.Host = net.JoinHostPort(u.Hostname(), "80")
		case "https":
			u.Host = net.JoinHostPort(u.Hostname(), "443")
		case "socks5":
			u.Host = net.JoinHostPort(u.Hostname(), "1080")
		}
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// BypassRouter routes every host through up, except the hosts bypass names:
// a comma-separated list in the NO_PROXY convention of
// golang.org/x/net/http/httpproxy (a host name matches itself and its
// subdomains, a leading dot only the subdomains, "*" everything; IP
// addresses and CIDRs; each with an optional port). Loopback hosts
// ("localhost", 127.0.0.1, ::1) are never sent to the upstream, as in
// Chromium; they connect directly, and the policy decides.
func BypassRouter(up *Upstream, bypass string) Router {
	u := up.URL.String()
	match := (&httpproxy.Config{HTTPProxy: u, HTTPSProxy: u, NoProxy: bypass}).ProxyFunc()
	return func(host string) *Upstream {
		via, err := match(&url.URL{Scheme: "https", Host: host})
		if err != nil || via == nil {
			return nil
		}
		return up
	}
}

// ProxyAuthError is an upstream proxy's refusal of the session's
// credentials.
type ProxyAuthError struct {
	Proxy string
}

func (e *ProxyAuthError) Error() string {
	return fmt.Sprintf("the proxy %s refused the session's credentials", e.Proxy)
}

// UpstreamError is a failure to reach or use an upstream proxy.
type UpstreamError struct {
	Proxy string
	Err   error
}

func (e *UpstreamError) Error() string {
	return fmt.Sprintf("the proxy %s: %s", e.Proxy, e.Err.Error())
}

func (e *UpstreamError) Unwrap() error { return e.Err }

// handshakeTimeout bounds talking to an upstream before the tunnel carries
// the browser's bytes.
const handshakeTimeout = 30 * time.Second

func (up *Upstream) key() string {
	return up.URL.String() + "\x00" + up.Username + "\x00" + up.Password
}

// urlWithUser is URL with the credentials, as net/http's Transport takes a
// proxy.
func (up *Upstream) urlWithUser() *url.URL {
	u := *up.URL
	if up.Username != "" || up.Password != "" {
		u.User = url.UserPassword(up.Username, up.Password)
	}
	return &u
}

// tunnel opens a connection to addr through the upstream, dialling the
// upstream with d.
func (up *Upstream) tunnel(ctx context.Context, d *Dialer, addr string) (net.Conn, error) {
	if up.URL.Scheme == "socks5" {
		var auth *proxy.Auth
		if up.Username != "" || up.Password != "" {
			auth = &proxy.Auth{User: up.Username, Password: up.Password}
		}
		sd, err := proxy.SOCKS5("tcp", up.URL.Host, auth, upstreamDialer{up, d})
		if err != nil {
			return nil, &UpstreamError{Proxy: up.URL.Host, Err: err}
		}
		c, err := sd.(proxy.ContextDialer).DialContext(ctx, "tcp", addr)
		if err != nil {
			var ue *UpstreamError
			switch {
			case errors.As(err, &ue):
				return nil, err
			case strings.Contains(err.Error(), "authentication failed"):
				// x/net's SOCKS client says so only in its message.
				return nil, &ProxyAuthError{Proxy: up.URL.Host}
			}
			return nil, &UpstreamError{Proxy: up.URL.Host, Err: err}
		}
		return c, nil
	}
	c, err := upstreamDialer{up, d}.DialContext(ctx, "tcp", up.URL.Host)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(handshakeTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = c.SetDeadline(deadline)
	if up.URL.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: up.URL.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, &UpstreamError{Proxy: up.URL.Host, Err: err}
		}
		c = tc
	}
	br, err := up.connect(c, addr)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		// The upstream may have sent the first bytes of the tunnel with
		// its answer.
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// connect asks the HTTP proxy on c for a tunnel to addr.
func (up *Upstream) connect(c net.Conn, addr string) (*bufio.Reader, error) {
	req := &http.Request{
		Method: http.MethodConnect,
		URL:    &url.URL{Opaque: addr},
		Host:   addr,
		Header: http.Header{},
	}
	if up.Username != "" || up.Password != "" {
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(up.Username+":"+up.Password)))
	}
	if err := req.Write(c); err != nil {
		return nil, &UpstreamError{Proxy: up.URL.Host, Err: err}
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, &UpstreamError{Proxy: up.URL.Host, Err: err}
	}
	if resp.StatusCode == http.StatusOK {
		return br, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusProxyAuthRequired {
		return nil, &ProxyAuthError{Proxy: up.URL.Host}
	}
	return nil, &UpstreamError{Proxy: up.URL.Host, Err: fmt.Errorf("it answered the CONNECT to %s with %s", addr, resp.Status)}
}

// upstreamDialer dials an upstream proxy through the policy, naming the
// proxy in its errors.
type upstreamDialer struct {
	up *Upstream
	d  *Dialer
}

func (u upstreamDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := u.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, &UpstreamError{Proxy: u.up.URL.Host, Err: err}
	}
	return c, nil
}

func (u upstreamDialer) Dial(network, addr string) (net.Conn, error) {
	return u.DialContext(context.Background(), network, addr)
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
