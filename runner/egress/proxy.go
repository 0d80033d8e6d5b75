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
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
)

// EventKind says why the proxy could not connect the browser to a host.
type EventKind string

const (
	// EventDenied means the policy refused the host, or the upstream proxy.
	EventDenied EventKind = "denied"
	// EventProxyAuthFailed means the upstream proxy refused the session's
	// credentials.
	EventProxyAuthFailed EventKind = "proxy-auth-failed"
	// EventUnreachable means the host (or the upstream proxy) was allowed but
	// could not be reached.
	EventUnreachable EventKind = "unreachable"
)

// Event is one connection the proxy could not make for the browser.
type Event struct {
	// Seq orders events; see Proxy.Seq.
	Seq  uint64
	Kind EventKind
	// Host is host:port as the browser asked for it (HostPort's form).
	Host string
	// Message says what happened, for the operation's caller. For a
	// denial it names the host and the kind of address only.
	Message string
}

// ProxyOptions configure a Proxy.
type ProxyOptions struct {
	// Dialer makes every connection: to the hosts, and to the upstream
	// proxies. Required.
	Dialer *Dialer
	// Route picks the upstream proxy of a host; nil routes everything
	// directly.
	Route Router
	// Logger receives denials (at most a few dozen lines a minute) and
	// goproxy's own messages (debug); nil is slog.Default().
	Logger *slog.Logger
}

// Proxy is the browser's forward proxy: HTTP requests, CONNECT tunnels (TLS
// is not intercepted) and WebSocket handshakes, each connection made
// through the Dialer, directly or through the upstream proxy the Route
// picks. It listens on 127.0.0.1. A connection it cannot make is answered
// at once with an empty 403 (denied) or 502 (anything else), the same
// whatever listens at the denied address, and recorded as an Event.
type Proxy struct {
	dialer *Dialer
	route  Router
	log    *slog.Logger
	ln     net.Listener
	srv    *http.Server
	direct *http.Transport

	mu         sync.Mutex
	seq        uint64
	last       map[string]Event
	watchers   map[*func(Event)]struct{}
	upstreams  map[string]*http.Transport
	logWindow  time.Time
	logged     int
	suppressed int
}

// maxHostEvents bounds the events kept: the last per host, for this many
// hosts. A page that fails on more hosts than that between two looks only
// loses its oldest.
const maxHostEvents = 4096

// logsPerMinute bounds the denial lines the proxy logs; a page can make
// thousands of requests.
const logsPerMinute = 60

// StartProxy listens on 127.0.0.1 and serves until Close. The proxy's own
// address is denied to every connection it makes, so it cannot be made to
// loop.
func StartProxy(opts ProxyOptions) (*Proxy, error) {
	if opts.Dialer == nil {
		return nil, errors.New("egress proxy: no dialer")
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: listening: %w", err)
	}
	if opts.Dialer.Policy != nil {
		opts.Dialer.Policy.DenyOwn(ln.Addr())
	}
	p := &Proxy{
		dialer:    opts.Dialer,
		route:     opts.Route,
		log:       log,
		ln:        ln,
		last:      map[string]Event{},
		watchers:  map[*func(Event)]struct{}{},
		upstreams: map[string]*http.Transport{},
	}
	p.direct = p.transport(nil)

	gp := goproxy.NewProxyHttpServer()
	gp.Logger = debugLogger{log.With("source", "goproxy")}
	// No proxy of the environment, no interception: every connection is
	// made by connect, every request sent by roundTrip.
	gp.Tr = p.direct
	gp.ConnectDial = nil
	gp.ConnectDialWithReq = func(req *http.Request, network, addr string) (net.Conn, error) {
		return p.connect(req.Context(), addr)
	}
	gp.ConnectionErrHandler = writeConnectFailure
	// The browser's encodings go to the server and its answer back as it
	// is: the proxy neither decompresses nor re-encodes.
	gp.KeepAcceptEncoding = true
	gp.NonproxyHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "this is the runner's egress proxy; it serves the browser only", http.StatusBadRequest)
	})
	gp.OnRequest().DoFunc(func(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		ctx.RoundTripper = goproxy.RoundTripperFunc(p.roundTrip)
		return r, nil
	})
	p.srv = &http.Server{
		Handler:           gp,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Addr is where the proxy listens.
func (p *Proxy) Addr() netip.AddrPort {
	ap, _ := netip.ParseAddrPort(p.ln.Addr().String())
	return ap
}

// URL is the proxy's address as Chromium's --proxy-server takes it.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops accepting connections and closes idle ones; tunnels end with
// the browser that holds them.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.direct.CloseIdleConnections()
	p.mu.Lock()
	for _, t := range p.upstreams {
		t.CloseIdleConnections()
	}
	p.mu.Unlock()
	return err
}

// Seq is the sequence number of the latest event; an event recorded later
// has a higher one.
func (p *Proxy) Seq() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

// Failure returns the latest event for host (HostPort's form) recorded
// after the event numbered since.
func (p *Proxy) Failure(host string, since uint64) (Event, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev, ok := p.last[host]
	if !ok || ev.Seq <= since {
		return Event{}, false
	}
	return ev, true
}

// Watch calls fn with every event until the returned function is called.
// fn runs on the proxy's connection goroutine and must not block.
func (p *Proxy) Watch(fn func(Event)) (stop func()) {
	key := &fn
	p.mu.Lock()
	p.watchers[key] = struct{}{}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.watchers, key)
		p.mu.Unlock()
	}
}

// connect opens a tunnel to addr for a CONNECT: directly or through the
// upstream proxy, always through the dialer.
func (p *Proxy) connect(ctx context.Context, addr string) (net.Conn, error) {
	host := HostPort(addr, "443")
	up := p.upstream(host)
	var c net.Conn
	var err error
	if up == nil {
		c, err = p.dialer.DialContext(ctx, "tcp", addr)
	} else {
		c, err = up.tunnel(ctx, p.dialer, addr)
	}
	if err != nil {
		return nil, &connectFailure{p.fail(host, up, err)}
	}
	return c, nil
}

// roundTrip sends a plain-HTTP request (or WebSocket handshake) on, and
// answers a connection it could not make itself.
func (p *Proxy) roundTrip(req *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
	host := HostPort(req.URL.Host, defaultPort(req.URL.Scheme))
	up := p.upstream(host)
	t := p.direct
	if up != nil {
		t = p.upstreamTransport(up)
	}
	resp, err := t.RoundTrip(req)
	if err != nil {
		if req.Context().Err() != nil {
			// The browser gave up; nobody reads the answer.
			return nil, err
		}
		if up != nil && up.URL.Scheme == "socks5" && strings.Contains(err.Error(), "authentication failed") {
			// net/http's SOCKS client says so only in its message.
			err = &ProxyAuthError{Proxy: up.URL.Host}
		}
		ev := p.fail(host, up, err)
		return failureResponse(req, ev), nil
	}
	if up != nil && resp.StatusCode == http.StatusProxyAuthRequired {
		// With a plain-HTTP request the proxy's refusal comes as an
		// answer; the browser must not take it for ours.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		ev := p.fail(host, up, &ProxyAuthError{Proxy: up.URL.Host})
		return failureResponse(req, ev), nil
	}
	return resp, nil
}

func (p *Proxy) upstream(host string) *Upstream {
	if p.route == nil {
		return nil
	}
	return p.route(host)
}

// transport sends plain-HTTP requests directly (up nil) or through up, every
// connection made by the dialer.
func (p *Proxy) transport(up *Upstream) *http.Transport {
	t := &http.Transport{
		DialContext:         p.dialer.DialContext,
		MaxIdleConns:        100,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 30 * time.Second,
		// The answer goes to the browser as it came.
		DisableCompression: true,
	}
	if up != nil {
		t.Proxy = http.ProxyURL(up.urlWithUser())
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := p.dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, &UpstreamError{Proxy: up.URL.Host, Err: err}
			}
			return c, nil
		}
	}
	return t
}

func (p *Proxy) upstreamTransport(up *Upstream) *http.Transport {
	key := up.key()
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.upstreams[key]
	if !ok {
		t = p.transport(up)
		p.upstreams[key] = t
	}
	return t
}

// fail records why a connection to host could not be made and returns the
// event.
func (p *Proxy) fail(host string, up *Upstream, err error) Event {
	kind, msg := classify(host, up, err)
	p.mu.Lock()
	p.seq++
	ev := Event{Seq: p.seq, Kind: kind, Host: host, Message: msg}
	if len(p.last) >= maxHostEvents {
		clear(p.last)
	}
	p.last[host] = ev
	watchers := make([]func(Event), 0, len(p.watchers))
	for w := range p.watchers {
		watchers = append(watchers, *w)
	}
	logIt, suppressed := p.logBudget()
	p.mu.Unlock()

	if suppressed > 0 {
		p.log.Info("egress proxy: log lines suppressed", "count", suppressed)
	}
	if logIt {
		switch kind {
		case EventDenied:
			attrs := []any{"host", host, "reason", msg}
			if d := Denied(err); d != nil {
				attrs = append(attrs, "address", d.Addr.String())
			}
			p.log.Info("egress denied", attrs...)
		case EventProxyAuthFailed:
			p.log.Warn("the proxy refused the session's credentials", "host", host, "proxy", up.URL.Host, "username", up.Username)
		default:
			p.log.Debug("egress connection failed", "host", host, "err", msg)
		}
	}
	for _, w := range watchers {
		w(ev)
	}
	return ev
}

// logBudget says whether one more line may be logged in this minute, and how
// many were suppressed in the last one. p.mu is held.
func (p *Proxy) logBudget() (ok bool, suppressed int) {
	now := time.Now()
	if now.Sub(p.logWindow) >= time.Minute {
		suppressed = p.suppressed
		p.logWindow, p.logged, p.suppressed = now, 0, 0
	}
	if p.logged >= logsPerMinute {
		p.suppressed++
		return false, suppressed
	}
	p.logged++
	return true, suppressed
}

// classify names an event from the error of a connection attempt.
func classify(host string, up *Upstream, err error) (EventKind, string) {
	var auth *ProxyAuthError
	if errors.As(err, &auth) {
		return EventProxyAuthFailed, auth.Error()
	}
	var upErr *UpstreamError
	viaUpstream := errors.As(err, &upErr)
	if d := Denied(err); d != nil {
		if viaUpstream {
			return EventDenied, fmt.Sprintf("the egress policy refuses connections to the session's proxy %s (%s)", d.Host, d.Reason)
		}
		return EventDenied, d.Error()
	}
	if viaUpstream {
		return EventUnreachable, upErr.Error()
	}
	if up != nil {
		return EventUnreachable, fmt.Sprintf("through the proxy %s: %s", up.URL.Host, err.Error())
	}
	return EventUnreachable, err.Error()
}

// connectFailure is a CONNECT the proxy could not make; goproxy hands it to
// writeConnectFailure.
type connectFailure struct{ ev Event }

func (c *connectFailure) Error() string { return c.ev.Message }

// writeConnectFailure answers a CONNECT that could not be made: an empty 403
// for a denial, 502 otherwise. goproxy calls it for failures inside an
// established tunnel too, where nothing may be written.
func writeConnectFailure(w io.Writer, _ *goproxy.ProxyCtx, err error) {
	var cf *connectFailure
	if !errors.As(err, &cf) {
		return
	}
	status := http.StatusBadGateway
	if cf.ev.Kind == EventDenied {
		status = http.StatusForbidden
	}
	_, _ = fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status, http.StatusText(status))
}

// failureResponse is the answer to a plain-HTTP request whose connection
// could not be made: 403 for a denial, 502 otherwise, with the event's
// message, never cached.
func failureResponse(req *http.Request, ev Event) *http.Response {
	status := http.StatusBadGateway
	if ev.Kind == EventDenied {
		status = http.StatusForbidden
	}
	body := ev.Message + "\n"
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Cache-Control": {"no-store"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// HostPort is the form events name hosts in: a lowercase host and a port,
// defPort when hostport has none; IPv6 addresses in brackets.
func HostPort(hostport, defPort string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), defPort
	}
	return net.JoinHostPort(strings.ToLower(strings.TrimSuffix(host, ".")), port)
}

// URLHostPort is HostPort of a URL, with its scheme's default port.
func URLHostPort(u *url.URL) string {
	return HostPort(u.Host, defaultPort(u.Scheme))
}

func defaultPort(scheme string) string {
	switch scheme {
	case "https", "wss":
		return "443"
	}
	return "80"
}

// debugLogger gives goproxy's printf-style messages to slog at debug level.
type debugLogger struct{ log *slog.Logger }

func (l debugLogger) Printf(format string, v ...any) {
	l.log.Debug(strings.TrimSpace(fmt.Sprintf(format, v...)))
}
