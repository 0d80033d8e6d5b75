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
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DeniedError is a connection the policy refused. Its message names the
// host as it was asked for and the kind of address it resolved to; it is
// the same whether anything listens there or not, because nothing was
// dialled.
type DeniedError struct {
	// Host is the host (or host:port) as asked for.
	Host string
	// Addr is the denied address; for the logs, not for callers.
	Addr netip.AddrPort
	// Reason is the kind of address (one of the Reason constants).
	Reason string
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("the egress policy refuses connections to %s (%s)", e.Host, e.Reason)
}

// Dialer makes TCP connections the policy allows. It resolves the host
// itself, checks every address the name resolves to (one denied answer
// refuses the name), and dials the checked addresses: nothing resolves the
// name a second time, so an answer that changes in between (DNS
// rebinding) cannot slip through.
type Dialer struct {
	// Policy decides; nil is the default policy.
	Policy *Policy
	// Resolver looks names up; nil is net.DefaultResolver.
	Resolver Resolver
	// Timeout bounds each connection attempt; zero is 30 s.
	Timeout time.Duration
	// dial connects to a checked address; nil is a net.Dialer. Tests
	// replace it to prove that a denied name is never dialled.
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// DialContext connects to address (host:port) over network (tcp, tcp4 or
// tcp6), or fails with a *DeniedError when the policy refuses the host.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	addrs, err := d.Resolve(ctx, network, address)
	if err != nil {
		return nil, err
	}
	dial := d.dial
	if dial == nil {
		timeout := d.Timeout
		if timeout == 0 {
			timeout = 30 * time.Second
		}
		dial = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	}
	var errs []error
	for _, ap := range addrs {
		c, err := dial(ctx, network, ap.String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("connecting to %s: %w", address, errors.Join(errs...))
}

// Resolve returns the addresses a connection to address (host:port) may
// use, all of them allowed, or a *DeniedError when any is not.
func (d *Dialer) Resolve(ctx context.Context, network, address string) ([]netip.AddrPort, error) {
	var ipNetwork string
	switch network {
	case "tcp":
		ipNetwork = "ip"
	case "tcp4":
		ipNetwork = "ip4"
	case "tcp6":
		ipNetwork = "ip6"
	default:
		return nil, fmt.Errorf("connecting to %s: network %q is not tcp", address, network)
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", address, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		// Named ports ("http") would need a second lookup; callers give
		// numbers.
		return nil, fmt.Errorf("connecting to %s: port %q is not a number", address, portStr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		name := strings.TrimSuffix(host, ".")
		if name == "" {
			return nil, fmt.Errorf("connecting to %s: no host", address)
		}
		r := d.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		if ips, err = r.LookupNetIP(ctx, ipNetwork, name); err != nil {
			return nil, fmt.Errorf("resolving %s: %w", host, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("resolving %s: no addresses", host)
		}
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		ap := netip.AddrPortFrom(ip.Unmap(), uint16(port))
		if reason, denied := d.Policy.Check(ap); denied {
			return nil, &DeniedError{Host: host, Addr: ap, Reason: reason}
		}
		out = append(out, ap)
	}
	return out, nil
}

// Transport returns an HTTP transport whose every connection goes through
// the dialer. It ignores the proxy variables of the environment: the
// runner's own connections are direct, and checked.
func (d *Dialer) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = d.DialContext
	return t
}

// Denied returns the *DeniedError in err's chain, or nil.
func Denied(err error) *DeniedError {
	var d *DeniedError
	if errors.As(err, &d) {
		return d
	}
	return nil
}
