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
	"fmt"
	"log"
	"time"

	"github.com/browserfleet/browserfleet/client"
)

// ExampleClient_ExperimentalBatch runs two acts and an extract in one
// call: a JavaScript function, run next to the engine (here, in this
// process), gets the batch context and the input, and what it returns is
// decoded into the result. Its model is example_test.go's deterministic
// Generate callback.
func ExampleClient_ExperimentalBatch() {
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

	var out struct {
		Subscribed bool     `json:"subscribed"`
		Title      string   `json:"title"`
		Teas       []string `json:"teas"`
		Tokens     float64  `json:"tokens"`
	}
	err = c.ExperimentalBatch(ctx, `async (batch, input) => {
		await batch.act("type " + input.email + " into the email field");
		const clicked = await batch.act("click subscribe");
		const menu = await batch.extract("the heading and the teas with their prices", {
			type: "object",
			properties: {
				heading: {type: "string"},
				teas: {type: "array", items: {type: "object", properties: {name: {type: "string"}, price: {type: "number"}}, required: ["name", "price"]}},
			},
			required: ["heading", "teas"],
		});
		return {
			subscribed: clicked.data.success,
			title: await batch.page.title(),
			teas: menu.data.teas.map(t => t.name),
			tokens: (await batch.metrics()).totalPromptTokens,
		};
	}`, map[string]string{"email": "ada@example.com"}, &out, &client.BatchOptions{Page: page, Timeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Subscribed, out.Title, out.Teas, out.Tokens)

	var heading string
	if err := page.Evaluate(ctx, "document.querySelector('h1').textContent", &heading); err != nil {
		log.Fatal(err)
	}
	fmt.Println(heading)

	// The batch's operations count in the instance's metrics as lone
	// calls would.
	m, err := c.Metrics(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("act:", m.ActPromptTokens, "extract:", m.ExtractPromptTokens, "total:", m.TotalPromptTokens)

	// A JavaScript exception is a *client.BatchError.
	var nothing any
	err = c.ExperimentalBatch(ctx, `async () => { throw new Error("out of tea"); }`, nil, &nothing, nil)
	fmt.Println(err)
	// Output:
	// true Shop [Green tea Black tea] 300
	// Thanks, ada@example.com
	// act: 200 extract: 100 total: 300
	// the batch script threw: Error: out of tea
}
