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

package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/agent"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/internal/testing/agentsite"
	"github.com/browserfleet/browserfleet/internal/testing/chromium"
)

// The agent runs against a real Chromium on the agentsite pages. Both of
// its models are llmtest's scripted servers: the loop's answers are tool
// calls written in advance; the execution model's (act, observe, extract)
// are written when its request arrives, from the page outline the request
// carries, as a model would read it. The tests show that our side works,
// never that a model would choose well: their names say "(scripted model)".

var browserCtx context.Context

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bctx, stop, err := chromium.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting chromium:", err)
		return 1
	}
	defer stop()
	browserCtx = bctx
	return m.Run()
}

// scripted runs f as a subtest whose name says the model is scripted.
func scripted(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name+" (scripted model)", f)
}

// newTab opens a fresh tab and returns an engine on it and a context that
// bounds the test.
func newTab(t *testing.T) (*engine.Engine, context.Context) {
	t.Helper()
	tabCtx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	p, err := page.Attach(tabCtx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx, cancelTest := context.WithTimeout(tabCtx, 2*time.Minute)
	t.Cleanup(cancelTest)
	return engine.New(p, engine.Options{}), ctx
}

var modelNames = map[string]string{
	llmtest.OpenAI:    "openai/gpt-4.1-mini",
	llmtest.Anthropic: "anthropic/claude-sonnet-4-5",
	llmtest.Google:    "google/gemini-2.5-flash",
}

func client(t *testing.T, srv *llmtest.Server, provider string) llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{Model: modelNames[provider], APIKey: "sk-test-key", BaseURL: srv.BaseURL(provider), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// call is a scripted tool call with arguments given as a value.
func call(name string, args any) llmtest.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return llmtest.Call(name, string(b))
}

// calls is a loop reply of one or more tool calls.
func calls(c ...llmtest.ToolCall) llmtest.Reply { return llmtest.ToolCalls(c...).WithUsage(100, 10) }

// executor plays the execution model: each of its replies is made from the
// page outline of the request it answers, then served by the scripted
// server over the provider's wire protocol.
type executor struct {
	llm.Client
	t   *testing.T
	srv *llmtest.Server

	mu   sync.Mutex
	next []func(t *testing.T, tree string) llmtest.Reply
}

func newExecutor(t *testing.T, provider string, replies ...func(t *testing.T, tree string) llmtest.Reply) *executor {
	srv := llmtest.NewServer(t)
	return &executor{Client: client(t, srv, provider), t: t, srv: srv, next: replies}
}

func (x *executor) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	x.mu.Lock()
	if len(x.next) == 0 {
		x.mu.Unlock()
		x.t.Errorf("the execution model got an unscripted request")
		return x.Client.Generate(ctx, req)
	}
	f := x.next[0]
	x.next = x.next[1:]
	x.mu.Unlock()
	var text strings.Builder
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			text.WriteString(p.Text)
		}
	}
	_, tree, _ := strings.Cut(text.String(), "Page:\n")
	x.srv.Enqueue(f(x.t, tree))
	return x.Client.Generate(ctx, req)
}

var lineRe = regexp.MustCompile(`\[(\d+-\d+)\] (.*)`)

// idIn returns the id of the first outline line whose text matches pattern.
func idIn(t *testing.T, tree, pattern string) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	for _, line := range strings.Split(tree, "\n") {
		if m := lineRe.FindStringSubmatch(line); m != nil && re.MatchString(m[2]) {
			return m[1]
		}
	}
	t.Errorf("no line matches %q in:\n%s", pattern, tree)
	return ""
}

// actOn answers an act with method on the element matching pattern.
func actOn(pattern, method string, args ...string) func(t *testing.T, tree string) llmtest.Reply {
	return func(t *testing.T, tree string) llmtest.Reply {
		b, _ := json.Marshal(map[string]any{
			"elementId": idIn(t, tree, pattern), "method": method, "arguments": append([]string{}, args...),
			"description": method + " " + pattern, "twoStep": false,
		})
		return llmtest.JSON(string(b)).WithUsage(50, 5)
	}
}

// observeFields answers an observe with a fill of each field: pairs of
// pattern and value.
func observeFields(pairs ...string) func(t *testing.T, tree string) llmtest.Reply {
	return func(t *testing.T, tree string) llmtest.Reply {
		var els []map[string]any
		for i := 0; i+1 < len(pairs); i += 2 {
			els = append(els, map[string]any{"elementId": idIn(t, tree, pairs[i]), "method": "fill",
				"arguments": []string{pairs[i+1]}, "description": "fill " + pairs[i]})
		}
		b, _ := json.Marshal(map[string]any{"elements": els})
		return llmtest.JSON(string(b)).WithUsage(50, 5)
	}
}

// requestsText joins what every recorded request carried.
func requestsText(srvs ...*llmtest.Server) (text, body string) {
	var t, b strings.Builder
	for _, s := range srvs {
		for _, r := range s.Requests() {
			t.WriteString(r.Text)
			b.Write(r.Body)
		}
	}
	return t.String(), b.String()
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	var v T
	if err := chromedp.Run(ctx, chromedp.Evaluate(expr, &v)); err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

const password = "correct horse battery staple"

func TestDOMTask(t *testing.T) {
	scripted(t, "signs in with a variable password, opens an item and reads its price", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		exec := newExecutor(t, llmtest.OpenAI,
			observeFields(`^textbox: Username`, "ada", `^textbox: Password`, "%password%"),
			actOn(`^button: Sign in`, "click"),
			actOn(`^link: Green Lamp`, "click"),
		)
		loop.Enqueue(
			calls(call("goto", map[string]string{"url": site.URL + "/login"})).WithText("I open the sign-in page."),
			calls(call("fillForm", map[string]any{"fields": []map[string]string{
				{"action": "type ada into the Username field"}, {"action": "type %password% into the Password field"}}})),
			calls(call("act", map[string]string{"action": "click the Sign in button"})),
			calls(call("act", map[string]string{"action": "click the Green Lamp link"})),
			calls(call("ariaTree", map[string]string{})),
			calls(call("done", map[string]any{"reasoning": "The Green Lamp costs 42.50.", "taskComplete": true,
				"output": map[string]string{"price": "42.50"}})),
		)
		type seen struct {
			index int
			typ   string
			input int64
		}
		var steps []seen
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction:    "Sign in as ada and tell me the price of the Green Lamp.",
			Model:          client(t, loop, llmtest.OpenAI),
			ExecutionModel: exec,
			Variables:      map[string]engine.Variable{"password": {Value: password, Description: "ada's password"}},
			ShouldCache:    true,
			OnStep: func(i int, s agent.Step, u llm.Usage) {
				steps = append(steps, seen{i, s.Type, u.InputTokens})
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || !res.Completed || res.Message != "The Green Lamp costs 42.50." {
			t.Errorf("result %+v", res)
		}
		if string(res.Output) != `{"price":"42.50"}` {
			t.Errorf("output %s", res.Output)
		}
		if diff := cmp.Diff([]bool{true}, site.Logins()); diff != "" {
			t.Errorf("sign-ins (-want +got):\n%s", diff)
		}
		if u := eval[string](t, ctx, `location.pathname`); u != "/items/2" {
			t.Errorf("the tab ended at %s", u)
		}

		wantSteps := []seen{{0, "goto", 100}, {1, "fillForm", 250}, {2, "act", 400}, {3, "act", 550}, {4, "ariaTree", 650}, {5, "done", 750}}
		if diff := cmp.Diff(wantSteps, steps, cmp.AllowUnexported(seen{})); diff != "" {
			t.Errorf("OnStep calls (-want +got):\n%s", diff)
		}
		want := llm.Usage{InputTokens: 600 + 150, OutputTokens: 60 + 15}
		if got := res.Usage; got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens {
			t.Errorf("usage %+v, want every call summed: %+v", got, want)
		}
		a := res.Actions
		if len(a) != 6 {
			t.Fatalf("%d steps: %+v", len(a), a)
		}
		if a[0].Reasoning != "I open the sign-in page." || a[0].PageURL != "about:blank" || a[0].Action != "goto "+site.URL+"/login" {
			t.Errorf("goto step %+v", a[0])
		}
		if a[1].PageURL != site.URL+"/login" || !strings.Contains(a[1].Instruction, "%password%") {
			t.Errorf("fillForm step %+v", a[1])
		}
		if !strings.Contains(a[4].PageText, "Price: 42.50") || a[4].PageURL != site.URL+"/items/2" {
			t.Errorf("ariaTree step %+v", a[4])
		}
		if !a[5].TaskCompleted {
			t.Errorf("done step %+v", a[5])
		}

		// The tools' results reached the model.
		reqs := loop.Requests()
		if len(reqs) != 6 {
			t.Fatalf("the loop model got %d requests, want 6", len(reqs))
		}
		if last := reqs[5].ToolResults; len(last) != 1 || last[0].Name != "ariaTree" || !strings.Contains(last[0].Text, "Price: 42.50") {
			t.Errorf("the ariaTree result sent: %+v", last)
		}
		if !strings.Contains(reqs[0].Text, "%password%") || !strings.Contains(reqs[0].Text, "ada's password") {
			t.Error("the model was not told the variable's name and description")
		}

		// The value never left the agent.
		text, body := requestsText(loop, exec.srv)
		if strings.Contains(text, password) || strings.Contains(body, password) || strings.Contains(body, "horse battery") {
			t.Error("the password reached a model")
		}
		for _, s := range res.Actions {
			if strings.Contains(fmt.Sprintf("%+v", s), password) {
				t.Errorf("a step shows the password: %+v", s)
			}
		}

		// The cache entry names the resolved selectors, with the variable
		// as a placeholder.
		if res.CacheEntry == nil {
			t.Fatal("no cache entry")
		}
		if len(res.CacheEntry.Key) != 64 || strings.Contains(string(res.CacheEntry.Entry), password) {
			t.Errorf("cache entry %s %s", res.CacheEntry.Key, res.CacheEntry.Entry)
		}
		var entry struct {
			Version       int      `json:"version"`
			StartURL      string   `json:"startUrl"`
			VariableNames []string `json:"variableNames"`
			Steps         []struct {
				Type    string          `json:"type"`
				URL     string          `json:"url"`
				Actions []engine.Action `json:"actions"`
			} `json:"steps"`
		}
		if err := json.Unmarshal(res.CacheEntry.Entry, &entry); err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, s := range entry.Steps {
			types = append(types, s.Type)
		}
		if diff := cmp.Diff([]string{"goto", "fillForm", "act", "act"}, types); diff != "" {
			t.Errorf("cached steps (-want +got):\n%s", diff)
		}
		if entry.Version != 1 || entry.StartURL != "about:blank" || !cmp.Equal(entry.VariableNames, []string{"password"}) {
			t.Errorf("entry header %+v", entry)
		}
		if len(entry.Steps) == 4 {
			ff := entry.Steps[1].Actions
			if len(ff) != 2 || ff[1].Method != "fill" || !cmp.Equal(ff[1].Arguments, []string{"%password%"}) || !strings.HasPrefix(ff[1].Selector, "xpath=/") {
				t.Errorf("fillForm's cached actions %+v", ff)
			}
			for _, s := range entry.Steps[2:] {
				if len(s.Actions) != 1 || s.Actions[0].Method != "click" || !strings.HasPrefix(s.Actions[0].Selector, "xpath=/") {
					t.Errorf("act's cached actions %+v", s.Actions)
				}
			}
			// The second item's link, as resolved on the page.
			if sel := entry.Steps[3].Actions[0].Selector; !strings.HasSuffix(sel, "/li[2]/a[1]") {
				t.Errorf("the Green Lamp link's cached selector is %s", sel)
			}
		}
	})
}
