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
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	jsonv2 "github.com/go-json-experiment/json"

	"github.com/browserfleet/browserfleet/engine/cdpconn"
)

// advancedStealth removes the tells that give a headless, automated
// Chromium away, consistently with the session's device profile:
//
//   - navigator.webdriver: false, natively (the AutomationControlled Blink
//     feature is off: stealthFlags);
//   - the user agent, navigator.userAgentData and the User-Agent and
//     Sec-CH-UA headers: the profile's (userAgentOverride), in every frame
//     and tab, not only the runner's own;
//   - navigator.languages and Accept-Language: the locale's, en-US without
//     one (the headless shell sends no Accept-Language at all);
//   - navigator.plugins, mimeTypes and pdfViewerEnabled: a desktop
//     Chrome's PDF viewer entries, where the browser has none, and none
//     for a phone or tablet;
//   - WebGL's unmasked vendor and renderer: a GPU of the profile's OS, not
//     SwiftShader;
//   - Notification.permission consistent with the Permissions API;
//   - window.chrome with loadTimes, csi and app, where the browser has
//     none;
//   - a worker's navigator.platform and languages: the profile's.
//
// The JavaScript patches are stealth.js. A DevTools connection of the
// runner's own (stealthConn) adds them, and the profile's user agent, to
// every page, out-of-process frame and worker before it runs: Chrome holds
// each new target until the runner lets it go.

//go:embed stealth.js
var stealthScript string

// stealthConfig is what stealth.js is told about the session.
type stealthConfig struct {
	WebGLVendor   string `json:"webglVendor,omitempty"`
	WebGLRenderer string `json:"webglRenderer,omitempty"`
	Plugins       bool   `json:"plugins"`
	Notifications bool   `json:"notifications"`
	Chrome        bool   `json:"chrome"`
	// Platform and Languages are navigator's in workers.
	Platform  string   `json:"platform"`
	Languages []string `json:"languages"`
}

// webglGPU is the unmasked WebGL vendor and renderer of a common GPU on the
// profile's OS, as Chrome (through ANGLE) reports it there.
func (p deviceProfile) webglGPU() (vendor, renderer string) {
	switch p.OS {
	case osWindows:
		return "Google Inc. (Intel)", "ANGLE (Intel, Intel(R) UHD Graphics 630 (0x00003E92) Direct3D11 vs_5_0 ps_5_0, D3D11)"
	case osMacOS:
		// The profile's client hints say arm: an Apple silicon Mac.
		return "Google Inc. (Apple)", "ANGLE (Apple, ANGLE Metal Renderer: Apple M1, Unspecified Version)"
	case osAndroid:
		return "Google Inc. (Qualcomm)", "ANGLE (Qualcomm, Adreno (TM) 740, OpenGL ES 3.2)"
	case osIOS:
		return "Apple Inc.", "Apple GPU"
	default:
		return "Google Inc. (Intel)", "ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)"
	}
}

// stealthSource is stealth.js with the session's values.
func (s *settings) stealthSource() (string, error) {
	vendor, renderer := s.profile.webglGPU()
	cfg := stealthConfig{
		WebGLVendor:   vendor,
		WebGLRenderer: renderer,
		// A desktop Chrome has the PDF viewer's plugins, a phone's or
		// tablet's none; Chrome on iOS (WebKit) has no window.chrome.
		Plugins:       s.profile.Device == deviceDesktop,
		Notifications: s.headlessShell,
		Chrome:        s.profile.OS != osIOS,
		Platform:      s.profile.platform(),
		Languages:     strings.Split(s.acceptLanguage(), ","),
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("advancedStealth: %w", err)
	}
	const call = "})(STEALTH_CONFIG);"
	if !strings.Contains(stealthScript, call) {
		return "", errors.New("advancedStealth: stealth.js does not end in its call")
	}
	return strings.Replace(stealthScript, call, "})("+string(b)+");", 1), nil
}

// stealthFlags are the launch switches of advancedStealth, merged into the
// session's own --disable-blink-features.
func (s *settings) stealthFlags(flags []flag) []flag {
	if !s.stealth {
		return nil
	}
	return []flag{withListSwitch(flags, "disable-blink-features", "AutomationControlled")}
}

// withListSwitch is the comma-separated list switch name of flags (the
// last one wins, as in Chromium) with value added.
func withListSwitch(flags []flag, name, value string) flag {
	var all []string
	for _, f := range flags {
		if v, ok := f.value.(string); ok && f.name == name {
			all = strings.Split(v, ",")
		}
	}
	for _, v := range all {
		if v == value {
			return flag{name, strings.Join(all, ",")}
		}
	}
	return flag{name, strings.Join(append(all, value), ",")}
}

// acceptLanguage is the Accept-Language of the session's tabs, empty to
// leave Chromium's. advancedStealth always sets one: the headless shell
// sends none and says ["en-US"] in navigator.languages, a desktop Chrome
// "en-US,en".
func (s *settings) acceptLanguage() string {
	switch {
	case s.locale != "":
		return acceptLanguage(s.locale)
	case s.stealth:
		return acceptLanguage("en-US")
	}
	return ""
}

// startStealth prepares the launched browser's pages and frames for
// advancedStealth, starting with the runner's tab.
func (b *Browser) startStealth(ctx context.Context) error {
	script, err := b.settings.stealthSource()
	if err != nil {
		return err
	}
	b.stealth, err = dialStealth(ctx, b.devtoolsURL.String(), b.targetID, script, b.userAgentOverride(), b.log)
	return err
}

// stealthTimeout bounds the preparation of one target, and the start of
// the stealth connection.
const stealthTimeout = 10 * time.Second

// stealthConn is the DevTools connection that prepares every page,
// out-of-process frame and worker of a session with advancedStealth. It sets Chrome
// to attach it to each new target and hold the target until it is told to
// go on (Target.setAutoAttach with waitForDebuggerOnStart, on the browser
// for tabs and on each tab and frame for their out-of-process frames), so
// that the patches are in before the target's first script runs. It is a
// connection of its own because chromedp drops the messages of sessions it
// did not open itself.
type stealthConn struct {
	conn   *cdpconn.Conn
	log    *slog.Logger
	script string
	ua     *emulation.SetUserAgentOverrideParams

	// tab is the runner's tab; tabReady is closed once it is prepared,
	// with tabErr set when that failed.
	tab      target.ID
	tabReady chan struct{}
	tabOnce  sync.Once
	tabErr   error
}

// dialStealth opens the stealth connection to the browser at endpoint and
// waits until the runner's tab, tab, is prepared.
func dialStealth(ctx context.Context, endpoint string, tab target.ID, script string, ua *emulation.SetUserAgentOverrideParams, log *slog.Logger) (*stealthConn, error) {
	ctx, cancel := context.WithTimeout(ctx, stealthTimeout)
	defer cancel()
	sc := &stealthConn{log: log, script: script, ua: ua, tab: tab, tabReady: make(chan struct{})}
	conn, err := cdpconn.Dial(ctx, endpoint, sc.onEvent)
	if err != nil {
		return nil, fmt.Errorf("advancedStealth: connecting to the browser: %w", err)
	}
	sc.conn = conn
	// The browser's existing tabs are attached too (not held: they run
	// already), the runner's among them.
	if err := conn.Call(ctx, "", target.CommandSetAutoAttach, target.SetAutoAttach(true, true).WithFlatten(true), nil); err != nil {
		sc.close()
		return nil, fmt.Errorf("advancedStealth: %w", err)
	}
	select {
	case <-sc.tabReady:
		if sc.tabErr != nil {
			// The session asked for it: a start without it would
			// accept the setting in silence.
			sc.close()
			return nil, fmt.Errorf("advancedStealth: preparing the runner's tab: %w", sc.tabErr)
		}
		return sc, nil
	case <-ctx.Done():
		sc.close()
		return nil, fmt.Errorf("advancedStealth: preparing the runner's tab: %w", ctx.Err())
	}
}

// close ends the connection; Chrome detaches its sessions with it.
func (sc *stealthConn) close() { sc.conn.Close() }

// onEvent prepares each target Chrome attaches. It runs on the
// connection's reading goroutine, which the preparation's commands wait
// on: it hands the target to a goroutine of its own.
func (sc *stealthConn) onEvent(c *cdpconn.Conn, msg *cdproto.Message) {
	if msg.Method != cdproto.EventTargetAttachedToTarget {
		return
	}
	var ev target.EventAttachedToTarget
	if err := jsonv2.Unmarshal(msg.Params, &ev, chromedp.DefaultUnmarshalOptions); err != nil || ev.TargetInfo == nil {
		sc.log.Debug("advancedStealth: an attach event that does not decode", "err", err)
		return
	}
	go sc.prepare(c, ev.SessionID, ev.TargetInfo)
}

// prepare adds the patches and the profile's user agent to a page or
// out-of-process frame, asks Chrome to hold its own out-of-process frames
// and workers for it in turn, and lets the target run. Any other target
// (a worker) is only let run. A target is always let run, prepared or
// not: a failure is logged, never a tab held forever.
func (sc *stealthConn) prepare(c *cdpconn.Conn, sid target.SessionID, info *target.Info) {
	ctx, cancel := context.WithTimeout(context.Background(), stealthTimeout)
	defer cancel()
	var failed error
	if info.Type == "page" || info.Type == "iframe" {
		steps := []struct {
			method string
			params any
		}{
			// Chrome runs a session's scripts only while its Page
			// domain is on.
			{cdppage.CommandEnable, cdppage.Enable()},
			{cdppage.CommandAddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocument(sc.script)},
			{emulation.CommandSetUserAgentOverride, sc.ua},
			{target.CommandSetAutoAttach, target.SetAutoAttach(true, true).WithFlatten(true)},
		}
		for _, st := range steps {
			if err := c.Call(ctx, sid, st.method, st.params, nil); err != nil {
				sc.log.Warn("advancedStealth: a target was not prepared", "target", info.TargetID, "type", info.Type, "err", err)
				failed = err
				break
			}
		}
	}
	if strings.HasSuffix(info.Type, "worker") {
		// A worker waits before its first script: the patches go in
		// first.
		if err := c.Call(ctx, sid, runtime.CommandEvaluate, runtime.Evaluate(sc.script), nil); err != nil {
			sc.log.Warn("advancedStealth: a worker was not prepared", "target", info.TargetID, "type", info.Type, "err", err)
		}
	}
	if err := c.Call(ctx, sid, runtime.CommandRunIfWaitingForDebugger, runtime.RunIfWaitingForDebugger(), nil); err != nil {
		sc.log.Debug("advancedStealth: letting a target run", "target", info.TargetID, "err", err)
	}
	if info.TargetID == sc.tab {
		sc.tabOnce.Do(func() {
			sc.tabErr = failed
			close(sc.tabReady)
		})
	}
}
