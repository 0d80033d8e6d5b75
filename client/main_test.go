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
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/engine/page"
)

// The tests run against a real Chromium that LaunchLocalBrowser starts once
// for the package (tests that are about launching start their own), on
// pages served here on loopback. The model is llmtest's scripted server,
// reached through ModelConfig.BaseURL, or a Generate callback: tests built
// on either prove the library's side, never that a model would choose well.

var (
	// shared is the package's browser handle. Tests take an instance of
	// it one at a time and close the pages they open.
	shared *Browser
	site   *httptest.Server
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/headers":
			// The request's headers, for the page to show.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>%s</title>", html.EscapeString(r.Header.Get("Accept-Language")))
			return
		case "/file.txt":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Disposition", `attachment; filename="file.txt"`)
			fmt.Fprint(w, "downloaded")
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer site.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := LaunchLocalBrowser(ctx, LocalBrowserLaunchOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "launching chromium:", err)
		return 1
	}
	shared = b
	code := m.Run()
	if err := shared.Close(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "closing chromium:", err)
		return 1
	}
	return code
}

var pages = map[string]string{
	"/form": `<!doctype html><title>Sign in</title>
<form onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'welcome ' + document.getElementById('email').value">
<label for="email">Email</label><input id="email">
<label for="password">Password</label><input id="password" type="password">
<button id="go" type="submit">Sign in</button>
</form><p id="out"></p>`,
	"/list": `<!doctype html><title>Catalogue</title>
<nav><a href="/home">Home</a></nav>
<ul id="items">
<li><a href="/item/1">Item 1</a> <span>$3.00</span> <button onclick="window.bought = 1">Buy 1</button></li>
<li><a href="/item/2">Item 2</a> <span>$6.00</span> <button onclick="window.bought = 2">Buy 2</button></li>
<li><a href="/item/3">Item 3</a> <span>$9.00</span> <button onclick="window.bought = 3">Buy 3</button></li>
</ul>`,
	"/rebuild": `<!doctype html><title>Save</title>
<div id="root"><button id="save" onclick="window.saved = 'first'">Save</button></div>
<script>window.rebuild = function () {
  document.getElementById('root').innerHTML = '<section><p>moved</p><button id="save2">Save</button></section>';
  document.getElementById('save2').onclick = function () { window.saved = 'rebuilt' };
}</script>`,
	"/download": `<!doctype html><title>Download</title><a href="/file.txt" download>Get the file</a>`,
}

// testCtx bounds one test.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// openPage opens path of the site in a new tab of b (the shared handle
// when nil), closed when the test ends.
func openPage(t *testing.T, b *Browser, path string) *Page {
	t.Helper()
	if b == nil {
		b = shared
	}
	p, err := b.Context().NewPage(testCtx(t), site.URL+path)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// newInstance creates an instance of the shared handle, closed when the
// test ends.
func newInstance(t *testing.T, opts CreateOptions) *Client {
	t.Helper()
	if opts.Browser == nil {
		opts.Browser = shared
	}
	if opts.Logging == nil {
		opts.Logging = &LoggingConfig{Level: LogLevelOff}
	}
	c, err := Create(testCtx(t), opts)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// scripted is a scripted model server and the ModelConfig that reaches it.
func scripted(t *testing.T) (*llmtest.Server, *ModelConfig) {
	t.Helper()
	srv := llmtest.NewServer(t)
	return srv, &ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: "sk-test-secret-key", BaseURL: srv.BaseURL(llmtest.OpenAI)}
}

var idLine = regexp.MustCompile(`\[(\d+-\d+)\]`)

// idOf is the snapshot id of the first line of p's snapshot that contains
// text: what a model answers with.
func idOf(t *testing.T, p *Page, text string) string {
	t.Helper()
	pg, err := p.attach(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := pg.Capture(testCtx(t), page.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(snap.Tree, "\n") {
		if strings.Contains(line, text) {
			if m := idLine.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no line with %q in the snapshot:\n%s", text, snap.Tree)
	return ""
}

// actAnswer is a model's answer to an act.
func actAnswer(id, method string, args ...string) string {
	if args == nil {
		args = []string{}
	}
	b, _ := json.Marshal(map[string]any{"elementId": id, "method": method, "arguments": args, "description": method + " " + id, "twoStep": false})
	return string(b)
}

// observeAnswer is a model's answer to an observe naming one element.
func observeAnswer(id, method, desc string) string {
	b, _ := json.Marshal(map[string]any{"elements": []map[string]any{{"elementId": id, "description": desc, "method": method, "arguments": []string{}}}})
	return string(b)
}

// eval evaluates expr in p into a T.
func eval[T any](t *testing.T, p *Page, expr string) T {
	t.Helper()
	var v T
	if err := p.Evaluate(testCtx(t), expr, &v); err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}
