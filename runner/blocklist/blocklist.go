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

// Package blocklist is the ad and tracker host list a session with
// browserSettings.blockAds blocks. The list is hosts.txt, embedded at build
// time: one domain per line, '#' comments; a domain blocks itself and its
// subdomains. See hosts.txt for where the entries come from.
package blocklist

import (
	_ "embed"
	"slices"
	"strings"
)

//go:embed hosts.txt
var hostsFile string

// Hosts returns the listed domains, in the file's order.
func Hosts() []string {
	var hosts []string
	for line := range strings.Lines(hostsFile) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if line = strings.ToLower(strings.TrimSpace(line)); line != "" {
			hosts = append(hosts, line)
		}
	}
	return hosts
}

// URLPatterns returns patterns in the URLPattern syntax that
// Network.setBlockedURLs takes: for each domain, one for the domain itself
// and one for its subdomains, on any scheme and any port.
func URLPatterns() []string {
	hosts := Hosts()
	patterns := make([]string, 0, 2*len(hosts))
	for _, h := range hosts {
		patterns = append(patterns, "*://"+h+":*/*", "*://*."+h+":*/*")
	}
	return patterns
}

// Blocked reports whether host (no port) is a listed domain or a subdomain
// of one.
func Blocked(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return slices.ContainsFunc(Hosts(), func(d string) bool {
		return host == d || strings.HasSuffix(host, "."+d)
	})
}
