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

package runner

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

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/engine/page"
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
func newSite(t *testing.T) *pageServer {
	return newPageServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
func automationServer(t *testing.T, b *Browser, srv *llmtest.Server, provider string, mutate func(*v1alpha1.BrowserSessionSpec)) (rpcClient, *syncBuffer) {
	t.Helper()
	cfg := testConfig(func(s *v1alpha1.BrowserSessionSpec) {
		s.Model = v1alpha1.ModelSpec{}
		if srv != nil {
			s.Model = v1alpha1.ModelSpec{Name: modelNames[provider], BaseURL: srv.BaseURL(provider)}
		}
		if mutate != nil {
			mutate(s)
		}
	})
	if srv != nil {
		cfg.Secrets.ModelAPIKey = NewSecret(sessionModelKey)
	}
	log, buf := testLogger(t)
	s := NewServer(ServerOptions{
		Token:            NewSecret(testToken),
		Engine:           NewAutomation(cfg, log),
		Logger:           log,
		DOMSettleTimeout: time.Duration(deref(cfg.Spec.DOMSettleTimeoutMs, 0)) * time.Millisecond,
	})
	s.SetBrowser(b)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(func() {
		if strings.Contains(buf.String(), sessionModelKey) {
			t.Error("the session's model key is in the runner's log")
		}
	})
	return rpcClient{base: hs.URL, token: testToken}, buf
}

// open navigates the session's page to path on site through the RPC.
func open(t *testing.T, c rpcClient, site *pageServer, path string) {
	t.Helper()
	status, body := c.mustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: site.URL + path})
	if status != 200 {
		t.Fatalf("navigate to %s: %d %s", path, status, body)
	}
}

// snapshotOf takes a snapshot of b's page the way the engine does.
func snapshotOf(t *testing.T, b *Browser) *page.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	snap, err := b.tab.Capture(b.tabContext(ctx), page.SnapshotOptions{})
	if err != nil {
		t.Fatalf("taking a snapshot: %v", err)
	}
	return snap
}

var idPattern = regexp.MustCompile(`\[(\d+-\d+)\]`)

// idOf returns the id of the snapshot line that contains text, and its
// xpath.
func idOf(t *testing.T, b *Browser, text string) (string, string) {
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
func nodeID(t *testing.T, b *Browser, css string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var nodes []*cdp.Node
	if err := chromedp.Run(b.tabContext(ctx), chromedp.Nodes(css, &nodes, chromedp.ByQuery)); err != nil {
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
	b := sharedBrowser(t)
	site := newSite(t)
	for _, provider := range []string{llmtest.OpenAI, llmtest.Anthropic} {
		t.Run(provider, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			c, _ := automationServer(t, b, srv, provider, nil)
			open(t, c, site, "/form")
			id, xpath := idOf(t, b, "textbox: Email")
			srv.Enqueue(actAnswer(id, "fill", []string{"ada@example.com"}, false).WithUsage(210, 17))

			status, body := c.mustCall(t, rpc.ActPath, act("type ada@example.com into the email field"))
			res := decodeResult[rpc.ActResult](t, status, body)
			if !res.Result.Success {
				t.Fatalf("act did not succeed: %+v", res.Result)
			}
			backend := res.Result.Actions[0].BackendNodeID
			wantActions := []rpc.Action{{Selector: xpath, Description: "fill " + id, BackendNodeID: backend, Method: "fill", Arguments: []string{"ada@example.com"}}}
			if diff := cmp.Diff(wantActions, res.Result.Actions); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			want(t, "backendNodeId", fmt.Sprintf("0-%d", *backend), id)
			want(t, "usage", res.Usage.InputTokens, 210)
			want(t, "usage", res.Usage.OutputTokens, 17)

			var value string
			evaluate(t, b, `document.getElementById('email').value`, &value)
			want(t, "the field's value", value, "ada@example.com")
			var seen []string
			evaluate(t, b, `window.seen`, &seen)
			if !slices.Contains(seen, "input:email") {
				t.Errorf("the page saw %q, want input events on #email", seen)
			}

			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("the model got %d requests, want 1", len(reqs))
			}
			want(t, "protocol", reqs[0].Provider, provider)
			wantContains(t, "what the model read", reqs[0].Text, "["+id+"] textbox: Email", "type ada@example.com into the email field")
		})
	}
}

func TestActWithAnActionAsksNoModel(t *testing.T) {
	b := sharedBrowser(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/buttons")

	status, body := c.mustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#b", Method: "click", Description: "the B button"}}})
	res := decodeResult[rpc.ActResult](t, status, body)
	if !res.Result.Success {
		t.Fatalf("act did not succeed: %+v", res.Result)
	}
	want(t, "usage", res.Usage, rpc.Usage{})
	var clicks []string
	evaluate(t, b, "window.clicks", &clicks)
	if diff := cmp.Diff([]string{"b"}, clicks); diff != "" {
		t.Errorf("clicks (-want +got):\n%s", diff)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model got %d requests, want none", n)
	}

	// An action without a method cannot run; the caller is told why.
	status, body = c.mustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#b"}}})
	want(t, "status without a method", status, 400)
	wantContains(t, "message", decodeError(t, body).Message, "method")
}

func TestActWithVariables(t *testing.T) {
	const secret = "correct horse battery staple"
	b := sharedBrowser(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, logs := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/form")
	id, _ := idOf(t, b, "textbox: Password")
	srv.Enqueue(actAnswer(id, "fill", []string{"%password%"}, false))

	req := act("fill in the password")
	req.Options.Variables = rpc.Variables{"password": {Value: secret, Description: "the user's password"}}
	status, body := c.mustCall(t, rpc.ActPath, req)
	res := decodeResult[rpc.ActResult](t, status, body)
	if !res.Result.Success {
		t.Fatalf("act did not succeed: %+v", res.Result)
	}
	if diff := cmp.Diff([]string{"%password%"}, res.Result.Actions[0].Arguments); diff != "" {
		t.Errorf("the result's arguments (-want +got):\n%s", diff)
	}
	var value string
	evaluate(t, b, `document.getElementById('password').value`, &value)
	want(t, "the password field", value, secret)

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), secret) {
			t.Error("the variable's value reached the model")
		}
	}
	wantContains(t, "what the model read", reqs[0].Text, "%password%", "the user's password")
	if strings.Contains(string(body), secret) {
		t.Error("the variable's value is in the answer")
	}
	if strings.Contains(logs.String(), secret) {
		t.Error("the variable's value is in the runner's log")
	}
}

func TestActSelfHeals(t *testing.T) {
	b := sharedBrowser(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, func(s *v1alpha1.BrowserSessionSpec) { s.SelfHeal = ptrTo(true) })
	open(t, c, site, "/rebuild")
	_, stale := idOf(t, b, "button: Save")
	evaluate(t, b, `window.rebuild()`, nil)
	id, fresh := idOf(t, b, "button: Save")
	if fresh == stale {
		t.Fatalf("the rebuilt button has the old xpath %s", stale)
	}
	srv.Enqueue(actAnswer(id, "click", nil, false).WithUsage(90, 9))

	status, body := c.mustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: stale, Method: "click", Description: "the Save button"}}})
	res := decodeResult[rpc.ActResult](t, status, body)
	if !res.Result.Success {
		t.Fatalf("act did not succeed: %+v", res.Result)
	}
	var saved string
	evaluate(t, b, `window.saved`, &saved)
	want(t, "the button clicked", saved, "rebuilt")
	want(t, "model requests", len(srv.Requests()), 1)
	want(t, "the healed action's selector", res.Result.Actions[0].Selector, fresh)
	want(t, "usage of the healing call", res.Usage.InputTokens, 90)
}

func TestActTwoStepDropdown(t *testing.T) {
	b := sharedBrowser(t)
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

	status, body := c.mustCall(t, rpc.ActPath, act("choose the Large size"))
	res := decodeResult[rpc.ActResult](t, status, body)
	if !res.Result.Success {
		t.Fatalf("act did not succeed: %+v", res.Result)
	}
	var size string
	evaluate(t, b, `window.size`, &size)
	want(t, "the size chosen", size, "Large")
	want(t, "actions", len(res.Result.Actions), 2)
	want(t, "usage of both calls", res.Usage, rpc.Usage{InputTokens: 150, OutputTokens: 15, InferenceTimeMs: res.Usage.InferenceTimeMs})

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if strings.Contains(reqs[0].Text, "["+large+"]") {
		t.Error("the first request already showed the hidden option")
	}
	wantContains(t, "the second request", reqs[1].Text, "["+large+"] option: Large")
}

func TestObserve(t *testing.T) {
	b := sharedBrowser(t)
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

	status, body := c.mustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "find the sign-in form's controls"})
	res := decodeResult[[]rpc.Action](t, status, body)
	want(t, "usage", res.Usage.InputTokens, 300)
	want(t, "usage", res.Usage.OutputTokens, 40)
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
		evaluate(t, b, fmt.Sprintf(`document.evaluate(%q, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue.id`, xp), &gotID)
		want(t, "the element "+a.Selector+" finds", gotID, wantID)
	}
	want(t, "method", res.Result[0].Method, "fill")
	if diff := cmp.Diff([]string{"ada@example.com"}, res.Result[0].Arguments); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
}

func TestExtract(t *testing.T) {
	b := sharedBrowser(t)
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
		status, body := c.mustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "list the items and their links", Schema: json.RawMessage(schema)})
		res := decodeResult[json.RawMessage](t, status, body)
		wantJSON := fmt.Sprintf(`{"items":[{"name":"Item 1","url":"%s/item/1"},{"name":"Item %d","url":"%s/item/%d"}]}`, site.URL, listLength, site.URL, listLength)
		if diff := cmp.Diff(wantJSON, string(res.Result)); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		want(t, "usage", res.Usage.InputTokens, 5000)
		reqs := srv.Requests()
		wantContains(t, "what the model read", reqs[len(reqs)-1].Text, "["+last+"] link: Item 150")
	})
	t.Run("with only an instruction", func(t *testing.T) {
		srv.Enqueue(llmtest.JSON(`{"extraction":"150 items, from Item 1 at $3.00"}`).WithUsage(4000, 12))
		status, body := c.mustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "summarise the catalogue"})
		res := decodeResult[json.RawMessage](t, status, body)
		want(t, "result", string(res.Result), `{"extraction":"150 items, from Item 1 at $3.00"}`)
		want(t, "usage", res.Usage.OutputTokens, 12)
	})
	t.Run("with neither", func(t *testing.T) {
		before := len(srv.Requests())
		status, body := c.mustCall(t, rpc.ExtractPath, rpc.ExtractRequest{})
		res := decodeResult[map[string]string](t, status, body)
		wantContains(t, "pageText", res.Result["pageText"], "link: Item 1", "link: Item 150")
		want(t, "model requests", len(srv.Requests()), before)
		want(t, "usage", res.Usage, rpc.Usage{})
	})
	t.Run("an answer the schema refuses", func(t *testing.T) {
		srv.Enqueue(llmtest.JSON(`{"count":0}`))
		schema := `{"type":"object","properties":{"count":{"type":"integer","minimum":1}},"required":["count"]}`
		status, body := c.mustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "count the items", Schema: json.RawMessage(schema)})
		want(t, "status", status, 422)
		e := decodeError(t, body)
		want(t, "code", e.Code, rpc.CodeSchemaViolation)
		wantContains(t, "message", e.Message, "schema")
	})
	t.Run("a schema that is no schema", func(t *testing.T) {
		before := len(srv.Requests())
		status, body := c.mustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Instruction: "count", Schema: json.RawMessage(`{"type":"wat"}`)})
		want(t, "status", status, 400)
		want(t, "code", decodeError(t, body).Code, rpc.CodeBadRequest)
		want(t, "model requests", len(srv.Requests()), before)
	})
}

func TestModelFailures(t *testing.T) {
	b := sharedBrowser(t)
	site := newSite(t)

	t.Run("a provider error is MODEL_ERROR, without the key", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
		open(t, c, site, "/form")
		// The first try and both retries fail; the provider even echoes
		// the key.
		fail := llmtest.Status(500).WithMessage("upstream failed for key " + sessionModelKey)
		srv.Enqueue(fail, fail, fail)
		status, body := c.mustCall(t, rpc.ActPath, act("click sign in"))
		want(t, "status", status, 502)
		e := decodeError(t, body)
		want(t, "code", e.Code, rpc.CodeModelError)
		wantContains(t, "message", e.Message, "openai/gpt-4.1-mini", "HTTP 500")
		if strings.Contains(string(body), sessionModelKey) {
			t.Errorf("the answer %s carries the model key", body)
		}
		for _, r := range srv.Requests() {
			want(t, "the key went to the provider", r.Header.Get("Authorization"), "Bearer "+sessionModelKey)
		}
	})
	t.Run("options.timeout shorter than the model's answer", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
		open(t, c, site, "/form")
		srv.Enqueue(llmtest.JSON(`{}`).WithDelay(time.Minute))
		req := act("click sign in")
		req.Options.Timeout = ptrTo(1500.0)
		status, body := c.mustCall(t, rpc.ActPath, req)
		want(t, "status", status, 504)
		e := decodeError(t, body)
		want(t, "code", e.Code, rpc.CodeTimeout)
		wantContains(t, "message", e.Message, "act did not finish within 1.5s")
	})
	t.Run("no model at all", func(t *testing.T) {
		c, _ := automationServer(t, b, nil, "", nil)
		open(t, c, site, "/form")
		status, body := c.mustCall(t, rpc.ActPath, act("click sign in"))
		want(t, "status", status, 400)
		wantContains(t, "message", decodeError(t, body).Message, "act needs a model", "options.model")
	})
	t.Run("a model name no provider has", func(t *testing.T) {
		c, _ := automationServer(t, b, nil, "", nil)
		req := act("click sign in")
		req.Options.Model = &rpc.ModelConfig{ModelName: "nobody/model-x"}
		status, body := c.mustCall(t, rpc.ActPath, req)
		want(t, "status", status, 400)
		wantContains(t, "message", decodeError(t, body).Message, "options.model", "nobody")
	})
}

func TestCallModelMergesWithTheSession(t *testing.T) {
	b := sharedBrowser(t)
	site := newSite(t)
	session := llmtest.NewServer(t)
	other := llmtest.NewServer(t)
	c, _ := automationServer(t, b, session, llmtest.OpenAI, nil)
	open(t, c, site, "/form")
	id, _ := idOf(t, b, "button: Sign in")

	// Another model of the same provider at the session's endpoint: the
	// session's key goes with it.
	session.Enqueue(actAnswer(id, "hover", nil, false))
	req := act("point at sign in")
	req.Options.Model = &rpc.ModelConfig{ModelName: "openai/gpt-4.1"}
	status, body := c.mustCall(t, rpc.ActPath, req)
	decodeResult[rpc.ActResult](t, status, body)
	got := session.Requests()[0]
	want(t, "model", got.Model, "gpt-4.1")
	want(t, "Authorization", got.Header.Get("Authorization"), "Bearer "+sessionModelKey)

	// Another endpoint: the session's key stays home; the call's own goes.
	for _, tc := range []struct{ key, wantAuth string }{{"", ""}, {"sk-call-key", "Bearer sk-call-key"}} {
		other.Enqueue(actAnswer(id, "hover", nil, false))
		req.Options.Model = &rpc.ModelConfig{ModelName: "openai/gpt-4.1", BaseURL: other.BaseURL(llmtest.OpenAI), APIKey: tc.key}
		status, body := c.mustCall(t, rpc.ActPath, req)
		decodeResult[rpc.ActResult](t, status, body)
		reqs := other.Requests()
		want(t, "Authorization at another endpoint", reqs[len(reqs)-1].Header.Get("Authorization"), tc.wantAuth)
	}
}

func TestActStreamsProgress(t *testing.T) {
	b := sharedBrowser(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/form")
	id, _ := idOf(t, b, "button: Sign in")
	srv.Enqueue(actAnswer(id, "click", nil, false).WithUsage(120, 8))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, lines, err := c.stream(ctx, rpc.ActPath, act("sign in"))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "status", resp.StatusCode, 200)
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
	wantContains(t, "progress", all, "asking openai/gpt-4.1-mini", "performing click on xpath=")
	last := lines[len(lines)-1]
	want(t, "last line", last.Type, rpc.StreamResult)
	var res rpc.Result[rpc.ActResult]
	if err := json.Unmarshal(last.Data, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Result.Success {
		t.Errorf("result %+v", res.Result)
	}
	want(t, "usage in the result line", res.Usage.InputTokens, 120)
	var out string
	evaluate(t, b, `document.getElementById('out').textContent`, &out)
	want(t, "the form was submitted", out, "welcome ")
}

func TestPageTabContextOutlivesTheCall(t *testing.T) {
	b := sharedBrowser(t)
	ctx, cancel := context.WithCancel(context.Background())
	p := testPage(ctx, b)
	want(t, "the tab context's target", chromedp.FromContext(p.TabContext()).Target.TargetID, p.TargetID())
	want(t, "the call context's target", chromedp.FromContext(p.Context()).Target.TargetID, p.TargetID())
	cancel()
	<-p.Context().Done()
	if err := p.TabContext().Err(); err != nil {
		t.Errorf("the tab context ended with the call: %v", err)
	}
}
