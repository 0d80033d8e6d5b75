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

package v1alpha1

import (
	"os"
	"strings"
	"testing"
)

func TestProxyServerHasUserInfo(t *testing.T) {
	for server, want := range map[string]bool{
		"http://proxy:3128":               false,
		"proxy:3128":                      false,
		"socks5://10.0.0.1:1080":          false,
		"http://proxy:3128/path@x":        false,
		"http://proxy:3128?u=a@b":         false,
		"http://me:hunter2@proxy:3128":    true,
		"me:hunter2@proxy:3128":           true,
		"https://token@proxy.example:443": true,
	} {
		if got := ProxyServerHasUserInfo(server); got != want {
			t.Errorf("ProxyServerHasUserInfo(%q) = %v, want %v", server, got, want)
		}
	}
}

// TestProxyServerCELSpellsThePattern: the CEL rules of LaunchProxy and Proxy
// use the very pattern the API checks with.
func TestProxyServerCELSpellsThePattern(t *testing.T) {
	src, err := os.ReadFile("browsersession_types.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "matches('"+ProxyServerUserInfoPattern+"')"); n != 2 {
		t.Errorf("the CEL rules spell ProxyServerUserInfoPattern %d times, want 2 (LaunchProxy, Proxy)", n)
	}
}
