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
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/agent"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
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
