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
	"net/http"
	"net/http/httptest"
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
)

// The cua mode's tests run the agent on a real Chromium against the
// agentsite pages, with each provider's computer-use model played by
// llmtest over the provider's wire protocol. A reply is written when the
// agent's turn arrives, from the page as it is then (where a model would
// read its screenshot), in the model's coordinate space.

// computerModels are a computer-use model per provider.
var computerModels = map[string]string{
	llmtest.OpenAI:    "openai/computer-use-preview",
	llmtest.Anthropic: "anthropic/claude-sonnet-4-5",
	llmtest.Google:    "google/gemini-2.5-computer-use-preview-10-2025",
}

// computerModel plays a computer-use model: Options.ComputerUse opens a
// real llm.ComputerUse on the scripted server, and each Step first queues
// the reply made for it.
type computerModel struct {
	t        *testing.T
	srv      *llmtest.Server
	provider string

	mu   sync.Mutex
	cu   llm.ComputerUse
	opts llm.ComputerUseOptions
	next []func() llmtest.Reply
}

func newComputerModel(t *testing.T, provider string) *computerModel {
	return &computerModel{t: t, srv: llmtest.NewServer(t), provider: provider}
}

// script queues the replies, each made when its turn comes.
func (m *computerModel) script(replies ...func() llmtest.Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next = append(m.next, replies...)
}

// open is Options.ComputerUse.
func (m *computerModel) open(o llm.ComputerUseOptions) (llm.ComputerUse, error) {
	cu, err := llm.NewComputerUse(llm.Config{Model: computerModels[m.provider], APIKey: "sk-test-key", BaseURL: m.srv.BaseURL(m.provider), MaxRetries: -1}, o)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.cu, m.opts = cu, o
	m.mu.Unlock()
	return m, nil
}

func (m *computerModel) Step(ctx context.Context, turn llm.ComputerTurn) (*llm.ComputerStep, error) {
	m.mu.Lock()
	if len(m.next) == 0 {
		m.mu.Unlock()
		m.t.Errorf("the model got an unscripted turn")
		return nil, errors.New("unscripted turn")
	}
	f := m.next[0]
	m.next = m.next[1:]
	m.mu.Unlock()
	m.srv.Enqueue(f())
	return m.cu.Step(ctx, turn)
}

func (m *computerModel) Space() llm.Size { return m.cu.Space() }
func (m *computerModel) Model() string   { return m.cu.Model() }

// at converts a viewport point (CSS pixels) of a vw x vh viewport to the
// model's space, as the model would see it in its screenshot.
func (m *computerModel) at(x, y float64, vw, vh int) (int, int) {
	s := m.Space()
	return int(x * float64(s.Width) / float64(vw)), int(y * float64(s.Height) / float64(vh))
}

// reply makes a reply at the time of the turn.
func reply(r llmtest.Reply) func() llmtest.Reply { return func() llmtest.Reply { return r } }

// centreOf returns the centre of the element with id, in viewport pixels.
func centreOf(t *testing.T, ctx context.Context, selector string) (float64, float64) {
	t.Helper()
	c := eval[[]float64](t, ctx, `(() => { const r = document.querySelector(`+fmt.Sprintf("%q", selector)+`).getBoundingClientRect(); return [r.left + r.width/2, r.top + r.height/2]; })()`)
	if len(c) != 2 {
		t.Fatalf("no centre for %s", selector)
	}
	return c[0], c[1]
}

// viewport sets the tab's viewport: 1600x1000 is sent as 1280x800
// screenshots, so that the model's space differs from the page's.
func viewport(t *testing.T, ctx context.Context, w, h int64) {
	t.Helper()
	if err := chromedp.Run(ctx, emulation.SetDeviceMetricsOverride(w, h, 1, false)); err != nil {
		t.Fatal(err)
	}
}

func stepTypes(steps []agent.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Type)
	}
	return out
}

func TestCUATask(t *testing.T) {
	for _, provider := range []string{llmtest.OpenAI, llmtest.Anthropic, llmtest.Google} {
		scripted(t, "signs in with a variable password and reads the price over "+provider, func(t *testing.T) {
			site := agentsite.New(t, agentsite.Options{Password: password})
			e, ctx := newTab(t)
			viewport(t, ctx, 1600, 1000)
			open(t, ctx, e, site.URL+"/login")
			m := newComputerModel(t, provider)
			click := func(selector string) llmtest.ComputerAction {
				x, y := centreOf(t, ctx, selector)
				return llmtest.Click(m.at(x, y, 1600, 1000))
			}
			m.script(
				func() llmtest.Reply {
					return llmtest.Computer(click("#username"), llmtest.TypeText("ada")).WithReasoning("The form is empty.").WithText("I type the username.").WithUsage(100, 10)
				},
				func() llmtest.Reply {
					return llmtest.Computer(click("#password"), llmtest.TypeText("%password%"), llmtest.Keypress("ENTER")).WithUsage(100, 10)
				},
				func() llmtest.Reply { return llmtest.Computer(click(`a[href="/items/2"]`)).WithUsage(100, 10) },
				reply(llmtest.Text("The Green Lamp costs 42.50.").WithUsage(100, 10)),
			)
			type seen struct {
				Index int
				Type  string
				Input int64
			}
			var steps []seen
			res, err := agent.Run(ctx, e, agent.Options{
				Instruction: "Sign in as ada and tell me the price of the Green Lamp.",
				Mode:        agent.ModeCUA,
				ComputerUse: m.open,
				Variables:   map[string]engine.Variable{"password": {Value: password, Description: "ada's password"}},
				ShouldCache: provider == llmtest.OpenAI,
				OnStep:      func(i int, s agent.Step, u llm.Usage) { steps = append(steps, seen{i, s.Type, u.InputTokens}) },
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Success || !res.Completed || res.Message != "The Green Lamp costs 42.50." {
				t.Errorf("result %+v", res)
			}
			if diff := cmp.Diff([]bool{true}, site.Logins()); diff != "" {
				t.Errorf("sign-ins (-want +got):\n%s", diff)
			}
			if u := eval[string](t, ctx, `location.pathname`); u != "/items/2" {
				t.Errorf("the tab ended at %s", u)
			}

			// The agent told the model the screenshots' size; Google's
			// space is 1000x1000 whatever the screen.
			wantSpace := llm.Size{Width: 1280, Height: 800}
			if provider == llmtest.Google {
				wantSpace = llm.Size{Width: 1000, Height: 1000}
			}
			if m.opts.Screen != (llm.Size{Width: 1280, Height: 800}) || m.Space() != wantSpace {
				t.Errorf("screen %+v, space %+v; want 1280x800 and %+v", m.opts.Screen, m.Space(), wantSpace)
			}

			want := []seen{{0, "click", 100}, {1, "type", 100}, {2, "click", 200}, {3, "type", 200}, {4, "keypress", 200}, {5, "click", 300}, {6, "done", 400}}
			if diff := cmp.Diff(want, steps); diff != "" {
				t.Errorf("OnStep calls (-want +got):\n%s", diff)
			}
			if u := res.Usage; u.InputTokens != 400 || u.OutputTokens != 40 {
				t.Errorf("usage %+v, want every call summed (400, 40)", u)
			}
			a := res.Actions
			if len(a) != 7 {
				t.Fatalf("%d steps: %+v", len(a), a)
			}
			if a[0].PageURL != site.URL+"/login" || !strings.HasPrefix(a[0].Action, "click at (") || !strings.Contains(a[0].Reasoning, "I type the username.") {
				t.Errorf("first step %+v", a[0])
			}
			if a[3].Action != `type "%password%"` || a[4].Action != "press Enter" {
				t.Errorf("password steps %+v %+v", a[3], a[4])
			}
			if a[5].PageURL != site.URL+"/items" || a[6].PageURL != site.URL+"/items/2" || !a[6].TaskCompleted {
				t.Errorf("last steps %+v %+v", a[5], a[6])
			}
			for _, s := range a {
				if strings.Contains(fmt.Sprintf("%+v", s), password) {
					t.Errorf("a step shows the password: %+v", s)
				}
			}

			reqs := m.srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("the model got %d requests, want 4", len(reqs))
			}
			for i, r := range reqs {
				if len(r.Images) == 0 {
					t.Errorf("request %d carries no screenshot", i)
					continue
				}
				if w, h := imageSize(t, r.Images[len(r.Images)-1]); w != 1280 || h != 800 {
					t.Errorf("request %d's screenshot is %dx%d, want 1280x800", i, w, h)
				}
			}
			if !strings.Contains(reqs[0].Text, "Sign in as ada") || !strings.Contains(reqs[0].Text, "%password%: ada's password") {
				t.Errorf("the first request does not carry the task and the variable's name:\n%s", reqs[0].Text)
			}
			text, body := requestsText(m.srv)
			if strings.Contains(text, password) || strings.Contains(body, password) || strings.Contains(body, "horse battery") {
				t.Error("the password reached the model")
			}

			if provider != llmtest.OpenAI {
				if res.CacheEntry != nil {
					t.Error("a cache entry without ShouldCache")
				}
				return
			}
			if res.CacheEntry == nil {
				t.Fatalf("no cache entry; metadata %v", res.Metadata)
			}
			var entry struct {
				ConfigSignature struct {
					Model string `json:"model"`
				} `json:"configSignature"`
				Steps []struct {
					Type    string          `json:"type"`
					Method  string          `json:"method"`
					Text    string          `json:"text"`
					Keys    string          `json:"keys"`
					Actions []engine.Action `json:"actions"`
				} `json:"steps"`
			}
			if err := json.Unmarshal(res.CacheEntry.Entry, &entry); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(res.CacheEntry.Entry), password) || entry.ConfigSignature.Model != "openai/computer-use-preview" {
				t.Errorf("cache entry %s", res.CacheEntry.Entry)
			}
			var got []string
			for _, s := range entry.Steps {
				switch {
				case s.Type == "act" && len(s.Actions) == 1:
					got = append(got, s.Actions[0].Method+" "+s.Actions[0].Selector)
				default:
					got = append(got, s.Type+" "+s.Method+" "+s.Text+s.Keys)
				}
			}
			wantSteps := []string{
				"click xpath=/html[1]/body[1]/form[1]/p[1]/input[1]", "keys type ada",
				"click xpath=/html[1]/body[1]/form[1]/p[2]/input[1]", "keys type %password%", "keys press Enter",
				"click xpath=/html[1]/body[1]/ul[1]/li[2]/a[1]",
			}
			if diff := cmp.Diff(wantSteps, got); diff != "" {
				t.Errorf("cached steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCUACoordinateActions(t *testing.T) {
	scripted(t, "navigates, clicks and drags at Google's 0..999 coordinates scaled to a larger viewport", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		viewport(t, ctx, 1600, 1000)
		m := newComputerModel(t, llmtest.Google)
		b := agentsite.Board
		m.script(
			reply(llmtest.Computer(llmtest.Navigate(site.URL+"/board"))),
			func() llmtest.Reply {
				rx, ry := m.at(b.RevealButton.X, b.RevealButton.Y, 1600, 1000)
				cx, cy := m.at(b.Card.X, b.Card.Y, 1600, 1000)
				dx, dy := m.at(b.DropBox.X, b.DropBox.Y, 1600, 1000)
				return llmtest.Computer(llmtest.Click(rx, ry), llmtest.Drag(cx, cy, dx, dy))
			},
			reply(llmtest.Text("The code is 7391.")),
		)
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction:     "Open the board, reveal the code, drop the card in the box, and tell me the code.",
			Mode:            agent.ModeCUA,
			ComputerUse:     m.open,
			HighlightCursor: true,
			ShouldCache:     true,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || res.Message != "The code is 7391." {
			t.Errorf("result %+v", res)
		}
		if got := eval[string](t, ctx, `document.getElementById('code').textContent + '|' + document.getElementById('box').textContent`); got != "Code: 7391|Dropped" {
			t.Errorf("the page shows %q; the click or the drag missed", got)
		}
		if diff := cmp.Diff([]string{"navigate", "click", "drag", "done"}, stepTypes(res.Actions)); diff != "" {
			t.Errorf("steps (-want +got):\n%s", diff)
		}
		// The cursor was drawn where the drag ended: the model's point,
		// scaled back to page pixels, within the rounding of 0..999.
		got := eval[[]float64](t, ctx, `(() => { const r = document.getElementById('`+page.CursorID+`').getBoundingClientRect(); return [r.left + r.width/2, r.top + r.height/2]; })()`)
		if len(got) != 2 || got[0] < b.DropBox.X-2 || got[0] > b.DropBox.X || got[1] < b.DropBox.Y-1 || got[1] > b.DropBox.Y {
			t.Errorf("the cursor is at %v, want about %v", got, []float64{b.DropBox.X, b.DropBox.Y})
		}

		var entry struct {
			Steps []struct {
				Type    string          `json:"type"`
				URL     string          `json:"url"`
				Actions []engine.Action `json:"actions"`
			} `json:"steps"`
		}
		if err := json.Unmarshal(res.CacheEntry.Entry, &entry); err != nil {
			t.Fatal(err)
		}
		if len(entry.Steps) != 3 || entry.Steps[0].Type != "goto" || entry.Steps[0].URL != site.URL+"/board" {
			t.Fatalf("cached steps %+v", entry.Steps)
		}
		click, drag := entry.Steps[1].Actions[0], entry.Steps[2].Actions[0]
		if click.Method != "click" || !strings.HasSuffix(click.Selector, "/button[1]") {
			t.Errorf("the click is cached as %+v", click)
		}
		if drag.Method != "dragAndDrop" || !strings.HasSuffix(drag.Selector, "/div[1]") || len(drag.Arguments) != 1 || !strings.HasSuffix(drag.Arguments[0], "/div[2]") {
			t.Errorf("the drag is cached as %+v", drag)
		}
	})

	scripted(t, "an action the engine cannot replay leaves the run without a cache entry", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		open(t, ctx, e, site.URL+"/board")
		m := newComputerModel(t, llmtest.Anthropic)
		m.script(
			reply(llmtest.Computer(llmtest.NativeAction(llmtest.Anthropic, "", `{"action": "triple_click", "coordinate": [180, 124]}`))),
			reply(llmtest.Text("Done.")),
		)
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "triple-click the button", Mode: agent.ModeCUA, ComputerUse: m.open, ShouldCache: true})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || res.CacheEntry != nil || res.Metadata["cacheSkipped"] != "step 0 (triple_click) cannot be replayed" {
			t.Errorf("result %+v, metadata %v", res, res.Metadata)
		}
		if got := eval[string](t, ctx, `document.getElementById('code').textContent`); got != "Code: 7391" {
			t.Errorf("the triple click missed: the page shows %q", got)
		}
	})
}

func TestCUALimits(t *testing.T) {
	scripted(t, "maxSteps ends the run uncompleted, even within one answer", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		open(t, ctx, e, site.URL+"/board")
		m := newComputerModel(t, llmtest.OpenAI)
		m.script(reply(llmtest.Computer(llmtest.Click(10, 10), llmtest.Click(20, 20), llmtest.Click(30, 30))))
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "click around", Mode: agent.ModeCUA, ComputerUse: m.open, MaxSteps: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.Success || res.Completed || res.Message != "the agent stopped after 2 actions without finishing: it reached maxSteps (2)" || res.Metadata["stopReason"] != "maxSteps" {
			t.Errorf("result %+v", res)
		}
		if diff := cmp.Diff([]string{"click", "click"}, stepTypes(res.Actions)); diff != "" {
			t.Errorf("steps (-want +got):\n%s", diff)
		}
		if n := len(m.srv.Requests()); n != 1 {
			t.Errorf("the model was asked %d times, want 1", n)
		}
	})

	scripted(t, "a failing action is told to the model, and the actions after it are not run", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		open(t, ctx, e, site.URL+"/board")
		m := newComputerModel(t, llmtest.Google)
		m.script(
			func() llmtest.Reply {
				x, y := m.at(agentsite.Board.RevealButton.X, agentsite.Board.RevealButton.Y, 1280, 800)
				return llmtest.Computer(llmtest.Navigate("ftp://127.0.0.1/file"), llmtest.Click(x, y))
			},
			reply(llmtest.Text("I cannot open that address.")),
		)
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "fetch the file", Mode: agent.ModeCUA, ComputerUse: m.open})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"navigate", "done"}, stepTypes(res.Actions)); diff != "" {
			t.Errorf("steps (-want +got):\n%s", diff)
		}
		if a := res.Actions[0].Action; !strings.Contains(a, "failed: only absolute http and https URLs") {
			t.Errorf("the failed step says %q", a)
		}
		rs := m.srv.Requests()[1].ToolResults
		if len(rs) != 2 || !rs[0].IsError || !strings.Contains(rs[0].Text, "only absolute http and https URLs") ||
			!rs[1].IsError || !strings.Contains(rs[1].Text, "Not run") {
			t.Errorf("the model was told %+v", rs)
		}
		if got := eval[string](t, ctx, `document.getElementById('code').textContent`); got != "" {
			t.Errorf("the click after the failed action ran: the page shows %q", got)
		}
	})

	scripted(t, "a key the page does not know fails the action over openai", func(t *testing.T) {
		e, ctx := newTab(t)
		m := newComputerModel(t, llmtest.OpenAI)
		m.script(reply(llmtest.Computer(llmtest.Keypress("NOSUCHKEY"))), reply(llmtest.Text("No such key.")))
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "press it", Mode: agent.ModeCUA, ComputerUse: m.open})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || !strings.Contains(res.Actions[0].Action, "failed: ") {
			t.Errorf("result %+v", res)
		}
		if text := m.srv.Requests()[1].Text; !strings.Contains(text, "did not run as asked") || !strings.Contains(text, "NOSUCHKEY") {
			t.Errorf("the model was not told of the failure:\n%s", text)
		}
	})

	scripted(t, "an action that outlives toolTimeout is stopped and told to the model", func(t *testing.T) {
		release := make(chan struct{})
		hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(hang.Close)
		t.Cleanup(func() { close(release) })
		e, ctx := newTab(t)
		m := newComputerModel(t, llmtest.Google)
		m.script(reply(llmtest.Computer(llmtest.Navigate(hang.URL+"/slow"))), reply(llmtest.Text("The site does not answer.")))
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "open the slow page", Mode: agent.ModeCUA, ComputerUse: m.open, ToolTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Actions) != 2 || !strings.HasSuffix(res.Actions[0].Action, ": timed out") {
			t.Errorf("steps %+v", res.Actions)
		}
		rs := m.srv.Requests()[1].ToolResults
		if len(rs) != 1 || !rs[0].IsError || !strings.Contains(rs[0].Text, "TimeoutError: the navigate action did not finish within 1s") {
			t.Errorf("the model was told %+v", rs)
		}
	})

	scripted(t, "cancelling the context mid-run ends it with the context's error", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		open(t, ctx, e, site.URL+"/board")
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		m := newComputerModel(t, llmtest.Anthropic)
		m.script(reply(llmtest.Computer(llmtest.Click(10, 10), llmtest.Wait(30*time.Second))))
		res, err := agent.Run(ctx, e, agent.Options{
			Instruction: "click, then wait", Mode: agent.ModeCUA, ComputerUse: m.open,
			// The task is deleted while its first action is reported.
			OnStep: func(int, agent.Step, llm.Usage) { cancel() },
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if res == nil || !cmp.Equal(stepTypes(res.Actions), []string{"click"}) {
			t.Errorf("the steps so far: %+v", res)
		}
		if n := len(m.srv.Requests()); n != 1 {
			t.Errorf("the model was asked %d times after the cancel, want 1 in all", n)
		}
	})

	scripted(t, "a model that cannot be called ends the run with its error", func(t *testing.T) {
		e, ctx := newTab(t)
		m := newComputerModel(t, llmtest.OpenAI)
		m.script(reply(llmtest.Status(401).WithMessage("bad key")))
		_, err := agent.Run(ctx, e, agent.Options{Instruction: "x", Mode: agent.ModeCUA, ComputerUse: m.open})
		var le *llm.Error
		if !errors.As(err, &le) || le.StatusCode != http.StatusUnauthorized {
			t.Errorf("err = %v, want the *llm.Error of the 401", err)
		}
	})
}

func TestCUASafetyChecks(t *testing.T) {
	scripted(t, "a safety check stops the run unless acknowledged", func(t *testing.T) {
		site := agentsite.New(t, agentsite.Options{Password: password})
		e, ctx := newTab(t)
		open(t, ctx, e, site.URL+"/board")
		m := newComputerModel(t, llmtest.OpenAI)
		b := agentsite.Board
		m.script(reply(llmtest.Computer(llmtest.Click(int(b.RevealButton.X), int(b.RevealButton.Y))).
			WithSafetyCheck("malicious_instructions", "The page may hold instructions of its own.")))
		res, err := agent.Run(ctx, e, agent.Options{Instruction: "reveal the code", Mode: agent.ModeCUA, ComputerUse: m.open})
		if err != nil {
			t.Fatal(err)
		}
		if res.Success || res.Completed || res.Metadata["stopReason"] != "safetyCheck" ||
			!strings.Contains(res.Message, "safety check malicious_instructions: The page may hold instructions of its own.") {
			t.Errorf("result %+v", res)
		}
		if got := eval[string](t, ctx, `document.getElementById('code').textContent`); got != "" {
			t.Errorf("the unconfirmed click ran: the page shows %q", got)
		}
	})

	for _, provider := range []string{llmtest.OpenAI, llmtest.Google} {
		scripted(t, "an acknowledged safety check lets the actions run over "+provider, func(t *testing.T) {
			site := agentsite.New(t, agentsite.Options{Password: password})
			e, ctx := newTab(t)
			open(t, ctx, e, site.URL+"/board")
			m := newComputerModel(t, provider)
			b := agentsite.Board
			m.script(
				func() llmtest.Reply {
					x, y := m.at(b.RevealButton.X, b.RevealButton.Y, 1280, 800)
					return llmtest.Computer(llmtest.Click(x, y)).WithSafetyCheck("irrelevant_domain", "The page is not about the task.")
				},
				reply(llmtest.Text("The code is 7391.")),
			)
			var asked []llm.SafetyCheck
			res, err := agent.Run(ctx, e, agent.Options{
				Instruction: "reveal the code", Mode: agent.ModeCUA, ComputerUse: m.open,
				AcknowledgeSafetyCheck: func(sc llm.SafetyCheck) bool { asked = append(asked, sc); return true },
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Success || !cmp.Equal(stepTypes(res.Actions), []string{"safetyCheck", "click", "done"}) {
				t.Errorf("result %+v", res)
			}
			if len(asked) != 1 || !strings.Contains(asked[0].Message, "not about the task") {
				t.Errorf("the callback was asked %+v", asked)
			}
			if got := eval[string](t, ctx, `document.getElementById('code').textContent`); got != "Code: 7391" {
				t.Errorf("the acknowledged click did not run: the page shows %q", got)
			}
			body := string(m.srv.Requests()[1].Body)
			want := map[string]string{llmtest.OpenAI: `"acknowledged_safety_checks":[{"id":"sc_llmtest_1"`, llmtest.Google: `"safety_acknowledgement":"true"`}[provider]
			if !strings.Contains(body, want) {
				t.Errorf("the next request does not acknowledge the check (%s):\n%s", want, body)
			}
		})
	}
}
