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
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/internal/testing/chromium"
)

// The engine runs against a real Chromium and pages served here; the model
// is llmtest's scripted server, which plays the model by answering with ids
// read off the same snapshot the engine sends. It shows that our side works,
// never that a model would choose well.

var (
	browserCtx context.Context
	site       *httptest.Server
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// {{CROSS}} is this server under another site's name, for
		// cross-site iframes.
		fmt.Fprint(w, strings.ReplaceAll(body, "{{CROSS}}", crossSite()))
	}))
	defer site.Close()

	bctx, stop, err := chromium.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting chromium:", err)
		return 1
	}
	defer stop()
	browserCtx = bctx
	return m.Run()
}

var pages = map[string]string{
	"/form": `<!doctype html><title>Sign in</title>
<script>window.seen = []; function note(e) { window.seen.push(e.type + ':' + e.target.id) }</script>
<form onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'welcome ' + document.getElementById('email').value">
<label for="email">Email</label><input id="email" oninput="note(event)">
<label for="password">Password</label><input id="password" type="password" oninput="note(event)">
<button id="go" type="submit" onclick="note(event)">Sign in</button>
</form><p id="out"></p>`,
	"/rebuild": `<!doctype html><title>Save</title>
<div id="root"><button id="save" onclick="window.saved = 'first'">Save</button></div>
<script>window.rebuild = function () {
  document.getElementById('root').innerHTML = '<section><p>moved</p><button id="save2">Save</button></section>';
  document.getElementById('save2').onclick = function () { window.saved = 'rebuilt' };
}</script>`,
	"/menu": `<!doctype html><title>Size</title>
<div id="size" role="combobox" aria-expanded="false" tabindex="0" style="width:200px;border:1px solid"
 onclick="document.getElementById('list').style.display='block'; this.setAttribute('aria-expanded','true')">Choose a size</div>
<div id="list" role="listbox" style="display:none">
 <div role="option" onclick="window.size='Small'">Small</div>
 <div role="option" onclick="window.size='Large'">Large</div>
</div>`,
	// /framed has a same-process iframe and a cross-site one (out of
	// process under site isolation), for the frame scope.
	"/framed": `<!doctype html><title>Shop</title>
<h1>Main page heading</h1><p>Main page price: $999</p>
<button id="main-buy" onclick="window.mainBought = true">Buy on the main page</button>
<iframe id="same" src="/framed-same" style="width:400px;height:200px"></iframe>
<iframe id="cross" src="{{CROSS}}/framed-cross" style="width:400px;height:200px"></iframe>`,
	"/framed-same": `<!doctype html><title>Same frame</title>
<h2>Same frame heading</h2><p>Same frame price: $12</p>
<input id="q" aria-label="Same frame search" oninput="parent.sameTyped = this.value">
<button id="buy" onclick="parent.sameBought = (parent.sameBought || 0) + 1">Buy in the same frame</button>`,
	"/framed-cross": `<!doctype html><title>Cross frame</title>
<h2>Cross frame heading</h2><p>Cross frame price: $34</p>
<button id="buy" onclick="parent.postMessage('cross bought', '*')">Buy in the cross frame</button>`,
	"/list": `<!doctype html><title>Catalogue</title><ul>` + func() string {
		var b strings.Builder
		for i := 1; i <= 40; i++ {
			fmt.Fprintf(&b, `<li><a href="/item/%d">Item %d</a> <span>$%d.00</span></li>`, i, i, i*3)
		}
		return b.String()
	}() + `</ul>`,
}

// tab opens a fresh tab on path and returns an engine on it.
func tab(t testing.TB, path string, opts engine.Options) (*engine.Engine, context.Context) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	p, err := page.Attach(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := p.Navigate(ctx, site.URL+path, page.NavigateOptions{}); err != nil {
		t.Fatal(err)
	}
	return engine.New(p, opts), ctx
}

func model(t testing.TB, srv *llmtest.Server, provider string) llm.Client {
	t.Helper()
	name := map[string]string{llmtest.OpenAI: "openai/gpt-4.1-mini", llmtest.Anthropic: "anthropic/claude-sonnet-4-5"}[provider]
	c, err := llm.New(llm.Config{Model: name, APIKey: "sk-test-key", BaseURL: srv.BaseURL(provider)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// idOf finds the id of the snapshot line that contains text.
func idOf(t *testing.T, ctx context.Context, e *engine.Engine, text string) string {
	t.Helper()
	snap, err := e.Page().Capture(ctx, page.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(snap.Tree, "\n") {
		if strings.Contains(line, text) {
			if m := regexp.MustCompile(`\[(\d+-\d+)\]`).FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no line with %q in the snapshot:\n%s", text, snap.Tree)
	return ""
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	var v T
	if err := chromedp.Run(ctx, chromedp.Evaluate(expr, &v)); err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func actAnswer(id, method string, args []string, twoStep bool) string {
	b, _ := json.Marshal(map[string]any{"elementId": id, "method": method, "arguments": args, "description": method + " " + id, "twoStep": twoStep})
	return string(b)
}

func TestActByInstructionKeepsVariablesFromTheModel(t *testing.T) {
	for _, provider := range []string{llmtest.OpenAI, llmtest.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			e, ctx := tab(t, "/form", engine.Options{Model: model(t, srv, provider)})
			id := idOf(t, ctx, e, "textbox: Password")
			srv.Enqueue(llmtest.JSON(actAnswer(id, "fill", []string{"%password%"}, false)).WithUsage(210, 17))

			res, err := e.Act(ctx, engine.ActOptions{
				Instruction: "type the password",
				Variables:   map[string]engine.Variable{"password": {Value: "correct horse battery", Description: "the user's password"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Success {
				t.Fatalf("act failed: %s", res.Message)
			}
			if got := eval[string](t, ctx, `document.getElementById('password').value`); got != "correct horse battery" {
				t.Errorf("the page got %q", got)
			}
			if seen := eval[[]string](t, ctx, `window.seen`); len(seen) == 0 || seen[0] != "input:password" {
				t.Errorf("the page saw events %q, want input events on #password", seen)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("the model got %d requests, want 1", len(reqs))
			}
			if strings.Contains(string(reqs[0].Body), "correct horse") {
				t.Error("the variable's value reached the model")
			}
			if !strings.Contains(reqs[0].Text, "%password%") || !strings.Contains(reqs[0].Text, "the user's password") {
				t.Error("the model was not told about the variable by name and description")
			}
			want := []engine.Action{{Selector: res.Actions[0].Selector, Description: "fill " + id, Method: "fill", Arguments: []string{"%password%"}, BackendNodeID: res.Actions[0].BackendNodeID}}
			if diff := cmp.Diff(want, res.Actions); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(res.Actions[0].Selector, "xpath=/") {
				t.Errorf("selector %q is not an absolute xpath", res.Actions[0].Selector)
			}
			if res.Usage.InputTokens != 210 || res.Usage.OutputTokens != 17 {
				t.Errorf("usage %+v, want 210 in and 17 out", res.Usage)
			}
			if !res.Replayable {
				t.Error("an act on the page's own document is not Replayable")
			}
		})
	}
}

func TestActWithAnActionMakesNoModelCall(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/form", engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	res, err := e.Act(ctx, engine.ActOptions{Action: &engine.Action{Selector: "#email", Method: "fill", Arguments: []string{"ada@example.com"}, Description: "email"}})
	if err != nil || !res.Success {
		t.Fatalf("act: %v %+v", err, res)
	}
	res, err = e.Act(ctx, engine.ActOptions{Action: &engine.Action{Selector: "xpath=//button[@id='go']", Method: "click"}})
	if err != nil || !res.Success {
		t.Fatalf("act: %v %+v", err, res)
	}
	if got := eval[string](t, ctx, `document.getElementById('out').textContent`); got != "welcome ada@example.com" {
		t.Errorf("the form shows %q", got)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests, want none", n)
	}
	if res.Usage != (llm.Usage{}) {
		t.Errorf("a deterministic act reports usage %+v", res.Usage)
	}
}

func TestSelfHealFindsTheElementAgain(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/rebuild", engine.Options{Model: model(t, srv, llmtest.OpenAI), SelfHeal: true})
	stale := e.Page()
	snap, err := stale.Capture(ctx, page.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var old string
	for id, xp := range snap.XPaths {
		if strings.HasSuffix(xp, "/button") || strings.HasSuffix(xp, "/button[1]") {
			old = snap.XPaths[id]
		}
	}
	if old == "" {
		t.Fatalf("no button xpath in %v", snap.XPaths)
	}
	eval[any](t, ctx, `window.rebuild()`)
	id := idOf(t, ctx, e, "button: Save")
	srv.Enqueue(llmtest.JSON(actAnswer(id, "doubleClick", nil, false)))

	res, err := e.Act(ctx, engine.ActOptions{Action: &engine.Action{Selector: old, Method: "click", Description: "the Save button"}})
	if err != nil || !res.Success {
		t.Fatalf("act: %v %+v", err, res)
	}
	if got := eval[string](t, ctx, `window.saved`); got != "rebuilt" {
		t.Errorf("window.saved = %q, want the rebuilt button clicked", got)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("the model was asked %d times, want once", len(srv.Requests()))
	}
	if m := res.Actions[0].Method; m != "click" {
		t.Errorf("healed action used method %q; self-heal keeps the original method", m)
	}
}

func TestSelfHealOffFailsPlainly(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/rebuild", engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	res, err := e.Act(ctx, engine.ActOptions{Action: &engine.Action{Selector: "xpath=/html/body/div[7]/button", Method: "click"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || !strings.Contains(res.Message, "xpath=/html/body/div[7]/button") {
		t.Errorf("got %+v, want an unsuccessful result naming the selector", res)
	}
}

func TestTwoStepCustomDropdown(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/menu", engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	// The second answer names an option the snapshot shows only once the
	// list is open; the option's node is in the page already, hidden, so
	// its id is known before the act.
	large, err := e.Page().MainFrame().Query(ctx, "#list > [role=option]:nth-child(2)")
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(
		llmtest.JSON(actAnswer(idOf(t, ctx, e, "combobox"), "click", nil, true)),
		llmtest.JSON(actAnswer(large.ID, "click", nil, false)),
	)
	res, err := e.Act(ctx, engine.ActOptions{Instruction: "choose the Large size"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success {
		t.Fatal(res.Message)
	}
	if got := eval[string](t, ctx, `window.size`); got != "Large" {
		t.Errorf("window.size = %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want twice", len(reqs))
	}
	if !strings.Contains(reqs[1].Text, "option: Large") || !strings.Contains(reqs[1].Text, "A first action") {
		t.Errorf("the second request did not show what the first action opened:\n%s", reqs[1].Text)
	}
}

func TestObserve(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/form", engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	email := idOf(t, ctx, e, "textbox: Email")
	button := idOf(t, ctx, e, "button: Sign in")
	srv.Enqueue(llmtest.JSON(fmt.Sprintf(`{"elements":[
		{"elementId":%q,"description":"the email field","method":"fill","arguments":["ada@example.com"]},
		{"elementId":"0-999999","description":"not on the page","method":"click","arguments":[]},
		{"elementId":%q,"description":"the sign-in button","method":"click","arguments":[]}]}`, email, button)).WithUsage(90, 30))
	res, err := e.Observe(ctx, engine.ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Actions) != 2 {
		t.Fatalf("got %d actions, want the 2 that exist: %+v", len(res.Actions), res.Actions)
	}
	for i, wantID := range []string{"email", "go"} {
		xp := strings.TrimPrefix(res.Actions[i].Selector, "xpath=")
		got := eval[string](t, ctx, fmt.Sprintf(`document.evaluate(%q, document, null, 9, null).singleNodeValue.id`, xp))
		if got != wantID {
			t.Errorf("action %d selector %s finds #%s, want #%s", i, res.Actions[i].Selector, got, wantID)
		}
	}
	if !strings.Contains(srv.Requests()[0].Text, "interact") {
		t.Error("observe without an instruction did not ask for everything actionable")
	}
}

func TestExtract(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/list", engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	item3, item7 := idOf(t, ctx, e, "link: Item 3"), idOf(t, ctx, e, "link: Item 7")

	t.Run("with a schema, links answered as ids come back as URLs", func(t *testing.T) {
		srv.Enqueue(llmtest.JSON(fmt.Sprintf(`{"items":[{"name":"Item 3","price":9,"url":%q},{"name":"Item 7","price":21,"url":%q}]}`, item3, item7)).WithUsage(1200, 80))
		res, err := e.Extract(ctx, engine.ExtractOptions{
			Instruction: "the items 3 and 7 with price and link",
			Schema:      json.RawMessage(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"price":{"type":"number"},"url":{"type":"string","format":"uri"}},"required":["name","price","url"]}}},"required":["items"]}`),
		})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"items":[{"name":"Item 3","price":9,"url":"%s/item/3"},{"name":"Item 7","price":21,"url":"%s/item/7"}]}`, site.URL, site.URL)
		if diff := cmp.Diff(want, string(res.Data)); diff != "" {
			t.Errorf("data (-want +got):\n%s", diff)
		}
		if res.Usage.InputTokens != 1200 {
			t.Errorf("usage %+v", res.Usage)
		}
	})
	t.Run("an answer that violates the schema is refused", func(t *testing.T) {
		srv.Enqueue(llmtest.JSON(`{"items":[{"name":"Item 3","price":"cheap","url":"0-1"}]}`))
		_, err := e.Extract(ctx, engine.ExtractOptions{
			Instruction: "the items",
			Schema:      json.RawMessage(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"price":{"type":"number"}}}}}}`),
		})
		if !errors.Is(err, engine.ErrSchemaViolation) {
			t.Errorf("err = %v, want ErrSchemaViolation", err)
		}
	})
	t.Run("an instruction alone gives {extraction}", func(t *testing.T) {
		srv.Enqueue(llmtest.JSON(`{"extraction":"40 items, from $3.00 to $120.00"}`))
		res, err := e.Extract(ctx, engine.ExtractOptions{Instruction: "summarise the prices"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(`{"extraction":"40 items, from $3.00 to $120.00"}`, string(res.Data)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("neither gives the page text, with no model call", func(t *testing.T) {
		before := len(srv.Requests())
		res, err := e.Extract(ctx, engine.ExtractOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		if err := json.Unmarshal(res.Data, &got); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got["pageText"], "link: Item 40") {
			t.Errorf("pageText lacks the list:\n%s", got["pageText"])
		}
		if len(srv.Requests()) != before {
			t.Error("the model was called")
		}
	})
	t.Run("a schema without an instruction is refused", func(t *testing.T) {
		_, err := e.Extract(ctx, engine.ExtractOptions{Schema: json.RawMessage(`{"type":"object"}`)})
		if !errors.Is(err, engine.ErrInvalidArgument) {
			t.Errorf("err = %v, want ErrInvalidArgument", err)
		}
	})
}

func TestTimeoutAndMissingModel(t *testing.T) {
	srv := llmtest.NewServer(t)
	e, ctx := tab(t, "/form", engine.Options{Model: model(t, srv, llmtest.OpenAI)})
	srv.Enqueue(llmtest.JSON(actAnswer("0-1", "click", nil, false)).WithDelay(3 * time.Second))
	_, err := e.Act(ctx, engine.ActOptions{Instruction: "sign in", Timeout: 300 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a deadline error", err)
	}

	bare, bctx := tab(t, "/form", engine.Options{})
	if _, err := bare.Act(bctx, engine.ActOptions{Instruction: "sign in"}); !errors.Is(err, engine.ErrNoModel) {
		t.Errorf("err = %v, want ErrNoModel", err)
	}
}
