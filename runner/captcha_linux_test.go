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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/llm/llmtest"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// The captcha tests' model is llmtest's scripted server: it answers the
// captcha's text because the test scripted it to. They show that the
// runner notices the captcha, sends the model a screenshot of it with the
// session's credentials, and types the answer with real key events; not
// that any model can read a captcha.

// captchaPage is a sign-in page whose captcha is random letters drawn on
// a 200x60 canvas: at load, or (later) once the test answers /trigger.
// When the answer field holds as many characters as the captcha, the page
// reports its value and the keys it saw go down to /answer.
const captchaPage = `<!doctype html><meta charset="utf-8"><title>sign in</title>
<div id="box"></div>
<label>Letters <input id="answer" autocomplete="off"></label>
<script>
const TEXT = %q;
const keys = [];
const input = document.getElementById('answer');
input.addEventListener('keydown', e => { if (e.key.length === 1) keys.push(e.key); });
input.addEventListener('input', () => {
  if (input.value.length === TEXT.length)
    fetch('/answer?value=' + encodeURIComponent(input.value) + '&keys=' + encodeURIComponent(keys.join('')));
});
function draw() {
  const c = document.createElement('canvas');
  c.id = 'captcha'; c.width = 200; c.height = 60;
  const g = c.getContext('2d');
  g.fillStyle = '#fff'; g.fillRect(0, 0, 200, 60);
  g.font = 'bold 32px monospace'; g.fillStyle = '#000';
  g.fillText(TEXT, 20, 42);
  document.getElementById('box').appendChild(c);
}
if (%t) fetch('/trigger').then(draw); else draw();
</script>`

// captchaSite serves captchaPage with text at /, and at /later with the
// captcha drawn once trigger is closed.
type captchaSite struct {
	*runnertest.PageServer
	text    string
	trigger chan struct{}
}

func newCaptchaSite(t *testing.T) *captchaSite {
	const letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
	var b strings.Builder
	for range 6 {
		b.WriteByte(letters[rand.IntN(len(letters))])
	}
	s := &captchaSite{text: b.String(), trigger: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("/{$}", runnertest.HTMLHandler(fmt.Sprintf(captchaPage, s.text, false)))
	mux.Handle("/later", runnertest.HTMLHandler(fmt.Sprintf(captchaPage, s.text, true)))
	mux.HandleFunc("/trigger", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-s.trigger:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/answer", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s.PageServer = runnertest.NewPageServer(t, mux)
	return s
}

// answers are the page's reports of its answer field: value and keys.
func (s *captchaSite) answers() [][2]string {
	var out [][2]string
	for _, r := range s.Seen(func(r *http.Request) bool { return r.URL.Path == "/answer" }) {
		out = append(out, [2]string{r.URL.Query().Get("value"), r.URL.Query().Get("keys")})
	}
	return out
}

// captchaRunner runs a session that solves captchas with the scripted
// model and returns its client and logs.
func captchaRunner(t *testing.T, model *llmtest.Server, modelName string) (runnertest.Client, *runnertest.SyncBuffer) {
	t.Helper()
	cfg := runnertest.Config(runnertest.CloudSettings(&v1alpha1.BrowserSettings{
		SolveCaptchas:        ptr.To(true),
		CaptchaImageSelector: "#captcha",
		CaptchaInputSelector: "#answer",
	}))
	cfg.Spec.Model = v1alpha1.ModelSpec{Name: modelName, BaseURL: model.BaseURL(llmtest.OpenAI)}
	cfg.Secrets.ModelAPIKey = config.NewSecret("sk-captcha-key")
	base, _, _, logs := startRun(t, cfg, nil)
	return runnertest.Client{Base: base, Token: runnertest.Token}, logs
}

func navigate(t *testing.T, c runnertest.Client, url string) {
	t.Helper()
	status, body := c.MustCall(t, rpc.NavigatePath, rpc.NavigateRequest{URL: url})
	if status != http.StatusOK {
		t.Fatalf("navigate %s: %d %s", url, status, body)
	}
}

// wantCaptchaRequest checks what the model was asked: a screenshot of the
// 200x60 canvas, with the session's key.
func wantCaptchaRequest(t *testing.T, req llmtest.Request) {
	t.Helper()
	if len(req.Images) != 1 {
		t.Fatalf("the model got %d images, want the captcha's screenshot", len(req.Images))
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(req.Images[0]))
	if err != nil {
		t.Fatalf("the model's image is no PNG: %v", err)
	}
	if cfg.Width != 200 || cfg.Height != 60 {
		t.Errorf("the model's image is %dx%d, want the canvas's 200x60", cfg.Width, cfg.Height)
	}
	runnertest.WantContains(t, "the model's prompt", req.Text, "captcha")
	runnertest.Want(t, "Authorization", req.Header.Get("Authorization"), "Bearer sk-captcha-key")
}

func TestCaptchaSolvedWithScriptedModel(t *testing.T) {
	model := llmtest.NewServer(t)
	site := newCaptchaSite(t)
	model.Enqueue(llmtest.Text(site.text).WithUsage(300, 4))
	c, logs := captchaRunner(t, model, "openai/gpt-4.1-mini")

	navigate(t, c, site.URL+"/")
	runnertest.WaitFor(t, "the page to report its answer", func() bool { return len(site.answers()) > 0 })
	runnertest.Want(t, "the answer field's value", site.answers()[0][0], site.text)
	runnertest.Want(t, "the keys the page saw go down", site.answers()[0][1], site.text)
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	wantCaptchaRequest(t, reqs[0])
	runnertest.WaitFor(t, "the solve in the runner's log", func() bool { return strings.Contains(logs.String(), "captcha solved") })
	runnertest.WantNotContains(t, "the runner's log", logs.String(), "sk-captcha-key")
}

// A captcha that appears while an operation runs is told in its stream.
func TestCaptchaAppearingLaterSolvedWithScriptedModel(t *testing.T) {
	model := llmtest.NewServer(t)
	site := newCaptchaSite(t)
	// The extract's answer waits until the captcha is solved, so that the
	// extract is in flight meanwhile.
	hold := make(chan struct{})
	model.Enqueue(llmtest.JSON(`{"extraction":"a sign-in form"}`).WithRelease(hold), llmtest.Text(site.text))
	c, logs := captchaRunner(t, model, "openai/gpt-4.1-mini")

	navigate(t, c, site.URL+"/later")
	type outcome struct {
		lines []rpc.StreamLine
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		_, _, lines, err := c.Stream(context.Background(), rpc.ExtractPath, rpc.ExtractRequest{Instruction: "what is on the page"})
		done <- outcome{lines, err}
	}()
	runnertest.WaitFor(t, "the extract to ask the model", func() bool { return len(model.Requests()) == 1 })
	// Now the captcha appears.
	close(site.trigger)
	runnertest.WaitFor(t, "the page to report its answer", func() bool { return len(site.answers()) > 0 })
	runnertest.Want(t, "the answer field's value", site.answers()[0][0], site.text)
	runnertest.Want(t, "the keys the page saw go down", site.answers()[0][1], site.text)
	wantCaptchaRequest(t, model.Requests()[1])
	runnertest.WaitFor(t, "the solve in the runner's log", func() bool { return strings.Contains(logs.String(), "captcha solved") })
	close(hold)

	out := <-done
	if out.err != nil {
		t.Fatalf("the streamed extract: %v", out.err)
	}
	var captchaLines []string
	for _, l := range out.lines {
		var line rpc.LogLine
		if l.Type == rpc.StreamLog && json.Unmarshal(l.Data, &line) == nil && line.Category == "captcha" {
			captchaLines = append(captchaLines, line.Message)
		}
	}
	runnertest.WantContains(t, "the extract's captcha lines", strings.Join(captchaLines, "\n"), "a captcha appeared", "captcha solved")
	if last := out.lines[len(out.lines)-1]; last.Type != rpc.StreamResult {
		t.Errorf("the extract ended with %s %s, want its result", last.Type, last.Data)
	}
}

// A model that fails leaves the captcha unsolved, says so, and the session
// works on: the next captcha is solved.
func TestCaptchaModelErrorReportedWithScriptedModel(t *testing.T) {
	model := llmtest.NewServer(t)
	site := newCaptchaSite(t)
	model.Enqueue(llmtest.Status(http.StatusBadRequest).WithMessage("llmtest: no vision today"), llmtest.Text(site.text))
	c, logs := captchaRunner(t, model, "openai/gpt-4.1-mini")

	navigate(t, c, site.URL+"/")
	runnertest.WaitFor(t, "the failure in the runner's log", func() bool {
		return strings.Contains(logs.String(), "captcha not solved: the model could not read the captcha")
	})
	runnertest.WantContains(t, "the runner's log", logs.String(), "no vision today")
	if n := len(site.answers()); n != 0 {
		t.Errorf("the page reported %d answers with the model failing", n)
	}

	// A new document, a new captcha.
	navigate(t, c, site.URL+"/")
	runnertest.WaitFor(t, "the page to report its answer", func() bool { return len(site.answers()) > 0 })
	runnertest.Want(t, "the answer field's value", site.answers()[0][0], site.text)
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model got %d requests, want 2", n)
	}
}

// A session whose model cannot be used is told so at start and at each
// captcha, and the session works on.
func TestCaptchaWithoutUsableModelReported(t *testing.T) {
	model := llmtest.NewServer(t)
	site := newCaptchaSite(t)
	c, logs := captchaRunner(t, model, "nosuchprovider/model")

	runnertest.WaitFor(t, "the warning at start", func() bool { return strings.Contains(logs.String(), "captchas will not be solved") })
	navigate(t, c, site.URL+"/")
	runnertest.WaitFor(t, "the failure in the runner's log", func() bool {
		return strings.Contains(logs.String(), "captcha not solved: a captcha appeared, and the session's model cannot read it")
	})
	if n := len(model.Requests()); n != 0 {
		t.Errorf("the model got %d requests", n)
	}
}
