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

package replay_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// TestRedact: what the history keeps of a call's parameters and
// result, never a typed text, a variable's value or a URL's secrets.
func TestRedact(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{
			name: "a fill action given as is",
			in: rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{
				Selector: "xpath=//input[@type='password']", Description: "the password", Method: "fill", Arguments: []string{"hunter2"},
			}}},
			want: `{"input":{"arguments":["[redacted]"],"description":"the password","method":"fill","selector":"xpath=//input[@type='password']"}}`,
		},
		{
			name: "the actions an act performed",
			in: rpc.ActResult{Success: true, Actions: []rpc.Action{
				{Selector: "#user", Method: "type", Arguments: []string{"alice@example.com"}},
				{Selector: "#go", Method: "click"},
				{Selector: "#q", Method: "press", Arguments: []string{"Enter"}},
			}},
			want: `{"actionDescription":"","actions":[{"arguments":["[redacted]"],"description":"","method":"type","selector":"#user"},{"description":"","method":"click","selector":"#go"},{"arguments":["Enter"],"description":"","method":"press","selector":"#q"}],"message":"","success":true}`,
		},
		{
			name: "variables keep their names only",
			in:   map[string]any{"input": "log in as %user%", "options": map[string]any{"variables": map[string]any{"user": "alice", "password": map[string]any{"value": "hunter2", "description": "secret"}}}},
			want: `{"input":"log in as %user%","options":{"variables":{"password":"[redacted]","user":"[redacted]"}}}`,
		},
		{
			name: "URLs lose user info, query values and fragments",
			in:   map[string]any{"url": "https://me:pw@shop.example/cart?token=abc&id=7#otp=123456", "pageUrl": "data:text/html,<b>secret</b>"},
			want: `{"pageUrl":"data:[redacted]","url":"https://shop.example/cart?id=%5Bredacted%5D\u0026token=%5Bredacted%5D"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := replay.Redact(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
