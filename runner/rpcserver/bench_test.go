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
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// The benchmarks compare a deterministic act (an Action: click #b by CSS
// selector, no model) sent through the runner's RPC over HTTP with the same
// click done directly with chromedp.Click on the same tab of the same
// browser (launched by StartBrowser, as the runner does). Run them with
//
//	go test ./runner/ -run '^$' -bench Act -benchtime 50x
//
// Before an operation the engine waits for the page to settle, and a page
// settles no earlier than engine/page's ActionGrace after the last action:
// back-to-back acts pay that wait, which is the price of seeing what the
// previous action caused. The "settle=1ms" variants bound that wait with
// the session's domSettleTimeoutMs to show the runner's own overhead (HTTP,
// queue, engine, element lookup, input events).

const benchPage = `<!doctype html><title>bench</title>
<script>window.clicks = 0;</script>
<button id="a">A</button>
<button id="b" onclick="clicks++">B</button>`

var clickB = rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#b", Method: "click", Description: "the B button"}}}

// benchSession opens benchPage on the shared browser and returns an RPC
// client of a runner over it, with domSettleTimeoutMs settleMs (0: the
// session did not say).
func benchSession(b *testing.B, settleMs int32) (*chromium.Browser, runnertest.Client) {
	b.Helper()
	br, c, _ := actSession(b, runnertest.HTMLHandler(benchPage), settleMs)
	// Warm up both paths: the engine is built on the first call, chromedp
	// caches the document on the first query.
	actThroughRunner(b, c)
	clickDirect(b, br)
	return br, c
}

// actSession serves handler, starts a runner over the shared browser with
// domSettleTimeoutMs settleMs (0: the session did not say), and navigates
// its tab to the handler's "/", whose URL it returns.
func actSession(tb testing.TB, handler http.Handler, settleMs int32) (*chromium.Browser, runnertest.Client, string) {
	tb.Helper()
	br := browsertest.Shared(tb)
	site := runnertest.NewPageServer(tb, handler)
	cfg := runnertest.Config(func(s *v1alpha1.BrowserSessionSpec) {
		if settleMs > 0 {
			s.DOMSettleTimeoutMs = ptr.To(settleMs)
		}
	})
	log := slog.New(slog.DiscardHandler)
	s := NewServer(ServerOptions{
		Token:            config.NewSecret(runnertest.Token),
		Operations:       operations.NewAutomation(cfg, log),
		Logger:           log,
		DOMSettleTimeout: time.Duration(settleMs) * time.Millisecond,
	})
	s.SetBrowser(br)
	hs := httptest.NewServer(s)
	tb.Cleanup(hs.Close)
	c := runnertest.Client{Base: hs.URL, Token: runnertest.Token}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if status, body, err := c.Call(ctx, rpc.NavigatePath, rpc.NavigateRequest{URL: site.URL}); err != nil || status != 200 {
		tb.Fatalf("navigate: %d %s %v", status, body, err)
	}
	return br, c, site.URL
}

func actThroughRunner(b *testing.B, c runnertest.Client) {
	if res := act(b, c, clickB); !res.Success {
		b.Fatalf("act: %+v", res)
	}
}

// act sends req to the runner and returns its result.
func act(tb testing.TB, c runnertest.Client, req rpc.ActRequest) rpc.ActResult {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	status, body, err := c.Call(ctx, rpc.ActPath, req)
	if err != nil || status != 200 {
		tb.Fatalf("act: %d %s %v", status, body, err)
	}
	var res rpc.Result[rpc.ActResult]
	if err := json.Unmarshal(body, &res); err != nil {
		tb.Fatalf("act: %s %v", body, err)
	}
	return res.Result
}

func clickDirect(b *testing.B, br *chromium.Browser) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := chromedp.Run(br.ContextFor(ctx), chromedp.Click("#b", chromedp.ByQuery)); err != nil {
		b.Fatalf("chromedp.Click: %v", err)
	}
}

// checkClicks fails the benchmark unless the page counted want clicks.
func checkClicks(b *testing.B, br *chromium.Browser, want int) {
	b.Helper()
	var got int
	browsertest.Evaluate(b, br, "window.clicks", &got)
	if got != want {
		b.Fatalf("the page counted %d clicks, want %d", got, want)
	}
}

var settleVariants = []struct {
	name     string
	settleMs int32
}{
	{"settle=default", 0},
	{"settle=1ms", 1},
}

func BenchmarkActThroughRunner(b *testing.B) {
	for _, v := range settleVariants {
		b.Run(v.name, func(b *testing.B) {
			br, c := benchSession(b, v.settleMs)
			n := 0
			start := time.Now()
			for b.Loop() {
				actThroughRunner(b, c)
				n++
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(n), "ms/op")
			checkClicks(b, br, n+2)
		})
	}
	// Back to back, each act waits for the frame that follows the
	// previous click (see docs/performance.md, Act latency). An agent's
	// acts are seconds apart: this variant lets the page go idle between
	// acts (outside the timer), 30 ms and two frames, past ActionGrace.
	b.Run("settle=default/after=idle", func(b *testing.B) {
		br, c := benchSession(b, 0)
		var busy time.Duration
		n := 0
		for b.Loop() {
			b.StopTimer()
			waitIdle(b, br)
			b.StartTimer()
			start := time.Now()
			actThroughRunner(b, c)
			busy += time.Since(start)
			n++
		}
		b.ReportMetric(float64(busy.Microseconds())/1000/float64(n), "ms/op")
		checkClicks(b, br, n+2)
	})
}

// waitIdle lets the page go idle: 30 ms (past engine/page's ActionGrace),
// then two animation frames.
func waitIdle(b *testing.B, br *chromium.Browser) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const idle = `new Promise(r => setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(() => r(true))), 30))`
	var ok bool
	if err := chromedp.Run(br.ContextFor(ctx), chromedp.Evaluate(idle, &ok, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	})); err != nil {
		b.Fatalf("waiting for the page to go idle: %v", err)
	}
}

// BenchmarkActSeesPreviousAction times pairs of acts where the second
// needs what the first caused: the first clicks a button whose handler
// adds a button with a zero-delay timer (which Chrome runs after the frame
// that follows the click), the second clicks the added button, which
// removes it. A pair that missed the timer's work would fail the second
// act.
func BenchmarkActSeesPreviousAction(b *testing.B) {
	_, c, _ := actSession(b, http.HandlerFunc(consequencePages), 0)
	open := rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#timer", Method: "click"}}}
	next := rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#next", Method: "click"}}}
	n := 0
	start := time.Now()
	for b.Loop() {
		for _, req := range []rpc.ActRequest{open, next} {
			if res := act(b, c, req); !res.Success {
				b.Fatalf("act on %s: %s", req.Input.Action.Selector, res.Message)
			}
		}
		n++
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(2*n), "ms/act")
}

// BenchmarkActInProcess performs the same act with the runner's engine
// called in-process, without HTTP and the queue: the difference to
// BenchmarkActThroughRunner is the RPC's share.
func BenchmarkActInProcess(b *testing.B) {
	for _, v := range settleVariants {
		b.Run(v.name, func(b *testing.B) {
			br, _ := benchSession(b, v.settleMs)
			a := operations.NewAutomation(nil, slog.New(slog.DiscardHandler))
			n := 0
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				p := br.TabFor(br.ContextFor(ctx), time.Duration(v.settleMs)*time.Millisecond)
				res, _, _, err := a.Act(p.Context(), p, clickB, nil)
				cancel()
				if err != nil || !res.Success {
					b.Fatalf("act: %+v %v", res, err)
				}
				n++
			}
			checkClicks(b, br, n+2)
		})
	}
}

func BenchmarkActDirectChromedp(b *testing.B) {
	br, _ := benchSession(b, 0)
	n := 0
	for b.Loop() {
		clickDirect(b, br)
		n++
	}
	checkClicks(b, br, n+2)
}

// BenchmarkActRatio alternates the two, so that both see the same machine
// load, and reports their times per op and the ratio runner/direct.
func BenchmarkActRatio(b *testing.B) {
	for _, v := range settleVariants {
		b.Run(v.name, func(b *testing.B) {
			br, c := benchSession(b, v.settleMs)
			var runner, direct time.Duration
			n := 0
			for b.Loop() {
				n++
				start := time.Now()
				actThroughRunner(b, c)
				mid := time.Now()
				clickDirect(b, br)
				runner += mid.Sub(start)
				direct += time.Since(mid)
			}
			checkClicks(b, br, 2*n+2)
			b.ReportMetric(float64(runner.Nanoseconds())/float64(n), "runner-ns/op")
			b.ReportMetric(float64(direct.Nanoseconds())/float64(n), "direct-ns/op")
			b.ReportMetric(float64(runner.Microseconds())/1000/float64(n), "runner-ms/op")
			b.ReportMetric(float64(direct.Microseconds())/1000/float64(n), "direct-ms/op")
			b.ReportMetric(float64(runner)/float64(direct), "runner/direct")
		})
	}
}
