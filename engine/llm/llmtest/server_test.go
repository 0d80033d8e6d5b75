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

package llmtest

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// recordingTB records the errors a Server reports instead of failing.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerReportsUnscriptedRequests(t *testing.T) {
	tb := &recordingTB{TB: t}
	srv := NewServer(tb)

	if status, _ := post(t, srv.URL()+"/v2/unknown", `{}`); status != http.StatusNotFound {
		t.Errorf("unknown path: status %d, want 404", status)
	}
	status, body := post(t, srv.BaseURL(OpenAI)+"/chat/completions", `{"model":"m","messages":[]}`)
	if status != http.StatusInternalServerError || !strings.Contains(body, "no scripted reply left") {
		t.Errorf("unscripted request: %d %s", status, body)
	}
	if len(tb.errors) != 2 {
		t.Errorf("server reported %d errors, want 2: %q", len(tb.errors), tb.errors)
	}
}

func TestServerScript(t *testing.T) {
	srv := NewServer(t)
	srv.Enqueue(Text("one"), Status(http.StatusTooManyRequests).WithRetryAfter(1500e6).WithMessage("slow down"))
	if n := srv.Pending(); n != 2 {
		t.Errorf("Pending = %d, want 2", n)
	}
	status, body := post(t, srv.URL()+"/v1/messages", `{"model":"claude","system":"sys","messages":[{"role":"user","content":"hi"}]}`)
	if status != http.StatusOK || !strings.Contains(body, `"text":"one"`) {
		t.Errorf("first reply: %d %s", status, body)
	}
	resp, err := http.Post(srv.URL()+"/v1beta/models/gemini-x:generateContent", "application/json",
		strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hey"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" || !strings.Contains(string(b), "RESOURCE_EXHAUSTED") {
		t.Errorf("second reply: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("Requests() = %d, want 2", len(reqs))
	}
	if r := reqs[0]; r.Provider != Anthropic || r.Model != "claude" || r.Text != "sys\nhi" {
		t.Errorf("first request recorded as %s %q %q", r.Provider, r.Model, r.Text)
	}
	if r := reqs[1]; r.Provider != Google || r.Model != "gemini-x" || r.Text != "hey" {
		t.Errorf("second request recorded as %s %q %q", r.Provider, r.Model, r.Text)
	}
}

func TestRoute(t *testing.T) {
	tests := []struct {
		method, path    string
		provider, model string
	}{
		{"POST", "/v1/chat/completions", OpenAI, ""},
		{"POST", "/chat/completions", OpenAI, ""},
		{"POST", "/v1/responses", OpenAI, ""},
		{"POST", "/v1/messages", Anthropic, ""},
		{"POST", "/v1beta/models/gemini-2.5-flash:generateContent", Google, "gemini-2.5-flash"},
		{"POST", "/v1/models/gemini-2.5-flash:generateContent", Google, "gemini-2.5-flash"},
		{"POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "", ""},
		{"GET", "/v1/messages", "", ""},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(tc.method, "http://x"+tc.path, nil)
		if p, m := route(req); p != tc.provider || m != tc.model {
			t.Errorf("route(%s %s) = %q, %q; want %q, %q", tc.method, tc.path, p, m, tc.provider, tc.model)
		}
	}
}

func TestToolCallsNeedObjectArguments(t *testing.T) {
	for _, provider := range []string{Anthropic, Google} {
		t.Run(provider, func(t *testing.T) {
			tb := &recordingTB{TB: t}
			srv := NewServer(tb)
			srv.Enqueue(ToolCalls(Call("goto", `["not", "an", "object"]`)))
			url := srv.URL() + "/v1/messages"
			if provider == Google {
				url = srv.URL() + "/v1beta/models/gemini-x:generateContent"
			}
			if status, _ := post(t, url, `{"model":"m"}`); status != http.StatusInternalServerError {
				t.Errorf("status %d, want 500", status)
			}
			if len(tb.errors) != 1 || !strings.Contains(tb.errors[0], "not a JSON object") {
				t.Errorf("server reported %q, want one error about the arguments", tb.errors)
			}
		})
	}
}

func TestComputerReplyShapes(t *testing.T) {
	tests := []struct {
		name, path, body string
		reply            Reply
		// want is in the answer; empty when the script is an error.
		want string
	}{
		{"openai preview: a call per action", "/v1/responses", `{"model":"computer-use-preview","input":"go","tools":[{"type":"computer_use_preview"}]}`,
			Computer(Click(1, 2), Screenshot()), `"call_id":"call_llmtest_1_1"`},
		{"openai computer tool: one batched call", "/v1/responses", `{"model":"gpt-5.4","input":"go","tools":[{"type":"computer"}]}`,
			Computer(Click(1, 2), Screenshot()), `"actions":[{"button":"left","type":"click","x":1,"y":2},{"type":"screenshot"}]`},
		{"openai final text", "/v1/responses", `{"model":"computer-use-preview","input":"go"}`,
			Text("done"), `"type":"output_text"`},
		{"openai chat has no computer", "/v1/chat/completions", `{"model":"m","messages":[]}`,
			Computer(Click(1, 2)), ""},
		{"anthropic has no navigate", "/v1/messages", `{"model":"m","messages":[]}`,
			Computer(Navigate("http://x")), ""},
		{"anthropic has no safety checks", "/v1/messages", `{"model":"m","messages":[]}`,
			Computer(Click(1, 2)).WithSafetyCheck("c", "m"), ""},
		{"google safety decision", "/v1beta/models/g:generateContent", `{"contents":[]}`,
			Computer(Click(1, 2)).WithSafetyCheck("c", "looks odd"), `"safety_decision":{"decision":"require_confirmation","explanation":"looks odd"}`},
		{"native action of another provider", "/v1beta/models/g:generateContent", `{"contents":[]}`,
			Computer(NativeAction(Anthropic, "", `{"action":"zoom"}`)), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := &recordingTB{TB: t}
			srv := NewServer(tb)
			srv.Enqueue(tc.reply)
			status, body := post(t, srv.URL()+tc.path, tc.body)
			if tc.want == "" {
				if status != http.StatusInternalServerError || len(tb.errors) != 1 {
					t.Errorf("status %d, errors %q; want 500 and the script's error reported", status, tb.errors)
				}
				return
			}
			if status != http.StatusOK || !strings.Contains(body, tc.want) {
				t.Errorf("answer %d %s lacks %s", status, body, tc.want)
			}
		})
	}
}

func TestServerHoldsAReplyUntilReleased(t *testing.T) {
	srv := NewServer(t)
	release := make(chan struct{})
	srv.Enqueue(Text("held").WithRelease(release))

	answered := make(chan string, 1)
	go func() {
		_, body := post(t, srv.BaseURL(OpenAI)+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		answered <- body
	}()
	// The request arrives and takes its reply, which waits for the test.
	for len(srv.Requests()) == 0 {
		runtime.Gosched()
	}
	select {
	case body := <-answered:
		t.Fatalf("answered before the release: %s", body)
	default:
	}
	close(release)
	if body := <-answered; !strings.Contains(body, "held") {
		t.Errorf("answer after the release: %s", body)
	}
}
