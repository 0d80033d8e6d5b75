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
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeResolver answers from a table and records the lookups.
type fakeResolver struct {
	answers map[string][]string

	mu      sync.Mutex
	lookups []string
}

func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.lookups = append(r.lookups, network+" "+host)
	r.mu.Unlock()
	ans, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range ans {
		ip := netip.MustParseAddr(a)
		if network == "ip4" && !ip.Unmap().Is4() || network == "ip6" && ip.Unmap().Is4() {
			continue
		}
		out = append(out, ip)
	}
	return out, nil
}

// recordingDial records what the dialer dials and connects nothing: no test
// here sends a packet.
type recordingDial struct {
	mu     sync.Mutex
	dialed []string
	fail   map[string]error
}

func (d *recordingDial) dial(_ context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dialed = append(d.dialed, network+" "+address)
	if err := d.fail[address]; err != nil {
		return nil, err
	}
	c, _ := net.Pipe()
	return c, nil
}

func TestDialer(t *testing.T) {
	resolver := &fakeResolver{answers: map[string][]string{
		"public.example":    {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
		"metadata.example":  {"169.254.169.254"},
		"rebind.example":    {"93.184.215.14", "10.0.0.5"},
		"mapped.example":    {"::ffff:127.0.0.1"},
		"loopback.example":  {"127.0.0.1", "::1"},
		"cluster.example":   {"34.118.5.6"},
		"model.cluster.svc": {"10.20.3.4"},
		"azure.example":     {"168.63.129.16"},
		"empty.example":     {},
		"nat64.example":     {"64:ff9b::a9fe:a9fe"},
		"retry.example":     {"93.184.215.14", "93.184.215.15"},
		"trailing.example":  {"93.184.215.15"},
	}}
	policy := NewPolicy(Config{
		AllowCIDRs:   prefixes("10.20.0.0/16"),
		ClusterCIDRs: prefixes("34.118.0.0/16"),
	})
	tests := []struct {
		name       string
		network    string
		address    string
		failDial   map[string]error
		wantDialed []string
		wantDenied *DeniedError
		wantErr    string
	}{
		{
			name: "a public name is dialled at its checked addresses, not by name", network: "tcp", address: "public.example:443",
			wantDialed: []string{"tcp 93.184.215.14:443"},
		},
		{
			name: "the next address is tried when one fails", network: "tcp", address: "retry.example:80",
			failDial:   map[string]error{"93.184.215.14:80": errors.New("connection refused")},
			wantDialed: []string{"tcp 93.184.215.14:80", "tcp 93.184.215.15:80"},
		},
		{
			name: "tcp6 looks up IPv6 addresses only", network: "tcp6", address: "public.example:443",
			wantDialed: []string{"tcp6 [2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443"},
		},
		{
			name: "a name answering a metadata address", network: "tcp", address: "metadata.example:80",
			wantDenied: &DeniedError{Host: "metadata.example", Addr: netip.MustParseAddrPort("169.254.169.254:80"), Reason: ReasonMetadata},
		},
		{
			name: "one denied answer refuses the name", network: "tcp", address: "rebind.example:443",
			wantDenied: &DeniedError{Host: "rebind.example", Addr: netip.MustParseAddrPort("10.0.0.5:443"), Reason: ReasonPrivate},
		},
		{
			name: "a mapped loopback answer", network: "tcp", address: "mapped.example:8080",
			wantDenied: &DeniedError{Host: "mapped.example", Addr: netip.MustParseAddrPort("127.0.0.1:8080"), Reason: ReasonLoopback},
		},
		{
			name: "loopback by name", network: "tcp", address: "loopback.example:9222",
			wantDenied: &DeniedError{Host: "loopback.example", Addr: netip.MustParseAddrPort("127.0.0.1:9222"), Reason: ReasonLoopback},
		},
		{
			name: "the cluster's range", network: "tcp", address: "cluster.example:443",
			wantDenied: &DeniedError{Host: "cluster.example", Addr: netip.MustParseAddrPort("34.118.5.6:443"), Reason: ReasonCluster},
		},
		{
			name: "a public metadata address", network: "tcp", address: "azure.example:80",
			wantDenied: &DeniedError{Host: "azure.example", Addr: netip.MustParseAddrPort("168.63.129.16:80"), Reason: ReasonMetadata},
		},
		{
			name: "NAT64 of a metadata address", network: "tcp", address: "nat64.example:80",
			wantDenied: &DeniedError{Host: "nat64.example", Addr: netip.MustParseAddrPort("[64:ff9b::a9fe:a9fe]:80"), Reason: ReasonMetadata},
		},
		{
			name: "an allowed private range", network: "tcp", address: "model.cluster.svc:8000",
			wantDialed: []string{"tcp 10.20.3.4:8000"},
		},
		{
			name: "an IP literal is checked without a lookup", network: "tcp", address: "169.254.169.254:80",
			wantDenied: &DeniedError{Host: "169.254.169.254", Addr: netip.MustParseAddrPort("169.254.169.254:80"), Reason: ReasonMetadata},
		},
		{
			name: "an IPv6 literal", network: "tcp", address: "[fd00:ec2::254]:80",
			wantDenied: &DeniedError{Host: "fd00:ec2::254", Addr: netip.MustParseAddrPort("[fd00:ec2::254]:80"), Reason: ReasonMetadata},
		},
		{
			name: "a public IP literal", network: "tcp", address: "93.184.215.14:443",
			wantDialed: []string{"tcp 93.184.215.14:443"},
		},
		{
			name: "a fully qualified name", network: "tcp", address: "trailing.example.:443",
			wantDialed: []string{"tcp 93.184.215.15:443"},
		},
		{name: "no such host", network: "tcp", address: "missing.example:443", wantErr: "resolving missing.example: lookup missing.example: no such host"},
		{name: "no answers", network: "tcp", address: "empty.example:443", wantErr: "resolving empty.example: no addresses"},
		{name: "udp", network: "udp", address: "public.example:53", wantErr: `network "udp" is not tcp`},
		{name: "a named port", network: "tcp", address: "public.example:https", wantErr: `port "https" is not a number`},
		{name: "no port", network: "tcp", address: "public.example", wantErr: "missing port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingDial{fail: tt.failDial}
			d := &Dialer{Policy: policy, Resolver: resolver, dial: rec.dial}
			c, err := d.DialContext(context.Background(), tt.network, tt.address)
			if c != nil {
				c.Close()
			}
			if diff := cmp.Diff(tt.wantDialed, rec.dialed); diff != "" {
				t.Errorf("dialled (-want +got):\n%s", diff)
			}
			switch {
			case tt.wantDenied != nil:
				var got *DeniedError
				if !errors.As(err, &got) {
					t.Fatalf("DialContext = %v, want a denial", err)
				}
				if diff := cmp.Diff(tt.wantDenied, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
					t.Errorf("denial (-want +got):\n%s", diff)
				}
				// The message names the host and the kind of address.
				if want := "the egress policy refuses connections to " + tt.wantDenied.Host + " (" + tt.wantDenied.Reason + ")"; err.Error() != want {
					t.Errorf("message %q, want %q", err.Error(), want)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("DialContext = %v, want an error containing %q", err, tt.wantErr)
				}
				if Denied(err) != nil {
					t.Errorf("DialContext = %v, want no denial", err)
				}
			case err != nil:
				t.Errorf("DialContext = %v", err)
			}
		})
	}
}
