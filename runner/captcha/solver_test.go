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

package captcha

import (
	"strings"
	"testing"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
)

// A page that shows a captcha at every load gets the session's attempts,
// and then no more model calls. The model is llmtest's scripted server.
func TestAttemptsBoundedWithScriptedModel(t *testing.T) {
	b := browsertest.Start(t, runnertest.Config(nil))
	site := runnertest.NewPageServer(t, runnertest.HTMLHandler(`<!doctype html><title>captcha</title>
<canvas id="c" width="100" height="30"></canvas><input id="a">
<script>const g = document.getElementById('c').getContext('2d'); g.fillText('QWE', 10, 20);</script>`))
	model := llmtest.NewServer(t)
	model.Enqueue(llmtest.Text("QWE"), llmtest.Text("QWE"))
	client, err := llm.New(llm.Config{Model: "openai/gpt-4.1-mini", BaseURL: model.BaseURL(llmtest.OpenAI)})
	if err != nil {
		t.Fatal(err)
	}
	log, logs := runnertest.Logger(t)
	s := New(Selectors{Image: "#c", Input: "#a"}, client, nil, log)
	s.maxAttempts = 2
	tab, err := b.TabFor(b.TabContext(), 0).Automation()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(b.TabContext(), tab); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		browsertest.MustNavigate(t, b, site.URL)
		runnertest.WaitFor(t, "the captcha to be solved", func() bool { solved, _ := s.Counts(); return solved == int64(i+1) })
	}
	browsertest.MustNavigate(t, b, site.URL)
	runnertest.WaitFor(t, "the line that no more are solved", func() bool {
		return strings.Contains(logs.String(), "the session has made its 2 attempts: no more captchas are solved")
	})
	runnertest.Want(t, "model requests", len(model.Requests()), 2)
}
