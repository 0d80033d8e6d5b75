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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/agent"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/internal/testing/agentsite"
	"github.com/browserfleet/browserfleet/internal/testing/chromium"
	"github.com/browserfleet/browserfleet/internal/testing/searchtest"
	"github.com/browserfleet/browserfleet/search"
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
		if rs := reqs[5].ToolResults; len(rs) != 5 || rs[4].Name != "ariaTree" || !strings.Contains(rs[4].Text, "Price: 42.50") {
			t.Errorf("the tool results sent: %+v", rs)
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
		if entry.Version != agent.CacheEntryVersion || entry.StartURL != "about:blank" || !cmp.Equal(entry.VariableNames, []string{"password"}) {
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

// open navigates the tab before a run.
func open(t *testing.T, ctx context.Context, e *engine.Engine, url string) {
	t.Helper()
	if err := e.Page().Navigate(ctx, url, page.NavigateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// imageSize reads a PNG's size.
func imageSize(t *testing.T, b []byte) (int, int) {
	t.Helper()
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Width, cfg.Height
}

func TestHybridTask(t *testing.T) {
	scripted(t, "clicks and drags at screenshot coordinates scaled to a larger viewport", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		// A 1600x1000 viewport is sent as a 1280x800 screenshot: the
		// model's points are 0.8 times the page's.
		if err := chromedp.Run(ctx, emulation.SetDeviceMetricsOverride(1600, 1000, 1, false)); err != nil {
			t.Fatal(err)
		}
		open(t, ctx, e, site.URL+"/board")
		b := agentsite.Board
		at := func(x, y float64) []float64 { return []float64{x * 0.8, y * 0.8} }
		loop := llmtest.NewServer(t)
		loop.Enqueue(
			calls(call("screenshot", map[string]any{})),
			calls(call("click", map[string]any{"describe": "the Reveal code button", "coordinates": at(b.RevealButton.X, b.RevealButton.Y)})),
			calls(call("dragAndDrop", map[string]any{"describe": "the card onto the box",
				"startCoordinates": at(b.Card.X, b.Card.Y), "endCoordinates": at(b.DropBox.X, b.DropBox.Y)})),
			calls(call("ariaTree", map[string]any{})),
			calls(call("done", map[string]any{"reasoning": "The code is 7391.", "taskComplete": true, "output": map[string]string{"code": agentsite.RevealedCode}})),
		)
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction:     "Reveal the code, drop the card in the box, and tell me the code.",
			Mode:            agent.ModeHybrid,
			Model:           client(t, loop, llmtest.Anthropic),
			HighlightCursor: true,
			ShouldCache:     true,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || string(res.Output) != `{"code":"7391"}` {
			t.Errorf("result %+v output %s", res, res.Output)
		}
		if got := eval[string](t, ctx, `document.getElementById('code').textContent + '|' + document.getElementById('box').textContent`); got != "Code: 7391|Dropped" {
			t.Errorf("the page shows %q; the click or the drag missed", got)
		}
		// The cursor was drawn where the last action ended, in page pixels.
		if got := eval[[]float64](t, ctx, `(() => { const r = document.getElementById('`+page.CursorID+`').getBoundingClientRect(); return [r.left + r.width/2, r.top + r.height/2]; })()`); !cmp.Equal(got, []float64{b.DropBox.X, b.DropBox.Y}) {
			t.Errorf("the cursor is at %v, want %v", got, []float64{b.DropBox.X, b.DropBox.Y})
		}

		reqs := loop.Requests()
		if len(reqs) != 5 {
			t.Fatalf("%d loop requests", len(reqs))
		}
		if n := len(reqs[1].Images); n != 1 {
			t.Fatalf("after the screenshot the model got %d images", n)
		}
		if w, h := imageSize(t, reqs[1].Images[0]); w != 1280 || h != 800 {
			t.Errorf("the screenshot is %dx%d, want 1280x800", w, h)
		}
		// The screenshot, then one after the click, then one after the
		// drag: only the two latest are kept.
		for i, want := range []int{1, 2, 2, 2} {
			if n := len(reqs[i+1].Images); n != want {
				t.Errorf("request %d carries %d images, want %d", i+2, n, want)
			}
		}
		if !strings.Contains(reqs[4].Text, "screenshot left out") {
			t.Error("the dropped screenshot left no placeholder")
		}

		var entry struct {
			Steps []struct {
				Type    string          `json:"type"`
				Actions []engine.Action `json:"actions"`
			} `json:"steps"`
		}
		if err := json.Unmarshal(res.CacheEntry.Entry, &entry); err != nil {
			t.Fatal(err)
		}
		if len(entry.Steps) != 2 {
			t.Fatalf("cached steps %+v", entry.Steps)
		}
		click, drag := entry.Steps[0].Actions[0], entry.Steps[1].Actions[0]
		if click.Method != "click" || !strings.HasSuffix(click.Selector, "/button[1]") {
			t.Errorf("the click is cached as %+v", click)
		}
		if drag.Method != "dragAndDrop" || !strings.HasSuffix(drag.Selector, "/div[1]") || len(drag.Arguments) != 1 || !strings.HasSuffix(drag.Arguments[0], "/div[2]") {
			t.Errorf("the drag is cached as %+v", drag)
		}
	})

	scripted(t, "signs in by typing at coordinates with a variable password and pressing Enter", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		open(t, ctx, e, site.URL+"/login")
		centre := func(id string) []float64 {
			return eval[[]float64](t, ctx, `(() => { const r = document.getElementById('`+id+`').getBoundingClientRect(); return [r.left + r.width/2, r.top + r.height/2]; })()`)
		}
		loop := llmtest.NewServer(t)
		loop.Enqueue(
			calls(call("type", map[string]any{"describe": "the Username field", "text": "ada", "coordinates": centre("username")})),
			calls(call("type", map[string]any{"describe": "the Password field", "text": "%password%", "coordinates": centre("password")})),
			calls(call("keys", map[string]any{"method": "press", "value": "Enter"})),
			calls(call("done", map[string]any{"reasoning": "Signed in.", "taskComplete": true})),
		)
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction: "Sign in as ada.",
			Mode:        agent.ModeHybrid,
			Model:       client(t, loop, llmtest.Google),
			Variables:   map[string]engine.Variable{"password": {Value: password}},
			ShouldCache: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || !cmp.Equal(site.Logins(), []bool{true}) {
			t.Errorf("result %+v, sign-ins %v", res, site.Logins())
		}
		text, body := requestsText(loop)
		if strings.Contains(text, password) || strings.Contains(body, password) || strings.Contains(string(res.CacheEntry.Entry), password) {
			t.Error("the password left the agent")
		}
		if !strings.Contains(string(res.CacheEntry.Entry), `"method":"type","arguments":["%password%"]`) {
			t.Errorf("the cache entry does not record the typed placeholder: %s", res.CacheEntry.Entry)
		}
	})
}

func TestLimits(t *testing.T) {
	scripted(t, "maxSteps ends the run uncompleted, even within one answer", func(t *testing.T) {
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		think := call("think", map[string]string{"reasoning": "planning"})
		loop.Enqueue(calls(think), calls(think, think))
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "plan forever", Model: client(t, loop, llmtest.OpenAI), MaxSteps: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.Success || res.Completed || !strings.Contains(res.Message, "maxSteps (2)") || len(res.Actions) != 2 || res.Metadata["stopReason"] != "maxSteps" {
			t.Errorf("result %+v", res)
		}
		if n := len(loop.Requests()); n != 2 {
			t.Errorf("the model was asked %d times, want 2", n)
		}
	})

	scripted(t, "a tool that times out tells the model, and the run goes on", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		open(t, ctx, e, site.URL+"/login")
		loop := llmtest.NewServer(t)
		exec := newExecutor(t, llmtest.OpenAI, func(t *testing.T, tree string) llmtest.Reply {
			return actOn(`^button: Sign in`, "click")(t, tree).WithDelay(time.Minute)
		})
		loop.Enqueue(
			calls(call("act", map[string]string{"action": "click the Sign in button"})),
			calls(call("done", map[string]any{"reasoning": "The page did not answer in time.", "taskComplete": false})),
		)
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction: "click sign in", Model: client(t, loop, llmtest.OpenAI), ExecutionModel: exec, ToolTimeout: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Success || !res.Completed || len(res.Actions) != 2 || res.Actions[0].Action != "timed out" {
			t.Errorf("result %+v", res)
		}
		rs := loop.Requests()[1].ToolResults
		if len(rs) != 1 || !rs[0].IsError || !strings.Contains(rs[0].Text, "TimeoutError: act did not finish within 1s") {
			t.Errorf("the model was told %+v", rs)
		}
	})

	scripted(t, "cancelling the context mid-tool ends the run with the context's error", func(t *testing.T) {
		e, ctx := newTab(t)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		loop := llmtest.NewServer(t)
		loop.Enqueue(calls(call("wait", map[string]int{"timeMs": agent.MaxWait})))
		type outcome struct {
			res *agent.Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := agent.Run(ctx, e, agent.Options{Instruction: "wait", Model: client(t, loop, llmtest.OpenAI)})
			done <- outcome{res, err}
		}()
		waitFor(t, func() bool { return len(loop.Requests()) == 1 })
		cancel()
		var o outcome
		select {
		case o = <-done:
		case <-time.After(time.Minute):
			t.Fatal("the run did not end after its context was cancelled")
		}
		if !errors.Is(o.err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", o.err)
		}
		if o.res != nil && len(o.res.Actions) != 0 {
			t.Errorf("the cancelled wait was reported as a step: %+v", o.res.Actions)
		}
	})

	scripted(t, "a model that cannot be called ends the run with its error", func(t *testing.T) {
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		loop.Enqueue(llmtest.Status(401).WithMessage("bad key"))
		_, err := agent.Run(ctx, e, agent.Options{Instruction: "x", Model: client(t, loop, llmtest.Anthropic)})
		var le *llm.Error
		if !errors.As(err, &le) || le.StatusCode != http.StatusUnauthorized {
			t.Errorf("err = %v, want the *llm.Error of the 401", err)
		}

		site := agentsite.New(t, agentsite.Options{Password: password})
		open(t, ctx, e, site.URL+"/login")
		exec := newExecutor(t, llmtest.OpenAI, func(*testing.T, string) llmtest.Reply { return llmtest.Status(403) })
		loop.Enqueue(calls(call("act", map[string]string{"action": "click the Sign in button"})))
		_, err = agent.Run(ctx, e, agent.Options{Instruction: "x", Model: client(t, loop, llmtest.Anthropic), ExecutionModel: exec})
		if !errors.As(err, &le) || le.StatusCode != http.StatusForbidden || !strings.Contains(err.Error(), "execution model") {
			t.Errorf("err = %v, want the execution model's *llm.Error of the 403", err)
		}
	})
}

func TestConversation(t *testing.T) {
	scripted(t, "a model that stops without done is asked once more", func(t *testing.T) {
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		loop.Enqueue(
			llmtest.Text("The price is 42.50."),
			calls(call("done", map[string]any{"reasoning": "The price is 42.50.", "taskComplete": true})),
		)
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "price?", Model: client(t, loop, llmtest.OpenAI)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || res.Message != "The price is 42.50." {
			t.Errorf("result %+v", res)
		}
		reqs := loop.Requests()
		if len(reqs) != 2 || reqs[0].ToolChoice != "auto" || reqs[1].ToolChoice != "required" || !strings.Contains(reqs[1].Text, "without calling the done tool") {
			t.Errorf("requests: %d, choices %q then %q", len(reqs), reqs[0].ToolChoice, reqs[len(reqs)-1].ToolChoice)
		}
	})

	scripted(t, "a model that stops twice without done ends the run uncompleted", func(t *testing.T) {
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		loop.Enqueue(llmtest.Text("Hmm."), llmtest.Text("I am not sure."))
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "price?", Model: client(t, loop, llmtest.OpenAI)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Success || res.Completed || res.Message != "the model stopped without calling done: I am not sure." {
			t.Errorf("result %+v", res)
		}
	})

	scripted(t, "the third identical failing call is warned", func(t *testing.T) {
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		bad := call("goto", map[string]string{"url": "ftp://127.0.0.1/file"})
		loop.Enqueue(calls(bad), calls(bad), calls(bad), calls(call("done", map[string]any{"reasoning": "no", "taskComplete": false})))
		if _, err := agent.Run(ctx, e, agent.Options{Instruction: "fetch", Model: client(t, loop, llmtest.OpenAI)}); err != nil {
			t.Fatal(err)
		}
		rs := loop.Requests()[3].ToolResults
		if len(rs) != 3 {
			t.Fatalf("tool results %+v", rs)
		}
		for i, r := range rs {
			warned := strings.Contains(r.Text, "has now failed 3 times")
			if !r.IsError || !strings.Contains(r.Text, "http or https") || warned != (i == 2) {
				t.Errorf("result %d: %+v", i, r)
			}
		}
	})

	scripted(t, "only the latest page outline is sent verbatim", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		open(t, ctx, e, site.URL+"/login")
		loop := llmtest.NewServer(t)
		tree := call("ariaTree", map[string]any{})
		loop.Enqueue(calls(tree), calls(tree), calls(tree), calls(call("done", map[string]any{"reasoning": "read", "taskComplete": true})))
		if _, err := agent.Run(ctx, e, agent.Options{Instruction: "read", Model: client(t, loop, llmtest.OpenAI)}); err != nil {
			t.Fatal(err)
		}
		last := loop.Requests()[3]
		if n := strings.Count(last.Text, "Accessibility tree of"); n != 1 {
			t.Errorf("the last request carries %d outlines, want 1", n)
		}
		if n := strings.Count(last.Text, "an earlier page outline, left out"); n != 2 {
			t.Errorf("the last request carries %d placeholders, want 2", n)
		}
		if rs := last.ToolResults; len(rs) != 3 || !strings.Contains(rs[2].Text, "textbox: Password") {
			t.Errorf("tool results %+v", rs)
		}
	})
}

func TestProviders(t *testing.T) {
	for _, provider := range []string{llmtest.OpenAI, llmtest.Anthropic, llmtest.Google} {
		scripted(t, "tool calls round trip over "+provider, func(t *testing.T) {
			site := agentsite.New(t, agentsite.Options{Password: password})
			e, ctx := newTab(t)
			loop := llmtest.NewServer(t)
			exec := newExecutor(t, provider,
				actOn(`^button: Reveal code`, "click"),
				func(*testing.T, string) llmtest.Reply { return llmtest.JSON(`{"extraction":"Code: 7391"}`) },
			)
			loop.Enqueue(
				calls(call("goto", map[string]string{"url": site.URL + "/board"})),
				calls(call("act", map[string]string{"action": "click the Reveal code button"}), call("extract", map[string]string{"instruction": "the code shown"})),
				calls(call("done", map[string]any{"reasoning": "The code is 7391.", "taskComplete": true})),
			)
			res, err := agent.Run(ctx, e, agent.Options{Instruction: "get the code", Model: client(t, loop, provider), ExecutionModel: exec})
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, s := range res.Actions {
				types = append(types, s.Type)
			}
			if !res.Success || !cmp.Equal(types, []string{"goto", "act", "extract", "done"}) {
				t.Errorf("result %+v", res)
			}
			if res.Actions[2].PageText != `{"extraction":"Code: 7391"}` {
				t.Errorf("extract step %+v", res.Actions[2])
			}
			rs := loop.Requests()[2].ToolResults
			var names []string
			for _, r := range rs {
				names = append(names, r.Name)
			}
			if !cmp.Equal(names, []string{"goto", "act", "extract"}) || !strings.Contains(rs[2].Text, "Code: 7391") || rs[1].IsError {
				t.Errorf("tool results sent back %+v", rs)
			}
		})
	}
}

// waitFor polls cond until it holds, failing after a generous bound.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDeterministicTools(t *testing.T) {
	scripted(t, "keys, scroll, wait and navback act on the page and are cached, the typed variable as a placeholder", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		press := func(key string) llmtest.ToolCall {
			return call("keys", map[string]string{"method": "press", "value": key})
		}
		typ := func(text string) llmtest.ToolCall {
			return call("keys", map[string]string{"method": "type", "value": text})
		}
		loop.Enqueue(
			calls(call("goto", map[string]string{"url": site.URL + "/login"})),
			calls(press("Tab"), typ("ada"), press("Tab"), typ("%password%"), press("Enter")),
			calls(call("scroll", map[string]any{"direction": "down", "percentage": 50})),
			calls(call("wait", map[string]int{"timeMs": 10})),
			calls(call("navback", map[string]string{"reasoningText": "back to the form"})),
			calls(call("done", map[string]any{"reasoning": "signed in, then went back", "taskComplete": true})),
		)
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction: "sign in with the keyboard",
			Model:       client(t, loop, llmtest.OpenAI),
			Variables:   map[string]engine.Variable{"password": {Value: password}},
			ShouldCache: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || !cmp.Equal(site.Logins(), []bool{true}) {
			t.Fatalf("result %+v, sign-ins %v", res, site.Logins())
		}
		if u := eval[string](t, ctx, `location.pathname`); u != "/login" {
			t.Errorf("after navback the tab is at %s, want /login", u)
		}
		var actions []string
		for _, s := range res.Actions {
			actions = append(actions, s.Action)
		}
		want := []string{"goto " + site.URL + "/login", "press Tab", `type "ada"`, "press Tab", `type "%password%"`, "press Enter",
			"scrolled 50% down", "waited 10 ms", "go back", "done"}
		for i := range want {
			if i >= len(actions) || !strings.HasPrefix(actions[i], want[i]) {
				t.Errorf("step actions %q, want prefixes %q", actions, want)
				break
			}
		}
		text, body := requestsText(loop)
		if strings.Contains(text, password) || strings.Contains(body, password) {
			t.Error("the password reached the model")
		}
		var entry struct {
			Steps []map[string]any `json:"steps"`
		}
		if err := json.Unmarshal(res.CacheEntry.Entry, &entry); err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, s := range entry.Steps {
			types = append(types, s["type"].(string))
		}
		if diff := cmp.Diff([]string{"goto", "keys", "keys", "keys", "keys", "keys", "scroll", "wait", "navback"}, types); diff != "" {
			t.Errorf("cached steps (-want +got):\n%s", diff)
		}
		if len(entry.Steps) == 9 {
			if s := entry.Steps[4]; s["method"] != "type" || s["text"] != "%password%" {
				t.Errorf("the typed password is cached as %v", s)
			}
			if s := entry.Steps[6]; s["deltaY"].(float64) <= 0 {
				t.Errorf("the scroll is cached as %v", s)
			}
		}
	})
}

func TestSearch(t *testing.T) {
	const key = "brave-key-never-sent-to-the-model"
	brave := searchtest.NewBrave(t, key)
	brave.Answer("browserfleet docs", searchtest.Hit{Title: "<strong>browserfleet</strong> manual", URL: "http://127.0.0.1:1/manual", Description: "How to run it"})
	provider, err := search.New(search.Config{Provider: search.ProviderBrave, Endpoint: brave.URL, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}

	scripted(t, "the search tool is offered only with a searcher, and its hits reach the model", func(t *testing.T) {
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		loop.Enqueue(
			calls(call("search", map[string]string{"query": "browserfleet docs"})),
			calls(call("done", map[string]any{"reasoning": "found the manual", "taskComplete": true})),
		)
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "find the manual", Model: client(t, loop, llmtest.OpenAI), Search: provider})
		if err != nil {
			t.Fatal(err)
		}
		reqs := loop.Requests()
		if !slices.Contains(reqs[0].Tools, "search") {
			t.Errorf("tools %v, want search among them", reqs[0].Tools)
		}
		rs := reqs[1].ToolResults
		if len(rs) != 1 || rs[0].IsError || !strings.Contains(rs[0].Text, `"title":"browserfleet manual"`) || !strings.Contains(rs[0].Text, "http://127.0.0.1:1/manual") {
			t.Errorf("tool results %+v, want the hit", rs)
		}
		if len(res.Actions) < 1 || res.Actions[0].Type != "search" || res.Actions[0].Instruction != "browserfleet docs" || res.Actions[0].Action != "searched the web: 1 result" {
			t.Errorf("actions %+v", res.Actions)
		}
		if _, body := requestsText(loop); strings.Contains(body, key) {
			t.Error("a model request holds the provider's key")
		}

		plain := llmtest.NewServer(t)
		plain.Enqueue(calls(call("done", map[string]any{"reasoning": "no", "taskComplete": false})))
		if _, err := agent.Run(ctx, e, agent.Options{Instruction: "find", Model: client(t, plain, llmtest.OpenAI)}); err != nil {
			t.Fatal(err)
		}
		if tools := plain.Requests()[0].Tools; slices.Contains(tools, "search") {
			t.Errorf("tools %v offer search without a searcher", tools)
		}
	})

	scripted(t, "a failed search is told to the model, which goes on", func(t *testing.T) {
		wrongKey, err := search.New(search.Config{Provider: search.ProviderBrave, Endpoint: brave.URL, APIKey: "wrong"})
		if err != nil {
			t.Fatal(err)
		}
		e, ctx := newTab(t)
		loop := llmtest.NewServer(t)
		loop.Enqueue(
			calls(call("search", map[string]string{"query": "anything"})),
			calls(call("done", map[string]any{"reasoning": "search is down", "taskComplete": false})),
		)
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "find", Model: client(t, loop, llmtest.OpenAI), Search: wrongKey})
		if err != nil {
			t.Fatal(err)
		}
		rs := loop.Requests()[1].ToolResults
		if len(rs) != 1 || !rs[0].IsError || !strings.Contains(rs[0].Text, "answered 401") {
			t.Errorf("tool results %+v, want the provider's refusal", rs)
		}
		if !res.Completed || res.Success {
			t.Errorf("result %+v", res)
		}
	})
}
