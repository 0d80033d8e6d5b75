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
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// consequencePages serves a page whose buttons each make a button #next
// appear in another way, and the page /next that has it. Clicking #next
// records the click in window.done and removes the button.
func consequencePages(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.URL.Path {
	case "/api":
		io.WriteString(w, "ok")
	case "/next":
		io.WriteString(w, `<!doctype html><title>next</title><body>`+nextButton+`<script>document.body.append(nextButton())</script>`)
	default:
		io.WriteString(w, `<!doctype html><title>consequences</title>`+nextButton+`
<button id=sync onclick="document.body.append(nextButton())">sync</button>
<button id=microtask onclick="Promise.resolve().then(() => document.body.append(nextButton()))">microtask</button>
<button id=timer onclick="setTimeout(() => document.body.append(nextButton()), 0)">timer</button>
<button id=timers onclick="setTimeout(() => setTimeout(() => setTimeout(() => document.body.append(nextButton()), 0), 0), 0)">timers</button>
<button id=fetch onclick="fetch('/api').then(r => r.text()).then(() => document.body.append(nextButton()))">fetch</button>
<button id=timerfetch onclick="setTimeout(() => fetch('/api').then(r => r.text()).then(() => document.body.append(nextButton())), 0)">timer, then fetch</button>
<a id=link href="/next">link</a>
<button id=assign onclick="location.href = '/next'">location</button>
<form action="/next"><button id=submit>submit</button></form>`)
	}
}

// nextButton defines nextButton(), which makes the button #next.
const nextButton = `<script>
function nextButton() {
  const b = document.createElement('button');
  b.id = 'next'; b.textContent = 'next';
  b.onclick = () => { window.done = (window.done || 0) + 1; b.remove(); };
  return b;
}
</script>`

// TestActSeesWhatThePreviousActCaused clicks a button whose handler makes
// #next appear (at once, after a timer, a fetch or a navigation), then
// clicks #next in the very next act: the second act must wait for what
// the first one caused, however the page brings it about.
func TestActSeesWhatThePreviousActCaused(t *testing.T) {
	br, c, home := actSession(t, http.HandlerFunc(consequencePages), 0)
	for _, first := range []string{"#sync", "#microtask", "#timer", "#timers", "#fetch", "#timerfetch", "#link", "#assign", "#submit"} {
		t.Run(first, func(t *testing.T) {
			status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: home})
			if status != 200 {
				t.Fatalf("navigate: %d %s", status, body)
			}
			var got []bool
			var msgs []string
			for _, sel := range []string{first, "#next"} {
				res := act(t, c, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: sel, Method: "click"}}})
				got = append(got, res.Success)
				msgs = append(msgs, res.Message)
			}
			if diff := cmp.Diff([]bool{true, true}, got); diff != "" {
				t.Errorf("acts' success (-want +got):\n%s\nmessages: %q", diff, msgs)
			}
			var done int
			browsertest.Evaluate(t, br, "window.done || 0", &done)
			if done != 1 {
				t.Errorf("#next counted %d clicks, want 1", done)
			}
		})
	}
}
