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
// token, and the environment and secret files through which the manager
// configures it.
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

// The runner's calls to the API pod's runner listener, which serves what
// the operator provides runners without handing them its credentials (the
// agent's web search, search.RelayPath).
const (
	// FlagSearchURL is the URL of the API's search relay; the runner offers
	// the agent its search tool only with it.
	FlagSearchURL = "search-url"
	// FlagServicesURL is the base URL of the API's runner listener, where
	// the runner reaches the server-side cache (cache.RunnerPathGet, ...)
	// and the model gateway (gateway.RunnerPath) with its session token;
	// empty: neither.
	FlagServicesURL = "services-url"
	// FlagModelGateway says the API at FlagServicesURL serves the model
	// gateway: the runner calls a model with no credentials of its own,
	// or the model auto, through it. Without it such a model is called
	// directly, as the session names it.
	FlagModelGateway = "model-gateway"
	// HeaderRunnerSession names the calling runner's session,
	// "namespace/name"; the runner token goes in Authorization, as for
	// calls to the runner.
	HeaderRunnerSession = "X-Browserfleet-Session"
)

// Environment of the runner container, set by the manager. It holds no
// secret: tini, PID 1 of the container, keeps its environment for the pod's
// life, readable at /proc/1/environ by anything running as the runner's
// uid, Chromium's renderers included. Secrets are files (SecretsDir).
const (
	// EnvSession is the session's spec (a BrowserSessionSpec) as JSON,
	// without cloudSessionCreateParams.userMetadata, which the runner does
	// not use and which may be large. It holds secret references, never
	// secret values.
	EnvSession = "BROWSERFLEET_SESSION"
	// EnvSessionName is the BrowserSession's name, the session id.
	EnvSessionName = "BROWSERFLEET_SESSION_NAME"
	// EnvNamespace is the BrowserSession's namespace.
	EnvNamespace = "BROWSERFLEET_NAMESPACE"
	// EnvPodIP is the pod's IP, the address the runner listens on.
	EnvPodIP = "BROWSERFLEET_POD_IP"

	// EnvSecretsDir names the directory of the runner's secret files,
	// SecretsDir in the container. The variable exists so that a stand-in
	// kubelet that puts volumes elsewhere (internal/localkubelet) can say
	// where; the runner falls back to SecretsDir without it.
	EnvSecretsDir = "BROWSERFLEET_SECRETS_DIR"
	// EnvModelHeadersDir names ModelHeadersDir when the session has
	// spec.model.headersSecretRef.
	EnvModelHeadersDir = "BROWSERFLEET_MODEL_HEADERS_DIR"
	// EnvTerminationMessagePath names the file the runner writes the
	// summary of its history to when it stops (replay.Summary's
	// TerminationMessage): TerminationMessagePath in the container. The
	// kubelet copies the file into the container's terminated state,
	// where the manager reads it.
	EnvTerminationMessagePath = "BROWSERFLEET_TERMINATION_MESSAGE_PATH"
)

// Where the runner leaves the summary of its history: the container's
// terminationMessagePath, in a small memory-backed emptyDir that the
// runner may write although its root filesystem is read-only.
const (
	// StatusDir is the runner's writable status volume.
	StatusDir = "/var/run/browserfleet/status"
	// TerminationMessagePath is the runner container's
	// terminationMessagePath.
	TerminationMessagePath = StatusDir + "/termination-log"
)

// The runner's secrets, as files the manager mounts from Secrets: one
// projected volume at SecretsDir with a fixed file name per secret value,
// and a Secret volume at ModelHeadersDir for the model's header Secret,
// each file a header. The volumes are memory-backed and read-only; their
// files have mode 0400 (0440 with the pod's fsGroup, which is the runner's
// group), so only the runner's uid reads them.
const (
	// SecretsDir is the projected volume of the runner's secret values.
	SecretsDir = "/var/run/browserfleet/secrets"
	// ModelHeadersDir holds spec.model.headersSecretRef: one file per
	// header, named after it. It is a sibling of SecretsDir, not inside
	// it: a container runtime cannot make a mount point inside a read-only
	// volume.
	ModelHeadersDir = "/var/run/browserfleet/model-headers"

	// FileToken holds the runner token every call but HealthPath must
	// present (the session's token Secret, key TokenSecretKey).
	FileToken = "token"
	// FileModelAPIKey holds the value of spec.model.apiKeySecretRef.
	FileModelAPIKey = "model-api-key"
	// FileModelCredentials holds the value of
	// spec.model.auth.credentialsSecretRef.
	FileModelCredentials = "model-credentials"
	// FileLaunchProxyPassword holds the value of
	// spec.browser.launchOptions.proxy.passwordSecretRef.
	FileLaunchProxyPassword = "launch-proxy-password"
	// FileCloudProxyPasswordFormat, formatted with the entry's index, holds
	// the value of spec.cloudSessionCreateParams.proxies[i].passwordSecretRef.
	FileCloudProxyPasswordFormat = "proxy-%d-password"
	// FileCDPURL holds the value of spec.browser.cdpUrlSecretRef.
	FileCDPURL = "cdp-url"
	// FileCDPHeaders holds the value of
	// spec.browser.launchOptions.cdpHeadersSecretRef, a JSON object of
	// header names to values.
	FileCDPHeaders = "cdp-headers"
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
