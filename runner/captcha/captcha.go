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

// Package captcha solves a session's text captchas
// (browserSettings.solveCaptchas with captchaImageSelector and
// captchaInputSelector): when the image appears in the runner's tab, the
// Solver sends a screenshot of it to the session's model and types the
// text the model reads into the answer field, with real key events. There
// is no built-in detection of any captcha provider: the selectors say
// where the captcha is. docs/sessions.md, solveCaptchas, has the bounds.
package captcha

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Bounds of a session's captcha solving.
const (
	// MaxAttempts bounds the captchas a session tries to solve, solved or
	// not: each costs a model call, and a page can show captchas without
	// end.
	MaxAttempts = 20
	// AttemptTimeout bounds one attempt: the screenshot, the model's
	// answer (its client's own limit is 60 s) and the typing.
	AttemptTimeout = 90 * time.Second
	// MaxAnswerLength bounds the text typed, in characters: a longer
	// answer is no captcha's text.
	MaxAnswerLength = 64
	// MaxImageWidth bounds the width of the screenshot sent to the model,
	// in pixels; a larger element is scaled down.
	MaxImageWidth = 800
	// MaxImageHeight bounds the screenshot's height in the same way.
	MaxImageHeight = 600
	// maxWatchLines bounds the lines one watcher may have waiting.
	maxWatchLines = 8
)

// Category is the category of the solver's progress lines.
const Category = "captcha"

// prompt is what the model is told: the image is all it reads, and its
// answer is typed as it is.
const prompt = "The image is a text captcha. Answer with exactly the characters it shows, in order, " +
	"and nothing else: no quotes, no explanation. Characters only, without spaces unless the image shows them."

// Selectors say where a session's captcha is: the image to read and the
// field to type its text into, as Frame.Query takes them.
type Selectors struct {
	Image, Input string
}

// Solver solves the captchas of one session's tab.
type Solver struct {
	sel Selectors
	// model reads the images; nil when the session has none it can use,
	// and modelErr says why.
	model    llm.Client
	modelErr error
	log      *slog.Logger

	// signal wakes the loop: the image appeared. One waiting signal is
	// enough, as an attempt looks at the page as it is.
	signal chan struct{}
	// attempts counts the captchas the loop took on, at most
	// maxAttempts (MaxAttempts).
	attempts, maxAttempts int
	solved, failed        atomic.Int64

	mu       sync.Mutex
	watchers map[*watcher]struct{}
}

// New returns the solver of sel with model, the session's model; a nil
// model fails each captcha with modelErr, visibly.
func New(sel Selectors, model llm.Client, modelErr error, log *slog.Logger) *Solver {
	if log == nil {
		log = slog.Default()
	}
	if model == nil && modelErr == nil {
		modelErr = errors.New("the session has no model")
	}
	return &Solver{sel: sel, model: model, modelErr: modelErr, log: log.With("component", "captcha"),
		signal: make(chan struct{}, 1), maxAttempts: MaxAttempts, watchers: map[*watcher]struct{}{}}
}

// Start watches p, the runner's tab, for the captcha image until ctx
// ends, and solves each one that appears, one at a time.
func (s *Solver) Start(ctx context.Context, p *page.Page) error {
	if err := p.WatchSelector(ctx, s.sel.Image, s.appeared); err != nil {
		return fmt.Errorf("captchaImageSelector: %w", err)
	}
	if s.model == nil {
		s.log.Warn("captchas will not be solved: the session's model cannot be used", "err", s.modelErr)
	}
	go s.loop(ctx, p)
	return nil
}

// Counts returns how many captchas were solved and how many attempts
// failed.
func (s *Solver) Counts() (solved, failed int64) { return s.solved.Load(), s.failed.Load() }

// appeared is the watcher's report; it runs on the tab's event goroutine
// and must not block.
func (s *Solver) appeared(err error) {
	if err != nil {
		s.failed.Add(1)
		s.report(rpc.LogLevelError, "captchaImageSelector cannot be evaluated in this page: "+err.Error())
		return
	}
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

func (s *Solver) loop(ctx context.Context, p *page.Page) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.signal:
		}
		s.attempts++
		switch {
		case s.attempts == s.maxAttempts+1:
			s.report(rpc.LogLevelError, fmt.Sprintf("a captcha appeared, and the session has made its %d attempts: no more captchas are solved", s.maxAttempts))
			continue
		case s.attempts > s.maxAttempts:
			continue
		}
		s.attempt(ctx, p)
	}
}

// attempt solves the captcha on the page now.
func (s *Solver) attempt(ctx context.Context, p *page.Page) {
	if s.model == nil {
		s.fail("a captcha appeared, and the session's model cannot read it: %s", s.modelErr)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	s.report(rpc.LogLevelInfo, fmt.Sprintf("a captcha appeared; asking %s for its text", s.model.Model()))
	img, err := p.MainFrame().Query(ctx, s.sel.Image)
	if err != nil {
		s.fail("captchaImageSelector: %s", err)
		return
	}
	shot, err := p.ScreenshotElement(ctx, img, page.ScreenshotOptions{MaxWidth: MaxImageWidth, MaxHeight: MaxImageHeight})
	if err != nil {
		s.fail("the captcha's image could not be captured: %s", err)
		return
	}
	resp, err := s.model.Generate(ctx, llm.Request{
		System:   prompt,
		Messages: []llm.Message{llm.UserMessage(llm.TextPart("What text does this captcha show?"), llm.ImagePart(shot.PNG))},
	})
	if err != nil {
		s.fail("the model could not read the captcha: %s", err)
		return
	}
	answer, err := parseAnswer(resp.Text)
	if err != nil {
		s.fail("the model's answer is not a captcha's text: %s", err)
		return
	}
	in, err := p.MainFrame().Query(ctx, s.sel.Input)
	if err != nil {
		s.fail("captchaInputSelector: %s", err)
		return
	}
	// Clear the field, then type the answer key by key, as a person
	// would.
	if err := p.Perform(ctx, in, "fill", []string{""}); err != nil {
		s.fail("clearing captchaInputSelector's field: %s", err)
		return
	}
	if err := p.Perform(ctx, in, "type", []string{answer}); err != nil {
		s.fail("typing into captchaInputSelector's field: %s", err)
		return
	}
	s.solved.Add(1)
	s.report(rpc.LogLevelInfo, fmt.Sprintf("captcha solved: typed the %d characters %s read into captchaInputSelector's field (%d input, %d output tokens)",
		len([]rune(answer)), s.model.Model(), resp.Usage.InputTokens, resp.Usage.OutputTokens))
}

// parseAnswer is the text to type of a model's answer: trimmed of space
// and of the quotes a model may add, one line, at most MaxAnswerLength
// characters, printable.
func parseAnswer(text string) (string, error) {
	a := strings.TrimSpace(text)
	a = strings.Trim(a, "\"'`")
	a = strings.TrimSpace(a)
	switch n := len([]rune(a)); {
	case n == 0:
		return "", errors.New("it is empty")
	case n > MaxAnswerLength:
		return "", fmt.Errorf("it has %d characters, more than %d", n, MaxAnswerLength)
	}
	for _, r := range a {
		if !unicode.IsPrint(r) {
			return "", errors.New("it has characters that cannot be typed")
		}
	}
	return a, nil
}

// fail counts a failed attempt and reports it.
func (s *Solver) fail(format string, args ...any) {
	s.failed.Add(1)
	s.report(rpc.LogLevelError, "captcha not solved: "+fmt.Sprintf(format, args...))
}

// report logs a line to the runner's log and to every watcher.
func (s *Solver) report(level rpc.LogLevel, msg string) {
	solved, failed := s.Counts()
	if level == rpc.LogLevelError {
		s.log.Warn(msg, "solved", solved, "failed", failed)
	} else {
		s.log.Info(msg, "solved", solved, "failed", failed)
	}
	line := rpc.LogLine{Category: Category, Message: msg, Level: level, Timestamp: time.Now()}
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		select {
		case w.lines <- line:
		default:
			// A watcher that does not keep up loses lines; the log has
			// them.
		}
	}
}

type watcher struct {
	lines chan rpc.LogLine
}

// Watch sends the solver's lines to progress until stop is called, for an
// operation in flight: a captcha that its action brought up is told in its
// stream. progress is never called after stop returns.
func (s *Solver) Watch(progress func(rpc.LogLine)) (stop func()) {
	w := &watcher{lines: make(chan rpc.LogLine, maxWatchLines)}
	s.mu.Lock()
	s.watchers[w] = struct{}{}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for line := range w.lines {
			progress(line)
		}
	}()
	return func() {
		s.mu.Lock()
		delete(s.watchers, w)
		close(w.lines)
		s.mu.Unlock()
		<-done
	}
}
