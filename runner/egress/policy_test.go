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
	"io"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// These tests judge address values only: no packet leaves the test.

func prefixes(cidrs ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		out[i] = netip.MustParsePrefix(c)
	}
	return out
}

func TestPolicyDefault(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" allowed, else the reason
	}{
		// Public unicast.
		{"93.184.215.14", ""},
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"192.31.196.1", ""}, // AS112, globally reachable
		{"2606:4700:4700::1111", ""},
		{"2a00:1450:4001:82a::200e", ""},
		{"::ffff:93.184.215.14", ""},
		{"64:ff9b::5db8:d70e", ""}, // NAT64 of 93.184.215.14
		{"2002:5db8:d70e::1", ""},  // 6to4 of 93.184.215.14

		// Cloud metadata, by name.
		{"169.254.169.254", ReasonMetadata},
		{"fd00:ec2::254", ReasonMetadata},
		{"168.63.129.16", ReasonMetadata},
		{"100.100.100.200", ReasonMetadata},
		{"::ffff:169.254.169.254", ReasonMetadata},
		{"::ffff:168.63.129.16", ReasonMetadata},
		{"64:ff9b::a9fe:a9fe", ReasonMetadata}, // NAT64 of 169.254.169.254
		{"64:ff9b::a83f:8110", ReasonMetadata}, // NAT64 of 168.63.129.16
		{"2002:a9fe:a9fe::1", ReasonMetadata},  // 6to4 of 169.254.169.254

		// Loopback.
		{"127.0.0.1", ReasonLoopback},
		{"127.255.255.254", ReasonLoopback},
		{"::1", ReasonLoopback},
		{"::ffff:127.0.0.1", ReasonLoopback},
		{"64:ff9b::7f00:1", ReasonLoopback},
		{"2002:7f00:1::", ReasonLoopback},

		// RFC 1918.
		{"10.0.0.1", ReasonPrivate},
		{"10.255.255.255", ReasonPrivate},
		{"172.16.0.1", ReasonPrivate},
		{"172.31.255.255", ReasonPrivate},
		{"192.168.1.1", ReasonPrivate},
		{"::ffff:10.0.0.1", ReasonPrivate},
		{"::ffff:192.168.0.1", ReasonPrivate},
		{"64:ff9b::a00:1", ReasonPrivate},
		{"2002:c0a8:101::1", ReasonPrivate},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},

		// CGNAT.
		{"100.64.0.1", ReasonSharedNAT},
		{"100.127.255.255", ReasonSharedNAT},
		{"100.128.0.0", ""},

		// Link-local.
		{"169.254.0.1", ReasonLinkLocal},
		{"169.254.20.10", ReasonLinkLocal},
		{"fe80::1", ReasonLinkLocal},
		{"fe80::1%eth0", ReasonLinkLocal},
		{"fec0::1", ReasonLinkLocal},

		// ULA.
		{"fc00::1", ReasonULA},
		{"fd12:3456:789a::1", ReasonULA},

		// Multicast, unspecified, broadcast, reserved.
		{"224.0.0.1", ReasonMulticast},
		{"239.255.255.250", ReasonMulticast},
		{"ff02::1", ReasonMulticast},
		{"0.0.0.0", ReasonUnspecified},
		{"0.1.2.3", ReasonUnspecified},
		{"::", ReasonUnspecified},
		{"255.255.255.255", ReasonSpecial},
		{"240.0.0.1", ReasonSpecial},

		// Documentation, benchmarking, protocol assignments.
		{"192.0.2.1", ReasonSpecial},
		{"198.51.100.1", ReasonSpecial},
		{"203.0.113.1", ReasonSpecial},
		{"198.18.0.1", ReasonSpecial},
		{"198.19.255.255", ReasonSpecial},
		{"192.0.0.1", ReasonSpecial},
		{"192.0.0.170", ReasonSpecial},
		{"192.88.99.1", ReasonSpecial},
		{"2001:db8::1", ReasonSpecial},
		{"3fff::1", ReasonSpecial},
		{"2001:2::1", ReasonSpecial},
		{"100::1", ReasonSpecial},
		{"5f00::1", ReasonSpecial},

		// IPv6 forms that lead elsewhere.
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", ReasonSpecial}, // Teredo: denied
		{"64:ff9b:1::a00:1", ReasonSpecial},                     // local-use NAT64
		{"::a00:1", ReasonSpecial},                              // IPv4-compatible, deprecated
		{"::ffff:0:a00:1", ReasonSpecial},                       // IPv4-translated
	}
	var p *Policy // the default
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		reason, denied := p.Check(netip.AddrPortFrom(a, 443))
		if denied != (tt.want != "") || reason != tt.want {
			t.Errorf("%s: denied %v (%q), want %q", tt.addr, denied, reason, tt.want)
		}
	}
}

func TestPolicyOperatorLists(t *testing.T) {
	p := NewPolicy(Config{
		AllowCIDRs: prefixes(
			"10.20.0.0/16",         // an in-cluster model server's range
			"127.0.0.0/8",          // loopback, as make dev allows
			"169.254.0.0/16",       // link-local, for NodeLocal DNSCache
			"fc00::/7",             // all ULA
			"100.100.100.200/32",   // one metadata address, by itself
			"203.0.113.0/24",       // documentation range, allowed
			"34.120.0.0/16",        // public, allowed but also cluster
			"2001:db8:1::/48",      // documentation range, allowed
			"192.168.7.7/32",       // one private host
			"100.64.0.0/10",        // CGNAT
			"64:ff9b::a00:0/120",   // a NAT64 range
			"198.18.0.0/15",        // benchmarking
			"::ffff:10.30.0.0/112", // mapped; checked unmapped
		),
		ClusterCIDRs: prefixes("34.118.0.0/16", "34.120.0.0/16", "2600:1900:4000::/44"),
	})
	tests := []struct {
		addr string
		want string
	}{
		{"10.20.3.4", ""},
		{"::ffff:10.20.3.4", ""},
		{"10.21.0.1", ReasonPrivate},
		{"127.0.0.1", ""},
		{"127.0.0.53", ""},
		{"::1", ReasonLoopback}, // only 127.0.0.0/8 was allowed
		{"169.254.20.10", ""},
		{"fd12::1", ""},
		// Metadata stays denied inside an allowed range ...
		{"169.254.169.254", ReasonMetadata},
		{"fd00:ec2::254", ReasonMetadata},
		{"168.63.129.16", ReasonMetadata},
		// ... unless the allow list names it alone.
		{"100.100.100.200", ""},
		{"100.64.0.1", ""},
		{"203.0.113.9", ""},
		{"2001:db8:1::5", ""},
		{"2001:db8:2::5", ReasonSpecial},
		{"192.168.7.7", ""},
		{"192.168.7.8", ReasonPrivate},
		{"198.18.0.1", ""},
		// Cluster ranges are denied even when public; the allow list wins.
		{"34.118.5.6", ReasonCluster},
		{"34.120.5.6", ""},
		{"2600:1900:4001::1", ReasonCluster},
		{"2600:1900:4010::1", ""},
		{"64:ff9b::2276:506", ReasonCluster}, // NAT64 of 34.118.5.6
		{"2002:2276:506::1", ReasonCluster},  // 6to4 of 34.118.5.6
		{"64:ff9b::a00:5", ""},               // NAT64, allowed as such
		{"64:ff9b::a14:304", ""},             // NAT64 of the allowed 10.20.3.4
		{"34.119.0.1", ""},
		{"10.30.1.1", ""}, // in the mapped range, given unmapped
		{"::ffff:10.30.1.1", ""},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		reason, denied := p.Check(netip.AddrPortFrom(a, 8080))
		if denied != (tt.want != "") || reason != tt.want {
			t.Errorf("%s: denied %v (%q), want %q", tt.addr, denied, reason, tt.want)
		}
	}
}

func TestPolicyOwnPorts(t *testing.T) {
	p := NewPolicy(Config{AllowCIDRs: prefixes("127.0.0.0/8", "::1/128", "10.0.0.0/8", "0.0.0.0/8")})
	p.DenyOwnAddrPort(netip.MustParseAddrPort("127.0.0.1:9222"))   // DevTools
	p.DenyOwnAddrPort(netip.MustParseAddrPort("10.244.0.17:8080")) // the RPC on the pod IP
	p.DenyOwnAddrPort(netip.MustParseAddrPort("[::]:7000"))        // a socket on every interface
	p.DenyOwnAddrPort(netip.MustParseAddrPort("[::ffff:127.0.0.9]:5000"))
	tests := []struct {
		addrPort string
		want     string
	}{
		{"127.0.0.1:9222", ReasonOwnPort},
		{"[::ffff:127.0.0.1]:9222", ReasonOwnPort},
		{"0.0.0.0:9222", ReasonOwnPort}, // Linux connects 0.0.0.0 to the machine itself
		{"[::]:9222", ReasonOwnPort},
		{"127.0.0.2:9222", ""}, // the DevTools socket is bound to 127.0.0.1 only
		{"127.0.0.1:9223", ""},
		{"10.244.0.17:8080", ReasonOwnPort},
		{"10.244.0.17:8081", ""},
		{"127.0.0.1:7000", ReasonOwnPort},
		{"127.3.4.5:7000", ReasonOwnPort},
		{"[::1]:7000", ReasonOwnPort},
		{"0.0.0.0:7000", ReasonOwnPort},
		{"127.0.0.9:5000", ReasonOwnPort},
		{"127.0.0.1:5000", ""},
	}
	for _, tt := range tests {
		reason, denied := p.Check(netip.MustParseAddrPort(tt.addrPort))
		if denied != (tt.want != "") || reason != tt.want {
			t.Errorf("%s: denied %v (%q), want %q", tt.addrPort, denied, reason, tt.want)
		}
	}
}

func TestConfigFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    Config
		wantErr bool
	}{
		{name: "none"},
		{
			name: "ranges and single addresses",
			args: []string{"--egress-allow-cidr=127.0.0.0/8", "--egress-allow-cidr=::1", "--egress-allow-cidr=10.0.0.7",
				"--egress-cluster-cidr=34.118.0.0/16", "--egress-cluster-cidr", "2600:1900:4000::/44"},
			want: Config{
				AllowCIDRs:   prefixes("127.0.0.0/8", "::1/128", "10.0.0.7/32"),
				ClusterCIDRs: prefixes("34.118.0.0/16", "2600:1900:4000::/44"),
			},
		},
		{name: "not a range", args: []string{"--egress-allow-cidr=example.com"}, wantErr: true},
		{name: "host bits set", args: []string{"--egress-cluster-cidr=10.1.2.3/8"}, wantErr: true},
		{name: "mapped range", args: []string{"--egress-allow-cidr=::ffff:10.0.0.0/104"}, wantErr: true},
		{name: "zone", args: []string{"--egress-allow-cidr=fe80::1%eth0"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Config
			fs := flag.NewFlagSet("runner", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			got.AddFlags(fs)
			err := fs.Parse(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse(%v) = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// Args give the same configuration back.
			var again Config
			fs = flag.NewFlagSet("runner", flag.ContinueOnError)
			again.AddFlags(fs)
			if err := fs.Parse(got.Args()); err != nil {
				t.Fatalf("parsing Args() %v: %v", got.Args(), err)
			}
			if diff := cmp.Diff(got, again, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("Args() round trip (-want +got):\n%s", diff)
			}
		})
	}
}
