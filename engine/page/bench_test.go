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

package page

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/browserfleet/browserfleet/internal/testing/benchpage"
)

var benchHTML struct {
	once sync.Once
	b    []byte
	err  error
}

// benchPage returns the catalogue page (internal/testing/benchpage), which
// the test servers serve at /bench.
func benchPage() []byte {
	benchHTML.once.Do(func() { benchHTML.b, benchHTML.err = benchpage.HTML() })
	return benchHTML.b
}

// BenchmarkSnapshot measures Capture on the catalogue page and reports the
// snapshot's size in bytes and in estimated tokens (bytes/4). The dom case
// is the default; chrome-ax takes roles and names from Chrome's
// accessibility tree instead.
func BenchmarkSnapshot(b *testing.B) {
	if benchPage(); benchHTML.err != nil {
		b.Fatalf("read the bench page: %v", benchHTML.err)
	}
	for _, bc := range []struct {
		name string
		opts SnapshotOptions
	}{
		{"dom", SnapshotOptions{}},
		{"chrome-ax", SnapshotOptions{ChromeAccessibility: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tb := newTab(b)
			tb.open("/bench")
			var size int
			for b.Loop() {
				s, err := tb.p.Capture(tb.ctx, bc.opts)
				if err != nil {
					b.Fatalf("capture: %v", err)
				}
				size = len(s.Tree)
			}
			b.ReportMetric(float64(size), "bytes")
			b.ReportMetric(float64(size)/4, "tokens")
		})
	}
}

// BenchmarkFidelityPromptSize reports the snapshot size, in bytes and in
// estimated tokens (bytes/4), of every fixture page the snapshot tests
// read, one sub-benchmark per page, so that a change to the outline shows
// its cost or saving case by case:
//
//	go test ./engine/page/ -run '^$' -bench FidelityPromptSize -benchtime 1x
func BenchmarkFidelityPromptSize(b *testing.B) {
	paths := make([]string, 0, len(pages))
	for p := range pages {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, path := range paths {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			tb := newTab(b)
			tb.open(path)
			var size int
			for b.Loop() {
				s, err := tb.p.Capture(tb.ctx, SnapshotOptions{})
				if err != nil {
					b.Fatalf("capture: %v", err)
				}
				size = len(s.Tree)
			}
			b.ReportMetric(float64(size), "bytes")
			b.ReportMetric(float64(size)/4, "tokens")
		})
	}
}

// BenchmarkOutline measures the Go side of Capture on the catalogue page:
// indexing the captured DOM snapshot, walking it into the outline and
// printing it with its maps. The DOMSnapshot is taken once, so Chromium's
// share (and its noise on a busy machine) is left out.
func BenchmarkOutline(b *testing.B) {
	if benchPage(); benchHTML.err != nil {
		b.Fatalf("read the bench page: %v", benchHTML.err)
	}
	tb := newTab(b)
	tb.open("/bench")
	raw, err := tb.p.main.captureDOM(tb.ctx)
	if err != nil {
		b.Fatalf("capture: %v", err)
	}
	var size int
	for b.Loop() {
		bl := newBuilder(tb.p)
		c := &capture{sess: tb.p.main}
		for k := range raw.Documents {
			c.docs = append(c.docs, newDocIndex(raw, k, tb.p.main))
			if raw.Strings[raw.Documents[k].FrameID] == string(tb.p.main.target) {
				c.mainDoc = k
			}
		}
		bl.bySession[tb.p.main] = c
		main := bl.addFrame(c.main(), nil, 0, false)
		s := bl.finish([]*outNode{bl.visitDocument(c.main(), main)})
		size = len(s.Tree)
	}
	b.ReportMetric(float64(size), "bytes")
}
