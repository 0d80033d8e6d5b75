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
	"flag"
	"net"
	"net/netip"
	"slices"
	"sync"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Config is the operator's part of the policy: what it allows beyond the
// public internet, and what it denies on top of the special-purpose ranges.
type Config struct {
	// AllowCIDRs are ranges connections may reach although they are not
	// public (a model server in the cluster, loopback on a developer's
	// machine). They win over everything but the cloud metadata addresses
	// (allowed only when listed as a single address) and the runner's own
	// ports.
	AllowCIDRs []netip.Prefix
	// ClusterCIDRs are the cluster's pod and service ranges, denied even
	// where they are public addresses.
	ClusterCIDRs []netip.Prefix
}

// AddFlags binds c to the runner's flags (rpc.FlagEgressAllowCIDR,
// rpc.FlagEgressClusterCIDR), each repeatable and taking a CIDR or a single
// address.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.Func(rpc.FlagEgressAllowCIDR, "a range (CIDR or address) the browser and the runner may connect to although it is not public, e.g. an in-cluster model server; repeatable", func(s string) error {
		p, err := rpc.ParseCIDR(s)
		if err == nil {
			c.AllowCIDRs = append(c.AllowCIDRs, p)
		}
		return err
	})
	fs.Func(rpc.FlagEgressClusterCIDR, "the cluster's pod or service range (CIDR), denied even where it is public; repeatable", func(s string) error {
		p, err := rpc.ParseCIDR(s)
		if err == nil {
			c.ClusterCIDRs = append(c.ClusterCIDRs, p)
		}
		return err
	})
}

// Args are the runner's arguments that give it c, as the manager passes
// them.
func (c Config) Args() []string { return rpc.EgressArgs(c.AllowCIDRs, c.ClusterCIDRs) }

// Reasons a connection is denied, by the kind of its address. They depend
// on the address only, never on whether anything answers there.
const (
	ReasonMetadata    = "a cloud metadata address"
	ReasonLoopback    = "a loopback address"
	ReasonPrivate     = "a private address"
	ReasonSharedNAT   = "a carrier-grade NAT address"
	ReasonLinkLocal   = "a link-local address"
	ReasonULA         = "an IPv6 unique local address"
	ReasonMulticast   = "a multicast address"
	ReasonUnspecified = "the unspecified address"
	ReasonSpecial     = "a special-purpose address"
	ReasonCluster     = "an address of the cluster's pod or service range"
	ReasonOwnPort     = "a port of the runner itself"
)

// metadataAddrs are the cloud providers' instance metadata and host
// services: AWS, GCP, Azure, OpenStack, DigitalOcean at 169.254.169.254,
// AWS's IPv6 endpoint, Azure's WireServer (a public address) and Alibaba
// Cloud's. An allow list opens them only by naming the single address.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("168.63.129.16"),
	netip.MustParseAddr("100.100.100.200"),
}

type specialRange struct {
	prefix netip.Prefix
	reason string
}

func ranges(reason string, cidrs ...string) []specialRange {
	out := make([]specialRange, len(cidrs))
	for i, c := range cidrs {
		out[i] = specialRange{netip.MustParsePrefix(c), reason}
	}
	return out
}

// specialV4 are the IPv4 ranges of IANA's special-purpose registry that are
// not globally reachable, and multicast. The globally reachable entries
// (AS112, AMT) are ordinary destinations.
var specialV4 = slices.Concat(
	ranges(ReasonUnspecified, "0.0.0.0/8"),
	ranges(ReasonPrivate, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
	ranges(ReasonSharedNAT, "100.64.0.0/10"),
	ranges(ReasonLoopback, "127.0.0.0/8"),
	ranges(ReasonLinkLocal, "169.254.0.0/16"),
	ranges(ReasonSpecial,
		"192.0.0.0/24",    // IETF protocol assignments, DS-Lite, NAT64 discovery
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"192.88.99.0/24",  // 6to4 relay anycast, deprecated
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"240.0.0.0/4",     // reserved, and the limited broadcast address
	),
	ranges(ReasonMulticast, "224.0.0.0/4"),
)

// IPv6 is checked by allowlist: only global unicast (2000::/3) can be
// public, and within it the ranges below are not.
var (
	globalUnicastV6 = netip.MustParsePrefix("2000::/3")
	nat64           = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour       = netip.MustParsePrefix("2002::/16")
	specialV6       = slices.Concat(
		ranges(ReasonSpecial,
			"2001::/23",     // IETF protocol assignments: Teredo, benchmarking, ORCHID, ...
			"2001:db8::/32", // documentation
			"3fff::/20",     // documentation
		),
	)
	// Outside 2000::/3, for the reason given.
	namedV6 = slices.Concat(
		ranges(ReasonUnspecified, "::/128"),
		ranges(ReasonLoopback, "::1/128"),
		ranges(ReasonULA, "fc00::/7"),
		ranges(ReasonLinkLocal, "fe80::/10", "fec0::/10"),
		ranges(ReasonMulticast, "ff00::/8"),
	)
)

// Policy decides which addresses connections may reach. An address is
// allowed when the operator's allow list holds it, or when it is a public
// unicast address: outside IANA's special-purpose ranges (IPv4-mapped
// addresses are unmapped first; NAT64 and 6to4 addresses are judged by the
// IPv4 address they embed; Teredo is denied), outside the cluster's ranges,
// and not a cloud metadata address. The runner's own ports (its RPC, the
// browser's DevTools, the egress proxy) are denied whatever the lists say.
// A nil *Policy is the default: no allow list, no cluster ranges.
type Policy struct {
	allow   []netip.Prefix
	cluster []netip.Prefix

	mu sync.RWMutex
	// own are the runner's listening sockets as prefix and port: a socket
	// bound to every interface is reachable at every loopback address.
	own []ownPort
}

type ownPort struct {
	prefix netip.Prefix
	port   uint16
}

// NewPolicy returns the policy of cfg.
func NewPolicy(cfg Config) *Policy {
	p := &Policy{}
	for _, a := range cfg.AllowCIDRs {
		p.allow = append(p.allow, unmapPrefix(a))
	}
	for _, c := range cfg.ClusterCIDRs {
		p.cluster = append(p.cluster, unmapPrefix(c))
	}
	return p
}

// unmapPrefix turns an IPv4-mapped IPv6 range into the IPv4 range: addresses
// are unmapped before they are checked.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	p = p.Masked()
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p
}

// DenyOwn denies the address of one of the runner's own listening sockets,
// whatever the allow list says: a page must not reach the runner's RPC, the
// browser's DevTools or the egress proxy itself. A socket bound to the
// unspecified address is denied at every loopback address and every
// address of the machine's interfaces.
func (p *Policy) DenyOwn(addr net.Addr) {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return
	}
	p.DenyOwnAddrPort(ap)
}

// DenyOwnAddrPort is DenyOwn for an address and port.
func (p *Policy) DenyOwnAddrPort(ap netip.AddrPort) {
	a, port := ap.Addr().Unmap().WithZone(""), ap.Port()
	var add []ownPort
	if a.IsUnspecified() {
		for _, c := range []string{"0.0.0.0/8", "127.0.0.0/8", "::/128", "::1/128"} {
			add = append(add, ownPort{netip.MustParsePrefix(c), port})
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, ia := range addrs {
				if n, ok := ia.(*net.IPNet); ok {
					if ip, ok := netip.AddrFromSlice(n.IP); ok {
						ip = ip.Unmap()
						add = append(add, ownPort{netip.PrefixFrom(ip, ip.BitLen()), port})
					}
				}
			}
		}
	} else {
		add = append(add, ownPort{netip.PrefixFrom(a, a.BitLen()), port})
	}
	p.mu.Lock()
	p.own = append(p.own, add...)
	p.mu.Unlock()
}

// Check says whether a connection to ap is denied, and why (one of the
// Reason constants).
func (p *Policy) Check(ap netip.AddrPort) (reason string, denied bool) {
	a := ap.Addr().Unmap().WithZone("")
	if p == nil {
		p = &Policy{}
	}
	if p.isOwn(a, ap.Port()) {
		return ReasonOwnPort, true
	}
	if slices.Contains(metadataAddrs, a) {
		if slices.ContainsFunc(p.allow, func(pr netip.Prefix) bool { return pr.IsSingleIP() && pr.Addr() == a }) {
			return "", false
		}
		return ReasonMetadata, true
	}
	if slices.ContainsFunc(p.allow, func(pr netip.Prefix) bool { return pr.Contains(a) }) {
		return "", false
	}
	if v4, ok := embeddedV4(a); ok {
		// The connection ends at the IPv4 address: judge that one.
		return p.Check(netip.AddrPortFrom(v4, ap.Port()))
	}
	if slices.ContainsFunc(p.cluster, func(pr netip.Prefix) bool { return pr.Contains(a) }) {
		return ReasonCluster, true
	}
	return publicReason(a)
}

// isOwn reports whether a:port is one of the runner's own sockets. The
// unspecified address reaches the machine itself, so it counts as loopback.
func (p *Policy) isOwn(a netip.Addr, port uint16) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, o := range p.own {
		if o.port != port {
			continue
		}
		if o.prefix.Contains(a) {
			return true
		}
		if a.IsUnspecified() && o.prefix.Addr().IsLoopback() {
			return true
		}
	}
	return false
}

// embeddedV4 returns the IPv4 address an IPv6 address leads to: the last 32
// bits of the well-known NAT64 prefix, where a translator connects, and bits
// 16 to 47 of a 6to4 address, where a relay (or this node) tunnels.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case !a.Is6():
		return netip.Addr{}, false
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// publicReason says why a is not a public unicast address, if it is not.
func publicReason(a netip.Addr) (string, bool) {
	if a.Is4() {
		for _, r := range specialV4 {
			if r.prefix.Contains(a) {
				return r.reason, true
			}
		}
		return "", false
	}
	for _, r := range namedV6 {
		if r.prefix.Contains(a) {
			return r.reason, true
		}
	}
	if !globalUnicastV6.Contains(a) {
		// IPv4-compatible and -translated forms, the local-use NAT64
		// prefix 64:ff9b:1::/48, discard-only 100::/64, SRv6 5f00::/16
		// and every unassigned block.
		return ReasonSpecial, true
	}
	for _, r := range specialV6 {
		if r.prefix.Contains(a) {
			return r.reason, true
		}
	}
	return "", false
}
