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

package chromium

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browserfleet/browserfleet/runner/config"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Browser is the session's browser: a Chromium the runner launched, or one
// it attached to at cdpUrl, with the session's settings applied to the tab
// it drives. Operations run on that tab, or on another tab of the browser
// that they name (see Target); other DevTools clients reach the whole
// browser through DevToolsURL.
type Browser struct {
	log      *slog.Logger
	settings *settings

	// allocCtx owns the allocator: cancelling it ends the browser process
	// (launched) or the DevTools connection (attached).
	allocCtx    context.Context
	allocCancel context.CancelFunc
	// ctx is the chromedp context of the runner's tab. For a launched
	// browser it is also the context that owns the browser.
	ctx    context.Context
	cancel context.CancelFunc

	cdp      *chromedp.Browser
	targetID target.ID
	// tab is engine/page's handle on the runner's tab, attached once with
	// ctx so that it tracks the tab's network for as long as the browser
	// lives (see Page.automation).
	tab *page.Page
	// pid is the launched browser's process, the leader of its process
	// group; 0 when attached.
	pid         int
	userDataDir string
	downloads   string
	devtoolsURL *url.URL
	bridge      *headerBridge
	// stealth prepares every page and frame with advancedStealth; nil
	// without it.
	stealth *stealthConn
	version string
	// tabs are the tabs besides the runner's own that operations named
	// and the runner attached to (Target).
	tabs tabs
	// dialer makes the runner's own connections (cdpUrl) and, through
	// egress, the launched browser's: both pass the session's egress
	// policy.
	dialer *egress.Dialer
	// egress is the launched browser's forward proxy; nil when attached
	// (that browser's traffic is not the runner's).
	egress *egress.Proxy

	// removeAtClose are the directories the runner made for the browser
	// and removes at close; never one a session named that existed before.
	removeAtClose []string

	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
	// gone is closed once the DevTools connection is gone: the browser
	// crashed or was closed. crash says why, when it crashed.
	gone  chan struct{}
	crash atomic.Pointer[crashError]
}

// crashError says why the browser went away unasked.
type crashError struct{ reason string }

func (e *crashError) Error() string { return e.reason }

// StartBrowser launches the session's browser, or attaches to its cdpUrl,
// and applies the session's settings to the tab the runner drives. ctx
// bounds the start only; Close ends the browser.
func StartBrowser(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Browser, error) {
	s, err := newSettings(cfg)
	if err != nil {
		return nil, fmt.Errorf("session settings: %w", err)
	}
	if log == nil {
		log = slog.Default()
	}
	if cfg.Egress == nil {
		return nil, errors.New("session settings: no egress policy")
	}
	b := &Browser{log: log, settings: s, gone: make(chan struct{}), dialer: &egress.Dialer{Policy: cfg.Egress, Resolver: cfg.Resolver}}
	for _, n := range s.notes {
		log.Warn("session setting not applied", "detail", n)
	}
	// A start that hangs (a cdpUrl that accepts and never answers, a
	// Chromium that never opens its port) must fail, not block the pod.
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if s.attach != nil {
		err = b.attachRemote(startCtx)
	} else {
		err = b.launch(startCtx)
	}
	if err == nil {
		err = b.setup(startCtx)
	}
	if err == nil && b.settings.stealth {
		err = b.startStealth(startCtx)
	}
	if err == nil {
		if b.tab, err = page.Attach(b.ctx, b.pageOptions()...); err != nil {
			err = fmt.Errorf("attaching the automation engine to the tab: %w", err)
		}
	}
	if err == nil {
		err = b.watchTargets(startCtx)
	}
	if err != nil {
		b.closing.Store(true)
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer ccancel()
		_ = b.teardown(cctx)
		return nil, err
	}
	go b.supervise()
	b.log.Info("browser ready", "target", b.targetID, "version", b.version,
		"os", b.settings.profile.OS, "device", b.settings.profile.Device, "locale", b.settings.locale)
	return b, nil
}

// Err returns why the browser crashed, or nil while it runs or after an
// orderly Close.
func (b *Browser) Err() error {
	if c := b.crash.Load(); c != nil {
		return c
	}
	return nil
}

// Done is closed once the browser is gone: crashed or closed.
func (b *Browser) Done() <-chan struct{} { return b.gone }

// PID is the launched browser's process id, 0 when attached.
func (b *Browser) PID() int { return b.pid }

// pageOptions are the engine's options for the browser's tabs. A launched
// browser's Pages get an input lane, a second DevTools connection on
// loopback that makes clicks a frame faster (engine/page, WithInputLane);
// an attached one's do not, so that the runner opens no more connections to
// a remote browser than the one it was given.
func (b *Browser) pageOptions() []page.Option {
	if b.pid == 0 {
		return nil
	}
	return []page.Option{page.WithInputLane(b.devtoolsURL.String())}
}

// DevToolsURL is the browser-level DevTools WebSocket endpoint, as the
// runner reaches it: on loopback for a launched browser.
func (b *Browser) DevToolsURL() *url.URL {
	u := *b.devtoolsURL
	return &u
}

// UserDataDir is the launched browser's profile directory.
func (b *Browser) UserDataDir() string { return b.userDataDir }

// DownloadsDir is where downloads are saved, empty when they are refused.
func (b *Browser) DownloadsDir() string { return b.downloads }

// Version is the browser's version, for example "156.0.8078.79".
func (b *Browser) Version() string { return b.version }

// Close ends the browser: gracefully (Browser.close, so a preserved profile
// is flushed) within ctx, then by killing its process group. It removes the
// temporary profile and downloads, and a userDataDir it made that is not
// preserved; nothing that existed before.
// An attached browser keeps running; only the runner's tab is closed.
func (b *Browser) Close(ctx context.Context) error {
	b.closeOnce.Do(func() {
		b.closing.Store(true)
		b.closeErr = b.teardown(ctx)
		// supervise notices the dropped connection and closes gone.
		select {
		case <-b.gone:
		case <-ctx.Done():
		}
		b.log.Info("browser closed")
	})
	return b.closeErr
}

func (b *Browser) teardown(ctx context.Context) error {
	var errs []error
	// Detached now, the tabs stay open in an attached browser: chromedp
	// would close them with the runner's own.
	b.releaseTabs()
	if b.ctx != nil {
		if b.settings.attach == nil && b.cdp != nil && b.Err() == nil {
			// Cancel asks Chromium to close and waits for the process
			// to exit, within ctx.
			gctx, cancel := context.WithCancel(b.ctx)
			stop := context.AfterFunc(ctx, cancel)
			if err := chromedp.Cancel(gctx); err != nil && !errors.Is(err, context.Canceled) {
				b.log.Warn("closing chromium gracefully failed; killing it", "err", err)
			}
			stop()
			cancel()
		}
		b.cancel()
	}
	if b.allocCancel != nil {
		// Waits for the process to be reaped; exec.CommandContext kills
		// the group (configureCmd) if it has not exited yet.
		b.allocCancel()
	}
	if b.pid != 0 {
		if err := killGroup(b.pid); err != nil {
			errs = append(errs, err)
		}
		// SIGKILL is asynchronous: wait until the helpers are really
		// gone, so that nothing of Chromium outlives Close. This gets a
		// budget of its own: ctx may have run out on the graceful close.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err := waitGroupGone(wctx, b.pid)
		cancel()
		if err != nil {
			errs = append(errs, err)
		}
	}
	if b.stealth != nil {
		b.stealth.close()
	}
	if b.bridge != nil {
		b.bridge.Close()
	}
	if b.egress != nil {
		_ = b.egress.Close()
	}
	for _, dir := range b.removeAtClose {
		if err := removeDir(dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// waitGroupGone waits until no process of the group led by pid runs.
func waitGroupGone(ctx context.Context, pid int) error {
	for groupAlive(pid) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("chromium's process group %d is still alive", pid)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// maxEgressLines bounds the denials one operation reports as progress; a
// page can make thousands of requests.
const maxEgressLines = 20

// WatchEgress reports the connections the egress proxy refuses while an
// operation runs as its progress lines (the runner's log has them too), up
// to maxEgressLines. It returns the function that stops reporting. Nothing
// is reported for an attached browser: its traffic is not the runner's.
func (b *Browser) WatchEgress(progress func(rpc.LogLine)) (stop func()) {
	if b.egress == nil {
		return func() {}
	}
	// The proxy's goroutines must not wait for a slow caller.
	lines := make(chan rpc.LogLine, maxEgressLines)
	var (
		n      atomic.Int64
		mu     sync.Mutex
		closed bool
	)
	unwatch := b.egress.Watch(func(ev egress.Event) {
		if ev.Kind != egress.EventDenied {
			return
		}
		line := rpc.LogLine{Category: "egress", Message: ev.Message, Level: rpc.LogLevelError, Timestamp: time.Now()}
		switch c := n.Add(1); {
		case c < maxEgressLines:
		case c == maxEgressLines:
			line.Message = "further refused connections are in the runner's log only"
		default:
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if closed {
			// A connection that failed as the operation ended.
			return
		}
		select {
		case lines <- line:
		default:
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for line := range lines {
			progress(line)
		}
	}()
	return func() {
		unwatch()
		mu.Lock()
		closed = true
		close(lines)
		mu.Unlock()
		<-done
	}
}
