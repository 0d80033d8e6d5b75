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
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// TestHistory: the runner records every operation it serves, failures
// included, redacted, under the caller's action id, and answers them at
// rpc.ReplayPath to callers with the token.
func TestHistory(t *testing.T) {
	b := browsertest.Shared(t)
	page := runnertest.NewPageServer(t, runnertest.HTMLHandler(buttonsPage))
	_, c, _ := newTestServer(t, b, browsertest.NewOperations())
	client := rpc.NewClient(c.Base, c.Token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if _, err := client.Navigate(rpc.WithActionID(ctx, "nav-1"), rpc.NavigateRequest{URL: page.URL + "/?token=s3cret#frag"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Act(rpc.WithActionID(ctx, "act-1"), browsertest.Act("click #a"), nil); err != nil {
		t.Fatal(err)
	}
	// The test engine knows no fill: a failed call, recorded all the same.
	fill := rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#pw", Method: "fill", Arguments: []string{"hunter2"}}}}
	fill.Options.Variables = rpc.Variables{"password": {Value: "var-s3cret"}}
	if _, err := client.Act(rpc.WithActionID(ctx, "act-2"), fill, nil); rpc.CodeOf(err) != rpc.CodeBadRequest {
		t.Fatalf("fill: %v, want BAD_REQUEST", err)
	}
	if _, err := client.Extract(ctx, rpc.ExtractRequest{Instruction: "the title"}, nil); err != nil {
		t.Fatal(err)
	}

	rep, err := client.Replay(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(rep)
	for _, secret := range []string{"hunter2", "var-s3cret", "s3cret", "frag"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the replay holds %q: %s", secret, raw)
		}
	}
	type call struct{ ID, Method, Params, Result string }
	var got []call
	for _, p := range rep.Pages {
		for _, a := range p.Actions {
			id := a.ActionID
			if a.Method == "extract" {
				id = "<new>"
				if len(a.ActionID) != 36 {
					t.Errorf("extract's action id %q is no UUID", a.ActionID)
				}
			}
			got = append(got, call{id, a.Method, string(a.Parameters), string(a.Result)})
		}
	}
	pageURL := page.URL + "/?token=%5Bredacted%5D"
	wantCalls := []call{
		{"nav-1", "navigate", `{"url":"` + pageURL + `"}`, `{"ok":true,"status":200,"url":"` + pageURL + `"}`},
		{"act-1", "act", `{"input":"click #a"}`, `{"actionDescription":"click #a","actions":[{"description":"the element","method":"click","selector":"#a"}],"message":"clicked #a","success":true}`},
		{"act-2", "act", `{"input":{"arguments":["[redacted]"],"description":"","method":"fill","selector":"#pw"},"variables":["password"]}`, `{"code":"BAD_REQUEST","error":"the test engine does not know \"fill\""}`},
		{"<new>", "extract", `{"instruction":"the title"}`, `{"extraction":"buttons"}`},
	}
	if diff := cmp.Diff(wantCalls, got); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
	if len(rep.Pages) != 1 || rep.Pages[0].URL != pageURL {
		t.Errorf("pages %+v, want one at %s", rep.Pages, pageURL)
	}

	req, _ := http.NewRequest(http.MethodGet, c.Base+rpc.ReplayPath, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	runnertest.Want(t, "replay without a token", resp.StatusCode, http.StatusUnauthorized)
}

// TestWriteSummary: the runner leaves the summary of its history in the
// termination message file, unless it failed without serving a call.
func TestWriteSummary(t *testing.T) {
	h := replay.NewHistory(0, 0)
	dir := t.TempDir()
	log, _ := runnertest.Logger(t)

	failedEmpty := filepath.Join(dir, "failed-empty")
	WriteSummary(failedEmpty, h, true, log)
	if _, err := os.Stat(failedEmpty); !os.IsNotExist(err) {
		t.Errorf("a runner that failed without a call wrote %s: %v", failedEmpty, err)
	}

	h.Record(replay.Entry{Method: "navigate", Started: time.UnixMilli(1000), Ended: time.UnixMilli(2000)})
	h.Record(replay.Entry{Method: "act", Failed: true, Started: time.UnixMilli(3000), Ended: time.UnixMilli(4000), Usage: replay.TokenUsage{InputTokens: 7}})
	path := filepath.Join(dir, "termination-log")
	WriteSummary(path, h, false, log)
	msg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := replay.ParseTerminationMessage(string(msg))
	if !ok {
		t.Fatalf("%s is no summary", msg)
	}
	wantSum := replay.Summary{Calls: 2, Failed: 1, ByMethod: map[string]int64{"navigate": 1, "act": 1},
		TokenUsage: replay.TokenUsage{InputTokens: 7}, FirstCallAt: 1000, LastCallAt: 4000}
	if diff := cmp.Diff(wantSum, *got); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}
