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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/operations"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// The egress gate with a real Chromium, on loopback only: the test's
// policy allows 127.0.0.2, where the pages are served, and nothing else.
// Canaries listen on 127.0.0.3 and 127.0.0.1 (Linux routes all of
// 127.0.0.0/8 to lo) and must see nothing: not a connection, not a
// datagram.

const (
	pageIP   = "127.0.0.2"
	canaryIP = "127.0.0.3"
)

// canaryPolicy allows the pages' address only.
func canaryPolicy() *egress.Policy {
	return egress.NewPolicy(egress.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix(pageIP + "/32")}})
}

// tcpCanary counts the connections it accepts; it answers HTTP.
type tcpCanary struct {
	ln       net.Listener
	accepted atomic.Int64
	mu       sync.Mutex
	seen     []string
}

func newTCPCanary(t *testing.T, ip string) *tcpCanary {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	c := &tcpCanary{ln: ln}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.seen = append(c.seen, r.Method+" "+r.URL.String())
		c.mu.Unlock()
		io.WriteString(w, "canary")
	})}
	go srv.Serve(countingListener{ln, &c.accepted})
	t.Cleanup(func() { srv.Close() })
	return c
}

func (c *tcpCanary) port() string {
	_, p, _ := net.SplitHostPort(c.ln.Addr().String())
	return p
}

func (c *tcpCanary) check(t *testing.T, name string) {
	t.Helper()
	if n := c.accepted.Load(); n != 0 {
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Errorf("the canary %s (%s) accepted %d connections; requests: %v", name, c.ln.Addr(), n, c.seen)
	}
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// udpCanary counts the datagrams it receives.
type udpCanary struct {
	pc       net.PacketConn
	received atomic.Int64
}

func newUDPCanary(t *testing.T, ip string) *udpCanary {
	t.Helper()
	pc, err := net.ListenPacket("udp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	c := &udpCanary{pc: pc}
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			c.received.Add(1)
		}
	}()
	t.Cleanup(func() { pc.Close() })
	return c
}

func (c *udpCanary) port() string {
	_, p, _ := net.SplitHostPort(c.pc.LocalAddr().String())
	return p
}

// closedTCPPort is a port on ip where nothing listens.
func closedTCPPort(t *testing.T, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return p
}

// attackPage tries every way a page has to reach the canary, and records in
// window.attempts how each ended; window.done turns true when all have.
const attackPage = `<!doctype html><title>attack</title>
<link rel="preconnect" href="http://CANARY">
<link rel="dns-prefetch" href="//CANARY">
<img id="img" src="http://CANARY/img.png">
<script>
window.attempts = {};
const pending = [];
function attempt(name, p) {
  pending.push(Promise.race([p, new Promise(r => setTimeout(() => r("no answer in 20s"), 20000))])
    .then(v => { attempts[name] = "resolved: " + v; }, e => { attempts[name] = "rejected: " + e; }));
}
attempt("fetch", fetch("http://CANARY/fetch", {mode: "no-cors"}).then(r => r.type));
attempt("fetch https", fetch("https://CANARY/fetch", {mode: "no-cors"}).then(r => r.type));
attempt("fetch localhost", fetch("http://LOCALHOST/fetch", {mode: "no-cors"}).then(r => r.type));
attempt("redirect", fetch("/redirect", {mode: "no-cors"}).then(r => r.type + " " + r.status));
attempt("img", new Promise((res, rej) => {
  const img = document.getElementById("img");
  // The image may have failed before this script runs.
  if (img.complete) { img.naturalWidth > 0 ? res("loaded") : rej("error"); }
  img.onload = () => res("loaded"); img.onerror = () => rej("error");
}));
attempt("websocket", new Promise((res, rej) => {
  const ws = new WebSocket("ws://CANARY/ws");
  ws.onopen = () => res("open"); ws.onerror = () => rej("error");
}));
attempt("worker", new Promise((res, rej) => {
  const w = new Worker("/worker.js");
  w.onmessage = e => (e.data.startsWith("ok") ? res : rej)(e.data);
  w.onerror = e => rej("worker error " + e.message);
}));
attempt("beacon", Promise.resolve(navigator.sendBeacon("http://CANARY/beacon", "x")));
attempt("service worker", (async () => {
  // Its install waits for its own fetch of the canary.
  const reg = await navigator.serviceWorker.register("/sw.js");
  const sw = reg.installing || reg.waiting || reg.active;
  if (sw.state !== "installing") return sw.state;
  return await new Promise(r => sw.addEventListener("statechange", () => { if (sw.state !== "installing") r(sw.state); }));
})());
attempt("webrtc", (async () => {
  const pc = new RTCPeerConnection({iceServers: [
    {urls: "stun:UDPCANARY"},
    {urls: "turn:UDPCANARY?transport=udp", username: "u", credential: "p"},
    {urls: "turn:CANARY?transport=tcp", username: "u", credential: "p"},
  ]});
  pc.createDataChannel("x");
  await pc.setLocalDescription(await pc.createOffer());
  // Gathering sends its STUN and TURN requests at once; with no way out
  // it may never say complete.
  await new Promise(r => {
    setTimeout(r, 5000);
    pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === "complete") r(); };
  });
  const sdp = pc.localDescription.sdp;
  pc.close();
  return "gathered " + (sdp.match(/a=candidate/g) || []).length + " candidates";
})());
attempt("webtransport", (async () => {
  if (typeof WebTransport === "undefined") return "no WebTransport";
  const wt = new WebTransport("https://UDPCANARY/");
  await wt.ready;
  return "connected";
})());
Promise.all(pending).then(() => { window.done = true; });
</script>`

// swScript fetches the canary from a service worker while it installs.
const swScript = `self.addEventListener("install", e => e.waitUntil(fetch("http://CANARY/sw", {mode: "no-cors"}).catch(() => {})));`

// workerScript fetches the canary from a dedicated worker.
const workerScript = `fetch("http://CANARY/worker", {mode: "no-cors"}).then(r => postMessage("ok " + r.type), e => postMessage("failed " + e));`

func TestEgressGateWithChromium(t *testing.T) {
	canary := newTCPCanary(t, canaryIP)
	onLocalhost := newTCPCanary(t, "127.0.0.1")
	udp := newUDPCanary(t, canaryIP)
	closed := closedTCPPort(t, canaryIP)
	canaryHost := canaryIP + ":" + canary.port()
	fill := strings.NewReplacer("CANARY", canaryHost, "LOCALHOST", "localhost:"+onLocalhost.port(), "UDPCANARY", canaryIP+":"+udp.port())
	page := runnertest.NewPageServerOn(t, pageIP, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, fill.Replace(attackPage))
		case "/worker.js":
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, fill.Replace(workerScript))
		case "/sw.js":
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, fill.Replace(swScript))
		case "/redirect":
			http.Redirect(w, r, "http://"+canaryHost+"/redirected", http.StatusFound)
		case "/to-canary":
			http.Redirect(w, r, "http://"+canaryHost+"/", http.StatusFound)
		default:
			io.WriteString(w, "page "+r.URL.Path)
		}
	}))

	cfg := runnertest.Config(nil)
	cfg.Egress = canaryPolicy()
	b := browsertest.Start(t, cfg)

	t.Run("a page's requests do not reach the canary", func(t *testing.T) {
		browsertest.MustNavigate(t, b, page.URL+"/")
		runnertest.WaitFor(t, "the page's attempts to end", func() bool {
			var done bool
			browsertest.Evaluate(t, b, "window.done === true", &done)
			return done
		})
		var attempts map[string]string
		browsertest.Evaluate(t, b, "window.attempts", &attempts)
		t.Logf("the page's attempts: %v", attempts)
		// What the page can tell: tunnels (https, WebSocket) fail, and
		// an image gets no image; a plain-http request gets the proxy's
		// 403, which no-cors makes opaque. What counts is below: the
		// canaries saw nothing.
		for _, name := range []string{"fetch https", "websocket", "img", "webtransport"} {
			if !strings.HasPrefix(attempts[name], "rejected") {
				t.Errorf("%s: %s, want it refused", name, attempts[name])
			}
		}
		runnertest.Want(t, "webrtc", attempts["webrtc"], "resolved: gathered 0 candidates")
		canary.check(t, "on "+canaryIP)
		onLocalhost.check(t, "on 127.0.0.1")
		if n := udp.received.Load(); n != 0 {
			t.Errorf("the UDP canary received %d datagrams (WebRTC or WebTransport went around the proxy)", n)
		}
		// The page itself was served, and its workers.
		for _, script := range []string{"/worker.js", "/sw.js"} {
			if len(page.Seen(func(r *http.Request) bool { return r.URL.Path == script })) == 0 {
				t.Errorf("%s was not loaded from the allowed address", script)
			}
		}
		if got := attempts["service worker"]; !strings.HasPrefix(got, "resolved: ") {
			t.Errorf("service worker: %s, want it installed", got)
		}
	})

	t.Run("navigate to the canary is EGRESS_DENIED, open port or closed", func(t *testing.T) {
		wantErr := "EGRESS_DENIED: the egress policy refuses connections to " + canaryIP + " (" + egress.ReasonLoopback + ")"
		for _, target := range []string{
			"http://" + canaryHost + "/",
			"http://" + canaryIP + ":" + closed + "/",
			"https://" + canaryHost + "/",
			"https://" + canaryIP + ":" + closed + "/",
			"ws://" + canaryHost + "/",
			page.URL + "/to-canary",
		} {
			if strings.HasPrefix(target, "ws:") {
				// Not a navigable URL: refused before anything is tried.
				_, err := browsertest.Navigate(t, b, target)
				if rpc.CodeOf(err) != rpc.CodeBadRequest {
					t.Errorf("navigate %s = %v, want BAD_REQUEST", target, err)
				}
				continue
			}
			res, err := browsertest.Navigate(t, b, target)
			if err == nil {
				t.Errorf("navigate %s = %+v, want EGRESS_DENIED", target, res)
				continue
			}
			if err.Error() != wantErr {
				t.Errorf("navigate %s:\n got %s\nwant %s", target, err, wantErr)
			}
			runnertest.Want(t, "HTTP status of "+target, rpc.HTTPStatus(rpc.CodeOf(err)), http.StatusForbidden)
		}
		_, err := browsertest.Navigate(t, b, "http://localhost:"+onLocalhost.port()+"/")
		if got, want := fmt.Sprint(err), "EGRESS_DENIED: the egress policy refuses connections to localhost ("+egress.ReasonLoopback+")"; got != want {
			t.Errorf("navigate to a name resolving to the canary:\n got %s\nwant %s", got, want)
		}
		canary.check(t, "on "+canaryIP)
		onLocalhost.check(t, "on 127.0.0.1")
	})

	t.Run("subresource denials are reported as the operation's progress", func(t *testing.T) {
		_, c, _ := newTestServer(t, b, nil)
		lines := streamNavigate(t, c, page.URL+"/")
		var egressLines []string
		for _, l := range lines {
			if l.Category == "egress" {
				egressLines = append(egressLines, l.Message)
			}
		}
		if len(egressLines) == 0 {
			t.Fatalf("no egress line among the progress: %+v", lines)
		}
		runnertest.WantContains(t, "egress lines", strings.Join(egressLines, "\n"), "the egress policy refuses connections to "+canaryIP+" ("+egress.ReasonLoopback+")")
		canary.check(t, "on "+canaryIP)
	})

	t.Run("a model baseURL at the canary", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		_ = srv
		mcfg := runnertest.Config(func(s *v1alpha1.BrowserSessionSpec) {
			s.Model = v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini", BaseURL: "http://" + canaryHost + "/v1"}
		})
		mcfg.Egress = canaryPolicy()
		mcfg.Secrets.ModelAPIKey = config.NewSecret(sessionModelKey)
		log, _ := runnertest.Logger(t)
		s := NewServer(ServerOptions{Token: config.NewSecret(runnertest.Token), Operations: operations.NewAutomation(mcfg, log), Logger: log})
		s.SetBrowser(b)
		hs := httptest.NewServer(s)
		t.Cleanup(hs.Close)
		c := runnertest.Client{Base: hs.URL, Token: runnertest.Token}
		status, body := c.MustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "find the links"})
		runnertest.Want(t, "status", status, http.StatusForbidden)
		e := runnertest.DecodeError(t, body)
		runnertest.Want(t, "code", e.Code, rpc.CodeEgressDenied)
		runnertest.Want(t, "message", e.Message, "the model openai/gpt-4.1-mini: the egress policy refuses connections to "+canaryIP+" ("+egress.ReasonLoopback+")")
		canary.check(t, "on "+canaryIP)
	})

	t.Run("a cdpUrl at the canary", func(t *testing.T) {
		for _, cdpURL := range []string{
			"http://" + canaryHost,
			"ws://" + canaryHost + "/devtools/browser/x",
			"http://localhost:" + onLocalhost.port(),
		} {
			acfg := runnertest.AttachConfig(cdpURL, nil, nil)
			acfg.Egress = canaryPolicy()
			log, _ := runnertest.Logger(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			ab, err := chromium.StartBrowser(ctx, acfg, log)
			cancel()
			if err == nil {
				ab.Close(context.Background())
				t.Fatalf("attached to %s", cdpURL)
			}
			var denied *egress.DeniedError
			if !errors.As(err, &denied) {
				t.Errorf("attaching to %s: %v, want an egress denial", cdpURL, err)
			}
			runnertest.WantContains(t, "error", err.Error(), "the egress policy refuses connections to")
		}
		canary.check(t, "on "+canaryIP)
		onLocalhost.check(t, "on 127.0.0.1")
	})

	t.Run("a proxy server at the canary", func(t *testing.T) {
		pcfg := runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
			lo.Proxy = &v1alpha1.LaunchProxy{Server: "http://" + canaryHost}
		}))
		pcfg.Egress = canaryPolicy()
		pb := browsertest.Start(t, pcfg)
		for _, target := range []string{"http://site.test/", "https://site.test/"} {
			_, err := browsertest.Navigate(t, pb, target)
			runnertest.Want(t, "navigate "+target, fmt.Sprint(err),
				"EGRESS_DENIED: the egress policy refuses connections to the session's proxy "+canaryIP+" ("+egress.ReasonLoopback+")")
		}
		canary.check(t, "on "+canaryIP)
	})
}

// streamNavigate navigates through the RPC with a streamed answer and
// returns its progress lines.
func streamNavigate(t *testing.T, c runnertest.Client, url string) []rpc.LogLine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, _, lines, err := c.Stream(ctx, rpc.NavigatePath, rpc.NavigateRequest{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 || lines[len(lines)-1].Type != rpc.StreamResult {
		t.Fatalf("navigate %s did not end with a result: %+v", url, lines)
	}
	var logs []rpc.LogLine
	for _, l := range lines {
		if l.Type == rpc.StreamLog {
			var ll rpc.LogLine
			if err := json.Unmarshal(l.Data, &ll); err != nil {
				t.Fatal(err)
			}
			logs = append(logs, ll)
		}
	}
	return logs
}
