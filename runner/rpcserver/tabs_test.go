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
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/runner/chromium"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Operations on the other tabs of a session: a client opens a tab through
// the session's CDP endpoint (here the runner's /cdp route) and names it by
// its target id as frameId; the runner attaches to it, applies the
// session's emulation, and runs the operation there.

const (
	tabsViewportWidth = 777
	tabsUserAgent     = "browserfleet-tabs-test/1.0"
)

// tabsBrowser starts a browser of its own, with a viewport and user agent
// the attached tabs must get too.
func tabsBrowser(t *testing.T) *chromium.Browser {
	t.Helper()
	return browsertest.Start(t, runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
		lo.Viewport = &v1alpha1.Viewport{Width: tabsViewportWidth, Height: 555}
		lo.Args = []v1alpha1.LaunchArg{"--user-agent=" + tabsUserAgent}
	})))
}

// tabsSite serves the pages of the tab tests.
func tabsSite(t *testing.T) *runnertest.PageServer {
	pages := map[string]string{
		"/first": `<!doctype html><title>First</title><h1>The runner's own tab</h1><button onclick="window.hit='first'">Order</button>`,
		"/second": `<!doctype html><title>Second</title><h1>The client's tab</h1>
<button onclick="window.hit='second'">Order</button>
<iframe id="inner" src="/inner" style="width:300px;height:120px"></iframe>`,
		"/inner": `<!doctype html><title>Inner</title><p>Inside the client's iframe</p>`,
		"/third": `<!doctype html><title>Third</title><h1>Another page of the client's tab</h1>`,
	}
	return runnertest.NewPageServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			body = fmt.Sprintf(`<!doctype html><title>%s</title><h1>Page %s</h1>`, r.URL.Path, r.URL.Path)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
}

// clientTab opens a tab at url through the runner's /cdp route, as a
// client of the session's cdpUrl does, and attaches the client to it. It
// returns the tab's target id and the client's session with it.
func clientTab(t *testing.T, cdp *cdpConn, url string) (id, sid string) {
	t.Helper()
	var created struct {
		TargetID string `json:"targetId"`
	}
	params, _ := json.Marshal(map[string]any{"url": url})
	cdp.mustCall("Target.createTarget", string(params), "", &created)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	cdp.mustCall("Target.attachToTarget", fmt.Sprintf(`{"targetId":%q,"flatten":true}`, created.TargetID), "", &attached)
	runnertest.WaitFor(t, "the client's tab to load "+url, func() bool {
		return cdp.eval("document.readyState", attached.SessionID) == "complete"
	})
	return created.TargetID, attached.SessionID
}

// pageTextOf is the pageText an extract on frameID answers.
func pageTextOf(t *testing.T, c runnertest.Client, frameID string) string {
	t.Helper()
	status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{FrameID: frameID})
	return decodeResult[map[string]string](t, status, body).Result["pageText"]
}

// lineID is the element id of the outline line that has text.
func lineID(t *testing.T, outline, text string) string {
	t.Helper()
	for line := range strings.SplitSeq(outline, "\n") {
		if strings.Contains(line, text) {
			if m := regexp.MustCompile(`\[(\d+-\d+)\]`).FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no line with %q in:\n%s", text, outline)
	return ""
}

// frameOf is the id of the frame of the client's session sid whose URL
// ends in path.
func frameOf(t *testing.T, cdp *cdpConn, sid, path string) string {
	t.Helper()
	var tree struct {
		FrameTree struct {
			ChildFrames []struct {
				Frame struct {
					ID  string `json:"id"`
					URL string `json:"url"`
				} `json:"frame"`
			} `json:"childFrames"`
		} `json:"frameTree"`
	}
	cdp.mustCall("Page.getFrameTree", "", sid, &tree)
	for _, c := range tree.FrameTree.ChildFrames {
		if strings.HasSuffix(c.Frame.URL, path) {
			return c.Frame.ID
		}
	}
	t.Fatalf("no frame %s in the client's tab", path)
	return ""
}

func TestOperationsOnAClientsTab(t *testing.T) {
	b := tabsBrowser(t)
	site := tabsSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	open(t, c, site, "/first")
	cdp := dialCDP(t, c)
	tab, sid := clientTab(t, cdp, site.URL+"/second")

	t.Run("extract reads the named tab", func(t *testing.T) {
		text := pageTextOf(t, c, tab)
		runnertest.WantContains(t, "pageText", text, "The client's tab", "Inside the client's iframe")
		runnertest.WantNotContains(t, "pageText", text, "The runner's own tab")
		runnertest.WantContains(t, "the runner's own tab", pageTextOf(t, c, ""), "The runner's own tab")
		if !slices.Contains(b.AttachedTabs(), target.ID(tab)) {
			t.Errorf("attached tabs %v, want %s among them", b.AttachedTabs(), tab)
		}
	})

	t.Run("the session's emulation holds in the attached tab", func(t *testing.T) {
		runnertest.Want(t, "innerWidth", cdp.eval("innerWidth", sid), any(float64(tabsViewportWidth)))
		runnertest.Want(t, "userAgent", cdp.eval("navigator.userAgent", sid), any(tabsUserAgent))
	})

	t.Run("act by instruction in the named tab (scripted model)", func(t *testing.T) {
		id := lineID(t, pageTextOf(t, c, tab), "button: Order")
		srv.Enqueue(actAnswer(id, "click", nil, false).WithUsage(40, 4))
		status, body := c.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Instruction: "order it"}, FrameID: tab})
		if res := decodeResult[rpc.ActResult](t, status, body); !res.Result.Success {
			t.Fatalf("act did not succeed: %+v", res.Result)
		}
		runnertest.Want(t, "the client's tab clicked", cdp.eval("window.hit", sid), any("second"))
		var own any
		browsertest.Evaluate(t, b, "window.hit || ''", &own)
		runnertest.Want(t, "the runner's tab clicked", own, any(""))
		reqs := srv.Requests()
		runnertest.WantContains(t, "what the model read", reqs[len(reqs)-1].Text, "The client's tab")
		runnertest.WantNotContains(t, "what the model read", reqs[len(reqs)-1].Text, "The runner's own tab")
	})

	t.Run("observe in an iframe of the named tab (scripted model)", func(t *testing.T) {
		frame := frameOf(t, cdp, sid, "/inner")
		srv.Enqueue(llmtest.JSON(`{"elements":[]}`))
		status, body := c.MustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "anything", FrameID: frame})
		decodeResult[[]rpc.Action](t, status, body)
		reqs := srv.Requests()
		runnertest.WantContains(t, "what the model read", reqs[len(reqs)-1].Text, "Inside the client's iframe")
		runnertest.WantNotContains(t, "what the model read", reqs[len(reqs)-1].Text, "The client's tab", "The runner's own tab")
	})

	t.Run("an out-of-process iframe of another tab", func(t *testing.T) {
		framed := framedSite(t)
		other, _ := clientTab(t, cdp, framed.URL+"/framed")
		var infos struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
				Type     string `json:"type"`
				URL      string `json:"url"`
			} `json:"targetInfos"`
		}
		var frame string
		runnertest.WaitFor(t, "the cross-site iframe's target", func() bool {
			cdp.mustCall("Target.getTargets", "", "", &infos)
			for _, in := range infos.TargetInfos {
				if in.Type == "iframe" && strings.HasSuffix(in.URL, "/framed-cross") {
					frame = in.TargetID
				}
			}
			return frame != ""
		})
		text := pageTextOf(t, c, frame)
		runnertest.WantContains(t, "pageText", text, "Cross frame heading")
		runnertest.WantNotContains(t, "pageText", text, "Main page heading", "The runner's own tab", "The client's tab")
		if !slices.Contains(b.AttachedTabs(), target.ID(other)) {
			t.Errorf("attached tabs %v, want the iframe's tab %s among them", b.AttachedTabs(), other)
		}
	})

	t.Run("navigate the named tab", func(t *testing.T) {
		status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: site.URL + "/third", FrameID: tab})
		runnertest.Want(t, "url", decodeResult[rpc.NavigateResult](t, status, body).Result.URL, site.URL+"/third")
		runnertest.Want(t, "the client's tab's location", cdp.eval("location.pathname", sid), any("/third"))
		var own string
		browsertest.Evaluate(t, b, "location.pathname", &own)
		runnertest.Want(t, "the runner's tab's location", own, "/first")
	})

	t.Run("a closed tab is forgotten", func(t *testing.T) {
		cdp.mustCall("Target.closeTarget", fmt.Sprintf(`{"targetId":%q}`, tab), "", nil)
		runnertest.WaitFor(t, "the runner to forget the closed tab", func() bool {
			return !slices.Contains(b.AttachedTabs(), target.ID(tab))
		})
		status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{FrameID: tab})
		runnertest.Want(t, "status", status, http.StatusBadRequest)
		runnertest.WantContains(t, "error", runnertest.DecodeError(t, body).Message, "frameId: no frame "+tab)
	})
}

func TestTabClosedDuringAnOperation(t *testing.T) {
	b := tabsBrowser(t)
	site := tabsSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, nil)
	cdp := dialCDP(t, c)
	tab, _ := clientTab(t, cdp, site.URL+"/second")

	release := make(chan struct{})
	defer close(release)
	srv.Enqueue(llmtest.JSON(`{"elements":[]}`).WithRelease(release))
	type outcome struct {
		status int
		body   []byte
	}
	done := make(chan outcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		status, body, err := c.Call(ctx, rpc.ObservePath, rpc.ObserveRequest{Instruction: "anything", FrameID: tab})
		if err != nil {
			body = []byte(err.Error())
		}
		done <- outcome{status, body}
	}()
	runnertest.WaitFor(t, "the model to be asked", func() bool { return len(srv.Requests()) == 1 })
	cdp.mustCall("Target.closeTarget", fmt.Sprintf(`{"targetId":%q}`, tab), "", nil)
	got := <-done
	runnertest.Want(t, "status", got.status, http.StatusBadRequest)
	runnertest.WantContains(t, "error", runnertest.DecodeError(t, got.body).Message, "frameId: the tab "+tab+" closed during the operation")

	// The runner's own tab still serves.
	status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: site.URL + "/first"})
	decodeResult[rpc.NavigateResult](t, status, body)
}

func TestAttachedTabsAreBounded(t *testing.T) {
	b := tabsBrowser(t)
	site := tabsSite(t)
	c, _ := automationServer(t, b, nil, llmtest.OpenAI, nil)
	cdp := dialCDP(t, c)
	var ids []string
	for i := range chromium.MaxAttachedTabs + 1 {
		id, _ := clientTab(t, cdp, fmt.Sprintf("%s/page-%d", site.URL, i))
		ids = append(ids, id)
		runnertest.WantContains(t, "pageText", pageTextOf(t, c, id), fmt.Sprintf("Page /page-%d", i))
	}
	attached := b.AttachedTabs()
	runnertest.Want(t, "tabs attached", len(attached), chromium.MaxAttachedTabs)
	if slices.Contains(attached, target.ID(ids[0])) {
		t.Errorf("the least recently used tab %s is still attached", ids[0])
	}
	runnertest.Want(t, "the most recently used first", attached[0], target.ID(ids[len(ids)-1]))

	// Detached, the tab stays open, and the next operation naming it
	// attaches it again (detaching the next least recently used).
	var infos struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
		} `json:"targetInfos"`
	}
	cdp.mustCall("Target.getTargets", "", "", &infos)
	var open []string
	for _, in := range infos.TargetInfos {
		open = append(open, in.TargetID)
	}
	if !slices.Contains(open, ids[0]) {
		t.Fatalf("the detached tab %s was closed", ids[0])
	}
	runnertest.WantContains(t, "pageText", pageTextOf(t, c, ids[0]), "Page /page-0")
	attached = b.AttachedTabs()
	runnertest.Want(t, "tabs attached", len(attached), chromium.MaxAttachedTabs)
	if slices.Contains(attached, target.ID(ids[1])) {
		t.Errorf("the least recently used tab %s is still attached", ids[1])
	}
}

// TestCallSettings: an operation's systemPrompt replaces the session's for
// the call, and act's selfHeal and selector override and scope it.
func TestCallSettings(t *testing.T) {
	b := browsertest.Shared(t)
	site := newSite(t)
	srv := llmtest.NewServer(t)
	c, _ := automationServer(t, b, srv, llmtest.OpenAI, func(s *v1alpha1.BrowserSessionSpec) {
		s.SystemPrompt = "the session's own prompt"
	})

	t.Run("systemPrompt (scripted model)", func(t *testing.T) {
		open(t, c, site, "/form")
		srv.Enqueue(llmtest.JSON(`{"elements":[]}`), llmtest.JSON(`{"elements":[]}`))
		status, body := c.MustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "x",
			Options: rpc.ObserveOptions{CallSettings: rpc.CallSettings{SystemPrompt: ptr.To("the call's own prompt")}}})
		decodeResult[[]rpc.Action](t, status, body)
		status, body = c.MustCall(t, rpc.ObservePath, rpc.ObserveRequest{Instruction: "x"})
		decodeResult[[]rpc.Action](t, status, body)
		reqs := srv.Requests()
		runnertest.WantContains(t, "the call's prompt", reqs[len(reqs)-2].Text, "the call's own prompt")
		runnertest.WantNotContains(t, "the call's prompt", reqs[len(reqs)-2].Text, "the session's own prompt")
		runnertest.WantContains(t, "the session's prompt", reqs[len(reqs)-1].Text, "the session's own prompt")
	})

	t.Run("selfHeal for one call (scripted model)", func(t *testing.T) {
		open(t, c, site, "/rebuild")
		_, stale := idOf(t, b, "button: Save")
		browsertest.Evaluate(t, b, `window.rebuild()`, nil)
		id, _ := idOf(t, b, "button: Save")
		stale1 := rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: stale, Method: "click", Description: "the Save button"}}}
		// The session does not heal: the stale selector fails.
		status, body := c.MustCall(t, rpc.ActPath, stale1)
		runnertest.Want(t, "without selfHeal", decodeResult[rpc.ActResult](t, status, body).Result.Success, false)
		srv.Enqueue(actAnswer(id, "click", nil, false))
		stale1.Options.SelfHeal = ptr.To(true)
		status, body = c.MustCall(t, rpc.ActPath, stale1)
		runnertest.Want(t, "with selfHeal", decodeResult[rpc.ActResult](t, status, body).Result.Success, true)
		var saved string
		browsertest.Evaluate(t, b, `window.saved`, &saved)
		runnertest.Want(t, "the button clicked", saved, "rebuilt")
	})

	t.Run("selector scopes what act's model sees (scripted model)", func(t *testing.T) {
		open(t, c, site, "/form")
		id, _ := idOf(t, b, "textbox: Password")
		srv.Enqueue(actAnswer(id, "fill", []string{"x"}, false))
		status, body := c.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Instruction: "fill the password"},
			Options: rpc.ActOptions{Selector: "#password", IgnoreSelectors: []string{"#email"}}})
		decodeResult[rpc.ActResult](t, status, body)
		reqs := srv.Requests()
		runnertest.WantContains(t, "what the model read", reqs[len(reqs)-1].Text, "textbox: Password")
		runnertest.WantNotContains(t, "what the model read", reqs[len(reqs)-1].Text, "textbox: Email", "button: Sign in")
	})

	t.Run("settings out of bounds", func(t *testing.T) {
		status, body := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{Options: rpc.ExtractOptions{
			CallSettings: rpc.CallSettings{DOMSettleTimeoutMs: ptr.To(-1.0)}}})
		runnertest.Want(t, "status", status, http.StatusBadRequest)
		runnertest.WantContains(t, "error", runnertest.DecodeError(t, body).Message, "options.domSettleTimeoutMs")
	})
}
