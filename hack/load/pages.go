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

package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// actPage is the page of the acts: a button whose clicks count, so that
// every act has an effect to settle.
const actPage = `<!doctype html>
<html><head><title>load</title></head>
<body>
<h1>load</h1>
<button id="go" onclick="document.getElementById('n').textContent = String(++window.clicks)">click</button>
<p>clicks: <span id="n">0</span></p>
<script>window.clicks = 0;</script>
</body></html>
`

// actSelector is the button of actPage.
const actSelector = "#go"

// maxHold bounds how long the slow page holds a request, whatever
// happens to the run.
const maxHold = 3 * time.Minute

// pages serves the scenarios' pages on 127.0.0.1: /act, and /slow, which
// answers only once released, so that a streamed navigate to it stays
// open as long as a scenario needs.
type pages struct {
	srv     *http.Server
	base    string
	arrived atomic.Int64
	arrival chan struct{}
	mu      sync.Mutex
	gate    chan struct{}
}

func servePages() (*pages, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the pages: %w", err)
	}
	p := &pages{base: "http://" + l.Addr().String(), gate: make(chan struct{}), arrival: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /act", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = fmt.Fprint(w, actPage)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		p.arrived.Add(1)
		select {
		case p.arrival <- struct{}{}:
		default:
		}
		p.mu.Lock()
		gate := p.gate
		p.mu.Unlock()
		t := time.NewTimer(maxHold)
		defer t.Stop()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprint(w, "<!doctype html><title>slow</title><p>released</p>")
	})
	// Nothing else: a favicon request is a 404 at once.
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

// url is the page at path.
func (p *pages) url(path string) string { return p.base + path }

// release lets every held /slow request, and every later one, answer.
func (p *pages) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}

// waitArrived waits until n /slow requests have arrived in all.
func (p *pages) waitArrived(ctx context.Context, n int64) error {
	for p.arrived.Load() < n {
		select {
		case <-p.arrival:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d requests to the slow page (%d came): %w", n, p.arrived.Load(), ctx.Err())
		}
	}
	return nil
}

func (p *pages) close() {
	p.release()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
}
