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

package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// Act's Selector and IgnoreSelectors scope what the model reads, as
// observe's and extract's do; the nth suffix picks one match; a text=
// selector is refused before any work (scripted model).

func TestActScopesWhatTheModelSees(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/list", engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	for _, tc := range []struct {
		name            string
		selector        string
		ignore          []string
		click           string
		want, dontWant  []string
		wantClickedItem string
	}{
		{
			name: "selector", selector: "li >> nth=2", click: "link: Item 3",
			want: []string{"link: Item 3"}, dontWant: []string{"link: Item 2", "link: Item 4"},
		},
		{
			name: "ignore selectors", ignore: []string{"li >> nth=0", "xpath=//li[position() > 2]"}, click: "link: Item 2",
			want: []string{"link: Item 2"}, dontWant: []string{"link: Item 1", "link: Item 3", "link: Item 40"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(srv.Requests())
			srv.Enqueue(llmtest.JSON(actAnswer(idOf(t, ctx, e, tc.click), "scrollIntoView", nil, false)))
			res, err := e.Act(ctx, engine.ActOptions{Instruction: "show the item", Selector: tc.selector, IgnoreSelectors: tc.ignore})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Success {
				t.Fatalf("act failed: %s", res.Message)
			}
			reqs := srv.Requests()
			if len(reqs) != before+1 {
				t.Fatalf("the model got %d requests, want 1", len(reqs)-before)
			}
			text := reqs[len(reqs)-1].Text
			for _, w := range tc.want {
				if !strings.Contains(text, w+"\n") {
					t.Errorf("the model did not see %q:\n%s", w, text)
				}
			}
			for _, w := range tc.dontWant {
				if strings.Contains(text, w+"\n") {
					t.Errorf("the model saw %q, outside the scope:\n%s", w, text)
				}
			}
		})
	}
}

func TestActionSelectorNth(t *testing.T) {
	e, ctx := tab(t, "/form", engine.Options{})
	res, err := e.Act(ctx, engine.ActOptions{Action: &engine.Action{Selector: "input >> nth=1", Method: "fill", Arguments: []string{"s3cret"}}})
	if err != nil || !res.Success {
		t.Fatalf("act: %v %+v", err, res)
	}
	if got := eval[string](t, ctx, `document.getElementById('password').value`); got != "s3cret" {
		t.Errorf("the second input holds %q", got)
	}
	if got := eval[string](t, ctx, `document.getElementById('email').value`); got != "" {
		t.Errorf("the first input holds %q, want it untouched", got)
	}
}

func TestTextSelectorsAreRefused(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/form", engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	const want = `text= locators are not supported for snapshot scoping; use a CSS selector or xpath=`
	for name, call := range map[string]func() error{
		"act selector": func() error {
			_, err := e.Act(ctx, engine.ActOptions{Instruction: "sign in", Selector: "text=Sign in"})
			return err
		},
		"act ignore selectors": func() error {
			_, err := e.Act(ctx, engine.ActOptions{Instruction: "sign in", IgnoreSelectors: []string{"#out", "text=Email"}})
			return err
		},
		"act action": func() error {
			_, err := e.Act(ctx, engine.ActOptions{Action: &engine.Action{Selector: "text=Sign in", Method: "click"}})
			return err
		},
		"observe selector": func() error {
			_, err := e.Observe(ctx, engine.ObserveOptions{Selector: "text=Sign in"})
			return err
		},
		"extract ignore selectors": func() error {
			_, err := e.Extract(ctx, engine.ExtractOptions{Instruction: "the title", IgnoreSelectors: []string{"text=Email"}})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, engine.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want ErrInvalidArgument saying %q", err, want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests, want none", n)
	}
}

func TestExtractWithAScreenshot(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/form", engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	srv.Enqueue(llmtest.JSON(`{"extraction":"a sign-in form"}`))
	srv.Enqueue(llmtest.JSON(`{"extraction":"a sign-in form"}`))
	for _, shot := range []bool{true, false} {
		res, err := e.Extract(ctx, engine.ExtractOptions{Instruction: "what is the page", Screenshot: shot})
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		if err := json.Unmarshal(res.Data, &got); err != nil || got["extraction"] != "a sign-in form" {
			t.Errorf("data %s", res.Data)
		}
	}
	reqs := srv.Requests()
	if len(reqs[0].Images) != 1 || !bytes.HasPrefix(reqs[0].Images[0], []byte("\x89PNG")) {
		t.Errorf("with Screenshot the model got %d images, want one PNG", len(reqs[0].Images))
	}
	if len(reqs[1].Images) != 0 {
		t.Errorf("without Screenshot the model got %d images", len(reqs[1].Images))
	}
}
