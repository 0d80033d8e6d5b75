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
	"fmt"
	"os"

	"github.com/browserfleet/browserfleet/runner/config"

	"github.com/chromedp/chromedp"
)

// Start launches a headless Chromium with a fresh profile and returns a
// chromedp browser context; extra options are appended to the defaults.
// stop ends the browser and removes its profile.
func Start(extra ...chromedp.ExecAllocatorOption) (ctx context.Context, stop context.CancelFunc, err error) {
	path, err := config.FindChromium()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "chromium-test-profile-")
	if err != nil {
		return nil, nil, fmt.Errorf("creating a profile directory: %w", err)
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
		return nil, nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return bctx, stop, nil
}
