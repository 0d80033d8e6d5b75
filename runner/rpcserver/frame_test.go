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
	"fmt"
	"net/http"
	"strings"
	"testing"

	testchromium "github.com/browserfleet/browserfleet/internal/testing/chromium"

	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// The frame scope through the runner RPC: frameId names an iframe of the
// session's page (a same-process one, and a cross-site one served from
// 127.0.0.2), and act, observe, extract and agent tasks see and act in
// that frame's document only. Frame ids come from DevTools, as a client
// learns them: Page.getFrameTree of the tab, and the iframe targets for
// out-of-process frames, whose id is their target id.

// framedSite serves /framed on 127.0.0.1, its cross-site iframe's page on
// 127.0.0.2; it returns the first server.
func framedSite(t *testing.T) *runnertest.PageServer {
	t.Helper()
	var crossURL string
	pages := map[string]string{
		"/framed": `<!doctype html><title>Shop</title>
<script>window.msgs = []; addEventListener('message', e => window.msgs.push(e.data));</script>
<h1>Main page heading</h1><p>Main page price: $999</p>
<button onclick="window.mainBought = true">Buy on the main page</button>
<iframe id="same" src="/framed-same" style="width:400px;height:200px"></iframe>
<iframe id="cross" src="{{CROSS}}/framed-cross" style="width:400px;height:200px"></iframe>`,
		"/framed-same": `<!doctype html><title>Same frame</title>
<h2>Same frame heading</h2><p>Same frame price: $12</p>
<button onclick="parent.postMessage('same bought', '*')">Buy in the same frame</button>`,
		"/framed-cross": `<!doctype html><title>Cross frame</title>
<h2>Cross frame heading</h2><p>Cross frame price: $34</p>
<button onclick="parent.postMessage('cross bought', '*')">Buy in the cross frame</button>`,
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, strings.ReplaceAll(body, "{{CROSS}}", crossURL))
	})
	cross := runnertest.NewPageServerOn(t, "127.0.0.2", h)
	crossURL = cross.URL
	return runnertest.NewPageServer(t, h)
}

// framedFrame is one iframe of /framed.
type framedFrame struct {
	name, path, heading, button, bought string
}

var framedFrames = []framedFrame{
	{"same-process iframe", "/framed-same", "Same frame heading", "Buy in the same frame", "same bought"},
	{"cross-site iframe", "/framed-cross", "Cross frame heading", "Buy in the cross frame", "cross bought"},
}

// outside is the text a request scoped to fr must not show.
func (fr framedFrame) outside() []string {
	out := []string{"Main page heading", "Main page price"}
	for _, o := range framedFrames {
		if o.path != fr.path {
			out = append(out, o.heading)
		}
	}
	return out
}

// frameIDOf is the DevTools id of b's frame whose URL ends in path.
func frameIDOf(t *testing.T, b *chromium.Browser, path string) string {
	t.Helper()
	id, err := testchromium.FrameID(b.ContextFor(context.Background()), path)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitPosted waits until the page got msg from a frame.
func waitPosted(t *testing.T, b *chromium.Browser, msg string) {
	t.Helper()
	runnertest.WaitFor(t, "the page to get "+msg, func() bool {
		var msgs []string
		browsertest.Evaluate(t, b, `window.msgs || []`, &msgs)
		return strings.Contains(strings.Join(msgs, "\n"), msg)
	})
}

func TestOperationsInAFrame(t *testing.T) {
	b := browsertest.Shared(t)
	site := framedSite(t)
	for _, fr := range framedFrames {
		t.Run(fr.name+" (scripted model)", func(t *testing.T) {
			srv := llmtest.NewServer(t)
			c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
			open(t, c, site, "/framed")
			frameID := frameIDOf(t, b, fr.path)

			// extract with neither instruction nor schema: the frame's
			// outline, from its document's root line.
			status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{FrameID: frameID})
			text := decodeResult[map[string]string](t, status, body).Result["pageText"]
			runnertest.WantContains(t, "pageText", text, "RootWebArea: "+strings.Fields(fr.heading)[0], fr.heading, fr.button)
			runnertest.WantNotContains(t, "pageText", text, fr.outside()...)

			// act by instruction: the model reads the frame only, and the
			// element it names is clicked in the frame.
			id, _ := idOf(t, b, "button: "+fr.button)
			srv.Enqueue(actAnswer(id, "click", nil, false))
			status, body = c.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Instruction: "buy it"}, FrameID: frameID})
			act := decodeResult[rpc.ActResult](t, status, body)
			if !act.Result.Success {
				t.Fatalf("act did not succeed: %+v", act.Result)
			}
			waitPosted(t, b, fr.bought)
			runnertest.Want(t, "selector", act.Result.Actions[0].Selector, "xpath=/html[1]/body[1]/button[1]")
			runnertest.WantContains(t, "what the model read", srv.Requests()[0].Text, fr.heading, "["+id+"] button: "+fr.button)
			runnertest.WantNotContains(t, "what the model read", srv.Requests()[0].Text, fr.outside()...)

			// observe in the frame, then act on what it found in the same
			// frame: the XPath is the frame document's (on the main page it
			// names the main page's button).
			srv.Enqueue(llmtest.JSON(fmt.Sprintf(`{"elements":[{"elementId":%q,"description":"the buy button","method":"click","arguments":[]}]}`, id)))
			status, body = c.MustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "find the buy button", FrameID: frameID})
			found := decodeResult[[]rpc.Action](t, status, body).Result
			if len(found) != 1 {
				t.Fatalf("observe found %+v", found)
			}
			runnertest.WantNotContains(t, "what the model read", srv.Requests()[1].Text, fr.outside()...)
			status, body = c.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &found[0]}, FrameID: frameID})
			if res := decodeResult[rpc.ActResult](t, status, body); !res.Result.Success {
				t.Fatalf("act on the observed action did not succeed: %+v", res.Result)
			}
			runnertest.WaitFor(t, "the second click in the frame", func() bool {
				var n int
				browsertest.Evaluate(t, b, fmt.Sprintf(`window.msgs.filter(m => m === %q).length`, fr.bought), &n)
				return n == 2
			})
			var mainBought bool
			browsertest.Evaluate(t, b, `window.mainBought === true`, &mainBought)
			runnertest.Want(t, "the main page's button pressed", mainBought, false)
			runnertest.Want(t, "model requests", len(srv.Requests()), 2)
		})
	}
}

func TestOperationsFrameIDs(t *testing.T) {
	b := browsertest.Shared(t)
	site := framedSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/framed")

	t.Run("the main frame's id is the whole page", func(t *testing.T) {
		status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{FrameID: string(b.TargetID())})
		text := decodeResult[map[string]string](t, status, body).Result["pageText"]
		runnertest.WantContains(t, "pageText", text, "Main page heading", "Same frame heading", "Cross frame heading")
	})

	const unknown = "F00D0000000000000000000000000000"
	want := "frameId: no frame " + unknown + " in the page"
	for name, call := range map[string]struct {
		path string
		body any
	}{
		"act":                {rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Instruction: "buy it"}, FrameID: unknown}},
		"act with an action": {rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "button", Method: "click"}}, FrameID: unknown}},
		"observe":            {rpc.ObservePath, rpc.ObserveRequest{FrameID: unknown}},
		"extract":            {rpc.ExtractPath, rpc.ExtractRequest{Instruction: "the price", FrameID: unknown}},
	} {
		t.Run(name+" in a frame the page does not have", func(t *testing.T) {
			status, body := c.MustCall(t, call.path, call.body)
			runnertest.Want(t, "status", status, 400)
			e := runnertest.DecodeError(t, body)
			runnertest.Want(t, "code", e.Code, rpc.CodeBadRequest)
			if !strings.HasPrefix(e.Message, want) {
				t.Errorf("message %q, want it to start %q", e.Message, want)
			}
		})
	}
	runnertest.Want(t, "model requests", len(srv.Requests()), 0)
	var mainBought bool
	browsertest.Evaluate(t, b, `window.mainBought === true`, &mainBought)
	runnertest.Want(t, "the main page's button pressed", mainBought, false)
}

func TestAgentTaskInAFrame(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	site := framedSite(t)
	for i, fr := range framedFrames {
		t.Run(fr.name+" (scripted model)", func(t *testing.T) {
			f := newAgentFixture(t, b, nil)
			browsertest.MustNavigate(t, b, site.URL+"/framed")
			frameID := frameIDOf(t, b, fr.path)
			id, _ := idOf(t, b, "button: "+fr.button)
			// ariaTree, then act (whose element the execution model, the
			// same scripted server, names), then done.
			f.model.Enqueue(
				llmtest.ToolCalls(llmtest.Call("ariaTree", `{}`)),
				llmtest.ToolCalls(llmtest.Call("act", `{"action":"click the buy button"}`)),
				actAnswer(id, "click", nil, false),
				doneCall("bought"),
			)
			req := taskRequest(fmt.Sprintf("f4a3e000-0000-4000-8000-%012d", i), "buy it")
			req.FrameID = frameID
			req.ShouldCache = true
			f.start(t, req)
			final := f.final(t, req.UID)
			runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskSucceeded)
			waitPosted(t, b, fr.bought)

			reqs := f.model.Requests()
			if len(reqs) != 4 {
				t.Fatalf("the model got %d requests, want 4", len(reqs))
			}
			// The second loop request carries the ariaTree result: the
			// frame's outline only.
			runnertest.WantContains(t, "the ariaTree result", reqs[1].Text, fr.heading, "["+id+"] button: "+fr.button)
			runnertest.WantNotContains(t, "the ariaTree result", reqs[1].Text, fr.outside()...)
			runnertest.WantNotContains(t, "the act tool's model request", reqs[2].Text, fr.outside()...)
			if final.Actions[0].Type != "ariaTree" {
				t.Fatalf("first step %+v, want ariaTree", final.Actions[0])
			}
			runnertest.WantContains(t, "the ariaTree step's pageText", final.Actions[0].PageText, fr.heading)
			runnertest.WantNotContains(t, "the ariaTree step's pageText", final.Actions[0].PageText, fr.outside()...)

			// The cache entry says which frame its selectors are in.
			if final.Result == nil || final.Result.CacheEntry == nil {
				t.Fatalf("no cache entry in %+v", final.Result)
			}
			var entry struct {
				Options struct {
					FrameID string `json:"frameId"`
				} `json:"options"`
			}
			if err := json.Unmarshal(final.Result.CacheEntry.Entry, &entry); err != nil {
				t.Fatal(err)
			}
			runnertest.Want(t, "the cache entry's frameId", entry.Options.FrameID, frameID)
		})
	}
}

func TestAgentTaskFrameRefused(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	site := framedSite(t)
	f := newAgentFixture(t, b, nil)
	browsertest.MustNavigate(t, b, site.URL+"/framed")
	const unknown = "F00D0000000000000000000000000000"
	tests := []struct {
		name    string
		frameID string
		mode    string
		wantMsg string
	}{
		{"a frame the page does not have", unknown, "", "frameId: no frame " + unknown + " in the page"},
		{"a frame the page does not have, hybrid", unknown, rpc.AgentModeHybrid, "frameId: no frame " + unknown + " in the page"},
		{"an iframe in cua mode", frameIDOf(t, b, "/framed-same"), rpc.AgentModeCUA, "frameId: the cua mode works on screenshots of the whole tab"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := taskRequest(fmt.Sprintf("f4a3e0ff-0000-4000-8000-%012d", i), "buy it")
			req.FrameID, req.Mode = tt.frameID, tt.mode
			ctx, cancel := context.WithTimeout(context.Background(), agentWait)
			defer cancel()
			_, _, err := f.client.StartAgentTask(ctx, req)
			runnertest.Want(t, "code", rpc.CodeOf(err), rpc.CodeBadRequest)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %v, want one saying %q", err, tt.wantMsg)
			}
			// Refused at the start: the runner keeps nothing of it.
			if _, ok := f.srv.AgentTasks().Get(req.UID); ok {
				t.Errorf("the runner keeps the refused task %s", req.UID)
			}
		})
	}
	runnertest.Want(t, "model requests", len(f.model.Requests()), 0)

	t.Run("the main frame's id", func(t *testing.T) {
		f.model.Enqueue(doneCall("nothing to do"))
		req := taskRequest("f4a3e0ff-0000-4000-8000-000000000099", "look around")
		req.FrameID = string(b.TargetID())
		f.start(t, req)
		runnertest.Want(t, "phase", f.final(t, req.UID).Phase, rpc.AgentTaskSucceeded)
	})
}

// TestAgentTaskFrameGoesAway scopes a task to an iframe that a goto (which
// navigates the tab) then takes away: the tools that read the frame fail
// with an error the model can act on, naming the frame, and the run goes
// on to its end.
func TestAgentTaskFrameGoesAway(t *testing.T) {
	t.Log("(scripted model)")
	b := browsertest.Shared(t)
	site := framedSite(t)
	f := newAgentFixture(t, b, nil)
	browsertest.MustNavigate(t, b, site.URL+"/framed")
	frameID := frameIDOf(t, b, "/framed-same")
	f.model.Enqueue(
		gotoCall(site.URL+"/framed-cross"),
		llmtest.ToolCalls(llmtest.Call("ariaTree", `{}`)),
		doneCall("the frame is gone"),
	)
	req := taskRequest("f4a3e0aa-0000-4000-8000-000000000001", "read the frame, after leaving the page")
	req.FrameID = frameID
	f.start(t, req)
	final := f.final(t, req.UID)
	runnertest.Want(t, "phase", final.Phase, rpc.AgentTaskSucceeded)
	reqs := f.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests, want 3", len(reqs))
	}
	runnertest.WantContains(t, "the ariaTree result", reqs[2].Text, "no frame "+frameID+" in the page")
	runnertest.WantNotContains(t, "the ariaTree result", reqs[2].Text, "Cross frame heading")
}
