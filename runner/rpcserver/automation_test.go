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

package rpcserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// These tests drive the runner as the API pod does, over HTTP, with the
// real engine on the real Chromium and llmtest's scripted server as the
// model provider. The scripted model answers with element ids read off a
// snapshot of the same page, so what it answers exists; they show that the
// runner, the engine and the providers' wire protocols fit together, never
// that a model would choose well.

// sessionModelKey is the session's model API key. It must never appear in
// an answer or a log line.
const sessionModelKey = "sk-session-key-5d1e9c7a"

var modelNames = map[string]string{
	llmtest.OpenAI:    "openai/gpt-4.1-mini",
	llmtest.Anthropic: "anthropic/claude-sonnet-4-5",
}

// automationPages are the pages the tests act on.
var automationPages = map[string]string{
	"/form": `<!doctype html><title>Sign in</title>
<script>window.seen = []; function note(e) { window.seen.push(e.type + ':' + e.target.id) }</script>
<form onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'welcome ' + document.getElementById('email').value">
<label for="email">Email</label><input id="email" oninput="note(event)">
<label for="password">Password</label><input id="password" type="password" oninput="note(event)">
<button id="go" type="submit">Sign in</button>
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
 <div id="small" role="option" onclick="window.size='Small'">Small</div>
 <div id="large" role="option" onclick="window.size='Large'">Large</div>
</div>`,
	"/list": `<!doctype html><title>Catalogue</title><h1>Catalogue</h1><ul>` + func() string {
		var b strings.Builder
		for i := 1; i <= listLength; i++ {
			fmt.Fprintf(&b, `<li><a href="/item/%d">Item %d</a> <span>$%d.00</span></li>`, i, i, i*3)
		}
		return b.String()
	}() + `</ul>`,
}

const listLength = 150

// newSite serves automationPages.
func newSite(t *testing.T) *runnertest.PageServer {
	return runnertest.NewPageServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := automationPages[r.URL.Path]
		if !ok {
			body = buttonsPage
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
}

// automationServer serves the runner RPC over b with the real engine, for a
// session whose model is provider's at the scripted server srv (none when
// srv is nil).
func automationServer(t *testing.T, b *chromium.Browser, srv *llmtest.Server, provider string, mutate func(*v1alpha1.BrowserSessionSpec)) (runnertest.Client, *runnertest.SyncBuffer) {
	t.Helper()
	cfg := runnertest.Config(func(s *v1alpha1.BrowserSessionSpec) {
		s.Model = v1alpha1.ModelSpec{}
		if srv != nil {
			s.Model = v1alpha1.ModelSpec{Name: modelNames[provider], BaseURL: srv.BaseURL(provider)}
		}
		if mutate != nil {
			mutate(s)
		}
	})
	if srv != nil {
		cfg.Secrets.ModelAPIKey = config.NewSecret(sessionModelKey)
	}
	log, buf := runnertest.Logger(t)
	s := NewServer(ServerOptions{
		Token:            config.NewSecret(runnertest.Token),
		Operations:       operations.NewAutomation(cfg, log),
		Logger:           log,
		DOMSettleTimeout: time.Duration(ptr.Deref(cfg.Spec.DOMSettleTimeoutMs, 0)) * time.Millisecond,
	})
	s.SetBrowser(b)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(func() {
		if strings.Contains(buf.String(), sessionModelKey) {
			t.Error("the session's model key is in the runner's log")
		}
	})
	return runnertest.Client{Base: hs.URL, Token: runnertest.Token}, buf
}

// open navigates the session's page to path on site through the RPC.
func open(t *testing.T, c runnertest.Client, site *runnertest.PageServer, path string) {
	t.Helper()
	status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: site.URL + path})
	if status != 200 {
		t.Fatalf("navigate to %s: %d %s", path, status, body)
	}
}

// snapshotOf takes a snapshot of b's page the way the engine does.
func snapshotOf(t *testing.T, b *chromium.Browser) *page.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tab, err := browsertest.Tab(ctx, b).Automation()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tab.Capture(b.ContextFor(ctx), page.SnapshotOptions{})
	if err != nil {
		t.Fatalf("taking a snapshot: %v", err)
	}
	return snap
}

var idPattern = regexp.MustCompile(`\[(\d+-\d+)\]`)

// idOf returns the id of the snapshot line that contains text, and its
// xpath.
func idOf(t *testing.T, b *chromium.Browser, text string) (string, string) {
	t.Helper()
	snap := snapshotOf(t, b)
	for line := range strings.SplitSeq(snap.Tree, "\n") {
		if strings.Contains(line, text) {
			if m := idPattern.FindStringSubmatch(line); m != nil {
				return m[1], snap.XPaths[m[1]]
			}
		}
	}
	t.Fatalf("no line with %q in the snapshot:\n%s", text, snap.Tree)
	return "", ""
}

// nodeID returns the snapshot id the element css matches will have in the
// main frame, visible or not.
func nodeID(t *testing.T, b *chromium.Browser, css string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var nodes []*cdp.Node
	if err := chromedp.Run(b.ContextFor(ctx), chromedp.Nodes(css, &nodes, chromedp.ByQuery)); err != nil {
		t.Fatalf("finding %s: %v", css, err)
	}
	return fmt.Sprintf("0-%d", nodes[0].BackendNodeID)
}

func actAnswer(id, method string, args []string, twoStep bool) llmtest.Reply {
	if args == nil {
		args = []string{}
	}
	b, _ := json.Marshal(map[string]any{"elementId": id, "method": method, "arguments": args, "description": method + " " + id, "twoStep": twoStep})
	return llmtest.JSON(string(b))
}

// decodeResult decodes a 200 answer, failing the test on any other.
func decodeResult[T any](t *testing.T, status int, body []byte) rpc.Result[T] {
	t.Helper()
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var res rpc.Result[T]
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return res
}

func TestActByInstruction(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	for _, provider := range []string{llmtest.OpenAI, llmtest.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			c, _ := automationServer(t, b, srv, provider, nil)
			open(t, c, site, "/form")
			id, xpath := idOf(t, b, "textbox: Email")
			srv.Enqueue(actAnswer(id, "fill", []string{"ada@example.com"}, false).WithUsage(210, 17))

			status, body := c.MustCall(t, rpc.ActPath, browsertest.Act("type ada@example.com into the email field"))
			res := decodeResult[rpc.ActResult](t, status, body)
			if !res.Result.Success {
				t.Fatalf("act did not succeed: %+v", res.Result)
			}
			backend := res.Result.Actions[0].BackendNodeID
			wantActions := []rpc.Action{{Selector: xpath, Description: "fill " + id, BackendNodeID: backend, Method: "fill", Arguments: []string{"ada@example.com"}}}
			if diff := cmp.Diff(wantActions, res.Result.Actions); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			runnertest.Want(t, "backendNodeId", fmt.Sprintf("0-%d", *backend), id)
			runnertest.Want(t, "usage", res.Usage.InputTokens, 210)
			runnertest.Want(t, "usage", res.Usage.OutputTokens, 17)

			var value string
			browsertest.Evaluate(t, b, `document.getElementById('email').value`, &value)
			runnertest.Want(t, "the field's value", value, "ada@example.com")
			var seen []string
			browsertest.Evaluate(t, b, `window.seen`, &seen)
			if !slices.Contains(seen, "input:email") {
				t.Errorf("the page saw %q, want input events on #email", seen)
			}

			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("the model got %d requests, want 1", len(reqs))
			}
			runnertest.Want(t, "protocol", reqs[0].Provider, provider)
			runnertest.WantContains(t, "what the model read", reqs[0].Text, "["+id+"] textbox: Email", "type ada@example.com into the email field")
		})
	}
}

func TestActWithAnActionAsksNoModel(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/buttons")

	status, body := c.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#b", Method: "click", Description: "the B button"}}})
	res := decodeResult[rpc.ActResult](t, status, body)
	if !res.Result.Success {
		t.Fatalf("act did not succeed: %+v", res.Result)
	}
	runnertest.Want(t, "usage", res.Usage, rpc.Usage{})
	var clicks []string
	browsertest.Evaluate(t, b, "window.clicks", &clicks)
	if diff := cmp.Diff([]string{"b"}, clicks); diff != "" {
		t.Errorf("clicks (-want +got):\n%s", diff)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests, want none", n)
	}

	// An action without a method cannot run; the caller is told why.
	status, body = c.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#b"}}})
	runnertest.Want(t, "status without a method", status, 400)
	runnertest.WantContains(t, "message", runnertest.DecodeError(t, body).Message, "method")
}

func TestActWithVariables(t *testing.T) {
	const secret = "correct horse battery staple"
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, logs := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/form")
	id, _ := idOf(t, b, "textbox: Password")
	srv.Enqueue(actAnswer(id, "fill", []string{"%password%"}, false))

	req := browsertest.Act("fill in the password")
	req.Options.Variables = rpc.Variables{"password": {Value: secret, Description: "the user's password"}}
	status, body := c.MustCall(t, rpc.ActPath, req)
	res := decodeResult[rpc.ActResult](t, status, body)
	if !res.Result.Success {
		t.Fatalf("act did not succeed: %+v", res.Result)
	}
	if diff := cmp.Diff([]string{"%password%"}, res.Result.Actions[0].Arguments); diff != "" {
		t.Errorf("the result's arguments (-want +got):\n%s", diff)
	}
	var value string
	browsertest.Evaluate(t, b, `document.getElementById('password').value`, &value)
	runnertest.Want(t, "the password field", value, secret)

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), secret) {
			t.Error("the variable's value reached the model")
		}
	}
	runnertest.WantContains(t, "what the model read", reqs[0].Text, "%password%", "the user's password")
	if strings.Contains(string(body), secret) {
		t.Error("the variable's value is in the answer")
	}
	if strings.Contains(logs.String(), secret) {
		t.Error("the variable's value is in the runner's log")
	}
}

func TestActSelfHeals(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, func(s *v1alpha1.BrowserSessionSpec) { s.SelfHeal = ptr.To(true) })
	open(t, c, site, "/rebuild")
	_, stale := idOf(t, b, "button: Save")
	browsertest.Evaluate(t, b, `window.rebuild()`, nil)
	id, fresh := idOf(t, b, "button: Save")
	if fresh == stale {
		t.Fatalf("the rebuilt button has the old xpath %s", stale)
	}
	srv.Enqueue(actAnswer(id, "click", nil, false).WithUsage(90, 9))

	status, body := c.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: stale, Method: "click", Description: "the Save button"}}})
	res := decodeResult[rpc.ActResult](t, status, body)
	if !res.Result.Success {
		t.Fatalf("act did not succeed: %+v", res.Result)
	}
	var saved string
	browsertest.Evaluate(t, b, `window.saved`, &saved)
	runnertest.Want(t, "the button clicked", saved, "rebuilt")
	runnertest.Want(t, "model requests", len(srv.Requests()), 1)
	runnertest.Want(t, "the healed action's selector", res.Result.Actions[0].Selector, fresh)
	runnertest.Want(t, "usage of the healing call", res.Usage.InputTokens, 90)
}

func TestActTwoStepDropdown(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/menu")
	combo, _ := idOf(t, b, "combobox")
	// The option is hidden until the dropdown opens, so it is not in the
	// snapshot yet; its id is known from its node all the same.
	large := nodeID(t, b, "#large")
	srv.Enqueue(
		actAnswer(combo, "click", nil, true).WithUsage(100, 10),
		actAnswer(large, "click", nil, false).WithUsage(50, 5),
	)

	status, body := c.MustCall(t, rpc.ActPath, browsertest.Act("choose the Large size"))
	res := decodeResult[rpc.ActResult](t, status, body)
	if !res.Result.Success {
		t.Fatalf("act did not succeed: %+v", res.Result)
	}
	var size string
	browsertest.Evaluate(t, b, `window.size`, &size)
	runnertest.Want(t, "the size chosen", size, "Large")
	runnertest.Want(t, "actions", len(res.Result.Actions), 2)
	runnertest.Want(t, "usage of both calls", res.Usage, rpc.Usage{InputTokens: 150, OutputTokens: 15, InferenceTimeMs: res.Usage.InferenceTimeMs})

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if strings.Contains(reqs[0].Text, "["+large+"]") {
		t.Error("the first request already showed the hidden option")
	}
	runnertest.WantContains(t, "the second request", reqs[1].Text, "["+large+"] option: Large")
}

func TestObserve(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/form")
	email, _ := idOf(t, b, "textbox: Email")
	button, _ := idOf(t, b, "button: Sign in")
	answer := map[string]any{"elements": []map[string]any{
		{"elementId": email, "description": "the email field", "method": "fill", "arguments": []string{"ada@example.com"}},
		{"elementId": "0-987654321", "description": "not on the page", "method": "click", "arguments": []string{}},
		{"elementId": button, "description": "the sign in button", "method": "click", "arguments": []string{}},
	}}
	raw, _ := json.Marshal(answer)
	srv.Enqueue(llmtest.JSON(string(raw)).WithUsage(300, 40))

	status, body := c.MustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "find the sign-in form's controls"})
	res := decodeResult[[]rpc.Action](t, status, body)
	runnertest.Want(t, "usage", res.Usage.InputTokens, 300)
	runnertest.Want(t, "usage", res.Usage.OutputTokens, 40)
	if len(res.Result) != 2 {
		t.Fatalf("observe returned %+v, want the two elements on the page", res.Result)
	}
	for i, wantID := range []string{"email", "go"} {
		a := res.Result[i]
		xp, ok := strings.CutPrefix(a.Selector, "xpath=")
		if !ok {
			t.Fatalf("selector %q is not an xpath= selector", a.Selector)
		}
		var gotID string
		browsertest.Evaluate(t, b, fmt.Sprintf(`document.evaluate(%q, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue.id`, xp), &gotID)
		runnertest.Want(t, "the element "+a.Selector+" finds", gotID, wantID)
	}
	runnertest.Want(t, "method", res.Result[0].Method, "fill")
	if diff := cmp.Diff([]string{"ada@example.com"}, res.Result[0].Arguments); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
}

func TestExtract(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/list")

	t.Run("with a schema, links as ids", func(t *testing.T) {
		first, _ := idOf(t, b, "link: Item 1")
		last, _ := idOf(t, b, fmt.Sprintf("link: Item %d", listLength))
		answer := fmt.Sprintf(`{"items":[{"name":"Item 1","url":%q},{"name":"Item %d","url":%q}]}`, first, listLength, last)
		srv.Enqueue(llmtest.JSON(answer).WithUsage(5000, 60))
		schema := `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object",
			"properties":{"name":{"type":"string"},"url":{"type":"string","format":"uri"}},"required":["name","url"]}}},"required":["items"]}`
		status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "list the items and their links", Schema: json.RawMessage(schema)})
		res := decodeResult[json.RawMessage](t, status, body)
		wantJSON := fmt.Sprintf(`{"items":[{"name":"Item 1","url":"%s/item/1"},{"name":"Item %d","url":"%s/item/%d"}]}`, site.URL, listLength, site.URL, listLength)
		if diff := cmp.Diff(wantJSON, string(res.Result)); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		runnertest.Want(t, "usage", res.Usage.InputTokens, 5000)
		reqs := srv.Requests()
		runnertest.WantContains(t, "what the model read", reqs[len(reqs)-1].Text, "["+last+"] link: Item 150")
	})
	t.Run("with only an instruction", func(t *testing.T) {
		srv.Enqueue(llmtest.JSON(`{"extraction":"150 items, from Item 1 at $3.00"}`).WithUsage(4000, 12))
		status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "summarise the catalogue"})
		res := decodeResult[json.RawMessage](t, status, body)
		runnertest.Want(t, "result", string(res.Result), `{"extraction":"150 items, from Item 1 at $3.00"}`)
		runnertest.Want(t, "usage", res.Usage.OutputTokens, 12)
	})
	t.Run("with neither", func(t *testing.T) {
		before := len(srv.Requests())
		status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{})
		res := decodeResult[map[string]string](t, status, body)
		runnertest.WantContains(t, "pageText", res.Result["pageText"], "link: Item 1", "link: Item 150")
		runnertest.Want(t, "model requests", len(srv.Requests()), before)
		runnertest.Want(t, "usage", res.Usage, rpc.Usage{})
	})
	t.Run("an answer the schema refuses", func(t *testing.T) {
		srv.Enqueue(llmtest.JSON(`{"count":0}`))
		schema := `{"type":"object","properties":{"count":{"type":"integer","minimum":1}},"required":["count"]}`
		status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "count the items", Schema: json.RawMessage(schema)})
		runnertest.Want(t, "status", status, 422)
		e := runnertest.DecodeError(t, body)
		runnertest.Want(t, "code", e.Code, rpc.CodeSchemaViolation)
		runnertest.WantContains(t, "message", e.Message, "schema")
	})
	t.Run("a schema that is no schema", func(t *testing.T) {
		before := len(srv.Requests())
		status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "count", Schema: json.RawMessage(`{"type":"wat"}`)})
		runnertest.Want(t, "status", status, 400)
		runnertest.Want(t, "code", runnertest.DecodeError(t, body).Code, rpc.CodeBadRequest)
		runnertest.Want(t, "model requests", len(srv.Requests()), before)
	})
}

func TestModelFailures(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)

	t.Run("a provider error is MODEL_ERROR, without the key", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
		open(t, c, site, "/form")
		// The first try and both retries fail; the provider even echoes
		// the key.
		fail := llmtest.Status(500).WithMessage("upstream failed for key " + sessionModelKey)
		srv.Enqueue(fail, fail, fail)
		status, body := c.MustCall(t, rpc.ActPath, browsertest.Act("click sign in"))
		runnertest.Want(t, "status", status, 502)
		e := runnertest.DecodeError(t, body)
		runnertest.Want(t, "code", e.Code, rpc.CodeModelError)
		runnertest.WantContains(t, "message", e.Message, "openai/gpt-4.1-mini", "HTTP 500")
		if strings.Contains(string(body), sessionModelKey) {
			t.Errorf("the answer %s carries the model key", body)
		}
		for _, r := range srv.Requests() {
			runnertest.Want(t, "the key went to the provider", r.Header.Get("Authorization"), "Bearer "+sessionModelKey)
		}
	})
	t.Run("options.timeout shorter than the model's answer", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
		open(t, c, site, "/form")
		srv.Enqueue(llmtest.JSON(`{}`).WithDelay(time.Minute))
		req := browsertest.Act("click sign in")
		req.Options.Timeout = ptr.To(1500.0)
		status, body := c.MustCall(t, rpc.ActPath, req)
		runnertest.Want(t, "status", status, 504)
		e := runnertest.DecodeError(t, body)
		runnertest.Want(t, "code", e.Code, rpc.CodeTimeout)
		runnertest.WantContains(t, "message", e.Message, "act did not finish within 1.5s")
	})
	t.Run("no model at all", func(t *testing.T) {
		c, _ := automationServer(t, b, nil, "", nil)
		open(t, c, site, "/form")
		status, body := c.MustCall(t, rpc.ActPath, browsertest.Act("click sign in"))
		runnertest.Want(t, "status", status, 400)
		runnertest.WantContains(t, "message", runnertest.DecodeError(t, body).Message, "act needs a model", "options.model")
	})
	t.Run("a model name no provider has", func(t *testing.T) {
		c, _ := automationServer(t, b, nil, "", nil)
		req := browsertest.Act("click sign in")
		req.Options.Model = &rpc.ModelConfig{ModelName: "nobody/model-x"}
		status, body := c.MustCall(t, rpc.ActPath, req)
		runnertest.Want(t, "status", status, 400)
		runnertest.WantContains(t, "message", runnertest.DecodeError(t, body).Message, "options.model", "nobody")
	})
}

func TestCallModelMergesWithTheSession(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	session := llmtest.NewServer(t)
	other := llmtest.NewServer(t)
	c, _ := automationServer(t, b, session, llmtest.OpenAI, nil)
	open(t, c, site, "/form")
	id, _ := idOf(t, b, "button: Sign in")

	// Another model of the same provider at the session's endpoint: the
	// session's key goes with it.
	session.Enqueue(actAnswer(id, "hover", nil, false))
	req := browsertest.Act("point at sign in")
	req.Options.Model = &rpc.ModelConfig{ModelName: "openai/gpt-4.1"}
	status, body := c.MustCall(t, rpc.ActPath, req)
	decodeResult[rpc.ActResult](t, status, body)
	got := session.Requests()[0]
	runnertest.Want(t, "model", got.Model, "gpt-4.1")
	runnertest.Want(t, "Authorization", got.Header.Get("Authorization"), "Bearer "+sessionModelKey)

	// Another endpoint: the session's key stays home; the call's own goes.
	for _, tc := range []struct{ key, wantAuth string }{{"", ""}, {"sk-call-key", "Bearer sk-call-key"}} {
		other.Enqueue(actAnswer(id, "hover", nil, false))
		req.Options.Model = &rpc.ModelConfig{ModelName: "openai/gpt-4.1", BaseURL: other.BaseURL(llmtest.OpenAI), APIKey: tc.key}
		status, body := c.MustCall(t, rpc.ActPath, req)
		decodeResult[rpc.ActResult](t, status, body)
		reqs := other.Requests()
		runnertest.Want(t, "Authorization at another endpoint", reqs[len(reqs)-1].Header.Get("Authorization"), tc.wantAuth)
	}
}

func TestActStreamsProgress(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/form")
	id, _ := idOf(t, b, "button: Sign in")
	srv.Enqueue(actAnswer(id, "click", nil, false).WithUsage(120, 8))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	status, _, lines, err := c.Stream(ctx, rpc.ActPath, browsertest.Act("sign in"))
	if err != nil {
		t.Fatal(err)
	}
	runnertest.Want(t, "status", status, 200)
	if len(lines) < 3 {
		t.Fatalf("got %d lines, want progress lines then the result", len(lines))
	}
	var messages []string
	for _, l := range lines[:len(lines)-1] {
		if l.Type != rpc.StreamLog {
			t.Fatalf("line %+v before the last is not a log line", l)
		}
		var ll rpc.LogLine
		if err := json.Unmarshal(l.Data, &ll); err != nil {
			t.Fatal(err)
		}
		messages = append(messages, ll.Message)
	}
	all := strings.Join(messages, "\n")
	runnertest.WantContains(t, "progress", all, "asking openai/gpt-4.1-mini", "performing click on xpath=")
	last := lines[len(lines)-1]
	runnertest.Want(t, "last line", last.Type, rpc.StreamResult)
	var res rpc.Result[rpc.ActResult]
	if err := json.Unmarshal(last.Data, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Result.Success {
		t.Errorf("result %+v", res.Result)
	}
	runnertest.Want(t, "usage in the result line", res.Usage.InputTokens, 120)
	var out string
	browsertest.Evaluate(t, b, `document.getElementById('out').textContent`, &out)
	runnertest.Want(t, "the form was submitted", out, "welcome ")
}

func TestPageTabContextOutlivesTheCall(t *testing.T) {
	b := browsertest.Shared(t)
	ctx, cancel := context.WithCancel(context.Background())
	p := browsertest.Tab(ctx, b)
	runnertest.Want(t, "the tab context's target", chromedp.FromContext(p.TabContext()).Target.TargetID, p.TargetID())
	runnertest.Want(t, "the call context's target", chromedp.FromContext(p.Context()).Target.TargetID, p.TargetID())
	cancel()
	<-p.Context().Done()
	if err := p.TabContext().Err(); err != nil {
		t.Errorf("the tab context ended with the call: %v", err)
	}
}
