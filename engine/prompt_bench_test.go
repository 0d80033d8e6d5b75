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
	"slices"
	"strings"
	"testing"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
)

// BenchmarkPromptSize reports the size of the prompt an observe without an
// instruction sends the (scripted) model on each of the engine tests'
// pages, system prompt included, in bytes and in estimated tokens
// (bytes/4): what the snapshot's format costs a model call, page by page.
//
//	go test ./engine/ -run '^$' -bench PromptSize -benchtime 1x
func BenchmarkPromptSize(b *testing.B) {
	paths := make([]string, 0, len(pages))
	for p := range pages {
		if !strings.Contains(p[1:], "-") {
			// A frame's own document is measured inside its host page.
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, path := range paths {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			srv := llmtest.NewServer(b)
			e, ctx := tab(b, path, engine.Options{Model: model(b, srv, llmtest.OpenAI)})
			var size int
			for b.Loop() {
				srv.Enqueue(llmtest.JSON(`{"elements":[]}`))
				if _, err := e.Observe(ctx, engine.ObserveOptions{}); err != nil {
					b.Fatalf("observe: %v", err)
				}
				reqs := srv.Requests()
				size = len(reqs[len(reqs)-1].Text)
			}
			b.ReportMetric(float64(size), "bytes")
			b.ReportMetric(float64(size)/4, "tokens")
		})
	}
}
