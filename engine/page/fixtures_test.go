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
	"net/http"
	"strings"
	"sync"
	"time"
)

// recorder keeps what the test servers saw, for assertions.
var recorder = struct {
	sync.Mutex
	referers map[string]string
}{referers: make(map[string]string)}

func sawReferer(path string) string {
	recorder.Lock()
	defer recorder.Unlock()
	return recorder.referers[path]
}

// eventsJS records the listed event types on the page into window.events,
// as "type:target id".
const eventsJS = `<script>
window.events = [];
for (const t of ['click','dblclick','mouseover','input','change','keydown','submit','focus','dragstart','drop','scroll'])
  document.addEventListener(t, e => window.events.push(t + ':' + (e.target.id || e.target.nodeName || 'document')), true);
</script>`

// pages are the fixtures; {{B}} becomes origin B's URL.
var pages = map[string]string{
	"/form": `<!doctype html><title>Signup</title>` + eventsJS + `
<form id=f onsubmit="event.preventDefault(); window.events.push('submitted:' + new FormData(this).get('email') + ':' + this.sub.checked)">
  <label for=email>Email</label> <input id=email name=email placeholder="you@example.com">
  <label><input type=checkbox id=sub name=sub> Subscribe to news</label>
  <input id=pw type=password aria-label=Password>
  <button id=send>Send</button>
</form>`,

	"/select": `<!doctype html><title>Select</title>` + eventsJS + `
<label>Size <select id=size><option value=s>Small</option><option value=m>Medium</option><option value=l disabled>Large</option></select></label>`,

	"/dropdown": `<!doctype html><title>Dropdown</title>` + eventsJS + `
<style>.menu{border:1px solid #888;width:200px}.opt{padding:4px;cursor:pointer}</style>
<div id=dd style="width:200px;padding:4px;border:1px solid">Choose a fruit</div>
<div id=menu class=menu hidden></div>
<script>
dd.addEventListener('click', () => {
  menu.hidden = false;
  menu.innerHTML = '';
  for (const f of ['Apple', 'Banana', 'Cherry']) {
    const o = document.createElement('div');
    o.className = 'opt'; o.id = 'opt-' + f; o.textContent = f;
    o.addEventListener('click', () => { dd.textContent = f; menu.hidden = true; });
    menu.append(o);
  }
});
</script>`,

	"/same-outer": `<!doctype html><title>Outer</title>
<p>Before the frame</p>
<iframe id=fr src="/same-inner" style="margin:60px 0 0 90px;width:400px;height:200px"></iframe>`,
	"/same-inner": `<!doctype html><title>Inner</title>
<div style="height:40px"></div>
<button id=ib onclick="parent.clicked = (parent.clicked || 0) + 1">Inner button</button>
<a href="/elsewhere">Inner link</a>`,

	"/cross-outer": `<!doctype html><title>Cross outer</title>
<script>window.msgs = []; addEventListener('message', e => window.msgs.push(e.data));</script>
<h1>Host page</h1>
<iframe id=fr src="{{B}}/cross-inner" style="margin:30px 0 0 120px;width:500px;height:220px"></iframe>`,
	"/cross-inner": `<!doctype html><title>Cross inner</title>
<div style="height:50px"></div>
<input aria-label="Remote field" oninput="parent.postMessage('input:' + this.value, '*')">
<button onclick="parent.postMessage('clicked', '*')">Remote button</button>
<iframe src="/nested-inner" style="width:300px;height:80px"></iframe>`,
	"/nested-inner": `<!doctype html><p>Nested text</p><button onclick="top.postMessage('nested', '*')">Nested button</button>`,

	"/shadow": `<!doctype html><title>Shadow</title>` + eventsJS + `
<p>Light text</p>
<x-card id=card><span>Slotted text</span></x-card>
<script>
const root = card.attachShadow({mode: 'open'});
root.innerHTML = '<h2>Card title</h2><button id=sb>Shadow button</button><slot></slot><x-inner id=inner></x-inner>';
root.getElementById('sb').addEventListener('click', () => window.events.push('shadow-click'));
const inner = root.getElementById('inner').attachShadow({mode: 'open'});
inner.innerHTML = '<a href="/deep">Deep link</a>';
</script>`,

	"/delayed": `<!doctype html><title>Delayed</title>
<button id=load onclick="fetch('/api/slow?ms=300').then(r => r.text()).then(t => { const p = document.createElement('p'); p.textContent = t; document.body.append(p); })">Load items</button>`,
	"/delayed-onload": `<!doctype html><title>Delayed on load</title>
<script>addEventListener('load', () => setTimeout(() => fetch('/api/slow?ms=300').then(r => r.text()).then(t => {
  const p = document.createElement('p'); p.textContent = t; document.body.append(p); }), 50));</script>`,
	"/longlived": `<!doctype html><title>Long-lived</title>
<script>new EventSource('/api/sse'); fetch('/api/hang');</script><p>Streaming</p>`,

	"/busy": `<!doctype html><title>Busy</title>
<script>(function poll() { fetch('/api/slow?ms=100').then(poll); })();</script><p>Polling</p>`,

	"/long": `<!doctype html><title>Long</title>` + eventsJS + `
<div id=box style="height:150px;overflow:auto;border:1px solid"><div style="height:1000px">Inner scroller</div></div>
<div style="height:5000px;background:linear-gradient(#fff,#ccc)">Tall content</div>`,

	"/mouse": `<!doctype html><title>Mouse</title>` + eventsJS + `
<button id=hov>Hover me</button>
<button id=dbl>Double me</button>
<div id=src draggable=true style="width:80px;height:40px;background:#acf">Drag me</div>
<div id=dst style="width:200px;height:80px;margin-top:60px;background:#fca"
  ondragover="event.preventDefault()" ondrop="event.preventDefault(); this.textContent = 'Dropped'">Drop here</div>`,

	"/content": `<!doctype html><title>Content</title><base href="/docs/">
<nav id=nav><a href="/home">Home</a> <a href="about">About</a></nav>
<main id=main>
  <h1>Welcome</h1>
  <div><div><span>Deeply wrapped text</span></div></div>
  <div><p>First para</p><p>Second para</p></div>
  <ul><li><a href="https://example.org/x?y=1">External</a></li><li><a href="../up">Up one</a></li></ul>
  <button disabled>Disabled button</button>
  <button aria-expanded="false">Menu</button>
  <svg width=10 height=10><circle r=4 cx=5 cy=5 /></svg>
  <div style="display:none"><button>Hidden button</button></div>
  <div aria-hidden="true"><button>Aria hidden</button></div>
  <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="Logo image">
</main>
<footer id=foot><a href="/legal">Legal</a></footer>`,

	// /frames is the frame scope's fixture: a same-process iframe with an
	// iframe nested in it, a cross-site iframe (out of process under site
	// isolation) with one of its own, and a hidden iframe.
	"/frames": `<!doctype html><title>Frames host</title>
<script>window.msgs = []; addEventListener('message', e => window.msgs.push(e.data));</script>
<h1>Host heading</h1>
<button onclick="window.hostClicked = (window.hostClicked || 0) + 1">Host button</button>
<iframe id=same src="/frames-same" style="margin:20px 0 0 40px;width:420px;height:260px"></iframe>
<iframe id=cross src="{{B}}/frames-cross" style="margin:10px 0 0 30px;width:420px;height:240px"></iframe>
<iframe id=hidden src="/frames-hidden" style="display:none"></iframe>`,
	"/frames-same": `<!doctype html><title>Same frame</title>
<h2>Same heading</h2>
<nav><a href="/somewhere">Same nav link</a></nav>
<input aria-label="Same field" oninput="parent.sameInput = this.value">
<button class=act onclick="parent.sameClicked = (parent.sameClicked || 0) + 1">Same button</button>
<iframe src="/frames-nested" style="width:300px;height:90px"></iframe>`,
	"/frames-nested": `<!doctype html><title>Nested frame</title>
<p>Nested text</p>
<button class=act onclick="top.nestedClicked = (top.nestedClicked || 0) + 1">Nested button</button>`,
	"/frames-cross": `<!doctype html><title>Cross frame</title>
<h2>Cross heading</h2>
<input aria-label="Cross field" oninput="parent.postMessage('input:' + this.value, '*')">
<button class=act onclick="parent.postMessage('clicked', '*')">Cross button</button>
<iframe src="/frames-cross-nested" style="width:300px;height:80px"></iframe>`,
	"/frames-cross-nested": `<!doctype html><title>Cross nested frame</title><p>Cross nested text</p>`,
	"/frames-hidden":       `<!doctype html><title>Hidden frame</title><p>Hidden text</p>`,

	"/nav-target": `<!doctype html><title>Nav target</title>
<img id=img src="/api/slow?ms=600&type=gif">
<script>window.fetched = false;
addEventListener('load', () => setTimeout(() => fetch('/api/slow?ms=300').then(() => { window.fetched = true; }), 100));</script>`,
	"/referer": `<!doctype html><title>Referer</title><p>Referer page</p>`,
}

// gif is a 1x1 transparent GIF.
var gif = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

func fixtureHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		recorder.Lock()
		recorder.referers[r.URL.Path] = r.Header.Get("Referer")
		recorder.Unlock()
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(strings.ReplaceAll(body, "{{B}}", originB)))
	})
	mux.HandleFunc("/api/slow", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("ms") + "ms")
		if err != nil {
			d = 300 * time.Millisecond
		}
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		if r.URL.Query().Get("type") == "gif" {
			w.Header().Set("Content-Type", "image/gif")
			w.Write(gif)
			return
		}
		w.Write([]byte("Loaded items"))
	})
	mux.HandleFunc("/api/sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
				w.Write([]byte("data: tick\n\n"))
				w.(http.Flusher).Flush()
			}
		}
	})
	mux.HandleFunc("/api/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/bench", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(benchPage())
	})
	return mux
}
