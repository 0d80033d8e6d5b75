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

// Package rpc is the contract between the runner pod and the components that
// start and call it: the port and paths it serves, the header that carries its
// token, and the environment through which the manager configures it.
package rpc

import (
	"fmt"
	"net/netip"
	"strings"
)

const (
	// Port is the port the runner serves its RPC and CDP proxy on.
	Port int32 = 8080
	// PortName names Port in the runner pod.
	PortName = "rpc"

	// HealthPath answers 200 while the runner and its browser serve calls.
	// It is the pod's readiness probe and needs no token.
	HealthPath = "/healthz"
	// CDPPath is the runner's WebSocket proxy to the browser's DevTools
	// endpoint.
	CDPPath = "/cdp"

	// TokenSecretKey is the key of the session's token Secret that holds the
	// runner token.
	TokenSecretKey = "token"
)

// Flags of the runner the manager sets from its own configuration
// (EgressArgs), each repeatable, each value a CIDR or an address
// (ParseCIDR).
const (
	// FlagEgressAllowCIDR is a range the browser and the runner may
	// connect to although it is not public.
	FlagEgressAllowCIDR = "egress-allow-cidr"
	// FlagEgressClusterCIDR is a pod or service range of the cluster,
	// denied even where it is public.
	FlagEgressClusterCIDR = "egress-cluster-cidr"
)

// Environment of the runner container, set by the manager.
const (
	// EnvToken is the runner token every call must present.
	EnvToken = "BROWSERFLEET_RUNNER_TOKEN"
	// EnvSession is the session's spec (a BrowserSessionSpec) as JSON. It
	// holds secret references, never secret values.
	EnvSession = "BROWSERFLEET_SESSION"
	// EnvSessionName is the BrowserSession's name, the session id.
	EnvSessionName = "BROWSERFLEET_SESSION_NAME"
	// EnvNamespace is the BrowserSession's namespace.
	EnvNamespace = "BROWSERFLEET_NAMESPACE"
	// EnvPodIP is the pod's IP, the address the runner listens on.
	EnvPodIP = "BROWSERFLEET_POD_IP"

	// EnvModelAPIKey holds the value of spec.model.apiKeySecretRef.
	EnvModelAPIKey = "BROWSERFLEET_MODEL_API_KEY"
	// EnvModelCredentials holds the value of spec.model.auth.credentialsSecretRef.
	EnvModelCredentials = "BROWSERFLEET_MODEL_CREDENTIALS"
	// EnvModelHeaderPrefix prefixes each key of spec.model.headersSecretRef.
	EnvModelHeaderPrefix = "BROWSERFLEET_MODEL_HEADER_"
	// EnvLaunchProxyPassword holds the value of
	// spec.browser.launchOptions.proxy.passwordSecretRef.
	EnvLaunchProxyPassword = "BROWSERFLEET_LAUNCH_PROXY_PASSWORD"
	// EnvCloudProxyPasswordFormat, formatted with the entry's index, holds
	// the value of spec.cloudSessionCreateParams.proxies[i].passwordSecretRef.
	EnvCloudProxyPasswordFormat = "BROWSERFLEET_PROXY_%d_PASSWORD"
	// EnvCDPURL holds the value of spec.browser.cdpUrlSecretRef.
	EnvCDPURL = "BROWSERFLEET_CDP_URL"
	// EnvCDPHeaders holds the value of
	// spec.browser.launchOptions.cdpHeadersSecretRef: a JSON object of
	// header names to values.
	EnvCDPHeaders = "BROWSERFLEET_CDP_HEADERS"
)

// ParseCIDR reads a value of the egress flags: a CIDR ("10.0.0.0/8",
// "fd00::/8") or a single address ("10.0.0.7", a /32 or /128). A CIDR with
// host bits set is refused (it says something other than its writer
// probably meant), and so are IPv4-mapped IPv6 ranges (give the IPv4 one)
// and zones.
func ParseCIDR(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR or an IP address", s)
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR or an IP address", s)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%q has bits set beyond its prefix length; did you mean %s?", s, p.Masked())
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("%q is an IPv4-mapped IPv6 range; give the IPv4 range", s)
	}
	return p, nil
}

// EgressArgs are the runner's arguments that give it the operator's egress
// ranges.
func EgressArgs(allow, cluster []netip.Prefix) []string {
	var args []string
	for _, p := range allow {
		args = append(args, "--"+FlagEgressAllowCIDR+"="+p.String())
	}
	for _, p := range cluster {
		args = append(args, "--"+FlagEgressClusterCIDR+"="+p.String())
	}
	return args
}
