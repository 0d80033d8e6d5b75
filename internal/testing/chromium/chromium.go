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

// Package chromium launches the headless Chromium that browser tests drive:
// Debian's, with the flags that keep it quick on a machine whose network is
// closed, in a profile of its own that goes with it.
package chromium

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/browserfleet/browserfleet/runner/config"

	"github.com/chromedp/chromedp"
)

// Start launches a headless Chromium with a fresh profile and returns a
// chromedp browser context; extra options are appended to the defaults.
// stop ends the browser and removes its profile.
func Start(extra ...chromedp.ExecAllocatorOption) (ctx context.Context, stop context.CancelFunc, err error) {
	b, err := Launch(extra...)
	if err != nil {
		return nil, nil, err
	}
	return b.Ctx, b.Stop, nil
}

// Browser is a Chromium that Launch started.
type Browser struct {
	// Ctx is the chromedp browser context.
	Ctx context.Context
	// Endpoint is the browser's DevTools WebSocket endpoint (ws://...).
	Endpoint string
	// Stop ends the browser and removes its profile.
	Stop context.CancelFunc
}

// Launch is Start, and tells the browser's DevTools endpoint too.
func Launch(extra ...chromedp.ExecAllocatorOption) (*Browser, error) {
	ctx, stop, dir, err := start(extra)
	if err != nil {
		return nil, err
	}
	// Chromium writes its port and the endpoint's path there once it
	// listens, which it has done by the time chromedp has connected.
	port, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
	if err != nil {
		stop()
		return nil, fmt.Errorf("reading the DevTools endpoint: %w", err)
	}
	lines := strings.Fields(string(port))
	if len(lines) != 2 {
		stop()
		return nil, fmt.Errorf("reading the DevTools endpoint: unexpected DevToolsActivePort %q", port)
	}
	return &Browser{Ctx: ctx, Endpoint: "ws://127.0.0.1:" + lines[0] + lines[1], Stop: stop}, nil
}

func start(extra []chromedp.ExecAllocatorOption) (ctx context.Context, stop context.CancelFunc, dir string, err error) {
	path, err := config.FindChromium()
	if err != nil {
		return nil, nil, "", err
	}
	dir, err = os.MkdirTemp("", "chromium-test-profile-")
	if err != nil {
		return nil, nil, "", fmt.Errorf("creating a profile directory: %w", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// Without these, Chromium's background connections are refused
		// by the closed network, many at a time.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 800),
	}
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	stop = func() {
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(dir)
	}
	if err := chromedp.Run(bctx); err != nil {
		stop()
		return nil, nil, "", fmt.Errorf("starting %s: %w", path, err)
	}
	return bctx, stop, dir, nil
}

// FrameID returns the DevTools id of the frame whose URL ends in path, in
// the tab of the chromedp context ctx: from Page.getFrameTree for the tab's
// own frames, else from the iframe targets for out-of-process ones (whose
// frame id is their target id).
func FrameID(ctx context.Context, path string) (string, error) {
	var id string
	var walk func(ft json.RawMessage)
	walk = func(raw json.RawMessage) {
		var ft struct {
			Frame struct {
				ID  string `json:"id"`
				URL string `json:"url"`
			} `json:"frame"`
			ChildFrames []json.RawMessage `json:"childFrames"`
		}
		if json.Unmarshal(raw, &ft) != nil {
			return
		}
		if strings.HasSuffix(ft.Frame.URL, path) {
			id = ft.Frame.ID
		}
		for _, c := range ft.ChildFrames {
			walk(c)
		}
	}
	err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var r struct {
			FrameTree json.RawMessage `json:"frameTree"`
		}
		if err := chromedp.FromContext(ctx).Target.Execute(ctx, "Page.getFrameTree", nil, &r); err != nil {
			return err
		}
		walk(r.FrameTree)
		return nil
	}))
	if err != nil {
		return "", fmt.Errorf("Page.getFrameTree: %w", err)
	}
	if id != "" {
		return id, nil
	}
	targets, err := chromedp.Targets(ctx)
	if err != nil {
		return "", err
	}
	for _, ti := range targets {
		if ti.Type == "iframe" && strings.HasSuffix(ti.URL, path) {
			return string(ti.TargetID), nil
		}
	}
	return "", fmt.Errorf("no frame %s in the tab", path)
}
