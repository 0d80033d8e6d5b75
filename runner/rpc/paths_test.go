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

package rpc_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc":   "abc",
		"bearer  abc ": "abc",
		"Basic abc":    "",
		"Bearer":       "",
		"Bearer  ":     "",
		"":             "",
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		got, ok := rpc.BearerToken(r)
		if got != want || ok != (want != "") {
			t.Errorf("BearerToken(%q) = %q, %v; want %q", header, got, ok, want)
		}
	}
}

func TestSameToken(t *testing.T) {
	tests := []struct {
		got, want string
		same      bool
	}{
		{got: "abc", want: "abc", same: true},
		{got: "abd", want: "abc"},
		{got: "abcd", want: "abc"},
		{got: "", want: "abc"},
	}
	for _, tt := range tests {
		if s := rpc.SameToken(tt.got, tt.want); s != tt.same {
			t.Errorf("SameToken(%q, %q) = %v, want %v", tt.got, tt.want, s, tt.same)
		}
	}
}
