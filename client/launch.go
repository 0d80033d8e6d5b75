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

package client

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Launch defaults.
const (
	// DefaultViewportWidth and DefaultViewportHeight are a launched
	// browser's page size when LocalBrowserLaunchOptions.Viewport is nil.
	DefaultViewportWidth  = 1288
	DefaultViewportHeight = 711
	// stopGrace is how long a launched browser has to exit on SIGTERM
	// (writing its profile) before it is killed.
	stopGrace = 5 * time.Second
	// outputTail is how many of Chromium's last output lines a failed
	// start reports.
	outputTail = 20
)

// executableNames are the browsers LaunchLocalBrowser looks for on PATH.
var executableNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}

// defaultArgs are the switches of a launched browser that
// IgnoreDefaultArgs (by name) and IgnoreAllDefaultArgs leave out: those
// chrome-launcher and Puppeteer give an automated browser (background work
// and first-run UI off, predictable rendering).
var defaultArgs = []string{
	"--disable-features=Translate,OptimizationHints,MediaRouter",
	"--disable-component-extensions-with-background-pages",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-client-side-phishing-detection",
	"--disable-sync",
	"--metrics-recording-only",
	"--disable-default-apps",
	"--no-default-browser-check",
	"--no-first-run",
	"--disable-backgrounding-occluded-windows",
	"--disable-renderer-backgrounding",
	"--disable-background-timer-throttling",
	"--disable-ipc-flooding-protection",
	"--disable-hang-monitor",
	"--disable-prompt-on-repost",
	"--disable-popup-blocking",
	"--disable-domain-reliability",
	"--password-store=basic",
	"--use-mock-keychain",
	"--force-color-profile=srgb",
}

// headlessArgs are the default switches of a headless browser.
var headlessArgs = []string{"--headless", "--hide-scrollbars", "--mute-audio"}

// argName is a switch's name without dashes and value.
func argName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}

// process is a launched browser: the process (the leader of its own
// process group) and what was made for it.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	// profile is removed at stop when removeProfile.
	profile       string
	removeProfile bool
	downloads     string
	proxy         *authProxy

	stopOnce sync.Once
	stopErr  error
}

// launchOptions are LocalBrowserLaunchOptions checked and defaulted.
type launchOptions struct {
	LocalBrowserLaunchOptions
	headless bool
	viewport Viewport
}

func checkLaunchOptions(o LocalBrowserLaunchOptions) (*launchOptions, error) {
	lo := &launchOptions{LocalBrowserLaunchOptions: o, headless: o.Headless == nil || *o.Headless,
		viewport: Viewport{Width: DefaultViewportWidth, Height: DefaultViewportHeight}}
	const f = "LocalBrowserLaunchOptions."
	if o.Viewport != nil {
		if o.Viewport.Width <= 0 || o.Viewport.Height <= 0 {
			return nil, invalid(f+"Viewport", "width and height must be positive, got %dx%d", o.Viewport.Width, o.Viewport.Height)
		}
		lo.viewport = *o.Viewport
	}
	if o.DeviceScaleFactor < 0 || math.IsNaN(o.DeviceScaleFactor) || math.IsInf(o.DeviceScaleFactor, 0) {
		return nil, invalid(f+"DeviceScaleFactor", "must be positive and finite, or zero for the display's")
	}
	if o.Port < 0 || o.Port > 65535 {
		return nil, invalid(f+"Port", "must be from 1 to 65535, or zero for a free one; got %d", o.Port)
	}
	if o.ConnectTimeout < 0 {
		return nil, invalid(f+"ConnectTimeout", "must not be negative")
	}
	if o.Proxy != nil && strings.TrimSpace(o.Proxy.Server) == "" {
		return nil, invalid(f+"Proxy.Server", "is required")
	}
	if o.Locale != "" && strings.ContainsAny(o.Locale, " ,;=") {
		return nil, invalid(f+"Locale", "%q is not a language tag such as de-DE", o.Locale)
	}
	return lo, nil
}

// findExecutable is ExecutablePath, or the first browser of
// executableNames on PATH.
func findExecutable(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	for _, name := range executableNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium on PATH (looked for %s); set LocalBrowserLaunchOptions.ExecutablePath", strings.Join(executableNames, ", "))
}

// args is the browser's command line after the executable.
func (lo *launchOptions) args(profile, proxyServer string) []string {
	ignored := map[string]bool{}
	for _, a := range lo.IgnoreDefaultArgs {
		ignored[argName(a)] = true
	}
	var args []string
	addDefault := func(list ...string) {
		for _, a := range list {
			if !lo.IgnoreAllDefaultArgs && !ignored[argName(a)] {
				args = append(args, a)
			}
		}
	}
	addDefault(defaultArgs...)
	if lo.headless {
		addDefault(headlessArgs...)
	} else if lo.Devtools {
		args = append(args, "--auto-open-devtools-for-tabs")
	}
	if !lo.ChromiumSandbox {
		// Chromium's sandbox needs user namespaces or a setuid helper,
		// which containers and CI machines often lack.
		addDefault("--no-sandbox")
	}
	args = append(args,
		"--remote-debugging-port="+strconv.Itoa(lo.Port),
		"--user-data-dir="+profile,
		fmt.Sprintf("--window-size=%d,%d", lo.viewport.Width, lo.viewport.Height))
	if lo.DeviceScaleFactor > 0 {
		args = append(args, "--force-device-scale-factor="+strconv.FormatFloat(lo.DeviceScaleFactor, 'f', -1, 64))
	}
	if lo.Locale != "" {
		args = append(args, "--lang="+lo.Locale, "--accept-lang="+acceptLanguage(lo.Locale))
	}
	if lo.HasTouch {
		args = append(args, "--touch-events=enabled")
	}
	if proxyServer != "" {
		args = append(args, "--proxy-server="+proxyServer)
		if lo.Proxy.Bypass != "" {
			args = append(args, "--proxy-bypass-list="+lo.Proxy.Bypass)
		}
	}
	if lo.IgnoreHTTPSErrors {
		args = append(args, "--ignore-certificate-errors")
	}
	// The caller's switches come last, so that they win: Chromium takes
	// the last of a repeated switch.
	args = append(args, lo.Args...)
	if !slices.ContainsFunc(lo.Args, func(a string) bool { return !strings.HasPrefix(a, "-") }) {
		// Without a URL Chromium opens its new-tab page, which fetches.
		args = append(args, "about:blank")
	}
	return args
}

// acceptLanguage is the Accept-Language a locale sends: "de-DE" gives
// "de-DE,de", as a browser set up for German would.
func acceptLanguage(locale string) string {
	if lang, _, ok := strings.Cut(locale, "-"); ok {
		return locale + "," + lang
	}
	return locale
}

// startBrowser starts the browser and returns it with its DevTools
// WebSocket URL, which it reads off Chromium's output. ctx bounds the
// start.
func startBrowser(ctx context.Context, lo *launchOptions) (_ *process, wsURL string, err error) {
	exe, err := findExecutable(lo.ExecutablePath)
	if err != nil {
		return nil, "", err
	}
	p := &process{done: make(chan struct{})}
	defer func() {
		if err != nil {
			_ = p.stop(context.WithoutCancel(ctx))
		}
	}()
	p.profile = lo.UserDataDir
	if p.profile == "" {
		if p.profile, err = os.MkdirTemp("", "browserfleet-client-profile-"); err != nil {
			return nil, "", fmt.Errorf("creating a profile directory: %w", err)
		}
		p.removeProfile = !lo.PreserveUserDataDir
	} else if err := os.MkdirAll(p.profile, 0o700); err != nil {
		return nil, "", fmt.Errorf("creating the profile directory %s: %w", p.profile, err)
	}
	if lo.AcceptDownloads {
		p.downloads = lo.DownloadsPath
		if p.downloads == "" {
			p.downloads = filepath.Join(p.profile, "Downloads")
		}
		if err := os.MkdirAll(p.downloads, 0o700); err != nil {
			return nil, "", fmt.Errorf("creating the downloads directory %s: %w", p.downloads, err)
		}
	}
	var proxyServer string
	if lo.Proxy != nil {
		proxyServer = lo.Proxy.Server
		if lo.Proxy.Username != "" || lo.Proxy.Password != "" {
			// Chromium takes no proxy credentials on its command line; a
			// loopback proxy adds them.
			if p.proxy, err = startAuthProxy(lo.Proxy); err != nil {
				return nil, "", err
			}
			proxyServer = p.proxy.url()
		}
	}

	p.cmd = exec.Command(exe, lo.args(p.profile, proxyServer)...) //nolint:noctx // the browser outlives ctx, which bounds its start only; stop ends it
	configureProcess(p.cmd)
	// A pipe of our own rather than StderrPipe: Wait would close that
	// one under the reader, and the output is read to its end.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, "", fmt.Errorf("starting %s: %w", exe, err)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	err = p.cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return nil, "", fmt.Errorf("starting %s: %w", exe, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()

	found := make(chan string, 1)
	scanned := make(chan struct{})
	var tail outputLines
	go func() {
		defer close(scanned)
		defer r.Close()
		scanOutput(r, found, &tail)
	}()
	select {
	case wsURL = <-found:
		return p, wsURL, nil
	case <-p.done:
		// Its last words, unless a child process still holds the pipe.
		select {
		case <-scanned:
		case <-time.After(time.Second):
		}
		return nil, "", fmt.Errorf("%s exited before it listened for DevTools: %s", exe, tail.String())
	case <-ctx.Done():
		return nil, "", fmt.Errorf("waiting for %s to listen for DevTools: %w", exe, context.Cause(ctx))
	}
}

// scanOutput reads Chromium's output: it sends the DevTools URL to found
// when Chromium prints it, keeps the last lines in tail, and reads on to
// the end so that Chromium never blocks on a full pipe.
func scanOutput(r io.Reader, found chan<- string, tail *outputLines) {
	const prefix = "DevTools listening on "
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if !sent && strings.HasPrefix(line, prefix) {
			found <- strings.TrimPrefix(line, prefix)
			sent = true
			continue
		}
		tail.add(line)
	}
}

// outputLines keeps the last lines of Chromium's output.
type outputLines struct {
	mu    sync.Mutex
	lines []string
}

func (o *outputLines) add(line string) {
	if line == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines = append(o.lines, line)
	if len(o.lines) > outputTail {
		o.lines = o.lines[len(o.lines)-outputTail:]
	}
}

func (o *outputLines) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.lines) == 0 {
		return "no output"
	}
	return strings.Join(o.lines, "\n")
}

// stop ends the browser: SIGTERM, on which Chromium shuts down and writes
// its profile, then SIGKILL to what is left of its process group after
// stopGrace or when ctx ends; then it removes what was made for it.
func (p *process) stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		if p.cmd != nil && p.cmd.Process != nil {
			terminate(p.cmd.Process)
			grace, cancel := context.WithTimeout(ctx, stopGrace)
			select {
			case <-p.done:
			case <-grace.Done():
			}
			cancel()
			// Renderers and helpers that outlive the browser go too.
			killGroup(p.cmd.Process)
			<-p.done
		}
		p.stopErr = p.cleanUp()
	})
	return p.stopErr
}

// cleanUp removes the temporary profile and stops the credentials proxy.
func (p *process) cleanUp() error {
	if p.proxy != nil {
		p.proxy.close()
	}
	if p.removeProfile && p.profile != "" {
		if err := os.RemoveAll(p.profile); err != nil {
			return fmt.Errorf("removing the temporary profile: %w", err)
		}
	}
	return nil
}
