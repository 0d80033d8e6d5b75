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

package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// The options of act, observe and extract (scripted model).

// seen reports whether the model's request showed a snapshot line ending
// in text.
func seen(req llmtest.Request, text string) bool {
	return strings.Contains(req.Text, text+"\n")
}

func TestActOptionsLocatorScopesWhatTheModelSees(t *testing.T) {
	srv, model := scripted(t)
	ctx := testCtx(t)
	p := openPage(t, nil, "/list")
	c := newInstance(t, CreateOptions{Model: model})
	for _, tc := range []struct {
		name           string
		opts           *ActOptions
		click          string
		want, dontWant []string
		bought         int
	}{
		{
			name:  "Locator with Nth",
			opts:  &ActOptions{Locator: p.Locator("#items li").Nth(2)},
			click: "button: Buy 3", want: []string{"button: Buy 3"}, dontWant: []string{"button: Buy 1", "button: Buy 2", "link: Home"},
			bought: 3,
		},
		{
			name:  "IgnoreLocators, one by Nth",
			opts:  &ActOptions{IgnoreLocators: []*Locator{p.Locator("nav"), p.Locator("li").Nth(0)}},
			click: "button: Buy 2", want: []string{"button: Buy 2", "button: Buy 3"}, dontWant: []string{"link: Home", "button: Buy 1"},
			bought: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.Enqueue(llmtest.JSON(actAnswer(idOf(t, p, tc.click), "click")))
			res, err := c.Act(ctx, ActInstruction("buy it"), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Data.Success || res.Metadata.Cache.Status != CacheStatusDISABLED {
				t.Fatalf("result %+v", res)
			}
			reqs := srv.Requests()
			req := reqs[len(reqs)-1]
			for _, w := range tc.want {
				if !seen(req, w) {
					t.Errorf("the model did not see %q:\n%s", w, req.Text)
				}
			}
			for _, w := range tc.dontWant {
				if seen(req, w) {
					t.Errorf("the model saw %q:\n%s", w, req.Text)
				}
			}
			if got := eval[int](t, p, "window.bought"); got != tc.bought {
				t.Errorf("bought %d, want %d", got, tc.bought)
			}
		})
	}
}

func TestOptionsPageTargetsATab(t *testing.T) {
	srv, model := scripted(t)
	ctx := testCtx(t)
	form := openPage(t, nil, "/form")
	list := openPage(t, nil, "/list") // the active page now
	c := newInstance(t, CreateOptions{Model: model})

	srv.Enqueue(llmtest.JSON(`{"extraction":"x"}`), llmtest.JSON(`{"extraction":"x"}`))
	type text struct {
		Extraction string `json:"extraction"`
	}
	if _, err := Extract[text](ctx, c, "anything", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Extract[text](ctx, c, "anything", &ExtractOptions{Page: form}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if !seen(reqs[0], "button: Buy 1") {
		t.Errorf("with no Page the call did not read the active page:\n%s", reqs[0].Text)
	}
	if !seen(reqs[1], "button: Sign in") {
		t.Errorf("with Page the call did not read that page:\n%s", reqs[1].Text)
	}
	// A Locator's page is the call's page.
	srv.Enqueue(llmtest.JSON(observeAnswer(idOf(t, form, "button: Sign in"), "click", "sign in")))
	if _, err := c.Observe(ctx, nil, &ObserveOptions{Locator: form.Locator("form")}); err != nil {
		t.Fatal(err)
	}
	if reqs := srv.Requests(); !seen(reqs[2], "button: Sign in") {
		t.Errorf("the Locator's page was not the one read:\n%s", reqs[2].Text)
	}
	_, err := c.Observe(ctx, nil, &ObserveOptions{Page: list, Locator: form.Locator("form")})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "ObserveOptions.Locator") {
		t.Errorf("a Locator of another page than Page: %v", err)
	}
}

func TestActOptionsVariablesTimeoutAndModel(t *testing.T) {
	srv, model := scripted(t)
	other, otherModel := scripted(t)
	ctx := testCtx(t)
	p := openPage(t, nil, "/form")
	c := newInstance(t, CreateOptions{Model: model})

	t.Run("variables reach the page, not the model", func(t *testing.T) {
		srv.Enqueue(llmtest.JSON(actAnswer(idOf(t, p, "textbox: Password"), "fill", "%pw%")))
		res, err := c.Act(ctx, ActInstruction("type the password"), &ActOptions{Page: p,
			Variables: Variables{"pw": {Value: "hunter2-secret", Description: "the password"}}})
		if err != nil || !res.Data.Success {
			t.Fatalf("act: %v %+v", err, res)
		}
		if got := eval[string](t, p, "document.getElementById('password').value"); got != "hunter2-secret" {
			t.Errorf("the page got %q", got)
		}
		reqs := srv.Requests()
		if strings.Contains(string(reqs[len(reqs)-1].Body), "hunter2") {
			t.Error("the variable's value reached the model")
		}
		if got := res.Data.Actions[0].Arguments; len(got) != 1 || got[0] != "%pw%" {
			t.Errorf("the action's arguments are %q, want the placeholder", got)
		}
	})
	t.Run("the call's model takes the instance's place", func(t *testing.T) {
		other.Enqueue(llmtest.JSON(actAnswer(idOf(t, p, "textbox: Email"), "fill", "ada@example.com")))
		before := len(srv.Requests())
		if _, err := c.Act(ctx, ActInstruction("type the email"), &ActOptions{Page: p, Model: otherModel}); err != nil {
			t.Fatal(err)
		}
		if len(other.Requests()) != 1 || len(srv.Requests()) != before {
			t.Errorf("requests: call's model %d, instance's %d new", len(other.Requests()), len(srv.Requests())-before)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		srv.Enqueue(llmtest.JSON(actAnswer("0-1", "click")).WithDelay(20 * time.Second))
		start := time.Now()
		_, err := c.Act(ctx, ActInstruction("sign in"), &ActOptions{Page: p, Timeout: 300 * time.Millisecond})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want a deadline error", err)
		}
		if time.Since(start) > 15*time.Second {
			t.Error("the call outlived its timeout by far")
		}
	})
	t.Run("refused options name their field", func(t *testing.T) {
		for _, tc := range []struct {
			opts *ActOptions
			want string
		}{
			{&ActOptions{Cache: CacheWithThreshold(0)}, "ActOptions.Cache"},
			{&ActOptions{Cache: CacheWithThreshold(-2)}, "ActOptions.Cache"},
			{&ActOptions{Timeout: -time.Second}, "ActOptions.Timeout"},
			{&ActOptions{Model: &ModelConfig{ModelName: "gpt"}}, "ActOptions.Model.ModelName"},
			{&ActOptions{Variables: Variables{"a b": {Value: "x"}}}, "ActOptions.Variables"},
			{&ActOptions{Locator: p.Locator("")}, "ActOptions.Locator"},
			{&ActOptions{Locator: p.Locator("li").Nth(-1)}, "ActOptions.Locator"},
			{&ActOptions{IgnoreLocators: []*Locator{p.Locator("nav"), nil}}, "ActOptions.IgnoreLocators[1]"},
		} {
			_, err := c.Act(ctx, ActInstruction("sign in"), tc.opts)
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: err = %v, want ErrInvalidArgument naming %s", tc.opts, err, tc.want)
			}
		}
		if _, err := c.Act(ctx, ActInstruction(" "), nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("an empty instruction: %v", err)
		}
	})
}

func TestTextLocatorsAreRefused(t *testing.T) {
	srv, model := scripted(t)
	ctx := testCtx(t)
	p := openPage(t, nil, "/list")
	c := newInstance(t, CreateOptions{Model: model})
	const msg = "text= locators are not supported for snapshot scoping; use a CSS selector or xpath="
	for _, tc := range []struct {
		field string
		call  func() error
	}{
		{"ObserveOptions.Locator", func() error {
			_, err := c.Observe(ctx, nil, &ObserveOptions{Locator: p.Locator("text=Buy 1")})
			return err
		}},
		{"ExtractOptions.IgnoreLocators[0]", func() error {
			_, err := Extract[[]string](ctx, c, "the names", &ExtractOptions{IgnoreLocators: []*Locator{p.Locator("text=Home")}})
			return err
		}},
		{"ActOptions.Locator", func() error {
			_, err := c.Act(ctx, ActInstruction("buy"), &ActOptions{Locator: p.Locator("text=Buy 1").Nth(0)})
			return err
		}},
		{"ObservedAction.Selector", func() error {
			_, err := c.Act(ctx, ObservedAction(Action{Selector: "text=Buy 1", Method: "click"}), nil)
			return err
		}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), msg) {
				t.Errorf("err = %v, want ErrInvalidArgument naming %s and saying %q", err, tc.field, msg)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
}

func TestSelfHeal(t *testing.T) {
	for _, heal := range []bool{true, false} {
		t.Run(map[bool]string{true: "on re-infers the action", false: "off fails plainly"}[heal], func(t *testing.T) {
			srv, model := scripted(t)
			ctx := testCtx(t)
			p := openPage(t, nil, "/rebuild")
			c := newInstance(t, CreateOptions{Model: model, SelfHeal: heal})
			srv.Enqueue(llmtest.JSON(observeAnswer(idOf(t, p, "button: Save"), "click", "the Save button")))
			obs, err := c.Observe(ctx, nil, &ObserveOptions{Page: p})
			if err != nil {
				t.Fatal(err)
			}
			eval[any](t, p, "window.rebuild()")
			if heal {
				srv.Enqueue(llmtest.JSON(actAnswer(idOf(t, p, "button: Save"), "click")).WithUsage(50, 5))
			}
			res, err := c.Act(ctx, ObservedAction(obs.Data[0]), &ActOptions{Page: p})
			if err != nil {
				t.Fatal(err)
			}
			saved := eval[string](t, p, "String(window.saved)")
			if heal {
				if !res.Data.Success || saved != "rebuilt" || res.Metadata.Usage.InputTokens != 50 {
					t.Errorf("healed act: %+v, window.saved = %q", res, saved)
				}
				if len(srv.Requests()) != 2 {
					t.Errorf("the model was asked %d times, want observe and one heal", len(srv.Requests()))
				}
				return
			}
			if res.Data.Success || !strings.Contains(res.Data.Message, obs.Data[0].Selector) || saved != "undefined" {
				t.Errorf("unhealed act: %+v, window.saved = %q; want a failure naming the selector", res, saved)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("the model was asked %d times, want only the observe", len(srv.Requests()))
			}
		})
	}
}

func TestNoModelIsAClearError(t *testing.T) {
	ctx := testCtx(t)
	p := openPage(t, nil, "/form")
	c := newInstance(t, CreateOptions{})
	_, err := c.Act(ctx, ActInstruction("sign in"), &ActOptions{Page: p})
	if !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), "CreateOptions.Model") {
		t.Errorf("err = %v, want ErrNoModel saying where to set one", err)
	}
	// A deterministic act needs none.
	res, err := c.Act(ctx, ObservedAction(Action{Selector: "#go", Method: "click"}), &ActOptions{Page: p})
	if err != nil || !res.Data.Success {
		t.Errorf("observed action without a model: %v %+v", err, res)
	}
}
