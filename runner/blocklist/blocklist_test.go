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

package blocklist

import (
	"slices"
	"strings"
	"testing"
)

func TestHosts(t *testing.T) {
	hosts := Hosts()
	if len(hosts) < 50 {
		t.Fatalf("Hosts() has %d entries, want a real list", len(hosts))
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if seen[h] {
			t.Errorf("%s listed twice", h)
		}
		seen[h] = true
		if strings.ContainsAny(h, " /:*#") || !strings.Contains(h, ".") {
			t.Errorf("%q is not a bare domain", h)
		}
	}
	for _, first := range []string{"google.com", "facebook.com", "amazon.com", "googleapis.com", "bing.com"} {
		if seen[first] {
			t.Errorf("%s serves first-party content and must not be listed", first)
		}
	}
}

func TestBlocked(t *testing.T) {
	tests := map[string]bool{
		"doubleclick.net":              true,
		"ads.g.doubleclick.net":        true,
		"DoubleClick.NET.":             true,
		"notdoubleclick.net":           false,
		"example.com":                  false,
		"www.google-analytics.com":     true,
		"imasdk.googleapis.com":        true,
		"storage.googleapis.com":       false,
		"securepubads.doubleclick.net": true,
	}
	for host, want := range tests {
		if got := Blocked(host); got != want {
			t.Errorf("Blocked(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestURLPatterns(t *testing.T) {
	p := URLPatterns()
	if len(p) != 2*len(Hosts()) {
		t.Fatalf("URLPatterns() has %d entries, want 2 per host", len(p))
	}
	for _, want := range []string{"*://doubleclick.net:*/*", "*://*.doubleclick.net:*/*"} {
		if !slices.Contains(p, want) {
			t.Errorf("URLPatterns() lacks %q", want)
		}
	}
}
