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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Environment variables the cloud handles read when their options leave
// the service's origin or key empty.
const (
	EnvAPIURL = "BROWSERFLEET_API_URL"
	EnvAPIKey = "BROWSERFLEET_API_KEY"
)

// CloudBrowserLaunchOptions say where the service is and what session
// LaunchCloudBrowser starts there (the fields of POST /v1/sessions/start).
type CloudBrowserLaunchOptions struct {
	// APIURL is the service origin without /v1; empty is
	// $BROWSERFLEET_API_URL.
	APIURL string
	// APIKey is the project's service API key; empty is
	// $BROWSERFLEET_API_KEY.
	APIKey string
	// ModelName is the session's default model, such as
	// "openai/gpt-4.1-mini". Empty (or "auto") leaves it to the service's
	// model gateway, which picks the operator's default model; a service
	// without a gateway refuses such a start naming modelName. An
	// instance's Model is sent with each call and takes its place.
	ModelName string
	// Cache is the session's server-side cache setting, the default of
	// its calls; nil leaves the project's.
	Cache *Caching
	// BrowserSettings configure the browser itself.
	BrowserSettings *CloudBrowserSettings
	// Proxies asks for the service's proxy (ProxiesEnabled) or lists
	// proxies; nil is none.
	Proxies *CloudProxies
	// Region is where the session runs, where the service has regions:
	// us-west-2, us-east-1, eu-central-1 or ap-southeast-1.
	Region string
	// Timeout is the session's lifetime, sent in whole seconds (rounded
	// up; at most 7 days); zero is the service's default.
	Timeout time.Duration
	// KeepAlive keeps the session running when its clients disconnect.
	KeepAlive bool
	// UserMetadata is stored with the session and listed by it: at most 64
	// keys, 16 KiB as compact JSON.
	UserMetadata map[string]json.RawMessage
}

// CloudBrowserSettings are the session's browserSettings. A false or empty
// field is left out: the service's default.
type CloudBrowserSettings struct {
	BlockAds      bool
	SolveCaptchas bool
	Viewport      *Viewport
	// AdvancedStealth asks for stronger anti-bot evasion.
	AdvancedStealth bool
	// CaptchaImageSelector and CaptchaInputSelector locate a captcha's
	// image and answer field.
	CaptchaImageSelector string
	CaptchaInputSelector string
	// Context is a persisted browser context to use.
	Context *CloudBrowserContext
	// ExtensionID is a browser extension to load.
	ExtensionID string
	// Fingerprint shapes the identity the browser presents.
	Fingerprint *CloudFingerprint
	// LogSession and RecordSession keep the session's logs and recording.
	LogSession    bool
	RecordSession bool
	// OS is the operating system presented: windows, mac, linux, mobile
	// or tablet.
	OS string
	// Verified presents the browser as verified.
	Verified bool
}

// CloudBrowserContext names a persisted browser context.
type CloudBrowserContext struct {
	// ID identifies the context. Required.
	ID string
	// Persist saves the context's changes when the session ends.
	Persist bool
}

// CloudFingerprint shapes the identity a cloud browser presents.
type CloudFingerprint struct {
	// Browsers: chrome, edge, firefox, safari.
	Browsers []string
	// Devices: desktop, mobile.
	Devices []string
	// HTTPVersion: "1" or "2".
	HTTPVersion string
	// Locales, such as "en-US".
	Locales []string
	// OperatingSystems: android, ios, linux, macos, windows.
	OperatingSystems []string
	// Screen bounds the screen size; nil leaves it to the service.
	Screen *CloudScreen
}

// CloudScreen bounds a fingerprint's screen size in pixels; zero is no
// bound.
type CloudScreen struct {
	MinWidth, MaxWidth, MinHeight, MaxHeight int
}

// CloudProxies is the session's proxies: true, or a list. A non-nil List
// wins over Enabled.
type CloudProxies struct {
	// Enabled asks for one proxy of the service.
	Enabled bool
	// List are the proxies, at most 16.
	List []CloudProxy
}

// ProxiesEnabled asks for one proxy of the service.
func ProxiesEnabled() *CloudProxies { return &CloudProxies{Enabled: true} }

// CloudProxyType says whose a CloudProxy is.
type CloudProxyType string

// Proxy types.
const (
	// CloudProxyService is a proxy of the service.
	CloudProxyService CloudProxyType = "cloud"
	// CloudProxyExternal is the caller's own proxy.
	CloudProxyExternal CloudProxyType = "external"
)

// CloudProxy is one proxy of CloudProxies: the service's (with a
// Geolocation) or an external one (with Server and its credentials).
type CloudProxy struct {
	Type CloudProxyType
	// DomainPattern limits the proxy to the hosts it matches: a regular
	// expression (RE2 syntax) matched against the whole host name, ignoring
	// case, e.g. `(.*\.)?example\.com`; the first matching proxy carries a host.
	DomainPattern string
	// Geolocation is where a service proxy's exit is.
	Geolocation *CloudProxyGeolocation
	// Server is an external proxy's address, such as
	// "http://proxy.example:3128".
	Server string
	// Username and Password authenticate to an external proxy. The
	// password goes to the service only, which keeps it in a Secret.
	Username string
	Password string
}

// CloudProxyGeolocation is where a service proxy's exit is.
type CloudProxyGeolocation struct {
	// Country is an ISO 3166-1 alpha-2 code. Required.
	Country string
	City    string
	State   string
}

// CloudBrowserConnectOptions say which running session ConnectCloudBrowser
// attaches to.
type CloudBrowserConnectOptions struct {
	// APIURL and APIKey are as in CloudBrowserLaunchOptions.
	APIURL string
	APIKey string
	// SessionID is the session's id, as POST /v1/sessions/start returned
	// it. Required.
	SessionID string
}

// LaunchCloudBrowser starts a session on the service and returns its
// handle, connected to the session's browser through its cdpUrl; its Close
// ends the session. The start waits until the session is ready (the
// service bounds the wait; ctx may end it sooner, and the session is then
// ended).
func LaunchCloudBrowser(ctx context.Context, opts CloudBrowserLaunchOptions) (*Browser, error) {
	api, err := newCloudAPI(opts.APIURL, opts.APIKey)
	if err != nil {
		return nil, err
	}
	body, err := startBody(opts)
	if err != nil {
		return nil, err
	}
	started, err := api.start(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("starting a cloud session: %w", err)
	}
	drv := &cloudDriver{api: api, sessionID: started.SessionID, launched: true}
	b, err := connectSession(ctx, drv, started.CDPURL)
	if err != nil {
		// The session is of no use to anyone: end it rather than let it
		// run out its timeout.
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endTimeout)
		defer cancel()
		if eerr := api.end(ectx, started.SessionID); eerr != nil {
			err = errors.Join(err, fmt.Errorf("ending the session %s: %w", started.SessionID, eerr))
		}
		return nil, err
	}
	return b, nil
}

// ConnectCloudBrowser attaches to a running session of the service and
// returns its handle; its Close disconnects and leaves the session
// running. A session that is not Ready (still starting, or over) is
// refused.
func ConnectCloudBrowser(ctx context.Context, opts CloudBrowserConnectOptions) (*Browser, error) {
	if opts.SessionID == "" {
		return nil, invalid("SessionID", "required: the id of a running session of the service")
	}
	api, err := newCloudAPI(opts.APIURL, opts.APIKey)
	if err != nil {
		return nil, err
	}
	view, err := api.session(ctx, opts.SessionID)
	if err != nil {
		return nil, fmt.Errorf("reading the cloud session %s: %w", opts.SessionID, err)
	}
	if view.Phase != "Ready" {
		return nil, fmt.Errorf("%w: SessionID: the session %s is %s, not Ready; connect to a Ready session", ErrInvalidArgument, opts.SessionID, view.Phase)
	}
	return connectSession(ctx, &cloudDriver{api: api, sessionID: opts.SessionID}, view.CDPURL)
}

// maxCloudSystemPrompt is the service's bound of a call's systemPrompt, in
// characters.
const maxCloudSystemPrompt = 32768

// endTimeout bounds ending a session on the way out of a failed launch.
const endTimeout = 30 * time.Second

// connectSession connects to a session's browser through its cdpUrl, whose
// signed token authorizes it: the connection needs no key.
func connectSession(ctx context.Context, drv *cloudDriver, cdpURL *string) (*Browser, error) {
	if cdpURL == nil || *cdpURL == "" {
		return nil, fmt.Errorf("the service gave the session %s no cdpUrl: its DevTools endpoint is off", drv.sessionID)
	}
	b, err := newCDPBrowser(ctx, *cdpURL, nil, drv)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cloud session %s: %w", drv.sessionID, err)
	}
	return b, nil
}

// cloudDriver is a cloud handle's kind: a session of the service, whose
// runner runs the engine next to its browser.
type cloudDriver struct {
	api       *cloudAPI
	sessionID string
	// launched says the handle started the session, and so ends it.
	launched bool
}

var _ driver = (*cloudDriver)(nil)

// open makes the runtime of an instance: its calls go to the service with
// the instance's key and origin when it gives them, the handle's
// otherwise. Generate is refused: the engine runs in the session's runner,
// which cannot call back into this process.
func (d *cloudDriver) open(_ context.Context, cfg *instanceConfig) (runtime, error) {
	const f = "CreateOptions."
	if cfg.generate != nil {
		return nil, invalid(f+"Generate", "a cloud handle's engine runs in the session's runner, which cannot call back into this process; give Model instead")
	}
	if n := utf8.RuneCountInString(cfg.systemPrompt); n > maxCloudSystemPrompt {
		// The service bounds a call's systemPrompt as a session's: better
		// refused now than on every call.
		return nil, invalid(f+"SystemPrompt", "is %d characters; a cloud handle's service takes at most %d", n, maxCloudSystemPrompt)
	}
	api := d.api
	if cfg.apiKey != "" || cfg.apiURL != "" {
		var err error
		if api, err = d.api.with(cfg.apiURL, cfg.apiKey); err != nil {
			return nil, err
		}
	}
	return &cloudRuntime{api: api, sessionID: d.sessionID, cfg: cfg}, nil
}

// close ends a launched session (POST /v1/sessions/{id}/end); a connected
// one is left running.
func (d *cloudDriver) close(ctx context.Context) error {
	defer d.api.http.CloseIdleConnections()
	if !d.launched {
		return nil
	}
	if err := d.api.end(ctx, d.sessionID); err != nil {
		return fmt.Errorf("ending the cloud session %s: %w", d.sessionID, err)
	}
	return nil
}

// SessionID is the id of a cloud handle's session on the service: what
// ConnectCloudBrowser takes elsewhere, and what the service's replay and
// session endpoints name. It is "" for a local handle.
func (b *Browser) SessionID() string {
	if d, ok := b.drv.(*cloudDriver); ok {
		return d.sessionID
	}
	return ""
}
