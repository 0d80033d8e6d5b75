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

package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"

	"github.com/browserfleet/browserfleet/client"
)

// The examples run a real Chromium (LaunchLocalBrowser finds it on PATH)
// on a page served here. Their model is a Generate callback that answers
// deterministically from the page text it is shown, so that their output
// is always the same; a real program sets CreateOptions.Model instead,
// such as &client.ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: key}.

// shop serves the examples' page.
func shop() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Shop</title>
<h1>Tea shop</h1>
<ul><li>Green tea <span>$4.50</span></li><li>Black tea <span>$3.90</span></li></ul>
<label for="email">Email</label><input id="email">
<button onclick="document.querySelector('h1').textContent = 'Thanks, ' + document.getElementById('email').value">Subscribe</button>`)
	}))
}

// line finds the snapshot line of an element in the text the model is
// shown: "[0-12] button: Subscribe".
var line = regexp.MustCompile(`\[(\d+-\d+)\] (textbox|button): (\w+)`)

// deterministicModel plays the model: it answers act with the element the
// instruction names, observe with every textbox and button, and extract
// with fixed data. Each answer reports 100 prompt and 10 completion
// tokens.
func deterministicModel(_ context.Context, req client.GenerateRequest) (client.GenerateResult, error) {
	user := req.Messages[len(req.Messages)-1].Text
	elements := line.FindAllStringSubmatch(user, -1)
	var answer any
	switch req.SchemaName {
	case "act":
		for _, e := range elements {
			if strings.Contains(user, "into the "+strings.ToLower(e[3])) {
				// A variable is answered by name: its value never
				// reaches the model.
				value := "ada@example.com"
				if strings.Contains(user, "%email%") {
					value = "%email%"
				}
				answer = map[string]any{"elementId": e[1], "method": "fill", "arguments": []string{value}, "description": "the email field", "twoStep": false}
			} else if e[2] == "button" && strings.Contains(user, "click "+strings.ToLower(e[3])) {
				answer = map[string]any{"elementId": e[1], "method": "click", "arguments": []string{}, "description": "the subscribe button", "twoStep": false}
			}
		}
	case "observe":
		var found []map[string]any
		for _, e := range elements {
			found = append(found, map[string]any{"elementId": e[1], "description": e[2] + " " + e[3], "method": map[string]string{"textbox": "fill", "button": "click"}[e[2]], "arguments": []string{}})
		}
		answer = map[string]any{"elements": found}
	default:
		answer = map[string]any{"heading": "Tea shop", "teas": []map[string]any{{"name": "Green tea", "price": 4.5}, {"name": "Black tea", "price": 3.9}}}
	}
	text, err := json.Marshal(answer)
	return client.GenerateResult{Text: string(text), Usage: client.Usage{InputTokens: 100, OutputTokens: 10, InferenceTimeMs: 250}}, err
}

// Example creates an instance on a local browser, observes the page, acts
// on it, extracts typed data from it, reads the metrics, and closes.
func Example() {
	ctx := context.Background()
	site := shop()
	defer site.Close()

	browser, err := client.LaunchLocalBrowser(ctx, client.LocalBrowserLaunchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer browser.Close(ctx)
	if _, err := browser.Context().NewPage(ctx, site.URL); err != nil {
		log.Fatal(err)
	}

	c, err := client.Create(ctx, client.CreateOptions{Browser: browser, Generate: deterministicModel})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(ctx)

	observed, err := c.Observe(ctx, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range observed.Data {
		fmt.Println("can", a.Method, a.Description)
	}

	acted, err := c.Act(ctx, client.ActInstruction("type ada@example.com into the email field"), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("typed:", acted.Data.Success)
	// An action observe returned runs as it is, with no model call.
	for _, a := range observed.Data {
		if a.Method == "click" {
			if _, err := c.Act(ctx, client.ObservedAction(a), nil); err != nil {
				log.Fatal(err)
			}
		}
	}

	type menu struct {
		Heading string `json:"heading"`
		Teas    []struct {
			Name  string  `json:"name"`
			Price float64 `json:"price" jsonschema:"minimum=0"`
		} `json:"teas"`
	}
	extracted, err := client.Extract[menu](ctx, c, "the heading and the teas with their prices", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s at $%.2f, cache %s\n", extracted.Data.Heading, extracted.Data.Teas[0].Name, extracted.Data.Teas[0].Price, extracted.Metadata.Cache.Status)

	m, err := c.Metrics(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("act:", m.ActPromptTokens, "observe:", m.ObservePromptTokens, "extract:", m.ExtractPromptTokens, "total:", m.TotalPromptTokens, "+", m.TotalCompletionTokens)

	if err := c.Close(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("initialized:", c.Initialized())
	// Output:
	// can fill textbox Email
	// can click button Subscribe
	// typed: true
	// Tea shop: Green tea at $4.50, cache DISABLED
	// act: 100 observe: 100 extract: 100 total: 300 + 30
	// initialized: false
}

// ExampleClient_Act acts on one part of the page only: the locator scopes
// what the model sees, and the variable's value reaches the page without
// the model ever seeing it.
func ExampleClient_Act() {
	ctx := context.Background()
	site := shop()
	defer site.Close()
	browser, err := client.LaunchLocalBrowser(ctx, client.LocalBrowserLaunchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer browser.Close(ctx)
	page, err := browser.Context().NewPage(ctx, site.URL)
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.Create(ctx, client.CreateOptions{Browser: browser, Generate: deterministicModel})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(ctx)

	res, err := c.Act(ctx, client.ActInstruction("type %email% into the email field"), &client.ActOptions{
		Locator:   page.Locator("input").Nth(0),
		Variables: client.Variables{"email": {Value: "ada@example.com", Description: "the subscriber's address"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	var typed string
	if err := page.Evaluate(ctx, "document.getElementById('email').value", &typed); err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Data.Success, res.Data.Actions[0].Method, res.Data.Actions[0].Arguments, typed)

	// A text= locator cannot scope a snapshot.
	_, err = c.Observe(ctx, nil, &client.ObserveOptions{Locator: page.Locator("text=Subscribe")})
	fmt.Println(err)
	// Output:
	// true fill [%email%] ada@example.com
	// invalid argument: ObserveOptions.Locator: text= locators are not supported for snapshot scoping; use a CSS selector or xpath=
}
