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

// Package client is the Go client library of browserfleet: natural-language
// act, observe and extract, and experimental batches, on a browser handle
// the caller owns. A local handle (LaunchLocalBrowser, ConnectLocalBrowser)
// runs the engine in this process over the DevTools protocol; a cloud
// handle (LaunchCloudBrowser, ConnectCloudBrowser) is a session of the
// service, whose engine runs next to its browser.
//
//	ctx := context.Background()
//	browser, err := client.LaunchLocalBrowser(ctx, client.LocalBrowserLaunchOptions{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer browser.Close(ctx)
//	if _, err := browser.Context().NewPage(ctx, "https://example.com"); err != nil {
//		log.Fatal(err)
//	}
//
//	c, err := client.Create(ctx, client.CreateOptions{
//		Browser: browser,
//		Model:   &client.ModelConfig{ModelName: "openai/gpt-4.1-mini", APIKey: os.Getenv("OPENAI_API_KEY")},
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer c.Close(ctx)
//
//	if _, err := c.Act(ctx, client.ActInstruction("click the More information link"), nil); err != nil {
//		log.Fatal(err)
//	}
//	type page struct {
//		Title string `json:"title" jsonschema:"description=the page's main heading"`
//	}
//	res, err := client.Extract[page](ctx, c, "the page's title", nil)
//	if err != nil {
//		log.Fatal(err)
//	}
//	fmt.Println(res.Data.Title, res.Metadata.Usage.InputTokens)
//	m, _ := c.Metrics(ctx)
//	fmt.Println(m.TotalPromptTokens)
//
// An instance's operations run one at a time; cancelling a call's ctx
// abandons it. Close releases the instance and leaves the browser to its
// handle's Close. Errors wrap ErrInvalidArgument (naming the option),
// ErrClosed, ErrBrowserInUse, ErrBrowserClosed, ErrNoModel and
// ErrSchemaViolation, for errors.Is. docs/client.md in the repository says
// what each option does and the decisions behind them.
package client
