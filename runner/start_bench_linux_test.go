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
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// benchRunner runs Run on loopback until the benchmark ends; stop stops it
// and waits.
func benchRunner(b *testing.B, cfg *config.Config) (base string, stop func()) {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, Options{Logger: runnertest.SlogTo(io.Discard), Listener: ln}) }()
	return "http://" + ln.Addr().String(), func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("Run: %v", err)
		}
	}
}

// waitReady polls /healthz until it answers 200.
func waitReady(b *testing.B, base string) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(base + rpc.HealthPath)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("the runner did not turn ready")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func benchNavigate(b *testing.B, base, token, url string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	status, body, err := runnertest.Client{Base: base, Token: token}.Call(ctx, rpc.NavigatePath, rpc.NavigateRequest{URL: url})
	if err != nil {
		b.Fatalf("navigate: %v", err)
	}
	if status != http.StatusOK {
		b.Fatalf("navigate: %d %s", status, body)
	}
}

func median(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}

// BenchmarkRunnerStart compares what a session waits for from the runner:
// cold, from Run's start to its first answered call (a navigation to a
// loopback page); warm, from the claim of a pooled runner whose browser is
// up to the same first answer (claim-ms is the claim alone). The pod's
// scheduling and the manager's part are not in it (see the start
// latency histograms of the manager and the API). Medians of b.N starts.
//
//	go test ./runner/ -run '^$' -bench RunnerStart -benchtime 5x
func BenchmarkRunnerStart(b *testing.B) {
	site := runnertest.NewPageServer(b, runnertest.HTMLHandler(poolPage))
	template := func(s *v1alpha1.BrowserSessionSpec) { s.Model = v1alpha1.ModelSpec{} }
	var cold, claim, warm []time.Duration
	for b.Loop() {
		cfg := runnertest.Config(template)
		cfg.DataDir = b.TempDir()
		start := time.Now()
		base, stop := benchRunner(b, cfg)
		waitReady(b, base)
		benchNavigate(b, base, runnertest.Token, site.URL)
		cold = append(cold, time.Since(start))
		stop()

		b.StopTimer()
		pcfg := runnertest.Config(template)
		pcfg.Pool, pcfg.SessionName, pcfg.Token = "warm", "", config.NewSecret(poolToken)
		pcfg.DataDir = b.TempDir()
		base, stop = benchRunner(b, pcfg)
		waitReady(b, base)
		b.StartTimer()
		start = time.Now()
		req := rpc.ClaimRequest{Session: "s-1", Namespace: "default", Spec: runnertest.Config(template).Spec, Token: sessionToken}
		if _, err := rpc.NewClient(base, poolToken, nil).Claim(context.Background(), req); err != nil {
			b.Fatalf("claim: %v", err)
		}
		claim = append(claim, time.Since(start))
		benchNavigate(b, base, sessionToken, site.URL)
		warm = append(warm, time.Since(start))
		stop()
	}
	b.ReportMetric(median(cold), "cold-ms")
	b.ReportMetric(median(warm), "warm-ms")
	b.ReportMetric(median(claim), "claim-ms")
	b.ReportMetric(0, "ns/op")
}
