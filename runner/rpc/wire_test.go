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

package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestActInputJSON(t *testing.T) {
	node := int64(42)
	tests := []struct {
		name string
		json string
		want ActInput
		// canonical is how the value is written back; empty means json.
		canonical string
	}{
		{
			name: "instruction",
			json: `"click the sign in button"`,
			want: ActInput{Instruction: "click the sign in button"},
		},
		{
			name: "instruction with escapes",
			json: `"type \"%name%\" into the field\n"`,
			want: ActInput{Instruction: "type \"%name%\" into the field\n"},
		},
		{
			name: "full action",
			json: `{"selector":"xpath=/html/body/button[1]","description":"the sign in button","backendNodeId":42,"method":"click","arguments":[]}`,
			want: ActInput{Action: &Action{
				Selector:      "xpath=/html/body/button[1]",
				Description:   "the sign in button",
				BackendNodeID: &node,
				Method:        "click",
				Arguments:     []string{},
			}},
			canonical: `{"selector":"xpath=/html/body/button[1]","description":"the sign in button","backendNodeId":42,"method":"click"}`,
		},
		{
			name: "action with arguments",
			json: `{"selector":"#q","description":"search box","method":"fill","arguments":["browserfleet"]}`,
			want: ActInput{Action: &Action{
				Selector:    "#q",
				Description: "search box",
				Method:      "fill",
				Arguments:   []string{"browserfleet"},
			}},
		},
		{
			name:      "minimal action",
			json:      ` {"selector":"#go"} `,
			want:      ActInput{Action: &Action{Selector: "#go"}},
			canonical: `{"selector":"#go","description":""}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got ActInput
			if err := json.Unmarshal([]byte(tt.json), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Unmarshal mismatch (-want +got):\n%s", diff)
			}
			out, err := json.Marshal(got)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			want := tt.canonical
			if want == "" {
				want = strings.TrimSpace(tt.json)
			}
			if diff := cmp.Diff(want, string(out)); diff != "" {
				t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
			}
			// And once more: what we write reads back the same.
			var again ActInput
			if err := json.Unmarshal(out, &again); err != nil {
				t.Fatalf("Unmarshal of Marshal: %v", err)
			}
			if diff := cmp.Diff(got, again, cmp.Comparer(func(a, b []string) bool {
				return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b)
			})); diff != "" {
				t.Errorf("round trip mismatch (-first +second):\n%s", diff)
			}
		})
	}
}

func TestActInputJSONErrors(t *testing.T) {
	for _, in := range []string{`42`, `true`, `["click"]`, `{"selector": 3}`} {
		var got ActInput
		err := json.Unmarshal([]byte(in), &got)
		if err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", in, got)
		}
	}
	// A wrong kind is named, the value is not echoed.
	var got ActInput
	err := json.Unmarshal([]byte(`12345`), &got)
	if err == nil || strings.Contains(err.Error(), "12345") {
		t.Errorf("Unmarshal(12345) error = %v, want one that does not quote the value", err)
	}
}

func TestActRequestJSON(t *testing.T) {
	timeout := 1500.0
	in := `{"input":"click %what%","options":{"model":"openai/gpt-4.1-mini","variables":{"what":"the button","secret":{"value":"hunter2","description":"the password"}},"timeout":1500},"frameId":"F1"}`
	want := ActRequest{
		Input: ActInput{Instruction: "click %what%"},
		Options: ActOptions{
			Model: &ModelConfig{ModelName: "openai/gpt-4.1-mini"},
			Variables: Variables{
				"what":   {Value: "the button"},
				"secret": {Value: "hunter2", Description: "the password"},
			},
			Timeout: &timeout,
		},
		FrameID: "F1",
	}
	var got ActRequest
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	// The model comes back as an object, variables as written.
	wantOut := `{"input":"click %what%","options":{"model":{"modelName":"openai/gpt-4.1-mini"},"variables":{"secret":{"value":"hunter2","description":"the password"},"what":"the button"},"timeout":1500},"frameId":"F1"}`
	if diff := cmp.Diff(wantOut, string(out)); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	// Options are left out when empty.
	out, _ = json.Marshal(ActRequest{Input: ActInput{Instruction: "x"}})
	if diff := cmp.Diff(`{"input":"x"}`, string(out)); diff != "" {
		t.Errorf("Marshal of a bare request (-want +got):\n%s", diff)
	}
}

func TestModelConfigLogValueRedacts(t *testing.T) {
	m := ModelConfig{ModelName: "openai/x", APIKey: "sk-very-secret", Headers: map[string]string{"X-Key": "also-secret"}}
	s := m.LogValue().String()
	if strings.Contains(s, "sk-very-secret") || strings.Contains(s, "also-secret") {
		t.Errorf("LogValue() = %s, leaks a secret", s)
	}
}

func TestError(t *testing.T) {
	err := fmt.Errorf("navigating: %w", Errorf(CodeTimeout, "navigation timed out after %v", "1s"))
	if got := CodeOf(err); got != CodeTimeout {
		t.Errorf("CodeOf = %q, want %q", got, CodeTimeout)
	}
	if !errors.Is(err, &Error{Code: CodeTimeout}) {
		t.Errorf("errors.Is(err, timeout) = false")
	}
	if errors.Is(err, &Error{Code: CodeCanceled}) {
		t.Errorf("errors.Is(err, canceled) = true")
	}
	b, _ := json.Marshal(Errorf(CodeBrowserCrashed, "chromium exited"))
	if diff := cmp.Diff(`{"error":"chromium exited","code":"BROWSER_CRASHED"}`, string(b)); diff != "" {
		t.Errorf("body mismatch (-want +got):\n%s", diff)
	}
	for code, status := range map[ErrorCode]int{
		CodeBadRequest:       http.StatusBadRequest,
		CodeUnauthorized:     http.StatusUnauthorized,
		CodeBrowserCrashed:   http.StatusServiceUnavailable,
		CodeTimeout:          http.StatusGatewayTimeout,
		CodeSchemaViolation:  http.StatusUnprocessableEntity,
		CodeModelError:       http.StatusBadGateway,
		CodeNavigationFailed: http.StatusBadGateway,
		CodeEngineError:      http.StatusInternalServerError,
		CodeNotClaimed:       http.StatusConflict,
		CodeAlreadyClaimed:   http.StatusConflict,
		CodeLaunchMismatch:   http.StatusUnprocessableEntity,
	} {
		if got := HTTPStatus(code); got != status {
			t.Errorf("HTTPStatus(%s) = %d, want %d", code, got, status)
		}
	}
}
