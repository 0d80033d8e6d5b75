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

// Package v1 is the /v1 wire layer of the API server: the request bodies of
// spec/http-api.md as Go types, their strict decoding into validation issues,
// and their mapping onto the browserfleet custom resources.
package v1

import (
	"encoding/json"
	"fmt"
	"math"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// StartRequest is the body of POST /v1/sessions/start ("Session start
// request" in spec/http-api.md). JSON names are the spec's. Numbers the spec
// types as `number` stay float64 here so that the Go value is exactly what was
// sent; DecodeStart has already checked that the ones the BrowserSession
// stores as integers are integral and in range.
type StartRequest struct {
	// ModelName is the provider-prefixed model, `<provider>/<model>`. Required.
	ModelName string `json:"modelName"`
	// DOMSettleTimeoutMs is how long to wait for the DOM to settle.
	DOMSettleTimeoutMs *float64 `json:"domSettleTimeoutMs,omitempty"`
	// Verbose is the log level: 0 quiet, 1 normal, 2 debug.
	Verbose *Verbose `json:"verbose,omitempty"`
	// SystemPrompt is a custom system prompt for AI operations.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// CloudSessionCreateParams configure a cloud browser.
	CloudSessionCreateParams *CloudSessionCreateParams `json:"cloudSessionCreateParams,omitempty"`
	// Browser selects and configures the browser.
	Browser *BrowserConfig `json:"browser,omitempty"`
	// SelfHeal enables self-healing of failed actions.
	SelfHeal *bool `json:"selfHeal,omitempty"`
	// CloudSessionID is an existing session to resume instead of starting one.
	CloudSessionID string `json:"cloudSessionID,omitempty"`
	// Experimental enables experimental engine features.
	Experimental *bool `json:"experimental,omitempty"`

	// WaitForCaptchaSolves is accepted for compatibility and ignored.
	//
	// Deprecated: applies to the v2 engine only.
	WaitForCaptchaSolves *bool `json:"waitForCaptchaSolves,omitempty"`
	// ActTimeoutMs is accepted for compatibility and ignored.
	//
	// Deprecated: applies to the v2 engine only.
	ActTimeoutMs *float64 `json:"actTimeoutMs,omitempty"`
	// Cache is the session's server-side cache setting, which its act,
	// observe and extract calls (and agent runs) take unless they give
	// their own; stored as spec.cache. Absent: the project's default.
	Cache *CacheOption `json:"cache,omitempty"`

	// ModelAPIKey is the model provider's API key. The start body of the spec
	// has no model config (only modelName), so the key cannot come from the
	// body; the reference server takes it from the `x-model-api-key` header,
	// and the HTTP handler sets this field from there. It is never
	// serialised, and ToSession moves it into the request Secret.
	ModelAPIKey string `json:"-"`
}

// Verbose is a log level, 0, 1 or 2. It has its own type because JSON
// numbers such as `1.0` are valid integers to the schema but not to Go's int
// decoding.
type Verbose int

// UnmarshalJSON accepts any integral JSON number.
func (v *Verbose) UnmarshalJSON(b []byte) error {
	var f float64
	if err := jsonv2.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("verbose: %w", err)
	}
	if f != math.Trunc(f) {
		return fmt.Errorf("verbose: %v is not an integer", f)
	}
	*v = Verbose(f)
	return nil
}

// CloudSessionCreateParams configure a cloud browser ("Cloud session create
// params").
type CloudSessionCreateParams struct {
	// ProjectID is accepted for compatibility and ignored.
	//
	// Deprecated: API keys are project-scoped.
	ProjectID string `json:"projectId,omitempty"`
	// BrowserSettings configure the browser itself.
	BrowserSettings *BrowserSettings `json:"browserSettings,omitempty"`
	// ExtensionID is a browser extension to load.
	ExtensionID string `json:"extensionId,omitempty"`
	// KeepAlive keeps the session running when its clients disconnect.
	KeepAlive *bool `json:"keepAlive,omitempty"`
	// Proxies is `true`/`false` or a list of proxy configs.
	Proxies *Proxies `json:"proxies,omitempty"`
	// Region is one of us-west-2, us-east-1, eu-central-1, ap-southeast-1.
	Region string `json:"region,omitempty"`
	// Timeout is the session's lifetime in seconds.
	Timeout *float64 `json:"timeout,omitempty"`
	// UserMetadata maps strings to any JSON value.
	UserMetadata map[string]json.RawMessage `json:"userMetadata,omitempty"`
}

// Proxies is the union `boolean | ProxyConfig[]`. Exactly one of Enabled and
// List is set after decoding.
type Proxies struct {
	// Enabled is the boolean form: true asks for one cloud proxy.
	Enabled *bool
	// List is the array form.
	List []ProxyConfig
}

// UnmarshalJSON decodes either form. It decodes with the case-sensitive
// JSON v2 decoder, like DecodeStart, so that only the exact JSON names the
// schema validated reach the Go value.
func (p *Proxies) UnmarshalJSON(b []byte) error {
	*p = Proxies{}
	return unmarshalBoolOrList(b, "proxies", "a boolean or an array", &p.Enabled, &p.List)
}

// MarshalJSON encodes the form that is set; the list wins.
func (p Proxies) MarshalJSON() ([]byte, error) { return marshalBoolOrList(p.Enabled, p.List) }

// unmarshalBoolOrList decodes a `boolean | T[]` union: an array into list
// (non-nil, even when empty), anything else as the boolean into flag.
func unmarshalBoolOrList[T any](b []byte, field, forms string, flag **bool, list *[]T) error {
	if isJSONArray(b) {
		*list = []T{}
		if err := jsonv2.Unmarshal(b, list); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		return nil
	}
	var on bool
	if err := jsonv2.Unmarshal(b, &on); err != nil {
		return fmt.Errorf("%s must be %s: %w", field, forms, err)
	}
	*flag = &on
	return nil
}

// marshalBoolOrList encodes the form of a `boolean | T[]` union that is set;
// the list wins, and an unset union is an empty list.
func marshalBoolOrList[T any](flag *bool, list []T) ([]byte, error) {
	if list != nil || flag == nil {
		if list == nil {
			list = []T{}
		}
		return json.Marshal(list)
	}
	return json.Marshal(*flag)
}

// ProxyType discriminates a ProxyConfig.
type ProxyType string

const (
	// ProxyTypeCloud is a proxy the service provides.
	ProxyTypeCloud ProxyType = "cloud"
	// ProxyTypeExternal is a proxy the user provides.
	ProxyTypeExternal ProxyType = "external"
)

// ProxyConfig is one entry of `proxies`, discriminated by Type: a cloud proxy
// has DomainPattern and Geolocation; an external one has Server (required),
// DomainPattern, Username and Password. DecodeStart refuses fields of the
// other variant, as the CRD does.
type ProxyConfig struct {
	// Type is cloud or external. Required.
	Type ProxyType `json:"type"`
	// DomainPattern limits the proxy to the hosts it matches: a regular
	// expression matched against the whole host name (v1alpha1.DomainPatternRegexp).
	DomainPattern string `json:"domainPattern,omitempty"`
	// Geolocation is where a cloud proxy's exit is.
	Geolocation *ProxyGeolocation `json:"geolocation,omitempty"`
	// Server is an external proxy's address.
	Server string `json:"server,omitempty"`
	// Username authenticates to an external proxy.
	Username string `json:"username,omitempty"`
	// Password authenticates to an external proxy. Secret.
	Password string `json:"password,omitempty"`
}

// ProxyGeolocation is where a cloud proxy's exit is.
type ProxyGeolocation struct {
	// Country is an ISO 3166-1 alpha-2 code. Required.
	Country string `json:"country"`
	// City within the country.
	City string `json:"city,omitempty"`
	// State within the country.
	State string `json:"state,omitempty"`
}

// BrowserSettings configure a cloud browser (`browserSettings`).
type BrowserSettings struct {
	// AdvancedStealth enables stronger anti-bot evasion.
	AdvancedStealth *bool `json:"advancedStealth,omitempty"`
	// BlockAds blocks ads and trackers.
	BlockAds *bool `json:"blockAds,omitempty"`
	// CaptchaImageSelector locates a captcha image.
	CaptchaImageSelector string `json:"captchaImageSelector,omitempty"`
	// CaptchaInputSelector locates a captcha's answer field.
	CaptchaInputSelector string `json:"captchaInputSelector,omitempty"`
	// Context is a persisted browser context.
	Context *BrowserContext `json:"context,omitempty"`
	// ExtensionID is a browser extension to load.
	ExtensionID string `json:"extensionId,omitempty"`
	// Fingerprint shapes the identity the browser presents.
	Fingerprint *Fingerprint `json:"fingerprint,omitempty"`
	// LogSession keeps the session's logs.
	LogSession *bool `json:"logSession,omitempty"`
	// OS is one of windows, mac, linux, mobile, tablet.
	OS string `json:"os,omitempty"`
	// RecordSession records the session.
	RecordSession *bool `json:"recordSession,omitempty"`
	// SolveCaptchas solves captchas automatically.
	SolveCaptchas *bool `json:"solveCaptchas,omitempty"`
	// Verified presents the browser as verified.
	Verified *bool `json:"verified,omitempty"`
	// Viewport is the page size.
	Viewport *Viewport `json:"viewport,omitempty"`
}

// BrowserContext names a persisted browser context.
type BrowserContext struct {
	// ID identifies the context. Required.
	ID string `json:"id"`
	// Persist saves the context's changes when the session ends.
	Persist *bool `json:"persist,omitempty"`
}

// Fingerprint shapes the identity a cloud browser presents.
type Fingerprint struct {
	// Browsers: chrome, edge, firefox, safari.
	Browsers []string `json:"browsers,omitempty"`
	// Devices: desktop, mobile.
	Devices []string `json:"devices,omitempty"`
	// HTTPVersion: "1" or "2".
	HTTPVersion string `json:"httpVersion,omitempty"`
	// Locales are free text, for example en-US.
	Locales []string `json:"locales,omitempty"`
	// OperatingSystems: android, ios, linux, macos, windows.
	OperatingSystems []string `json:"operatingSystems,omitempty"`
	// Screen bounds the screen size.
	Screen *Screen `json:"screen,omitempty"`
}

// Screen bounds a fingerprint's screen size.
type Screen struct {
	// MaxHeight is the largest screen height.
	MaxHeight *float64 `json:"maxHeight,omitempty"`
	// MaxWidth is the largest screen width.
	MaxWidth *float64 `json:"maxWidth,omitempty"`
	// MinHeight is the smallest screen height.
	MinHeight *float64 `json:"minHeight,omitempty"`
	// MinWidth is the smallest screen width.
	MinWidth *float64 `json:"minWidth,omitempty"`
}

// Viewport is a page size in CSS pixels; both fields are required.
type Viewport struct {
	// Width in CSS pixels.
	Width float64 `json:"width"`
	// Height in CSS pixels.
	Height float64 `json:"height"`
}

// BrowserType says where the browser runs.
type BrowserType string

const (
	// BrowserTypeLocal launches a browser with launchOptions or attaches to
	// cdpUrl.
	BrowserTypeLocal BrowserType = "local"
	// BrowserTypeCloud runs a browser with cloudSessionCreateParams; it is the
	// default when browser.type is omitted.
	BrowserTypeCloud BrowserType = "cloud"
)

// BrowserConfig is `browser` of the start request.
type BrowserConfig struct {
	// Type is local or cloud (the default).
	Type BrowserType `json:"type,omitempty"`
	// CDPURL is the DevTools WebSocket URL of an existing browser.
	CDPURL string `json:"cdpUrl,omitempty"`
	// LaunchOptions configure a local browser. Closed: unknown fields are
	// refused.
	LaunchOptions *LaunchOptions `json:"launchOptions,omitempty"`
}

// LaunchOptions are the local browser's launch options.
type LaunchOptions struct {
	// Args are extra browser arguments.
	Args []string `json:"args,omitempty"`
	// ExecutablePath is the browser binary.
	ExecutablePath string `json:"executablePath,omitempty"`
	// Port is the remote-debugging port.
	Port *float64 `json:"port,omitempty"`
	// UserDataDir is the profile directory.
	UserDataDir string `json:"userDataDir,omitempty"`
	// PreserveUserDataDir keeps UserDataDir when the browser closes.
	PreserveUserDataDir *bool `json:"preserveUserDataDir,omitempty"`
	// Headless runs without a window.
	Headless *bool `json:"headless,omitempty"`
	// Devtools opens DevTools for each tab.
	Devtools *bool `json:"devtools,omitempty"`
	// ChromiumSandbox enables Chromium's sandbox.
	ChromiumSandbox *bool `json:"chromiumSandbox,omitempty"`
	// IgnoreDefaultArgs is `true`/`false` or a list of default arguments to
	// leave out.
	IgnoreDefaultArgs *IgnoreDefaultArgs `json:"ignoreDefaultArgs,omitempty"`
	// Proxy routes the browser's traffic.
	Proxy *LaunchProxy `json:"proxy,omitempty"`
	// Locale is the browser's locale.
	Locale string `json:"locale,omitempty"`
	// Viewport is the page size.
	Viewport *Viewport `json:"viewport,omitempty"`
	// DeviceScaleFactor is the device pixel ratio.
	DeviceScaleFactor *float64 `json:"deviceScaleFactor,omitempty"`
	// HasTouch emulates a touch screen.
	HasTouch *bool `json:"hasTouch,omitempty"`
	// IgnoreHTTPSErrors accepts invalid certificates.
	IgnoreHTTPSErrors *bool `json:"ignoreHTTPSErrors,omitempty"`
	// CDPURL is a browser to attach to.
	CDPURL string `json:"cdpUrl,omitempty"`
	// CDPHeaders are sent when connecting to CDPURL.
	CDPHeaders map[string]string `json:"cdpHeaders,omitempty"`
	// ConnectTimeoutMs bounds the connection to CDPURL.
	ConnectTimeoutMs *float64 `json:"connectTimeoutMs,omitempty"`
	// DownloadsPath is where downloads are saved.
	DownloadsPath string `json:"downloadsPath,omitempty"`
	// AcceptDownloads lets pages download files.
	AcceptDownloads *bool `json:"acceptDownloads,omitempty"`
}

// IgnoreDefaultArgs is the union `boolean | string[]`. Exactly one of All and
// Args is set after decoding.
type IgnoreDefaultArgs struct {
	// All is the boolean form: true leaves out every default argument.
	All *bool
	// Args is the array form.
	Args []string
}

// UnmarshalJSON decodes either form.
func (a *IgnoreDefaultArgs) UnmarshalJSON(b []byte) error {
	*a = IgnoreDefaultArgs{}
	return unmarshalBoolOrList(b, "ignoreDefaultArgs", "a boolean or an array of strings", &a.All, &a.Args)
}

// MarshalJSON encodes the form that is set; the list wins.
func (a IgnoreDefaultArgs) MarshalJSON() ([]byte, error) { return marshalBoolOrList(a.All, a.Args) }

// LaunchProxy is the local browser's proxy. Closed like launchOptions.
type LaunchProxy struct {
	// Server is the proxy address. Required.
	Server string `json:"server"`
	// Bypass lists hosts that skip the proxy.
	Bypass string `json:"bypass,omitempty"`
	// Username authenticates to the proxy.
	Username string `json:"username,omitempty"`
	// Password authenticates to the proxy. Secret.
	Password string `json:"password,omitempty"`
}

// isJSONArray reports whether b's first non-space byte opens an array.
func isJSONArray(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '[':
			return true
		default:
			return false
		}
	}
	return false
}

// CacheOption is a server-side cache setting on the wire: act's, observe's
// and extract's `options.cache`, and the start's `cache`. It is `true`,
// `false`, or `{"threshold": n}`, which turns the cache on with that
// threshold (1 to cache.MaxThreshold; the schema enforces it and refuses
// other keys).
type CacheOption struct {
	// Enabled is false only for the form `false`.
	Enabled bool
	// Threshold is the object form's threshold; 0 for the boolean forms,
	// which take the threshold of the session or the project.
	Threshold int64
}

// UnmarshalJSON decodes either form, with the case-sensitive JSON v2
// decoder like the rest of the body.
func (c *CacheOption) UnmarshalJSON(b []byte) error {
	*c = CacheOption{}
	if jsontext.Value(b).Kind() != '{' {
		return unmarshalField(b, "cache", &c.Enabled)
	}
	var obj struct {
		// A number: 3.0 is a valid integer to the schema, not to int64.
		Threshold float64 `json:"threshold"`
	}
	if err := unmarshalField(b, "cache", &obj); err != nil {
		return err
	}
	if obj.Threshold != math.Trunc(obj.Threshold) || obj.Threshold < 1 || obj.Threshold > math.MaxInt32 {
		return fmt.Errorf("cache.threshold: %v is not a whole number from 1", obj.Threshold)
	}
	*c = CacheOption{Enabled: true, Threshold: int64(obj.Threshold)}
	return nil
}

// MarshalJSON encodes the object form when a threshold is set, else the
// boolean.
func (c CacheOption) MarshalJSON() ([]byte, error) {
	if c.Enabled && c.Threshold > 0 {
		return json.Marshal(struct {
			Threshold int64 `json:"threshold"`
		}{c.Threshold})
	}
	return json.Marshal(c.Enabled)
}

// Spec is the option as a session's or task's spec.cache: enabled always
// set, threshold only when the option names one.
func (c *CacheOption) Spec() *v1alpha1.CacheSpec {
	if c == nil {
		return nil
	}
	enabled := c.Enabled
	spec := &v1alpha1.CacheSpec{Enabled: &enabled}
	if c.Threshold > 0 {
		spec.Threshold = int32(c.Threshold)
	}
	return spec
}
