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

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
)

// stubModel is only ever validated, never called: these tests need no
// model server.
type stubModel struct{ name string }

func (m stubModel) Generate(context.Context, llm.Request) (*llm.Response, error) {
	return nil, errors.New("not called in unit tests")
}
func (m stubModel) Model() string { return m.name }

func TestToolSetPerMode(t *testing.T) {
	names := func(mode Mode) []string {
		var out []string
		for _, tl := range toolSet(mode, nil, false) {
			out = append(out, tl.Name)
		}
		return out
	}
	dom := []string{"act", "ariaTree", "done", "extract", "fillForm", "goto", "keys", "navback", "screenshot", "scroll", "think", "wait"}
	hybrid := []string{"act", "ariaTree", "click", "clickAndHold", "done", "dragAndDrop", "extract", "fillForm", "fillFormVision",
		"goto", "keys", "navback", "screenshot", "scroll", "think", "type", "wait"}
	if diff := cmp.Diff(dom, names(ModeDOM)); diff != "" {
		t.Errorf("dom tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(hybrid, names(ModeHybrid)); diff != "" {
		t.Errorf("hybrid tools (-want +got):\n%s", diff)
	}
	for _, tl := range toolSet(ModeHybrid, []string{"password"}, false) {
		if tl.Name == toolScroll {
			props := tl.Parameters["properties"].(map[string]any)
			if _, ok := props["coordinates"]; !ok {
				t.Error("hybrid scroll takes no coordinates")
			}
		}
		if tl.Name == toolType && !strings.Contains(tl.Parameters["properties"].(map[string]any)["text"].(map[string]any)["description"].(string), "password") {
			t.Error("type's text does not name the variables")
		}
	}
}

func TestCheckOptions(t *testing.T) {
	m := stubModel{"openai/x"}
	cases := map[string]struct {
		opts    Options
		wantErr string
		check   func(t *testing.T, o Options)
	}{
		"defaults": {opts: Options{Instruction: "do it", Model: m}, check: func(t *testing.T, o Options) {
			if o.Mode != ModeDOM || o.MaxSteps != DefaultMaxSteps || o.ToolTimeout != DefaultToolTimeout {
				t.Errorf("defaults: mode %q, maxSteps %d, toolTimeout %s", o.Mode, o.MaxSteps, o.ToolTimeout)
			}
		}},
		"no instruction":          {opts: Options{Instruction: "  ", Model: m}, wantErr: "instruction"},
		"no model":                {opts: Options{Instruction: "x"}, wantErr: "model"},
		"unknown mode":            {opts: Options{Instruction: "x", Model: m, Mode: "vision"}, wantErr: `mode "vision"`},
		"negative steps":          {opts: Options{Instruction: "x", Model: m, MaxSteps: -1}, wantErr: "maxSteps"},
		"negative timeout":        {opts: Options{Instruction: "x", Model: m, ToolTimeout: -time.Second}, wantErr: "toolTimeout"},
		"bad variable name":       {opts: Options{Instruction: "x", Model: m, Variables: map[string]engine.Variable{"my pass": {Value: "s3cret-value"}}}, wantErr: `variables: name "my pass"`},
		"good variable name":      {opts: Options{Instruction: "x", Model: m, Variables: map[string]engine.Variable{"my.pass": {Value: "v"}}}},
		"explicit steps, mode":    {opts: Options{Instruction: "x", Model: m, MaxSteps: 3, Mode: ModeHybrid}},
		"cua without ComputerUse": {opts: Options{Instruction: "x", Model: m, Mode: ModeCUA}, wantErr: "mode cua needs ComputerUse"},
		"cua without model":       {opts: Options{Instruction: "x", Mode: ModeCUA, ComputerUse: func(llm.ComputerUseOptions) (llm.ComputerUse, error) { return nil, nil }}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := tc.opts
			err := checkOptions(&o)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tc.check != nil {
					tc.check(t, o)
				}
				return
			}
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want ErrInvalidArgument naming %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows a variable's value: %v", err)
			}
		})
	}
}

func TestCompressKeepsTheLatestTreeAndTwoScreenshots(t *testing.T) {
	png := []byte("png")
	tree := func(s string) llm.Part { return llm.ToolResultPart(llm.ToolResult{Name: toolAriaTree, Text: s}) }
	shot := func(s string) llm.Part {
		return llm.ToolResultPart(llm.ToolResult{Name: toolScreenshot, Text: s, Image: png})
	}
	msgs := []llm.Message{
		llm.UserMessage(tree("tree 1"), shot("shot 1")),
		llm.UserMessage(llm.ToolResultPart(llm.ToolResult{Name: toolAriaTree, Text: "failed", IsError: true})),
		llm.UserMessage(tree("tree 2"), shot("shot 2")),
		llm.UserMessage(shot("shot 3"), tree("tree 3")),
	}
	compress(msgs)
	compress(msgs) // idempotent
	var got []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			r := p.ToolResult
			got = append(got, r.Text+map[bool]string{true: " +image", false: ""}[len(r.Image) > 0])
		}
	}
	want := []string{
		ariaTreePlaceholder, "shot 1" + screenshotPlaceholder,
		"failed",
		ariaTreePlaceholder, "shot 2 +image",
		"shot 3 +image", "tree 3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCacheKey(t *testing.T) {
	base := func() Options {
		return Options{
			Instruction: " sign in ", Mode: ModeDOM, MaxSteps: 20,
			Model: stubModel{"openai/gpt-4.1-mini"}, ExecutionModel: stubModel{"openai/gpt-4.1-mini"},
			Variables: map[string]engine.Variable{"password": {Value: "hunter2"}},
		}
	}
	const start = "http://127.0.0.1/login"
	k := cacheKey(keyInput(base(), start, ""))
	if len(k) != 64 || cacheKey(keyInput(base(), start, "")) != k {
		t.Fatalf("key %q is not a stable hex SHA-256", k)
	}
	for _, tc := range []struct {
		name    string
		change  func(o *Options, start, frame *string)
		changes bool
	}{
		{"instruction", func(o *Options, _, _ *string) { o.Instruction = "sign out" }, true},
		{"start url", func(_ *Options, s, _ *string) { *s += "?x" }, true},
		{"frame", func(_ *Options, _, f *string) { *f = "F1" }, true},
		{"mode", func(o *Options, _, _ *string) { o.Mode = ModeHybrid }, true},
		{"max steps", func(o *Options, _, _ *string) { o.MaxSteps = 5 }, true},
		{"highlight cursor", func(o *Options, _, _ *string) { o.HighlightCursor = true }, true},
		{"system prompt", func(o *Options, _, _ *string) { o.SystemPrompt = "be brief" }, true},
		{"variable names", func(o *Options, _, _ *string) { o.Variables["user"] = engine.Variable{Value: "ada"} }, true},
		{"instruction's spaces", func(o *Options, _, _ *string) { o.Instruction = "sign in" }, false},
		{"model", func(o *Options, _, _ *string) { o.Model = stubModel{"anthropic/claude-sonnet-4-5"} }, false},
		{"execution model", func(o *Options, _, _ *string) { o.ExecutionModel = stubModel{"google/gemini-2.5-flash"} }, false},
		{"variable values", func(o *Options, _, _ *string) {
			o.Variables["password"] = engine.Variable{Value: "other", Description: "d"}
		}, false},
		{"tool timeout", func(o *Options, _, _ *string) { o.ToolTimeout = time.Second }, false},
	} {
		o, s, f := base(), start, ""
		tc.change(&o, &s, &f)
		if got := cacheKey(keyInput(o, s, f)) != k; got != tc.changes {
			t.Errorf("changing the %s: key changed %v, want %v", tc.name, got, tc.changes)
		}
	}
}

func TestCheckStep(t *testing.T) {
	zero, big, ten := 0.0, int64(MaxWait+1), int64(10)
	for _, tc := range []struct {
		step cacheStep
		ok   bool
	}{
		{cacheStep{Type: toolAct, Actions: []engine.Action{{Selector: "xpath=/a", Method: "click"}}}, true},
		{cacheStep{Type: toolAct}, false},
		{cacheStep{Type: toolFillForm, Actions: []engine.Action{{Selector: "xpath=/a"}}}, false},
		{cacheStep{Type: toolGoto, URL: "http://127.0.0.1:8080/x", WaitUntil: "load"}, true},
		{cacheStep{Type: toolGoto, URL: "file:///etc/passwd"}, false},
		{cacheStep{Type: toolGoto, URL: "http://127.0.0.1/", WaitUntil: "never"}, false},
		{cacheStep{Type: toolScroll, DeltaX: &zero, DeltaY: &zero, Anchor: &point{}}, true},
		{cacheStep{Type: toolScroll, DeltaY: &zero}, false},
		{cacheStep{Type: toolKeys, Method: "type", Text: "%password%", Times: 1}, true},
		{cacheStep{Type: toolKeys, Method: "press", Keys: "Enter", Times: MaxKeyRepeat + 1}, false},
		{cacheStep{Type: toolKeys, Method: "press", Times: 1}, false},
		{cacheStep{Type: toolWait, TimeMs: &ten}, true},
		{cacheStep{Type: toolWait, TimeMs: &big}, false},
		{cacheStep{Type: toolNavBack}, true},
		{cacheStep{Type: cacheNavForward}, true},
		{cacheStep{Type: toolClickAndHold, Selector: "xpath=/a", DurationMs: 100}, true},
		{cacheStep{Type: toolClickAndHold, DurationMs: 100}, false},
		{cacheStep{Type: toolExtract}, false},
	} {
		if err := checkStep(tc.step); (err == nil) != tc.ok {
			t.Errorf("checkStep(%+v) = %v, want ok %v", tc.step, err, tc.ok)
		}
	}
}

func TestParsePoint(t *testing.T) {
	for in, want := range map[string][2]float64{`[10, 20.5]`: {10, 20.5}, `{"x": 3, "y": 4}`: {3, 4}} {
		x, y, err := parsePoint(json.RawMessage(in))
		if err != nil || x != want[0] || y != want[1] {
			t.Errorf("parsePoint(%s) = %v, %v, %v", in, x, y, err)
		}
	}
	for _, in := range []string{`[1]`, `[1,2,3]`, `"1,2"`, `{"x": 1}`, `null`} {
		if _, _, err := parsePoint(json.RawMessage(in)); !errors.Is(err, errInvalidArguments) {
			t.Errorf("parsePoint(%s) gave %v", in, err)
		}
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("short", 10, "x"); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
	long := strings.Repeat("line of text\n", 20)
	got := truncate(long, 100, "outline")
	head, note, _ := strings.Cut(got, "\n[outline truncated")
	if len(head) > 100 || !strings.HasSuffix(head, "line of text") || !strings.Contains(note, "of 260 characters shown]") {
		t.Errorf("truncate cut at a wrong place: %q", got)
	}
	// Never inside a rune.
	if got := truncate(strings.Repeat("é", 100), 51, "x"); !strings.HasPrefix(got, strings.Repeat("é", 25)+"\n") {
		t.Errorf("cut inside a rune: %q", got[:60])
	}
}

func TestSystemPromptNamesVariablesNotValues(t *testing.T) {
	vars := map[string]engine.Variable{
		"password": {Value: "correct horse", Description: "the account's password"},
		"user":     {Value: "ada"},
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	p := systemPrompt(ModeHybrid, toolSet(ModeHybrid, variableNames(vars), false), vars, 7, "http://127.0.0.1/login", "Answer in French.", now)
	for _, want := range []string{
		"- %password%: the account's password", "- %user%\n", "Wednesday 4 March 2026", "2026-03-04T05:06:07Z",
		"http://127.0.0.1/login", "at most 7 tool calls", "- click:", "- fillFormVision:", "screenshot", "Additional instructions:\nAnswer in French.",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "correct horse") || strings.Contains(p, "ada\n") {
		t.Errorf("the prompt shows a value:\n%s", p)
	}
	if d := systemPrompt(ModeDOM, toolSet(ModeDOM, nil, false), nil, 20, "about:blank", "", now); strings.Contains(d, "- click:") || strings.Contains(d, "Variables") {
		t.Errorf("the dom prompt names hybrid tools or variables:\n%s", d)
	}
}

func TestRedactRawAndEscaped(t *testing.T) {
	r := &run{redactions: redactionsFor(map[string]engine.Variable{"pw": {Value: `a"b\c`}, "pin": {Value: "1234"}})}
	got := r.redact(`typed a"b\c and {"v":"a\"b\\c"} then 1234`)
	if want := `typed %pw% and {"v":"%pw%"} then %pin%`; got != want {
		t.Errorf("redact = %s, want %s", got, want)
	}
}

func TestRedactJSONKeepsTheDocumentValid(t *testing.T) {
	r := &run{redactions: redactionsFor(map[string]engine.Variable{"pin": {Value: "20"}})}
	got := string(r.redactJSON([]byte(`{"maxSteps": 20, "note": "pin 20", "list": ["20", 1.5]}`)))
	if want := `{"list":["%pin%",1.5],"maxSteps":20,"note":"pin %pin%"}`; got != want {
		t.Errorf("redactJSON = %s, want %s", got, want)
	}
	if got := string(r.redactJSON([]byte(`not json 20`))); got != "not json %pin%" {
		t.Errorf("redactJSON of text = %s", got)
	}
}
