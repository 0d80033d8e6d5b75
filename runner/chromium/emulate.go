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
	"fmt"
	"os"
	"strings"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/browserfleet/browserfleet/runner/blocklist"
)

// setup applies the session's settings: browser-wide ones (downloads,
// certificate errors) on the browser, the identity and metrics on the
// runner's tab, then ad blocking on its network. (The proxy and its
// credentials are the egress proxy's: see launch.)
// Tab-level settings (emulate) hold for the runner's tab and for the tabs
// it attaches to when an operation names one (Target); tabs the runner
// never attached to do not get them.
func (b *Browser) setup(ctx context.Context) error {
	s := b.settings
	bctx := cdp.WithExecutor(ctx, b.cdp)

	_, product, _, _, _, err := cdpbrowser.GetVersion().Do(bctx)
	if err != nil {
		return fmt.Errorf("reading the browser's version: %w", err)
	}
	// "HeadlessChrome/156.0.8078.79" or "Chrome/156.0.8078.79".
	_, b.version, _ = strings.Cut(product, "/")

	if s.attach == nil || s.downloadsExplicit {
		if err := b.setupDownloads(bctx); err != nil {
			return err
		}
	}
	if s.ignoreHTTPSErrors {
		// The launch switch covers a launched browser from its first
		// request; this covers an attached one too.
		if err := security.SetIgnoreCertificateErrors(true).Do(bctx); err != nil {
			return fmt.Errorf("ignoring certificate errors: %w", err)
		}
	}

	if err := b.emulate(b.ContextFor(ctx)); err != nil {
		return fmt.Errorf("applying the session's settings to the page: %w", err)
	}
	return nil
}

// emulate applies the session's tab-level settings (identity, metrics,
// touch, locale, ad blocking) to the tab of the chromedp context ctx: the
// runner's, and each tab it attaches to for operations. They hold for the
// runner's DevTools session with the tab, so for as long as the runner
// stays attached.
func (b *Browser) emulate(ctx context.Context) error {
	s := b.settings
	p := s.profile
	actions := []chromedp.Action{
		b.userAgentOverride(),
		emulation.SetDeviceMetricsOverride(p.Viewport.Width, p.Viewport.Height, p.DeviceScaleFactor, p.Mobile).
			WithScreenWidth(p.Screen.Width).
			WithScreenHeight(p.Screen.Height),
		emulation.SetTouchEmulationEnabled(p.Touch).WithMaxTouchPoints(p.MaxTouchPoints),
	}
	if s.locale != "" {
		actions = append(actions, emulation.SetLocaleOverride().WithLocale(s.locale))
	}
	if s.blockAds {
		patterns := blocklist.URLPatterns()
		block := make([]*network.BlockPattern, len(patterns))
		for i, pat := range patterns {
			block[i] = &network.BlockPattern{URLPattern: pat, Block: true}
		}
		actions = append(actions, network.SetBlockedURLs().WithURLPatterns(block))
	}
	return chromedp.Run(ctx, actions...)
}

// userAgentOverride is the identity of the session's tabs: the profile's
// user agent (or the session's --user-agent), platform and client hints.
func (b *Browser) userAgentOverride() *emulation.SetUserAgentOverrideParams {
	s := b.settings
	p := s.profile
	userAgent := p.userAgent(b.version)
	if s.userAgent != "" {
		userAgent = s.userAgent
	}
	ua := emulation.SetUserAgentOverride(userAgent).
		WithPlatform(p.platform()).
		WithUserAgentMetadata(p.metadata(b.version))
	if al := s.acceptLanguage(); al != "" {
		ua = ua.WithAcceptLanguage(al)
	}
	return ua
}

// setupDownloads lets downloads land in downloadsPath (a temporary
// directory when none is set) or refuses them.
func (b *Browser) setupDownloads(ctx context.Context) error {
	s := b.settings
	if !s.acceptDownloads {
		if err := cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorDeny).Do(ctx); err != nil {
			return fmt.Errorf("refusing downloads: %w", err)
		}
		return nil
	}
	dir := s.downloadsPath
	if dir == "" {
		d, err := os.MkdirTemp("", "browserfleet-downloads-")
		if err != nil {
			return fmt.Errorf("creating a downloads directory: %w", err)
		}
		dir = d
		b.removeAtClose = append(b.removeAtClose, d)
	} else if _, err := makeDir(dir); err != nil {
		// A named downloads directory is kept, made now or not.
		return fmt.Errorf("creating the directory of downloadsPath: %w", err)
	}
	// Download events let Navigate tell a response that became a download
	// from a navigation that failed (both abort the navigation).
	allow := cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllow).
		WithDownloadPath(dir).
		WithEventsEnabled(true)
	if err := allow.Do(ctx); err != nil {
		return fmt.Errorf("allowing downloads: %w", err)
	}
	b.downloads = dir
	return nil
}

// TabFor is the Tab of one call on the runner's tab: ctx is the call's
// context, a child of the tab's. Target gives another tab's.
func (b *Browser) TabFor(ctx context.Context, settle time.Duration) *Tab {
	return b.own().TabFor(ctx, settle)
}

// TargetID is the DevTools target id of the runner's tab.
func (b *Browser) TargetID() target.ID { return b.targetID }

// TabContext is the tab's long-lived chromedp context: an operation's
// context is its child, so that the browser's death ends the operation.
func (b *Browser) TabContext() context.Context { return b.ctx }

// ContextFor is a chromedp context of the runner's tab that ctx cancels.
// chromedp finds the tab through the context's values; cancelling a child
// of b.ctx ends the actions run with it, never the tab.
func (b *Browser) ContextFor(ctx context.Context) context.Context {
	tctx, cancel := context.WithCancelCause(b.ctx)
	context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return tctx
}
