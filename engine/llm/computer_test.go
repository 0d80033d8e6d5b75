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
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// computerModels are a computer-use model per provider.
var computerModels = []struct {
	provider, model, path string
}{
	{llmtest.OpenAI, "computer-use-preview", "/v1/responses"},
	{llmtest.Anthropic, "claude-sonnet-4-5", "/v1/messages"},
	{llmtest.Google, "gemini-2.5-computer-use-preview-10-2025", "/v1beta/models/gemini-2.5-computer-use-preview-10-2025:generateContent"},
}

// screen is the screen of every computer-use test.
var screen = llm.Size{Width: 1280, Height: 720}

// forEachComputer runs f in a parallel subtest per provider with a
// ComputerUse of the provider's computer-use model on a server of its own.
func forEachComputer(t *testing.T, opts llm.ComputerUseOptions, f func(t *testing.T, srv *llmtest.Server, cu llm.ComputerUse, provider string)) {
	t.Helper()
	for _, m := range computerModels {
		t.Run(m.provider, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			cu, err := llm.NewComputerUse(llm.Config{
				Model:   m.provider + "/" + m.model,
				APIKey:  testKey,
				BaseURL: srv.BaseURL(m.provider),
				Timeout: 10 * time.Second,
			}, opts)
			if err != nil {
				t.Fatalf("NewComputerUse: %v", err)
			}
			f(t, srv, cu, m.provider)
		})
	}
}

// shot is a fake screenshot; n tells them apart.
func shot(n int) []byte { return []byte("\x89PNG\r\n\x1a\nscreen " + string(rune('0'+n))) }

func dataURL(png []byte) string {
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
}

func b64(png []byte) string { return base64.StdEncoding.EncodeToString(png) }

func TestComputerUseFirstStep(t *testing.T) {
	// The first request of each provider: its computer tool, the
	// instructions, the task with the screenshot.
	wire := map[string]func(t *testing.T, r llmtest.Request){
		llmtest.OpenAI: func(t *testing.T, r llmtest.Request) {
			want := map[string]any{
				"model":        "computer-use-preview",
				"instructions": "Be careful.",
				"truncation":   "auto",
				"tools":        []any{map[string]any{"type": "computer_use_preview", "display_width": 1280, "display_height": 720, "environment": "browser"}},
				"input": []any{map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "input_text", "text": "Sign in."},
					map[string]any{"type": "input_image", "image_url": dataURL(shot(1)), "detail": "auto"},
					map[string]any{"type": "input_text", "text": "Current URL: http://127.0.0.1/login"},
				}}},
			}
			if diff := cmp.Diff(normalize(t, want), any(r.JSON)); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		},
		llmtest.Anthropic: func(t *testing.T, r llmtest.Request) {
			want := map[string]any{
				"model":      "claude-sonnet-4-5",
				"max_tokens": 4096,
				"system":     []any{map[string]any{"type": "text", "text": "Be careful."}},
				"tools":      []any{map[string]any{"type": "computer_20250124", "name": "computer", "display_width_px": 1280, "display_height_px": 720}},
				"messages": []any{map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "text", "text": "Sign in."},
					map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": b64(shot(1))}},
					map[string]any{"type": "text", "text": "Current URL: http://127.0.0.1/login"},
				}}},
			}
			if diff := cmp.Diff(normalize(t, want), any(r.JSON)); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if got := r.Header.Get("Anthropic-Beta"); got != "computer-use-2025-01-24" {
				t.Errorf("anthropic-beta = %q, want computer-use-2025-01-24", got)
			}
		},
		llmtest.Google: func(t *testing.T, r llmtest.Request) {
			want := map[string]any{
				"systemInstruction": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Be careful."}}},
				"generationConfig":  map[string]any{},
				"tools":             []any{map[string]any{"computerUse": map[string]any{"environment": "ENVIRONMENT_BROWSER"}}},
				"contents": []any{map[string]any{"role": "user", "parts": []any{
					map[string]any{"text": "Sign in."},
					map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": b64(shot(1))}},
					map[string]any{"text": "Current URL: http://127.0.0.1/login"},
				}}},
			}
			if diff := cmp.Diff(normalize(t, want), any(r.JSON)); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		},
	}
	// The same scripted actions in each provider's space: Google's is
	// 1000 by 1000.
	clicks := map[string]llm.Point{llmtest.OpenAI: {640, 360}, llmtest.Anthropic: {640, 360}, llmtest.Google: {500, 500}}
	spaces := map[string]llm.Size{llmtest.OpenAI: screen, llmtest.Anthropic: screen, llmtest.Google: {Width: 1000, Height: 1000}}
	forEachComputer(t, llm.ComputerUseOptions{Screen: screen, System: "Be careful."}, func(t *testing.T, srv *llmtest.Server, cu llm.ComputerUse, provider string) {
		at := clicks[provider]
		srv.Enqueue(llmtest.Computer(llmtest.Click(at.X, at.Y), llmtest.TypeText("ada")).WithText("Opening the form.").WithUsage(900, 40))
		step, err := cu.Step(context.Background(), llm.ComputerTurn{Text: "Sign in.", Screenshot: shot(1), URL: "http://127.0.0.1/login"})
		if err != nil {
			t.Fatalf("Step: %v", err)
		}
		want := &llm.ComputerStep{
			Actions: []llm.ComputerAction{
				{Type: llm.ActionClick, X: at.X, Y: at.Y, Button: "left"},
				{Type: llm.ActionType, Text: "ada"},
			},
			Text:         "Opening the form.",
			FinishReason: step.FinishReason,
			Usage:        llm.Usage{InputTokens: 900, OutputTokens: 40},
		}
		if diff := cmp.Diff(want, step, cmpopts.IgnoreFields(llm.Usage{}, "InferenceTimeMs"), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step (-want +got):\n%s", diff)
		}
		if step.FinishReason == "" {
			t.Error("FinishReason is empty")
		}
		if got := cu.Space(); got != spaces[provider] {
			t.Errorf("Space() = %v, want %v", got, spaces[provider])
		}
		// Scaled to the viewport, the click lands in its middle whatever
		// the provider's space.
		if got := step.Actions[0].Scale(cu.Space(), screen); got.X != 640 || got.Y != 360 {
			t.Errorf("scaled click at %d,%d, want 640,360", got.X, got.Y)
		}
		r := srv.Requests()[0]
		for _, m := range computerModels {
			if m.provider == provider && r.Path != m.path {
				t.Errorf("path = %q, want %q", r.Path, m.path)
			}
		}
		wire[provider](t, r)
	})
}

func TestComputerUseRoundTrip(t *testing.T) {
	// The second request: the outcome of a click that ran and a keypress
	// that failed, with the screen after them.
	wire := map[string]func(t *testing.T, r llmtest.Request){
		llmtest.OpenAI: func(t *testing.T, r llmtest.Request) {
			if got := r.JSON["previous_response_id"]; got != "resp_llmtest_1" {
				t.Errorf("previous_response_id = %v, want resp_llmtest_1", got)
			}
			out := func(id string) map[string]any {
				return map[string]any{"type": "computer_call_output", "call_id": id, "output": map[string]any{
					"type": "computer_screenshot", "image_url": dataURL(shot(2)), "current_url": "http://127.0.0.1/list",
				}}
			}
			want := []any{
				out("call_llmtest_1_0"),
				out("call_llmtest_1_1"),
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "input_text", "text": "The action of call call_llmtest_1_1 did not run as asked: no such key"},
				}},
			}
			if diff := cmp.Diff(normalize(t, want), r.JSON["input"]); diff != "" {
				t.Errorf("input (-want +got):\n%s", diff)
			}
		},
		llmtest.Anthropic: func(t *testing.T, r llmtest.Request) {
			want := []any{
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "text", "text": "Sign in."},
					map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": b64(shot(1))}},
				}},
				map[string]any{"role": "assistant", "content": []any{
					map[string]any{"type": "tool_use", "id": "toolu_llmtest_1_0", "name": "computer", "input": map[string]any{"action": "left_click", "coordinate": []any{10, 20}}},
					map[string]any{"type": "tool_use", "id": "toolu_llmtest_1_1", "name": "computer", "input": map[string]any{"action": "key", "text": "CTRL+A"}},
				}},
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": "toolu_llmtest_1_0", "content": []any{map[string]any{"type": "text", "text": "Done."}}},
					map[string]any{"type": "tool_result", "tool_use_id": "toolu_llmtest_1_1", "is_error": true, "content": []any{
						map[string]any{"type": "text", "text": "no such key"},
						map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": b64(shot(2))}},
						map[string]any{"type": "text", "text": "Current URL: http://127.0.0.1/list"},
					}},
				}},
			}
			if diff := cmp.Diff(normalize(t, want), r.JSON["messages"]); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		},
		llmtest.Google: func(t *testing.T, r llmtest.Request) {
			want := []any{
				map[string]any{"role": "user", "parts": []any{
					map[string]any{"text": "Sign in."},
					map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": b64(shot(1))}},
				}},
				map[string]any{"role": "model", "parts": []any{
					map[string]any{"functionCall": map[string]any{"name": "click_at", "args": map[string]any{"x": 10, "y": 20}}},
					map[string]any{"functionCall": map[string]any{"name": "key_combination", "args": map[string]any{"keys": "CTRL+A"}}},
				}},
				map[string]any{"role": "user", "parts": []any{
					map[string]any{"functionResponse": map[string]any{"name": "click_at", "response": map[string]any{"url": "http://127.0.0.1/list"}}},
					map[string]any{"functionResponse": map[string]any{"name": "key_combination",
						"response": map[string]any{"url": "http://127.0.0.1/list", "error": "no such key"},
						"parts":    []any{map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": b64(shot(2))}}},
					}},
				}},
			}
			if diff := cmp.Diff(normalize(t, want), r.JSON["contents"]); diff != "" {
				t.Errorf("contents (-want +got):\n%s", diff)
			}
		},
	}
	forEachComputer(t, llm.ComputerUseOptions{Screen: screen}, func(t *testing.T, srv *llmtest.Server, cu llm.ComputerUse, provider string) {
		srv.Enqueue(
			llmtest.Computer(llmtest.Click(10, 20), llmtest.Keypress("CTRL", "A")),
			llmtest.Text("Signed in as ada.").WithUsage(1200, 10),
		)
		step, err := cu.Step(context.Background(), llm.ComputerTurn{Text: "Sign in.", Screenshot: shot(1)})
		if err != nil {
			t.Fatalf("Step 1: %v", err)
		}
		wantActions := []llm.ComputerAction{
			{Type: llm.ActionClick, X: 10, Y: 20, Button: "left"},
			{Type: llm.ActionKeypress, Keys: []string{"Control", "a"}},
		}
		if diff := cmp.Diff(wantActions, step.Actions); diff != "" {
			t.Errorf("step 1 actions (-want +got):\n%s", diff)
		}
		if step.Done {
			t.Error("step 1 is Done, want actions to run")
		}
		// The click ran, the keypress failed.
		step, err = cu.Step(context.Background(), llm.ComputerTurn{Screenshot: shot(2), URL: "http://127.0.0.1/list", Executed: 1, Error: "no such key"})
		if err != nil {
			t.Fatalf("Step 2: %v", err)
		}
		if !step.Done || step.Text != "Signed in as ada." || len(step.Actions) != 0 {
			t.Errorf("step 2 = %+v, want Done with the answer", step)
		}
		if step.Usage.InputTokens != 1200 {
			t.Errorf("step 2 usage = %+v, want its own", step.Usage)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("server got %d requests, want 2", len(reqs))
		}
		wire[provider](t, reqs[1])
		if diff := cmp.Diff([][]byte{shot(2)}, reqs[1].Images[len(reqs[1].Images)-1:]); diff != "" {
			t.Errorf("latest image of request 2 (-want +got):\n%s", diff)
		}
		// After the answer the user may go on.
		srv.Enqueue(llmtest.Text("Bye."))
		if _, err := cu.Step(context.Background(), llm.ComputerTurn{Text: "Now sign out."}); err != nil {
			t.Fatalf("Step 3: %v", err)
		}
		if last := srv.Requests()[2]; !strings.Contains(last.Text, "Now sign out.") {
			t.Errorf("request 3 text %q lacks the user's message", last.Text)
		}
	})
}

func TestComputerUseKeepsLatestScreenshots(t *testing.T) {
	forEachComputer(t, llm.ComputerUseOptions{Screen: screen, KeepScreenshots: 1}, func(t *testing.T, srv *llmtest.Server, cu llm.ComputerUse, provider string) {
		srv.Enqueue(llmtest.Computer(llmtest.Click(1, 1)), llmtest.Computer(llmtest.Click(2, 2)), llmtest.Text("done"))
		turns := []llm.ComputerTurn{
			{Text: "Go.", Screenshot: shot(1)},
			{Screenshot: shot(2)},
			{Screenshot: shot(3)},
		}
		for i, turn := range turns {
			if _, err := cu.Step(context.Background(), turn); err != nil {
				t.Fatalf("Step %d: %v", i+1, err)
			}
		}
		last := srv.Requests()[2]
		// OpenAI keeps the conversation itself: each request carries only
		// the new screenshot. The others send the latest one again.
		if diff := cmp.Diff([][]byte{shot(3)}, last.Images); diff != "" {
			t.Errorf("images of request 3 (-want +got):\n%s", diff)
		}
		// Anthropic's replaced images leave a note; Gemini's function
		// responses just lose theirs, the first turn's leaves a note.
		notes := map[string]int{llmtest.OpenAI: 0, llmtest.Anthropic: 2, llmtest.Google: 1}[provider]
		if got := strings.Count(last.Text, "(An earlier screenshot, omitted.)"); got != notes {
			t.Errorf("request 3 text %q notes %d omitted screenshots, want %d", last.Text, got, notes)
		}
	})
}

func TestComputerUseSafetyChecks(t *testing.T) {
	// Anthropic has no safety checks.
	checks := map[string]llm.SafetyCheck{
		llmtest.OpenAI: {ID: "sc_llmtest_1", Code: "malicious_instructions", Message: "The page asks for odd things."},
		llmtest.Google: {ID: "safety_call_0", Code: "require_confirmation", Message: "The page asks for odd things."},
	}
	forEachComputer(t, llm.ComputerUseOptions{Screen: screen}, func(t *testing.T, srv *llmtest.Server, cu llm.ComputerUse, provider string) {
		if provider == llmtest.Anthropic {
			return
		}
		srv.Enqueue(llmtest.Computer(llmtest.Click(5, 5)).WithSafetyCheck("malicious_instructions", "The page asks for odd things."), llmtest.Text("ok"))
		step, err := cu.Step(context.Background(), llm.ComputerTurn{Text: "Go."})
		if err != nil {
			t.Fatalf("Step: %v", err)
		}
		want := checks[provider]
		if diff := cmp.Diff([]llm.SafetyCheck{want}, step.SafetyChecks); diff != "" {
			t.Errorf("safety checks (-want +got):\n%s", diff)
		}
		// Not acknowledged: nothing goes to the model.
		_, err = cu.Step(context.Background(), llm.ComputerTurn{Screenshot: shot(2)})
		if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), want.ID) {
			t.Errorf("unacknowledged check: error %v, want ErrInvalidRequest naming %s", err, want.ID)
		}
		if _, err := cu.Step(context.Background(), llm.ComputerTurn{Screenshot: shot(2), AcknowledgedSafetyChecks: []string{want.ID}}); err != nil {
			t.Fatalf("Step with the check acknowledged: %v", err)
		}
		r := srv.Requests()[1]
		switch provider {
		case llmtest.OpenAI:
			ack := []any{map[string]any{"id": want.ID, "code": want.Code, "message": want.Message}}
			if diff := cmp.Diff(normalize(t, ack), path(r.JSON, "input", 0, "acknowledged_safety_checks")); diff != "" {
				t.Errorf("acknowledged_safety_checks (-want +got):\n%s", diff)
			}
		case llmtest.Google:
			if got := path(r.JSON, "contents", 2, "parts", 0, "functionResponse", "response", "safety_acknowledgement"); got != "true" {
				t.Errorf("safety_acknowledgement = %v, want \"true\"", got)
			}
		}
	})
}

func TestComputerActions(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		action   llmtest.ComputerAction
		want     []llm.ComputerAction
		// unsupported is set when the call must be answered with an error
		// and no action.
		unsupported bool
	}{
		{"click wheel", llmtest.OpenAI, llmtest.NativeAction(llmtest.OpenAI, "", `{"type":"click","button":"wheel","x":3,"y":4}`),
			[]llm.ComputerAction{{Type: llm.ActionClick, X: 3, Y: 4, Button: "middle"}}, false},
		{"keypress", llmtest.OpenAI, llmtest.Keypress("CTRL", "SHIFT", "T"),
			[]llm.ComputerAction{{Type: llm.ActionKeypress, Keys: []string{"Control", "Shift", "T"}}}, false},
		{"keypress enter", llmtest.OpenAI, llmtest.Keypress("ENTER"),
			[]llm.ComputerAction{{Type: llm.ActionKeypress, Keys: []string{"Enter"}}}, false},
		{"scroll", llmtest.OpenAI, llmtest.Scroll(100, 200, -300),
			[]llm.ComputerAction{{Type: llm.ActionScroll, X: 100, Y: 200, ScrollY: -300}}, false},
		{"drag", llmtest.OpenAI, llmtest.Drag(1, 2, 3, 4),
			[]llm.ComputerAction{{Type: llm.ActionDrag, Path: []llm.Point{{1, 2}, {3, 4}}}}, false},
		{"wait", llmtest.OpenAI, llmtest.Wait(0),
			[]llm.ComputerAction{{Type: llm.ActionWait, Duration: 2 * time.Second}}, false},
		{"double click", llmtest.OpenAI, llmtest.DoubleClick(7, 8),
			[]llm.ComputerAction{{Type: llm.ActionDoubleClick, X: 7, Y: 8}}, false},
		{"move", llmtest.OpenAI, llmtest.Move(7, 8), []llm.ComputerAction{{Type: llm.ActionMove, X: 7, Y: 8}}, false},
		{"screenshot", llmtest.OpenAI, llmtest.Screenshot(), []llm.ComputerAction{{Type: llm.ActionScreenshot}}, false},
		{"unknown", llmtest.OpenAI, llmtest.NativeAction(llmtest.OpenAI, "", `{"type":"zoom"}`), nil, true},

		{"shift click", llmtest.Anthropic, llmtest.NativeAction(llmtest.Anthropic, "", `{"action":"left_click","coordinate":[5,6],"text":"shift"}`),
			[]llm.ComputerAction{{Type: llm.ActionClick, X: 5, Y: 6, Button: "left", Keys: []string{"Shift"}}}, false},
		{"right click where the mouse is", llmtest.Anthropic, llmtest.NativeAction(llmtest.Anthropic, "", `{"action":"right_click"}`),
			[]llm.ComputerAction{{Type: llm.ActionClick, Button: "right"}}, false},
		{"xdotool keys", llmtest.Anthropic, llmtest.NativeAction(llmtest.Anthropic, "", `{"action":"key","text":"ctrl+Page_Down"}`),
			[]llm.ComputerAction{{Type: llm.ActionKeypress, Keys: []string{"Control", "PageDown"}}}, false},
		{"return", llmtest.Anthropic, llmtest.NativeAction(llmtest.Anthropic, "", `{"action":"key","text":"Return"}`),
			[]llm.ComputerAction{{Type: llm.ActionKeypress, Keys: []string{"Enter"}}}, false},
		{"scroll clicks", llmtest.Anthropic, llmtest.Scroll(10, 20, 300),
			[]llm.ComputerAction{{Type: llm.ActionScroll, X: 10, Y: 20, ScrollY: 300}}, false},
		{"drag", llmtest.Anthropic, llmtest.Drag(1, 2, 3, 4),
			[]llm.ComputerAction{{Type: llm.ActionDrag, Path: []llm.Point{{1, 2}, {3, 4}}}}, false},
		{"wait", llmtest.Anthropic, llmtest.Wait(1500 * time.Millisecond),
			[]llm.ComputerAction{{Type: llm.ActionWait, Duration: 1500 * time.Millisecond}}, false},
		{"hold key", llmtest.Anthropic, llmtest.NativeAction(llmtest.Anthropic, "", `{"action":"hold_key","text":"shift","duration":2}`),
			[]llm.ComputerAction{{Type: llm.ActionHoldKey, Keys: []string{"Shift"}, Duration: 2 * time.Second}}, false},
		{"triple click", llmtest.Anthropic, llmtest.NativeAction(llmtest.Anthropic, "", `{"action":"triple_click","coordinate":[9,9]}`),
			[]llm.ComputerAction{{Type: llm.ActionTripleClick, X: 9, Y: 9}}, false},
		{"mouse down", llmtest.Anthropic, llmtest.NativeAction(llmtest.Anthropic, "", `{"action":"left_mouse_down","coordinate":[9,9]}`),
			[]llm.ComputerAction{{Type: llm.ActionMouseDown, X: 9, Y: 9}}, false},
		{"zoom", llmtest.Anthropic, llmtest.NativeAction(llmtest.Anthropic, "", `{"action":"zoom","region":[0,0,10,10]}`), nil, true},

		{"click clamped", llmtest.Google, llmtest.Click(1200, 500),
			[]llm.ComputerAction{{Type: llm.ActionClick, X: 999, Y: 500, Button: "left"}}, false},
		{"type text at", llmtest.Google, llmtest.TypeTextAt(100, 200, "ada", true), []llm.ComputerAction{
			{Type: llm.ActionClick, X: 100, Y: 200, Button: "left"},
			{Type: llm.ActionKeypress, Keys: []string{"Control", "a"}},
			{Type: llm.ActionKeypress, Keys: []string{"Backspace"}},
			{Type: llm.ActionType, Text: "ada"},
			{Type: llm.ActionKeypress, Keys: []string{"Enter"}},
		}, false},
		{"key combination", llmtest.Google, llmtest.Keypress("Control", "C"),
			[]llm.ComputerAction{{Type: llm.ActionKeypress, Keys: []string{"Control", "c"}}}, false},
		{"scroll document", llmtest.Google, llmtest.NativeAction(llmtest.Google, "scroll_document", `{"direction":"down"}`),
			[]llm.ComputerAction{{Type: llm.ActionKeypress, Keys: []string{"PageDown"}}}, false},
		{"scroll at", llmtest.Google, llmtest.Scroll(500, 500, -400),
			[]llm.ComputerAction{{Type: llm.ActionScroll, X: 500, Y: 500, ScrollY: -400}}, false},
		{"drag and drop", llmtest.Google, llmtest.Drag(1, 2, 3, 4),
			[]llm.ComputerAction{{Type: llm.ActionDrag, Path: []llm.Point{{1, 2}, {3, 4}}}}, false},
		{"navigate", llmtest.Google, llmtest.Navigate("http://127.0.0.1/item/7"),
			[]llm.ComputerAction{{Type: llm.ActionNavigate, URL: "http://127.0.0.1/item/7"}}, false},
		{"go back", llmtest.Google, llmtest.Back(), []llm.ComputerAction{{Type: llm.ActionBack}}, false},
		{"wait", llmtest.Google, llmtest.Wait(0), []llm.ComputerAction{{Type: llm.ActionWait, Duration: 5 * time.Second}}, false},
		{"hover", llmtest.Google, llmtest.Move(10, 10), []llm.ComputerAction{{Type: llm.ActionMove, X: 10, Y: 10}}, false},
		{"open browser", llmtest.Google, llmtest.NativeAction(llmtest.Google, "open_web_browser", `{}`),
			[]llm.ComputerAction{{Type: llm.ActionScreenshot}}, false},
		{"later model's name", llmtest.Google, llmtest.NativeAction(llmtest.Google, "click", `{"x":1,"y":2,"intent":"open it"}`),
			[]llm.ComputerAction{{Type: llm.ActionClick, X: 1, Y: 2, Button: "left"}}, false},
		{"unknown function", llmtest.Google, llmtest.NativeAction(llmtest.Google, "print_page", `{}`), nil, true},
	}
	models := map[string]string{}
	for _, m := range computerModels {
		models[m.provider] = m.provider + "/" + m.model
	}
	for _, tc := range tests {
		t.Run(tc.provider+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			cu, err := llm.NewComputerUse(llm.Config{Model: models[tc.provider], APIKey: testKey, BaseURL: srv.BaseURL(tc.provider)}, llm.ComputerUseOptions{Screen: screen})
			if err != nil {
				t.Fatalf("NewComputerUse: %v", err)
			}
			srv.Enqueue(llmtest.Computer(tc.action), llmtest.Text("done"))
			step, err := cu.Step(context.Background(), llm.ComputerTurn{Text: "Go (scripted model)."})
			if err != nil {
				t.Fatalf("Step: %v", err)
			}
			if diff := cmp.Diff(tc.want, step.Actions, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if step.Done {
				t.Error("Done after a call, want the call answered first")
			}
			if _, err := cu.Step(context.Background(), llm.ComputerTurn{Screenshot: shot(2)}); err != nil {
				t.Fatalf("Step 2: %v", err)
			}
			// An action that cannot run is answered with an error the
			// model reads.
			r := srv.Requests()[1]
			mentions := strings.Contains(strings.ToLower(r.Text), "unsupported")
			if mentions != tc.unsupported {
				t.Errorf("request 2 mentions an unsupported action: %v, want %v (text %q)", mentions, tc.unsupported, r.Text)
			}
		})
	}
}

func TestComputerUseOpenAIBatchedActions(t *testing.T) {
	srv := llmtest.NewServer(t)
	cu, err := llm.NewComputerUse(llm.Config{Model: "openai/gpt-5.4", APIKey: testKey, BaseURL: srv.BaseURL(llmtest.OpenAI)}, llm.ComputerUseOptions{Screen: screen})
	if err != nil {
		t.Fatalf("NewComputerUse: %v", err)
	}
	srv.Enqueue(llmtest.Computer(llmtest.Click(1, 2), llmtest.TypeText("ada")).WithReasoning("The field is at the top."), llmtest.Text("done"))
	step, err := cu.Step(context.Background(), llm.ComputerTurn{Text: "Type ada (scripted model)."})
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	want := []llm.ComputerAction{{Type: llm.ActionClick, X: 1, Y: 2, Button: "left"}, {Type: llm.ActionType, Text: "ada"}}
	if diff := cmp.Diff(want, step.Actions); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if step.Reasoning != "The field is at the top." {
		t.Errorf("Reasoning = %q", step.Reasoning)
	}
	if _, err := cu.Step(context.Background(), llm.ComputerTurn{Screenshot: shot(2)}); err != nil {
		t.Fatalf("Step 2: %v", err)
	}
	reqs := srv.Requests()
	// GPT-5 models take the computer tool, without display or truncation
	// needs of the preview's.
	if diff := cmp.Diff([]any{map[string]any{"type": "computer"}}, reqs[0].JSON["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	// One call for both actions, answered once.
	want2 := []any{map[string]any{"type": "computer_call_output", "call_id": "call_llmtest_1_0", "output": map[string]any{"type": "computer_screenshot", "image_url": dataURL(shot(2))}}}
	if diff := cmp.Diff(want2, reqs[1].JSON["input"]); diff != "" {
		t.Errorf("input of request 2 (-want +got):\n%s", diff)
	}
}

func TestComputerUseAnthropicToolVersion(t *testing.T) {
	tests := []struct{ model, tool, beta string }{
		{"claude-sonnet-4-5", "computer_20250124", "computer-use-2025-01-24"},
		{"claude-sonnet-4-20250514", "computer_20250124", "computer-use-2025-01-24"},
		{"claude-3-7-sonnet-20250219", "computer_20250124", "computer-use-2025-01-24"},
		{"claude-opus-4-5-20251101", "computer_20251124", "computer-use-2025-11-24"},
		{"claude-sonnet-4-6", "computer_20251124", "computer-use-2025-11-24"},
		{"claude-opus-5", "computer_20251124", "computer-use-2025-11-24"},
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			cu, err := llm.NewComputerUse(llm.Config{Model: "anthropic/" + tc.model, BaseURL: srv.BaseURL(llmtest.Anthropic)}, llm.ComputerUseOptions{Screen: screen})
			if err != nil {
				t.Fatalf("NewComputerUse: %v", err)
			}
			srv.Enqueue(llmtest.Text("ok"))
			if _, err := cu.Step(context.Background(), llm.ComputerTurn{Text: "Go."}); err != nil {
				t.Fatalf("Step: %v", err)
			}
			r := srv.Requests()[0]
			if got := path(r.JSON, "tools", 0, "type"); got != tc.tool {
				t.Errorf("tool = %v, want %s", got, tc.tool)
			}
			if got := r.Header.Get("Anthropic-Beta"); got != tc.beta {
				t.Errorf("anthropic-beta = %q, want %s", got, tc.beta)
			}
		})
	}
}

func TestComputerUseFailedStepChangesNothing(t *testing.T) {
	forEachComputer(t, llm.ComputerUseOptions{Screen: screen}, func(t *testing.T, srv *llmtest.Server, cu llm.ComputerUse, provider string) {
		srv.Enqueue(llmtest.Computer(llmtest.Click(1, 1)), llmtest.Status(http.StatusBadRequest).WithMessage("bad image"), llmtest.Text("done"))
		if _, err := cu.Step(context.Background(), llm.ComputerTurn{Text: "Go."}); err != nil {
			t.Fatalf("Step 1: %v", err)
		}
		turn := llm.ComputerTurn{Screenshot: shot(2)}
		_, err := cu.Step(context.Background(), turn)
		if e := asLLMError(t, err); e.StatusCode != http.StatusBadRequest || !strings.Contains(e.Message, "bad image") {
			t.Fatalf("Step 2: error %v, want the provider's 400", err)
		}
		step, err := cu.Step(context.Background(), turn)
		if err != nil {
			t.Fatalf("Step 2 again: %v", err)
		}
		if !step.Done {
			t.Errorf("Step 2 again = %+v, want the answer", step)
		}
		reqs := srv.Requests()
		if diff := cmp.Diff(reqs[1].JSON, reqs[2].JSON); diff != "" {
			t.Errorf("the retried turn differs from the failed one (-failed +again):\n%s", diff)
		}
	})
}

func TestComputerUseRetriesAndRedacts(t *testing.T) {
	forEachComputer(t, llm.ComputerUseOptions{Screen: screen}, func(t *testing.T, srv *llmtest.Server, cu llm.ComputerUse, provider string) {
		srv.Enqueue(llmtest.Status(http.StatusTooManyRequests).WithRetryAfter(0), llmtest.Status(http.StatusUnauthorized).WithMessage("bad key "+testKey))
		_, err := cu.Step(context.Background(), llm.ComputerTurn{Text: "Go."})
		e := asLLMError(t, err)
		if e.StatusCode != http.StatusUnauthorized || e.Attempts != 2 {
			t.Errorf("StatusCode, Attempts = %d, %d; want 401 after a retried 429", e.StatusCode, e.Attempts)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("error %q contains the API key", err)
		}
	})
}

func TestComputerTurnValidation(t *testing.T) {
	srv := llmtest.NewServer(t)
	cu, err := llm.NewComputerUse(llm.Config{Model: "anthropic/claude-sonnet-4-5", BaseURL: srv.BaseURL(llmtest.Anthropic)}, llm.ComputerUseOptions{Screen: screen})
	if err != nil {
		t.Fatalf("NewComputerUse: %v", err)
	}
	ctx := context.Background()
	check := func(what string, turn llm.ComputerTurn, mention string) {
		t.Helper()
		_, err := cu.Step(ctx, turn)
		if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), mention) {
			t.Errorf("%s: error %v, want ErrInvalidRequest mentioning %q", what, err, mention)
		}
	}
	check("first turn without task", llm.ComputerTurn{Screenshot: shot(1)}, "task")
	srv.Enqueue(llmtest.Computer(llmtest.Click(1, 1), llmtest.Click(2, 2)))
	if _, err := cu.Step(ctx, llm.ComputerTurn{Text: "Go."}); err != nil {
		t.Fatalf("Step: %v", err)
	}
	check("no screenshot after actions", llm.ComputerTurn{}, "Screenshot")
	check("executed out of range", llm.ComputerTurn{Screenshot: shot(2), Executed: 2, Error: "x"}, "Executed")
	check("unknown acknowledgement", llm.ComputerTurn{Screenshot: shot(2), AcknowledgedSafetyChecks: []string{"sc_1"}}, "sc_1")
	check("huge text", llm.ComputerTurn{Screenshot: shot(2), Text: strings.Repeat("x", 65<<10)}, "longer than")
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
	for _, opts := range []llm.ComputerUseOptions{{}, {Screen: llm.Size{Width: 20000, Height: 10}}, {Screen: screen, KeepScreenshots: -1}} {
		if _, err := llm.NewComputerUse(llm.Config{Model: "openai/computer-use-preview"}, opts); !errors.Is(err, llm.ErrInvalidRequest) {
			t.Errorf("NewComputerUse(%+v): error %v, want ErrInvalidRequest", opts, err)
		}
	}
}

func TestComputerActionScale(t *testing.T) {
	gemini := llm.Size{Width: 1000, Height: 1000}
	tests := []struct {
		name     string
		in       llm.ComputerAction
		from, to llm.Size
		want     llm.ComputerAction
	}{
		{"same space", llm.ComputerAction{Type: llm.ActionClick, X: 5, Y: 6}, screen, screen, llm.ComputerAction{Type: llm.ActionClick, X: 5, Y: 6}},
		{"normalised", llm.ComputerAction{Type: llm.ActionClick, X: 500, Y: 250}, gemini, screen, llm.ComputerAction{Type: llm.ActionClick, X: 640, Y: 180}},
		{"far edge stays inside", llm.ComputerAction{Type: llm.ActionClick, X: 999, Y: 999}, gemini, screen, llm.ComputerAction{Type: llm.ActionClick, X: 1278, Y: 719}},
		{"scroll and path", llm.ComputerAction{Type: llm.ActionDrag, ScrollY: 800, Path: []llm.Point{{0, 0}, {1000, 500}}}, gemini, screen,
			llm.ComputerAction{Type: llm.ActionDrag, ScrollY: 576, Path: []llm.Point{{0, 0}, {1279, 360}}}},
		{"smaller screenshot", llm.ComputerAction{Type: llm.ActionMove, X: 640, Y: 360}, screen, llm.Size{Width: 2560, Height: 1440}, llm.ComputerAction{Type: llm.ActionMove, X: 1280, Y: 720}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.in.Scale(tc.from, tc.to)); diff != "" {
				t.Errorf("Scale (-want +got):\n%s", diff)
			}
		})
	}
}
