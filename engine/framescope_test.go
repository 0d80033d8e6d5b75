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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/browserfleet/browserfleet/internal/testing/chromium"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/engine/page"
)

// crossSite is the test site under "localhost", which Chrome treats as
// another site than 127.0.0.1.
func crossSite() string {
	u, _ := url.Parse(site.URL)
	return "http://localhost:" + u.Port()
}

// frameIDOf returns the DevTools id of the tab's frame whose URL ends in
// path.
func frameIDOf(t *testing.T, ctx context.Context, path string) string {
	t.Helper()
	id, err := chromium.FrameID(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// framed opens /framed and returns the engine and the ids of its frames.
func framed(t *testing.T, opts engine.Options) (*engine.Engine, context.Context, map[string]string) {
	t.Helper()
	e, ctx := tab(t, "/framed", opts)
	return e, ctx, map[string]string{
		"main":  frameIDOf(t, ctx, "/framed"),
		"same":  frameIDOf(t, ctx, "/framed-same"),
		"cross": frameIDOf(t, ctx, "/framed-cross"),
	}
}

// frameCase is one frame of /framed: its text, which a scoped snapshot
// shows and no other does, and how to tell its button was pressed.
type frameCase struct {
	frame   string
	heading string
	button  string
	pressed string // a JavaScript expression, true once pressed
}

var frameCases = []frameCase{
	{"same", "Same frame heading", "Buy in the same frame", `(window.sameBought || 0) > 0`},
	{"cross", "Cross frame heading", "Buy in the cross frame", `(window.msgs || []).includes('cross bought')`},
}

// listenForFrames records the cross frame's messages in window.msgs.
func listenForFrames(t *testing.T, ctx context.Context) {
	eval[bool](t, ctx, `(window.msgs = [], addEventListener('message', e => window.msgs.push(e.data)), true)`)
}

func waitTrue(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !eval[bool](t, ctx, expr) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", expr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// otherText is what the scoped model request must not show: the main
// page's and the other frame's.
func otherText(fc frameCase) []string {
	out := []string{"Main page heading", "Main page price"}
	for _, o := range frameCases {
		if o.frame != fc.frame {
			out = append(out, o.heading)
		}
	}
	return out
}

func checkScopedRequest(t *testing.T, r llmtest.Request, fc frameCase) {
	t.Helper()
	if !strings.Contains(r.Text, fc.heading) {
		t.Errorf("the model was not shown the frame's %q:\n%s", fc.heading, r.Text)
	}
	for _, s := range otherText(fc) {
		if strings.Contains(r.Text, s) {
			t.Errorf("the model was shown %q, from outside the frame", s)
		}
	}
}

func TestObserveAndActInAFrame(t *testing.T) {
	for _, fc := range frameCases {
		t.Run(fc.frame+" (scripted model)", func(t *testing.T) {
			srv := llmtest.NewServer(t)
			e, ctx, ids := framed(t, engine.Options{Model: model(t, srv, llmtest.OpenAI)})
			listenForFrames(t, ctx)
			scoped := e.InFrame(ids[fc.frame])
			if scoped.Frame() != ids[fc.frame] || e.Frame() != "" {
				t.Fatalf("frames %q and %q, want %q and none", scoped.Frame(), e.Frame(), ids[fc.frame])
			}
			button := idOf(t, ctx, e, "button: "+fc.button)
			srv.Enqueue(llmtest.JSON(fmt.Sprintf(`{"elements":[{"elementId":%q,"description":"the buy button","method":"click","arguments":[]}]}`, button)))

			obs, err := scoped.Observe(ctx, engine.ObserveOptions{Instruction: "find the buy button"})
			if err != nil {
				t.Fatal(err)
			}
			checkScopedRequest(t, srv.Requests()[0], fc)
			want := []engine.Action{{Selector: "xpath=/html[1]/body[1]/button[1]", Description: "the buy button", Method: "click", Arguments: []string{}, BackendNodeID: obs.Actions[0].BackendNodeID}}
			if diff := cmp.Diff(want, obs.Actions); diff != "" {
				t.Fatalf("observed actions (-want +got):\n%s", diff)
			}

			// The observed selector is the frame document's: acting on it
			// in the same frame presses the frame's button, not the main
			// page's (which the same XPath names there).
			res, err := scoped.Act(ctx, engine.ActOptions{Action: &obs.Actions[0]})
			if err != nil || !res.Success {
				t.Fatalf("act: %v %+v", err, res)
			}
			waitTrue(t, ctx, fc.pressed)
			if eval[bool](t, ctx, `window.mainBought === true`) {
				t.Error("the main page's button was pressed")
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("the model got %d requests, want the observe's only", n)
			}
		})
	}
}

func TestActByInstructionInAFrame(t *testing.T) {
	for _, fc := range frameCases {
		t.Run(fc.frame+" (scripted model)", func(t *testing.T) {
			srv := llmtest.NewServer(t)
			e, ctx, ids := framed(t, engine.Options{Model: model(t, srv, llmtest.Anthropic)})
			listenForFrames(t, ctx)
			srv.Enqueue(llmtest.JSON(actAnswer(idOf(t, ctx, e, "button: "+fc.button), "click", nil, false)))
			res, err := e.InFrame(ids[fc.frame]).Act(ctx, engine.ActOptions{Instruction: "buy it"})
			if err != nil || !res.Success {
				t.Fatalf("act: %v %+v", err, res)
			}
			checkScopedRequest(t, srv.Requests()[0], fc)
			waitTrue(t, ctx, fc.pressed)
			if got := res.Actions[0].Selector; got != "xpath=/html[1]/body[1]/button[1]" {
				t.Errorf("selector %q, want the button's within the frame's document", got)
			}
			if !res.Replayable {
				t.Error("an act in the engine's own frame is not Replayable")
			}
		})
	}
}

func TestExtractInAFrame(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx, ids := framed(t, engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	for _, fc := range frameCases {
		scoped := e.InFrame(ids[fc.frame])
		t.Run(fc.frame+": the page text", func(t *testing.T) {
			res, err := scoped.Extract(ctx, engine.ExtractOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]string
			if err := json.Unmarshal(res.Data, &got); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got["pageText"], fc.heading) || !strings.HasPrefix(got["pageText"], "[") {
				t.Errorf("pageText lacks the frame's heading at depth 0:\n%s", got["pageText"])
			}
			for _, s := range otherText(fc) {
				if strings.Contains(got["pageText"], s) {
					t.Errorf("pageText shows %q, from outside the frame", s)
				}
			}
		})
		t.Run(fc.frame+": with a schema (scripted model)", func(t *testing.T) {
			before := len(srv.Requests())
			srv.Enqueue(llmtest.JSON(`{"price":"$1"}`))
			_, err := scoped.Extract(ctx, engine.ExtractOptions{
				Instruction: "the price",
				Schema:      json.RawMessage(`{"type":"object","properties":{"price":{"type":"string"}},"required":["price"]}`),
				Selector:    "p",
			})
			if err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[before]
			price := strings.Replace(fc.heading, "heading", "price", 1)
			if !strings.Contains(r.Text, price) {
				t.Errorf("the model was not shown %q:\n%s", price, r.Text)
			}
			// The selector scoped to the frame's <p>: not even its heading.
			for _, s := range append(otherText(fc), fc.heading) {
				if strings.Contains(r.Text, s) {
					t.Errorf("the model was shown %q, outside the frame's <p>", s)
				}
			}
		})
	}
}

func TestFrameScopeOfTheMainFrameIsThePage(t *testing.T) {
	e, ctx, ids := framed(t, engine.Options{})
	main := e.InFrame(ids["main"])
	if main.Frame() != "" {
		t.Errorf("InFrame(the main frame's id).Frame() = %q, want the whole page", main.Frame())
	}
	res, err := main.Extract(ctx, engine.ExtractOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Main page heading", "Same frame heading", "Cross frame heading"} {
		if !strings.Contains(string(res.Data), s) {
			t.Errorf("pageText lacks %q", s)
		}
	}
}

func TestFrameScopeOfAFrameThePageDoesNotHave(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx, _ := framed(t, engine.Options{Model: model(t, srv, llmtest.OpenAI), SelfHeal: true})
	gone := e.InFrame("F00D")
	ops := map[string]func() error{
		"act by instruction": func() error {
			_, err := gone.Act(ctx, engine.ActOptions{Instruction: "buy it"})
			return err
		},
		// Self-heal is on: a frame that is not there is no element to
		// find again, and the call fails rather than answering "failed".
		"act with an action": func() error {
			_, err := gone.Act(ctx, engine.ActOptions{Action: &engine.Action{Selector: "button", Method: "click"}})
			return err
		},
		"observe": func() error {
			_, err := gone.Observe(ctx, engine.ObserveOptions{})
			return err
		},
		"extract": func() error {
			_, err := gone.Extract(ctx, engine.ExtractOptions{Instruction: "the price"})
			return err
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			err := op()
			var nf *page.NoFrameError
			if !errors.Is(err, page.ErrNoFrame) || !errors.As(err, &nf) || nf.Frame != "F00D" {
				t.Errorf("err = %v, want a NoFrameError for F00D", err)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests, want none", n)
	}
	if eval[bool](t, ctx, `window.mainBought === true`) {
		t.Error("something was clicked")
	}
	var _ llm.Client // the model helper's type, for the reader
}
