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
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/internal/testing/procs"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

const (
	poolToken    = "pool-token-3f9a1c"
	sessionToken = "session-token-b71e0d"
	claimedKey   = "sk-claimed-session-5e2a"
	poolProfile  = "pool-profile"
)

// poolPage has a button whose click the page text shows.
const poolPage = `<!doctype html><title>pool</title>
<button id="b" onclick="document.getElementById('out').textContent='clicked ' + (++window.clicks)">Press me</button>
<p id="out">not clicked</p>
<script>window.clicks = 0</script>`

// poolTemplate is a pool's template as the manager hands it to a pooled
// runner (browser and cloudSessionCreateParams only), with a profile the
// test finds the browser's processes by.
func poolTemplate(s *v1alpha1.BrowserSessionSpec) {
	s.Model = v1alpha1.ModelSpec{}
	s.Browser.LaunchOptions.UserDataDir = poolProfile
}

// pooledConfig is a warm pool's runner: the pool's template, name and
// token, no session.
func pooledConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := runnertest.Config(poolTemplate)
	cfg.Pool, cfg.SessionName, cfg.Token = "warm", "", config.NewSecret(poolToken)
	cfg.DataDir = t.TempDir()
	cfg.TerminationMessagePath = filepath.Join(t.TempDir(), "termination-log")
	return cfg
}

// claimOf is a claim for session name with the pool's launch settings and
// a model at baseURL.
func claimOf(name, baseURL string) rpc.ClaimRequest {
	spec := runnertest.Config(poolTemplate).Spec
	spec.Model = v1alpha1.ModelSpec{Name: "openai/gpt-4.1-mini", BaseURL: baseURL, APIKeySecretRef: &v1alpha1.SecretKeyReference{Name: "model", Key: "key"}}
	spec.Verbose = ptr.To[int32](2)
	return rpc.ClaimRequest{Session: name, Namespace: "default", Spec: spec, Token: sessionToken, Secrets: rpc.ClaimSecrets{ModelAPIKey: claimedKey}}
}

// browserPID is the pid of the browser process (not a helper) whose
// profile is under dataDir; there must be exactly one.
func browserPID(t *testing.T, dataDir string) int {
	t.Helper()
	var browsers []int
	for _, pid := range chromiumProcesses(t, filepath.Join(dataDir, "profiles", poolProfile)) {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && !strings.Contains(string(raw), "--type=") {
			browsers = append(browsers, pid)
		}
	}
	if len(browsers) != 1 {
		t.Fatalf("browser processes with the pool's profile: %v, want one", browsers)
	}
	return browsers[0]
}

// get sends GET path with token.
func get(t *testing.T, base, path, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var body json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// claim claims the runner at base with token, returning the answer's code
// ("" for 200) and the session it names.
func claim(t *testing.T, base, token string, req rpc.ClaimRequest) (rpc.ErrorCode, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := rpc.NewClient(base, token, nil).Claim(ctx, req)
	if err != nil {
		code := rpc.CodeOf(err)
		if code == "" {
			t.Fatalf("claim: %v", err)
		}
		return code, ""
	}
	return "", res.Session
}

var buttonID = regexp.MustCompile(`\[(\d+-\d+)\] button: Press me`)

func TestPooledRunnerIsClaimed(t *testing.T) {
	t.Log("(scripted model)")
	model := llmtest.NewServer(t)
	site := runnertest.NewPageServer(t, runnertest.HTMLHandler(poolPage))
	cfg := pooledConfig(t)
	var onClaim atomic.Pointer[config.Config]
	base, stop, result, logs := startRunWith(t, cfg, Options{OnClaim: func(c *config.Config) { onClaim.Store(c) }})
	pool := runnertest.Client{Base: base, Token: poolToken}
	browser := browserPID(t, cfg.DataDir)

	// Before a claim: the pool's token reaches nothing but the claim.
	for path, body := range map[string]any{
		rpc.ActPath:      rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#b", Method: "click"}}},
		rpc.ObservePath:  rpc.ObserveRequest{},
		rpc.ExtractPath:  rpc.ExtractRequest{},
		rpc.NavigatePath: rpc.NavigateRequest{URL: site.URL},
	} {
		status, raw := pool.MustCall(t, path, body)
		runnertest.Want(t, path+" before the claim", status, http.StatusConflict)
		runnertest.Want(t, path+" code before the claim", runnertest.DecodeError(t, raw).Code, rpc.CodeNotClaimed)
	}
	status, raw := get(t, base, rpc.CDPPath, poolToken)
	runnertest.Want(t, "/cdp before the claim", status, http.StatusConflict)
	runnertest.Want(t, "/cdp code before the claim", runnertest.DecodeError(t, raw).Code, rpc.CodeNotClaimed)
	status, _ = runnertest.Client{Base: base}.MustCall(t, rpc.ActPath, rpc.ActRequest{})
	runnertest.Want(t, "act without a token", status, http.StatusUnauthorized)
	status, _ = runnertest.Client{Base: base, Token: sessionToken}.MustCall(t, rpc.ActPath, rpc.ActRequest{})
	runnertest.Want(t, "act with the session's token before the claim", status, http.StatusUnauthorized)

	// A claim needs the pool's token.
	code, _ := claim(t, base, sessionToken, claimOf("s-1", model.BaseURL(llmtest.OpenAI)))
	runnertest.Want(t, "claim with the session's token", code, rpc.CodeUnauthorized)

	// A session launched otherwise is refused, and the runner stays
	// claimable.
	other := claimOf("s-1", model.BaseURL(llmtest.OpenAI))
	other.Spec.Browser.LaunchOptions.Locale = "de-DE"
	status, raw = pool.MustCall(t, rpc.ClaimPath, other)
	runnertest.Want(t, "claim with another locale", status, http.StatusUnprocessableEntity)
	e := runnertest.DecodeError(t, raw)
	runnertest.Want(t, "code of the claim with another locale", e.Code, rpc.CodeLaunchMismatch)
	runnertest.WantContains(t, "message", e.Message, "browser.launchOptions.locale")
	status, raw = pool.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: site.URL})
	runnertest.Want(t, "navigate after the refused claim", status, http.StatusConflict)
	runnertest.Want(t, "code after the refused claim", runnertest.DecodeError(t, raw).Code, rpc.CodeNotClaimed)
	if onClaim.Load() != nil {
		t.Error("OnClaim was called for a refused claim")
	}

	code, name := claim(t, base, poolToken, claimOf("s-1", model.BaseURL(llmtest.OpenAI)))
	if code != "" || name != "s-1" {
		t.Fatalf("claim = %s %q, want s-1", code, name)
	}
	if c := onClaim.Load(); c == nil || c.SessionName != "s-1" || ptr.Deref(c.Spec.Verbose, 0) != 2 {
		t.Errorf("OnClaim got %+v, want the claimed session's config", c)
	}

	// The session's token works at once, on the browser started with the
	// pool.
	session := runnertest.Client{Base: base, Token: sessionToken}
	status, raw = session.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: site.URL})
	if status != http.StatusOK {
		t.Fatalf("navigate after the claim: %d %s", status, raw)
	}
	status, raw = session.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Action: &rpc.Action{Selector: "#b", Method: "click"}}})
	if status != http.StatusOK {
		t.Fatalf("act after the claim: %d %s", status, raw)
	}
	text := pageText(t, session)
	runnertest.WantContains(t, "the page after the act", text, "clicked 1")
	runnertest.Want(t, "the browser", browserPID(t, cfg.DataDir), browser)

	// The claimed session's model and key, which the pool never had.
	m := buttonID.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no button in the page text:\n%s", text)
	}
	answer, _ := json.Marshal(map[string]any{"elementId": m[1], "method": "click", "arguments": []string{}, "description": "the button", "twoStep": false})
	model.Enqueue(llmtest.JSON(string(answer)))
	status, raw = session.MustCall(t, rpc.ActPath, rpc.ActRequest{Input: rpc.ActInput{Instruction: "press the button"}})
	if status != http.StatusOK {
		t.Fatalf("act by instruction after the claim: %d %s", status, raw)
	}
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	runnertest.Want(t, "the model", reqs[0].Model, "gpt-4.1-mini")
	runnertest.Want(t, "the model's Authorization", reqs[0].Header.Get("Authorization"), "Bearer "+claimedKey)
	runnertest.WantContains(t, "the page after the act by instruction", pageText(t, session), "clicked 2")

	// The pool's token is the session's no more; only a repeated claim
	// still takes it.
	status, _ = pool.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: site.URL})
	runnertest.Want(t, "navigate with the pool's token after the claim", status, http.StatusUnauthorized)
	status, _ = get(t, base, rpc.CDPPath, poolToken)
	runnertest.Want(t, "/cdp with the pool's token after the claim", status, http.StatusUnauthorized)
	code, name = claim(t, base, poolToken, claimOf("s-1", model.BaseURL(llmtest.OpenAI)))
	if code != "" || name != "s-1" {
		t.Errorf("repeated claim = %s %q, want s-1", code, name)
	}
	for what, req := range map[string]rpc.ClaimRequest{
		"another session": claimOf("s-2", model.BaseURL(llmtest.OpenAI)),
		"another token": func() rpc.ClaimRequest {
			r := claimOf("s-1", model.BaseURL(llmtest.OpenAI))
			r.Token = "another-token"
			return r
		}(),
	} {
		code, _ = claim(t, base, poolToken, req)
		runnertest.Want(t, "claim for "+what, code, rpc.CodeAlreadyClaimed)
	}
	status, _ = session.MustCall(t, rpc.ClaimPath, claimOf("s-1", model.BaseURL(llmtest.OpenAI)))
	runnertest.Want(t, "claim with the session's token", status, http.StatusUnauthorized)
	resp, err := http.Get(base + rpc.HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	runnertest.Want(t, "/healthz after the claim", resp.StatusCode, http.StatusOK)

	stop()
	if err := <-result; err != nil {
		t.Fatalf("Run: %v", err)
	}
	raw, err = os.ReadFile(cfg.TerminationMessagePath)
	if err != nil {
		t.Fatal(err)
	}
	sum, ok := replay.ParseTerminationMessage(string(raw))
	if !ok {
		t.Fatalf("termination message %s is no summary", raw)
	}
	// Only the session's calls count; the refusals before the claim were
	// the pool's.
	if diff := cmp.Diff(map[string]int64{"navigate": 1, "act": 2, "extract": 2}, sum.ByMethod); diff != "" {
		t.Errorf("the summary's calls (-want +got):\n%s", diff)
	}
	runnertest.WantContains(t, "log", logs.String(), "pool=warm", "session=s-1", "claimed by the session")
	runnertest.WantNotContains(t, "log", logs.String(), sessionToken, claimedKey, poolToken)
}

// pageText is the session's page as extract without instruction gives it.
func pageText(t *testing.T, c runnertest.Client) string {
	t.Helper()
	status, raw := c.MustCall(t, rpc.ExtractPath, rpc.ExtractRequest{})
	if status != http.StatusOK {
		t.Fatalf("extract: %d %s", status, raw)
	}
	var res rpc.Result[struct {
		PageText string `json:"pageText"`
	}]
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return res.Result.PageText
}

func TestConcurrentClaimsOneWins(t *testing.T) {
	cfg := pooledConfig(t)
	base, stop, result, _ := startRunWith(t, cfg, Options{})
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		codes   = map[rpc.ErrorCode]int{}
	)
	for i := range n {
		wg.Go(func() {
			code, name := claim(t, base, poolToken, claimOf(fmt.Sprintf("s-%d", i), ""))
			mu.Lock()
			defer mu.Unlock()
			if code == "" {
				winners = append(winners, name)
			} else {
				codes[code]++
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("claims that won: %q, want one", winners)
	}
	if diff := cmp.Diff(map[rpc.ErrorCode]int{rpc.CodeAlreadyClaimed: n - 1}, codes); diff != "" {
		t.Errorf("the other claims' codes (-want +got):\n%s", diff)
	}
	// The winner's claim is the one that holds.
	code, name := claim(t, base, poolToken, claimOf(winners[0], ""))
	if code != "" || name != winners[0] {
		t.Errorf("repeated claim of the winner = %s %q", code, name)
	}
	stop()
	if err := <-result; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestUnclaimedPooledRunnerStops(t *testing.T) {
	cfg := pooledConfig(t)
	base, stop, result, logs := startRunWith(t, cfg, Options{})
	browser := browserPID(t, cfg.DataDir)
	pids := chromiumProcesses(t, filepath.Join(cfg.DataDir, "profiles", poolProfile))

	stop()
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("Run returned %v, want nil after an orderly stop", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	for _, pid := range pids {
		if procs.Running(pid) {
			t.Errorf("chromium process %d outlived the runner", pid)
		}
	}
	if procs.GroupAlive(browser) {
		t.Errorf("chromium's process group %d outlived the runner", browser)
	}
	if _, err := os.Stat(cfg.TerminationMessagePath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an unclaimed runner left a termination message (%v)", err)
	}
	if resp, err := http.Get(base + rpc.HealthPath); err == nil {
		_ = resp.Body.Close()
		t.Error("the runner still serves after Run returned")
	}
	runnertest.WantContains(t, "log", logs.String(), "pool=warm", "browser closed")
	runnertest.WantNotContains(t, "log", logs.String(), "session=")
}
