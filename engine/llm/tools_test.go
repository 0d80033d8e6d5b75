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

package llm_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// browserTools are tools like the agent's: one with parameters, one
// without.
func browserTools() []llm.Tool {
	return []llm.Tool{
		{
			Name:        "goto",
			Description: "Open a URL.",
			Parameters: map[string]any{
				"type":       "object",
				"properties": map[string]any{"url": map[string]any{"type": "string", "description": "The URL to open."}},
				"required":   []any{"url"},
			},
		},
		{
			Name:        "act",
			Description: "Do one action on the page.",
			Parameters: map[string]any{
				"type":       "object",
				"properties": map[string]any{"action": map[string]any{"type": "string"}},
				"required":   []any{"action"},
			},
		},
		{Name: "screenshot", Description: "Take a screenshot."},
	}
}

// toolsAsk is a one-message request offering browserTools.
func toolsAsk(text string) llm.Request {
	req := ask(text)
	req.Tools = browserTools()
	return req
}

func TestToolCallsParsed(t *testing.T) {
	// The tools as each provider's wire carries them.
	wireTools := map[string]func(t *testing.T, body map[string]any){
		llmtest.OpenAI: func(t *testing.T, body map[string]any) {
			var want []any
			for _, tool := range browserTools() {
				fn := map[string]any{"name": tool.Name, "description": tool.Description, "strict": false}
				if tool.Parameters != nil {
					fn["parameters"] = tool.Parameters
				}
				want = append(want, map[string]any{"type": "function", "function": fn})
			}
			if diff := cmp.Diff(normalize(t, want), body["tools"]); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		},
		llmtest.Anthropic: func(t *testing.T, body map[string]any) {
			var want []any
			for _, tool := range browserTools() {
				schema := tool.Parameters
				if schema == nil {
					schema = map[string]any{"type": "object", "properties": map[string]any{}}
				}
				want = append(want, map[string]any{"name": tool.Name, "description": tool.Description, "input_schema": schema})
			}
			if diff := cmp.Diff(normalize(t, want), body["tools"]); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		},
		llmtest.Google: func(t *testing.T, body map[string]any) {
			var decls []any
			for _, tool := range browserTools() {
				d := map[string]any{"name": tool.Name, "description": tool.Description}
				if tool.Parameters != nil {
					d["parametersJsonSchema"] = tool.Parameters
				}
				decls = append(decls, d)
			}
			want := []any{map[string]any{"functionDeclarations": decls}}
			if diff := cmp.Diff(normalize(t, want), body["tools"]); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		},
	}
	// Google gives no ids: they are made up, numbered through the
	// conversation.
	ids := map[string][2]string{
		llmtest.OpenAI:    {"call_llmtest_1_0", "call_llmtest_1_1"},
		llmtest.Anthropic: {"toolu_llmtest_1_0", "toolu_llmtest_1_1"},
		llmtest.Google:    {"call_0", "call_1"},
	}
	finish := map[string]string{llmtest.OpenAI: "tool_calls", llmtest.Anthropic: "tool_use", llmtest.Google: "STOP"}
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.ToolCalls(
			llmtest.Call("goto", `{"url":"https://example.com/login"}`),
			llmtest.Call("screenshot", ""),
		).WithText("Opening the login page.").WithUsage(200, 30))
		resp, err := c.Generate(context.Background(), toolsAsk("Sign in (scripted model)."))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		want := &llm.Response{
			Text: "Opening the login page.",
			ToolCalls: []llm.ToolCall{
				{ID: ids[provider][0], Name: "goto", Arguments: json.RawMessage(`{"url":"https://example.com/login"}`)},
				{ID: ids[provider][1], Name: "screenshot", Arguments: json.RawMessage(`{}`)},
			},
			FinishReason: finish[provider],
			Usage:        llm.Usage{InputTokens: 200, OutputTokens: 30, InferenceTimeMs: resp.Usage.InferenceTimeMs},
		}
		if diff := cmp.Diff(want, resp, jsonEqual()); diff != "" {
			t.Errorf("response (-want +got):\n%s", diff)
		}
		got := srv.Requests()[0]
		wireTools[provider](t, got.JSON)
		if diff := cmp.Diff([]string{"goto", "act", "screenshot"}, got.Tools); diff != "" {
			t.Errorf("recorded tools (-want +got):\n%s", diff)
		}
	})
}

// jsonEqual compares JSON documents by value, not by spelling.
func jsonEqual() cmp.Option {
	return cmp.Comparer(func(a, b json.RawMessage) bool {
		var x, y any
		if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
			return string(a) == string(b)
		}
		return cmp.Equal(x, y)
	})
}

func TestToolsTextAnswer(t *testing.T) {
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		// A model may answer in words although it was offered tools.
		srv.Enqueue(llmtest.Text("Nothing to do."))
		resp, err := c.Generate(context.Background(), toolsAsk("Anything? (scripted model)"))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if resp.Text != "Nothing to do." || len(resp.ToolCalls) != 0 {
			t.Errorf("response = %q with %d calls, want the text and no calls", resp.Text, len(resp.ToolCalls))
		}
	})
}

func TestToolRoundTrip(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nscreenshot")
	b64 := base64.StdEncoding.EncodeToString(png)
	// Three calls of one turn; their results come back out of order, one
	// failed, one an image, followed by a word of the user's. The ids are
	// of Google's made-up kind, so that Gemini never sees them.
	req := toolsAsk("Sign in.")
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
			llm.TextPart("Opening it."),
			llm.ToolCallPart(llm.ToolCall{ID: "call_0", Name: "goto", Arguments: json.RawMessage(`{"url":"https://example.com/login"}`)}),
			llm.ToolCallPart(llm.ToolCall{ID: "call_1", Name: "act", Arguments: json.RawMessage(`{"action":"click Sign in"}`)}),
			llm.ToolCallPart(llm.ToolCall{ID: "call_2", Name: "screenshot"}),
		}},
		llm.UserMessage(
			llm.ToolResultPart(llm.ToolResult{CallID: "call_2", Image: png}),
			llm.ToolResultPart(llm.ToolResult{CallID: "call_0", Name: "goto", Text: "Opened https://example.com/login."}),
			llm.ToolResultPart(llm.ToolResult{CallID: "call_1", Text: "No element matches.", IsError: true}),
			llm.TextPart("Go on."),
		),
	)
	imageURL := map[string]any{"url": "data:image/png;base64," + b64}
	// The conversation after the first user message, on each wire.
	wire := map[string]struct {
		key     string
		want    []any
		results []llmtest.ToolResult
	}{
		llmtest.OpenAI: {
			key: "messages",
			want: []any{
				map[string]any{"role": "user", "content": "Sign in."},
				map[string]any{"role": "assistant", "content": "Opening it.", "tool_calls": []any{
					map[string]any{"id": "call_0", "type": "function", "function": map[string]any{"name": "goto", "arguments": `{"url":"https://example.com/login"}`}},
					map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "act", "arguments": `{"action":"click Sign in"}`}},
					map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "screenshot", "arguments": `{}`}},
				}},
				// Tool messages take text only: the image follows in a
				// user message, captioned with its call.
				map[string]any{"role": "tool", "tool_call_id": "call_2", "content": "The image follows."},
				map[string]any{"role": "tool", "tool_call_id": "call_0", "content": "Opened https://example.com/login."},
				map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "Error: No element matches."},
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "text", "text": "Image returned by the screenshot tool (call call_2):"},
					map[string]any{"type": "image_url", "image_url": imageURL},
					map[string]any{"type": "text", "text": "Go on."},
				}},
			},
			results: []llmtest.ToolResult{
				{CallID: "call_2", Name: "screenshot", Text: "The image follows."},
				{CallID: "call_0", Name: "goto", Text: "Opened https://example.com/login."},
				{CallID: "call_1", Name: "act", Text: "Error: No element matches.", IsError: true},
			},
		},
		llmtest.Anthropic: {
			key: "messages",
			want: []any{
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Sign in."}}},
				map[string]any{"role": "assistant", "content": []any{
					map[string]any{"type": "text", "text": "Opening it."},
					map[string]any{"type": "tool_use", "id": "call_0", "name": "goto", "input": map[string]any{"url": "https://example.com/login"}},
					map[string]any{"type": "tool_use", "id": "call_1", "name": "act", "input": map[string]any{"action": "click Sign in"}},
					map[string]any{"type": "tool_use", "id": "call_2", "name": "screenshot", "input": map[string]any{}},
				}},
				// Tool results first, the image inside its result.
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": "call_2", "content": []any{
						map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": b64}},
					}},
					map[string]any{"type": "tool_result", "tool_use_id": "call_0", "content": []any{
						map[string]any{"type": "text", "text": "Opened https://example.com/login."},
					}},
					map[string]any{"type": "tool_result", "tool_use_id": "call_1", "is_error": true, "content": []any{
						map[string]any{"type": "text", "text": "No element matches."},
					}},
					map[string]any{"type": "text", "text": "Go on."},
				}},
			},
			results: []llmtest.ToolResult{
				{CallID: "call_2", Name: "screenshot"},
				{CallID: "call_0", Name: "goto", Text: "Opened https://example.com/login."},
				{CallID: "call_1", Name: "act", Text: "No element matches.", IsError: true},
			},
		},
		llmtest.Google: {
			key: "contents",
			want: []any{
				map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Sign in."}}},
				// No ids: Gemini gave none.
				map[string]any{"role": "model", "parts": []any{
					map[string]any{"text": "Opening it."},
					map[string]any{"functionCall": map[string]any{"name": "goto", "args": map[string]any{"url": "https://example.com/login"}}},
					map[string]any{"functionCall": map[string]any{"name": "act", "args": map[string]any{"action": "click Sign in"}}},
					map[string]any{"functionCall": map[string]any{"name": "screenshot"}}},
				},
				// Responses in the order of the calls, which is how Gemini
				// matches them; then the image; then the user's text.
				map[string]any{"role": "user", "parts": []any{
					map[string]any{"functionResponse": map[string]any{"name": "goto", "response": map[string]any{"output": "Opened https://example.com/login."}}},
					map[string]any{"functionResponse": map[string]any{"name": "act", "response": map[string]any{"error": "No element matches."}}},
					map[string]any{"functionResponse": map[string]any{"name": "screenshot", "response": map[string]any{"output": ""}}},
					map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": b64}},
					map[string]any{"text": "Go on."},
				}},
			},
			results: []llmtest.ToolResult{
				{Name: "goto", Text: "Opened https://example.com/login."},
				{Name: "act", Text: "No element matches.", IsError: true},
				{Name: "screenshot"},
			},
		},
	}
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		srv.Enqueue(llmtest.Text("Signed in."))
		resp, err := c.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if resp.Text != "Signed in." {
			t.Errorf("Text = %q", resp.Text)
		}
		got := srv.Requests()[0]
		w := wire[provider]
		if diff := cmp.Diff(normalize(t, w.want), got.JSON[w.key]); diff != "" {
			t.Errorf("%s on the wire (-want +got):\n%s", w.key, diff)
		}
		if diff := cmp.Diff(w.results, got.ToolResults); diff != "" {
			t.Errorf("recorded tool results (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([][]byte{png}, got.Images); diff != "" {
			t.Errorf("recorded images (-want +got):\n%s", diff)
		}
		// What the model reads includes the calls' arguments and the
		// results' text, so that tests can look for what must not be
		// there.
		for _, s := range []string{`{"url":"https://example.com/login"}`, "Opened https://example.com/login.", "No element matches.", "Go on."} {
			if !strings.Contains(got.Text, s) {
				t.Errorf("recorded text %q lacks %q", got.Text, s)
			}
		}
	})
}

func TestToolChoice(t *testing.T) {
	// where is the tool choice on each wire; want is its value per choice,
	// nil for absent.
	where := map[string][]any{
		llmtest.OpenAI:    {"tool_choice"},
		llmtest.Anthropic: {"tool_choice"},
		llmtest.Google:    {"toolConfig", "functionCallingConfig", "mode"},
	}
	tests := []struct {
		choice   llm.ToolChoice
		want     map[string]any
		recorded string
	}{
		{"", map[string]any{llmtest.OpenAI: nil, llmtest.Anthropic: nil, llmtest.Google: nil}, ""},
		{llm.ToolChoiceAuto, map[string]any{
			llmtest.OpenAI: "auto", llmtest.Anthropic: map[string]any{"type": "auto"}, llmtest.Google: "AUTO",
		}, "auto"},
		{llm.ToolChoiceRequired, map[string]any{
			llmtest.OpenAI: "required", llmtest.Anthropic: map[string]any{"type": "any"}, llmtest.Google: "ANY",
		}, "required"},
		{llm.ToolChoiceNone, map[string]any{
			llmtest.OpenAI: "none", llmtest.Anthropic: map[string]any{"type": "none"}, llmtest.Google: "NONE",
		}, "none"},
	}
	forEachProvider(t, nil, func(t *testing.T, srv *llmtest.Server, c llm.Client, provider, model string) {
		for _, tc := range tests {
			srv.Enqueue(llmtest.Text("ok"))
			req := toolsAsk("Hi.")
			req.ToolChoice = tc.choice
			if _, err := c.Generate(context.Background(), req); err != nil {
				t.Fatalf("Generate with ToolChoice %q: %v", tc.choice, err)
			}
			reqs := srv.Requests()
			got := reqs[len(reqs)-1]
			if diff := cmp.Diff(tc.want[provider], path(got.JSON, where[provider]...)); diff != "" {
				t.Errorf("ToolChoice %q on the wire (-want +got):\n%s", tc.choice, diff)
			}
			if got.ToolChoice != tc.recorded {
				t.Errorf("ToolChoice %q recorded as %q, want %q", tc.choice, got.ToolChoice, tc.recorded)
			}
		}
	})
}

func TestGoogleMadeUpCallIDs(t *testing.T) {
	srv := llmtest.NewServer(t)
	c, err := llm.New(llm.Config{Model: "google/gemini-2.5-flash", APIKey: testKey, BaseURL: srv.BaseURL(llmtest.Google)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sig := []byte("opaque thought signature")
	turns := []llmtest.Reply{
		llmtest.ToolCalls(llmtest.Call("goto", `{"url":"https://example.com"}`).WithSignature(sig), llmtest.Call("screenshot", "")),
		llmtest.ToolCalls(llmtest.Call("act", `{"action":"click"}`)),
		// A Gemini that does give ids gets them back.
		llmtest.ToolCalls(llmtest.Call("act", `{"action":"type"}`).WithID("fc-7")),
	}
	req := toolsAsk("Sign in (scripted model).")
	var ids []string
	for i, turn := range turns {
		// Each turn is asked twice: the same conversation gives the same
		// ids.
		srv.Enqueue(turn, turn)
		resp, err := c.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("turn %d: Generate: %v", i, err)
		}
		again, err := c.Generate(context.Background(), req)
		if err != nil {
			t.Fatalf("turn %d again: Generate: %v", i, err)
		}
		if diff := cmp.Diff(resp.ToolCalls, again.ToolCalls, jsonEqual()); diff != "" {
			t.Errorf("turn %d asked again: calls differ (-first +again):\n%s", i, diff)
		}
		assistant := llm.Message{Role: llm.RoleAssistant}
		var results []llm.Part
		for _, call := range resp.ToolCalls {
			ids = append(ids, call.ID)
			assistant.Parts = append(assistant.Parts, llm.ToolCallPart(call))
			results = append(results, llm.ToolResultPart(llm.ToolResult{CallID: call.ID, Text: "ok " + call.ID}))
		}
		req.Messages = append(req.Messages, assistant, llm.UserMessage(results...))
	}
	srv.Enqueue(llmtest.Text("done"))
	if _, err := c.Generate(context.Background(), req); err != nil {
		t.Fatalf("last turn: Generate: %v", err)
	}
	if diff := cmp.Diff([]string{"call_0", "call_1", "call_2", "fc-7"}, ids); diff != "" {
		t.Errorf("call ids (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	// Made-up ids stay here; Gemini's own and the thought signature go
	// back.
	want := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Sign in (scripted model)."}}},
		map[string]any{"role": "model", "parts": []any{
			map[string]any{"functionCall": map[string]any{"name": "goto", "args": map[string]any{"url": "https://example.com"}}, "thoughtSignature": base64.StdEncoding.EncodeToString(sig)},
			map[string]any{"functionCall": map[string]any{"name": "screenshot"}},
		}},
		map[string]any{"role": "user", "parts": []any{
			map[string]any{"functionResponse": map[string]any{"name": "goto", "response": map[string]any{"output": "ok call_0"}}},
			map[string]any{"functionResponse": map[string]any{"name": "screenshot", "response": map[string]any{"output": "ok call_1"}}},
		}},
		map[string]any{"role": "model", "parts": []any{
			map[string]any{"functionCall": map[string]any{"name": "act", "args": map[string]any{"action": "click"}}},
		}},
		map[string]any{"role": "user", "parts": []any{
			map[string]any{"functionResponse": map[string]any{"name": "act", "response": map[string]any{"output": "ok call_2"}}},
		}},
		map[string]any{"role": "model", "parts": []any{
			map[string]any{"functionCall": map[string]any{"id": "fc-7", "name": "act", "args": map[string]any{"action": "type"}}},
		}},
		map[string]any{"role": "user", "parts": []any{
			map[string]any{"functionResponse": map[string]any{"id": "fc-7", "name": "act", "response": map[string]any{"output": "ok fc-7"}}},
		}},
	}
	if diff := cmp.Diff(normalize(t, want), last.JSON["contents"]); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
}

func TestGoogleMadeUpCallIDsSurviveDroppedTurns(t *testing.T) {
	srv := llmtest.NewServer(t)
	c, err := llm.New(llm.Config{Model: "google/gemini-2.5-flash", APIKey: testKey, BaseURL: srv.BaseURL(llmtest.Google)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// The caller kept only the latest turn of a longer conversation: the
	// next id must not repeat one still in it.
	req := toolsAsk("Go on.")
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "call_7", Name: "screenshot"})}},
		llm.UserMessage(llm.ToolResultPart(llm.ToolResult{CallID: "call_7", Text: "ok"})),
	)
	srv.Enqueue(llmtest.ToolCalls(llmtest.Call("screenshot", "")))
	resp, err := c.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "call_8" {
		t.Errorf("calls = %+v, want one with id call_8", resp.ToolCalls)
	}
}

func TestOpenAIMalformedArguments(t *testing.T) {
	srv := llmtest.NewServer(t)
	c, err := llm.New(llm.Config{Model: "openai/local-model", BaseURL: srv.BaseURL(llmtest.OpenAI)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// OpenAI-compatible servers pass on whatever the model wrote.
	srv.Enqueue(llmtest.ToolCalls(llmtest.Call("goto", `{"url": "https://exa`)), llmtest.Text("ok"))
	resp, err := c.Generate(context.Background(), toolsAsk("Go (scripted model)."))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got := string(resp.ToolCalls[0].Arguments); got != `{"url": "https://exa` {
		t.Errorf("Arguments = %s, want them as the model wrote them", got)
	}
	// The conversation still goes back, with the caller's complaint.
	req := toolsAsk("Go (scripted model).")
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(resp.ToolCalls[0])}},
		llm.UserMessage(llm.ToolResultPart(llm.ToolResult{CallID: resp.ToolCalls[0].ID, Text: "arguments are not JSON", IsError: true})),
	)
	if _, err := c.Generate(context.Background(), req); err != nil {
		t.Fatalf("Generate after malformed arguments: %v", err)
	}
}

func TestToolRequestValidation(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Name: "goto", Arguments: json.RawMessage(`{"url":"x"}`)}
	withCall := func(parts ...llm.Part) []llm.Message {
		return []llm.Message{
			llm.UserMessage(llm.TextPart("go")),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(call)}},
			llm.UserMessage(parts...),
		}
	}
	tests := []struct {
		name string
		req  llm.Request
		// mentions are what the error must name.
		mentions []string
	}{
		{"bad tool name", llm.Request{Messages: ask("x").Messages, Tools: []llm.Tool{{Name: "go to"}}}, []string{"Tools[0].Name", `"go to"`}},
		{"empty tool name", llm.Request{Messages: ask("x").Messages, Tools: []llm.Tool{{}}}, []string{"Tools[0].Name"}},
		{"long tool name", llm.Request{Messages: ask("x").Messages, Tools: []llm.Tool{{Name: strings.Repeat("a", 65)}}}, []string{"Tools[0].Name"}},
		{"duplicate tool", llm.Request{Messages: ask("x").Messages, Tools: []llm.Tool{{Name: "a"}, {Name: "a"}}}, []string{"Tools[1].Name", "not unique"}},
		{"non-object parameters", llm.Request{Messages: ask("x").Messages, Tools: []llm.Tool{{Name: "a", Parameters: map[string]any{"type": "string"}}}}, []string{"Tools[0]", "Parameters", "object"}},
		{"tools with schema", llm.Request{Messages: ask("x").Messages, Tools: browserTools(), Schema: &llm.Schema{JSON: actionSchema()}}, []string{"Tools and Schema"}},
		{"unknown choice", llm.Request{Messages: ask("x").Messages, Tools: browserTools(), ToolChoice: "any"}, []string{"ToolChoice", `"any"`}},
		{"required without tools", llm.Request{Messages: ask("x").Messages, ToolChoice: llm.ToolChoiceRequired}, []string{"ToolChoice", "without Tools"}},
		{"call in user message", llm.Request{Messages: []llm.Message{llm.UserMessage(llm.ToolCallPart(call))}, Tools: browserTools()}, []string{"message 0 part 0", "ToolCall"}},
		{"result in assistant message", llm.Request{Messages: []llm.Message{
			llm.UserMessage(llm.TextPart("go")),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolResultPart(llm.ToolResult{CallID: "c1"})}},
		}, Tools: browserTools()}, []string{"message 1 part 0", "ToolResult"}},
		{"result of no call", llm.Request{Messages: withCall(llm.ToolResultPart(llm.ToolResult{CallID: "c1"}), llm.ToolResultPart(llm.ToolResult{CallID: "c9"})), Tools: browserTools()}, []string{"message 2 part 1", `CallID "c9"`}},
		{"result of an older call", llm.Request{Messages: append(withCall(llm.ToolResultPart(llm.ToolResult{CallID: "c1"})),
			llm.AssistantMessage("ok"), llm.UserMessage(llm.ToolResultPart(llm.ToolResult{CallID: "c1"}))), Tools: browserTools()}, []string{"message 4 part 0", `"c1"`}},
		{"call unanswered", llm.Request{Messages: withCall(llm.TextPart("never mind")), Tools: browserTools()}, []string{"message 2", `"c1"`, "no ToolResult"}},
		{"call last", llm.Request{Messages: withCall(llm.ToolResultPart(llm.ToolResult{CallID: "c1"}))[:2], Tools: browserTools()}, []string{"last message"}},
		{"answered twice", llm.Request{Messages: withCall(llm.ToolResultPart(llm.ToolResult{CallID: "c1"}), llm.ToolResultPart(llm.ToolResult{CallID: "c1"})), Tools: browserTools()}, []string{"answered twice"}},
		{"result name differs", llm.Request{Messages: withCall(llm.ToolResultPart(llm.ToolResult{CallID: "c1", Name: "act"})), Tools: browserTools()}, []string{"ToolResult.Name", `"act"`, `"goto"`}},
		{"call without id", llm.Request{Messages: []llm.Message{
			llm.UserMessage(llm.TextPart("go")),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{Name: "goto"})}},
			llm.UserMessage(llm.ToolResultPart(llm.ToolResult{})),
		}, Tools: browserTools()}, []string{"ToolCall.ID"}},
		{"call with bad name", llm.Request{Messages: []llm.Message{
			llm.UserMessage(llm.TextPart("go")),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "x", Name: "go to"})}},
			llm.UserMessage(llm.ToolResultPart(llm.ToolResult{CallID: "x"})),
		}, Tools: browserTools()}, []string{"ToolCall.Name"}},
		{"duplicate call id", llm.Request{Messages: []llm.Message{
			llm.UserMessage(llm.TextPart("go")),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(call), llm.ToolCallPart(call)}},
			llm.UserMessage(llm.ToolResultPart(llm.ToolResult{CallID: "c1"})),
		}, Tools: browserTools()}, []string{"not unique"}},
		{"part with text and call", llm.Request{Messages: []llm.Message{
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: "x", ToolCall: &call}}},
		}, Tools: browserTools()}, []string{"message 0 part 0", "more than one"}},
		{"tool parts without tools", llm.Request{Messages: withCall(llm.ToolResultPart(llm.ToolResult{CallID: "c1"}))}, []string{"Tools is empty"}},
	}
	srv := llmtest.NewServer(t)
	for _, m := range models {
		c, err := llm.New(llm.Config{Model: m.provider + "/" + m.model, APIKey: testKey, BaseURL: srv.BaseURL(m.provider)})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		for _, tc := range tests {
			t.Run(m.provider+"/"+tc.name, func(t *testing.T) {
				_, err := c.Generate(context.Background(), tc.req)
				if !errors.Is(err, llm.ErrInvalidRequest) {
					t.Fatalf("error %v is not ErrInvalidRequest", err)
				}
				for _, s := range tc.mentions {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
			})
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}
