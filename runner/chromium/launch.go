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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/runner/egress"
)

// defaultFlags are the switches every launched Chromium gets, unless the
// session drops them with ignoreDefaultArgs (by name) or
// ignoreAllDefaultArgs: Puppeteer's long-standing set for automation,
// background work off, no first-run UI, predictable rendering. What the
// runner relies on for safety is not among them: see safetyFlags.
var defaultFlags = []flag{
	{"no-first-run", true},
	{"no-default-browser-check", true},
	{"disable-client-side-phishing-detection", true},
	{"disable-hang-monitor", true},
	{"disable-popup-blocking", true},
	{"disable-prompt-on-repost", true},
	{"disable-ipc-flooding-protection", true},
	{"disable-background-timer-throttling", true},
	{"disable-backgrounding-occluded-windows", true},
	{"disable-renderer-backgrounding", true},
	{"disable-features", "Translate,MediaRouter,OptimizationHints," + memoryDisabledFeatures + "," + latencyDisabledFeatures},
	{"force-color-profile", "srgb"},
	// Memory (docs/performance.md, "Session memory"): the network service
	// runs in the browser process instead of a process of its own, and
	// the HTTP disk cache, in the pod's /tmp, stays small.
	{"enable-features", "NetworkServiceInProcess2"},
	{"disk-cache-size", strconv.Itoa(diskCacheSize)},
}

// memoryDisabledFeatures are features turned off by default to save
// memory: the spare renderer Chromium keeps warm for the next navigation,
// and the back-forward cache, which keeps each page navigated away from
// alive in its renderer (a back navigation loads the page again, as
// Playwright's and Puppeteer's defaults have it).
const memoryDisabledFeatures = "SpareRendererForSitePerProcess,BackForwardCache"

// latencyDisabledFeatures are features turned off by default so that acts
// wait less (docs/performance.md, "Act latency"). After an input event,
// Chrome holds the page's tasks back until it has drawn the next frame (up
// to 16.7 ms at 60 Hz), so that a person sees the input's effect sooner; an
// act, which waits to see what the previous one's click set off
// (docs/engine.md, Settling), would wait for that frame every time.
const latencyDisabledFeatures = "DeferRendererTasksAfterInput"

// diskCacheSize bounds Chromium's HTTP disk cache, in bytes. The cache is
// in the profile, on the pod's /tmp volume (runner.tmpSize, 2Gi by
// default), which Chromium would otherwise size by the free disk space.
const diskCacheSize = 64 << 20

// safetyFlags are the switches the runner relies on to keep the browser to
// its session. First they pin every connection of the browser (documents,
// subresources, redirects, WebSockets, workers) to the egress proxy at
// proxyURL: Chromium bypasses a proxy for loopback unless told
// "<-loopback>", and QUIC and WebRTC's UDP cannot go through an HTTP proxy
// at all, so they are off (WebRTC keeps TCP through the proxy; both names of
// its policy switch are set, as Chrome and the content layer each read
// one). Then nothing that phones home or fetches code (so that nothing
// leaves the pod but what the session's pages ask for, and nothing waits on
// a connection a closed network never completes), no extensions, no host
// keychain. They come after the session's args, so that they win over any
// (the last assignment of a switch wins), and no ignoreDefaultArgs removes
// them.
func safetyFlags(proxyURL string) []flag {
	return []flag{
		{"proxy-server", proxyURL},
		{"proxy-bypass-list", "<-loopback>"},
		{"disable-quic", true},
		{"webrtc-ip-handling-policy", "disable_non_proxied_udp"},
		{"force-webrtc-ip-handling-policy", "disable_non_proxied_udp"},
		// Google's sign-in and the component updater call home at start
		// whatever the switches above say; their servers become a
		// loopback port where nothing listens, and they stay quiet.
		{"gaia-url", noServiceURL},
		{"component-updater", "url-source=" + noServiceURL},
		{"no-pings", true},
		{"disable-background-networking", true},
		{"disable-component-update", true},
		{"disable-domain-reliability", true},
		{"disable-sync", true},
		{"safebrowsing-disable-auto-update", true},
		{"metrics-recording-only", true},
		{"disable-breakpad", true},
		{"disable-extensions", true},
		{"disable-default-apps", true},
		{"password-store", "basic"},
		{"use-mock-keychain", true},
	}
}

// noServiceURL stands for the Google services a browser of the runner must
// not call: the pod's own discard port.
const noServiceURL = "http://127.0.0.1:9"

// safetyDisabledFeatures are Chromium features that call home and that no
// switch of their own turns off: the network time service fetches the time
// from Google at start. They are added to whatever --disable-features the
// defaults and the session's args end up with (withDisabledFeatures).
var safetyDisabledFeatures = []string{"NetworkTimeServiceQuerying"}

// withDisabledFeatures is the --disable-features switch of flags (the last
// one wins, as in Chromium) with names added.
func withDisabledFeatures(flags []flag, names []string) flag {
	var all []string
	for _, f := range flags {
		if v, ok := f.value.(string); ok && f.name == "disable-features" {
			all = strings.Split(v, ",")
		}
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			all = append(all, n)
		}
	}
	return flag{"disable-features", strings.Join(all, ",")}
}

// isSafetyFlag reports whether name is one of safetyFlags.
func isSafetyFlag(name string) bool {
	for _, f := range safetyFlags("") {
		if f.name == name {
			return true
		}
	}
	return false
}

// runnerEnvPrefix prefixes every variable the manager sets for the runner
// (see runner/rpc).
const runnerEnvPrefix = "BROWSERFLEET_"

// launchFlags are the switches of a launched Chromium: the defaults, those
// that follow from the session's settings, then the session's own args,
// which win over both, and last the safety switches with the egress proxy
// at proxyURL, which nothing overrides.
func (s *settings) launchFlags(proxyURL string) []flag {
	ignored := map[string]bool{}
	for _, a := range s.ignoreDefaultArgs {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		ignored[name] = true
	}
	var flags []flag
	addDefault := func(f flag) {
		if !s.ignoreAllDefaults && !ignored[f.name] {
			flags = append(flags, f)
		}
	}
	for _, f := range defaultFlags {
		addDefault(f)
	}
	if s.headless {
		addDefault(flag{"headless", true})
		addDefault(flag{"hide-scrollbars", true})
		addDefault(flag{"mute-audio", true})
	} else if s.devtools {
		flags = append(flags, flag{"auto-open-devtools-for-tabs", true})
	}
	if s.sandbox {
		// chromedp adds --no-sandbox for root unless the switch is
		// present; false keeps it off the command line.
		flags = append(flags, flag{"no-sandbox", false})
	} else {
		// Chromium's sandbox needs user namespaces or a setuid helper,
		// which a hardened pod (no capabilities, RuntimeDefault seccomp)
		// does not offer; the pod itself is the sandbox.
		addDefault(flag{"no-sandbox", true})
	}
	if s.locale != "" {
		flags = append(flags, flag{"lang", s.locale}, flag{"accept-lang", acceptLanguage(s.locale)})
	}
	vp := s.profile.Viewport
	flags = append(flags, flag{"window-size", fmt.Sprintf("%d,%d", vp.Width, vp.Height)})
	if s.ignoreHTTPSErrors {
		flags = append(flags, flag{"ignore-certificate-errors", true})
	}
	if s.port != 0 {
		flags = append(flags, flag{"remote-debugging-port", strconv.Itoa(int(s.port))})
	}
	flags = append(flags, s.userArgs...)
	if s.siteIsolation {
		// Chromium isolates sites by default, its headless-only build
		// only when told so. Without the switch (the operator's
		// --site-isolation=false, which no session can ask for) the
		// headless-only build keeps cross-site iframes in their page's
		// renderer; Chromium 156 isolates them whatever it is told.
		flags = append(flags, flag{"site-per-process", true})
	}
	if !s.webgl {
		// The operator's --webgl=false: without a GPU, Chromium runs
		// WebGL on SwiftShader in its GPU process, which loads and
		// initialises it at start whether a page uses WebGL or not.
		flags = append(flags, flag{"disable-gpu", true}, flag{"disable-software-rasterizer", true})
	}
	flags = append(flags, s.stealthFlags(flags)...)
	flags = append(flags, withDisabledFeatures(flags, safetyDisabledFeatures))
	return append(flags, safetyFlags(proxyURL)...)
}

// acceptLanguage is the Accept-Language a locale sends: "de-DE" gives
// "de-DE,de", as a browser configured for German would.
func acceptLanguage(locale string) string {
	if lang, _, ok := strings.Cut(locale, "-"); ok {
		return locale + "," + lang
	}
	return locale
}

// launch starts Chromium through chromedp's ExecAllocator and attaches to
// its first tab.
func (b *Browser) launch(ctx context.Context) error {
	s := b.settings
	dataDir := s.userDataDir
	if dataDir == "" {
		dir, err := os.MkdirTemp("", "browserfleet-profile-")
		if err != nil {
			return fmt.Errorf("creating a profile directory: %w", err)
		}
		dataDir = dir
		b.removeAtClose = append(b.removeAtClose, dir)
	} else {
		made, err := makeDir(dataDir)
		if err != nil {
			return fmt.Errorf("creating the profile of userDataDir: %w", err)
		}
		// A profile that existed before is the session's to keep.
		if made && !s.preserveUserDataDir {
			b.removeAtClose = append(b.removeAtClose, dataDir)
		}
	}
	b.userDataDir = dataDir

	// The browser's every connection goes through the egress proxy.
	proxy, err := egress.StartProxy(egress.ProxyOptions{
		Dialer: b.dialer,
		Route:  s.egressRoute(),
		Logger: b.log.With("source", "egress"),
	})
	if err != nil {
		return err
	}
	b.egress = proxy

	// A profile that was used before holds the previous browser's port
	// file; remove it so that we do not read a stale port.
	_ = os.Remove(filepath.Join(dataDir, "DevToolsActivePort"))

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(s.execPath),
		chromedp.UserDataDir(dataDir),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			configureCmd(cmd)
			cmd.Env = blankRunnerEnv(os.Environ())
		}),
		chromedp.CombinedOutput(newLineLogger(b.log.With("source", "chromium"))),
		// A cold start on a busy two-core node takes a few seconds;
		// chromedp's default of 20s leaves too little margin.
		chromedp.WSURLReadTimeout(60 * time.Second),
	}
	for _, f := range s.launchFlags(proxy.URL()) {
		opts = append(opts, chromedp.Flag(f.name, f.value))
	}

	// The allocator outlives ctx, which bounds the start only: a start cut
	// short kills the half-started browser, while a running one ends
	// through Close, gracefully, so that its profile is written.
	b.allocCtx, b.allocCancel = chromedp.NewExecAllocator(context.Background(), opts...)
	b.ctx, b.cancel = chromedp.NewContext(b.allocCtx, b.chromedpLogging()...)
	stop := context.AfterFunc(ctx, b.cancel)
	defer stop()
	// The first Run allocates the browser and attaches to its first tab.
	if err := chromedp.Run(b.ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("starting chromium: %w", context.Cause(ctx))
		}
		return fmt.Errorf("starting chromium: %w", err)
	}
	c := chromedp.FromContext(b.ctx)
	b.cdp = c.Browser
	b.targetID = c.Target.TargetID
	if p := c.Browser.Process(); p != nil {
		b.pid = p.Pid
	}
	port, path, err := readDevToolsActivePort(ctx, dataDir)
	if err != nil {
		return err
	}
	b.devtoolsURL = &url.URL{Scheme: "ws", Host: "127.0.0.1:" + port, Path: path}
	if ap, err := netip.ParseAddrPort(b.devtoolsURL.Host); err == nil {
		// Chromium's DevTools takes no token: no page may reach it, even
		// where the operator allows loopback.
		b.dialer.Policy.DenyOwnAddrPort(ap)
	}
	b.log.Info("chromium started", "pid", b.pid, "executable", s.execPath, "headless", s.headless)
	return nil
}

// blankRunnerEnv returns an empty assignment of each of the runner's own
// variables (the session's spec, where its secret files are). chromedp
// appends these to the runner's environment and the last assignment wins,
// so Chromium and every page it runs start without them. The variables
// hold no secret (the secrets are files, runner/rpc); this keeps what a
// renderer can read from /proc/<pid>/environ to the bare minimum.
func blankRunnerEnv(environ []string) []string {
	var blank []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, runnerEnvPrefix) {
			blank = append(blank, k+"=")
		}
	}
	return blank
}

// readDevToolsActivePort reads the DevTools port and browser endpoint path
// Chromium writes into its profile once it listens. chromedp reads the same
// from Chromium's output but does not expose it.
func readDevToolsActivePort(ctx context.Context, dataDir string) (port, path string, err error) {
	file := filepath.Join(dataDir, "DevToolsActivePort")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		b, err := os.ReadFile(file)
		if err == nil {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) == 2 && lines[0] != "" && strings.HasPrefix(lines[1], "/devtools/browser/") {
				return strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1]), nil
			}
		}
		select {
		case <-ctx.Done():
			return "", "", fmt.Errorf("chromium did not write %s: %w", file, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// chromedpLogging routes chromedp's own messages into the runner's log.
// Its debug output (every CDP message, proxy credentials included) is never
// enabled.
func (b *Browser) chromedpLogging() []chromedp.ContextOption {
	l := b.log.With("source", "chromedp")
	return []chromedp.ContextOption{
		chromedp.WithLogf(func(format string, args ...any) { l.Debug(fmt.Sprintf(format, args...)) }),
		chromedp.WithErrorf(func(format string, args ...any) { l.Debug(fmt.Sprintf(format, args...)) }),
	}
}

// lineLogger logs each line written to it at debug level: Chromium's output
// is noisy (D-Bus, GPU probing) and only occasionally useful, for example
// when it crashes.
type lineLogger struct {
	log *slog.Logger
	mu  sync.Mutex
	buf bytes.Buffer
}

func newLineLogger(l *slog.Logger) io.Writer { return &lineLogger{log: l} }

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadBytes('\n')
		if err != nil {
			// Keep the partial line for the next write, up to a bound.
			if len(line) < 64<<10 {
				w.buf.Write(line)
			}
			return len(p), nil
		}
		if s := strings.TrimSpace(string(line)); s != "" {
			w.log.Debug("chromium output", "line", s)
		}
	}
}

// makeDir makes dir, a directory a session named under the data
// directory, with its parents. It reports whether it made dir itself: the
// runner removes only directories it made. An existing dir is used as it is,
// unless it is not a directory (a symbolic link included).
func makeDir(dir string) (made bool, err error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return false, err
	}
	err = os.Mkdir(dir, 0o700)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s exists and is not a directory", dir)
	}
	return false, nil
}

// removeDir removes a directory the runner made itself (MkdirTemp, or
// makeDir of a name that did not exist): Browser.removeAtClose holds no
// other. A path a session named, or one that existed before, is never
// removed.
func removeDir(dir string) error {
	return os.RemoveAll(dir)
}
