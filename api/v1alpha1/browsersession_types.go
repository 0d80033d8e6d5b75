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

package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BrowserSessionSpec is the desired state of a BrowserSession: everything of
// the /v1 session start request, with secrets referenced, never inline.
// +kubebuilder:validation:XValidation:rule="!has(self.cloudSessionCreateParams) || !has(self.browser) || self.browser.type == 'cloud'",message="cloudSessionCreateParams requires browser.type cloud",fieldPath=".cloudSessionCreateParams"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.ended) || !oldSelf.ended || (has(self.ended) && self.ended)",message="ended cannot be unset once the session is ended",fieldPath=".ended"
// +kubebuilder:validation:XValidation:rule="has(self.browser) == has(oldSelf.browser)",message="browser is immutable",fieldPath=".browser"
// +kubebuilder:validation:XValidation:rule="has(self.cloudSessionCreateParams) == has(oldSelf.cloudSessionCreateParams)",message="cloudSessionCreateParams is immutable",fieldPath=".cloudSessionCreateParams"
type BrowserSessionSpec struct {
	// model is the default model for act, observe and extract in this session.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="model is immutable"
	Model ModelSpec `json:"model,omitzero"`

	// domSettleTimeoutMs is how long, in milliseconds, an operation waits for
	// the DOM to settle before it runs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=600000
	DOMSettleTimeoutMs *int32 `json:"domSettleTimeoutMs,omitempty"`

	// verbose is the runner's log level: 0 quiet, 1 normal, 2 debug.
	// +optional
	// +kubebuilder:validation:Enum=0;1;2
	Verbose *int32 `json:"verbose,omitempty"`

	// systemPrompt is extra system instructions included in model calls.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	SystemPrompt string `json:"systemPrompt,omitempty"`

	// selfHeal re-snapshots the page and re-infers an action once when its
	// selector no longer resolves or the action fails.
	// +optional
	SelfHeal *bool `json:"selfHeal,omitempty"`

	// cache is the session's server-side cache setting for act, observe,
	// extract and agent runs; a call's own setting overrides it.
	// +optional
	Cache *CacheSpec `json:"cache,omitempty"`

	// experimental enables experimental engine features.
	// +optional
	Experimental *bool `json:"experimental,omitempty"`

	// browser selects and configures the browser. Omitted, the session runs a
	// cloud browser with default settings.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="browser is immutable"
	Browser *BrowserConfig `json:"browser,omitempty"`

	// cloudSessionCreateParams configures a cloud browser: settings,
	// fingerprint, proxies, region, timeout, keep-alive and metadata.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cloudSessionCreateParams is immutable"
	CloudSessionCreateParams *CloudSessionCreateParams `json:"cloudSessionCreateParams,omitempty"`

	// ended ends the session: the browser is stopped and the runner pod
	// deleted. The API's end sets it; once set it cannot be unset.
	// +optional
	Ended bool `json:"ended,omitempty"` //nolint:kubeapilinter // a one-way switch: absent and false both mean not ended

	// ttlSecondsAfterEnded is how long an Ended or Failed session is kept
	// before it is deleted. Omitted, the manager's default applies; 0 deletes
	// it as soon as it ends.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	TTLSecondsAfterEnded *int32 `json:"ttlSecondsAfterEnded,omitempty"`
}

// BrowserType says where the browser runs.
// +kubebuilder:validation:Enum=local;cloud
type BrowserType string

const (
	// BrowserTypeLocal runs a browser with the given launch options, or
	// attaches to the browser at cdpUrlSecretRef.
	BrowserTypeLocal BrowserType = "local"
	// BrowserTypeCloud runs a browser with the cloud session create params.
	BrowserTypeCloud BrowserType = "cloud"
)

// BrowserConfig selects and configures the browser.
// +kubebuilder:validation:XValidation:rule="!has(self.cdpUrlSecretRef) || self.type == 'local'",message="cdpUrlSecretRef requires type local",fieldPath=".cdpUrlSecretRef"
// +kubebuilder:validation:XValidation:rule="!has(self.launchOptions) || self.type == 'local'",message="launchOptions requires type local",fieldPath=".launchOptions"
// +kubebuilder:validation:XValidation:rule="!has(self.launchOptions) || !has(self.launchOptions.cdpHeadersSecretRef) || has(self.cdpUrlSecretRef)",message="launchOptions.cdpHeadersSecretRef requires cdpUrlSecretRef",fieldPath=".launchOptions.cdpHeadersSecretRef"
type BrowserConfig struct {
	// type is where the browser runs: `cloud` (default) or `local`.
	// +optional
	// +kubebuilder:default=cloud
	Type BrowserType `json:"type,omitempty"`

	// cdpUrlSecretRef is the Secret key that holds the DevTools URL (ws,
	// wss, http or https) of an existing browser to attach to instead of
	// launching one. Only with type local. The URL is a secret: hosted
	// browsers put a token in it.
	// +optional
	CDPURLSecretRef *SecretKeyReference `json:"cdpUrlSecretRef,omitempty"`

	// launchOptions configure the local browser. Only with type local.
	// +optional
	LaunchOptions *LaunchOptions `json:"launchOptions,omitempty"`
}

// LaunchOptions are the local browser's launch options. Unknown fields are
// refused.
// +kubebuilder:validation:XValidation:rule="!has(self.preserveUserDataDir) || !self.preserveUserDataDir || has(self.userDataDir)",message="preserveUserDataDir requires userDataDir",fieldPath=".preserveUserDataDir"
// +kubebuilder:validation:XValidation:rule="!has(self.ignoreAllDefaultArgs) || !self.ignoreAllDefaultArgs || !has(self.ignoreDefaultArgs)",message="ignoreDefaultArgs and ignoreAllDefaultArgs are mutually exclusive",fieldPath=".ignoreDefaultArgs"
type LaunchOptions struct {
	// args are extra Chromium switches, each `--name` or `--name=value`,
	// from the allowlist of docs/launch-args.md; any other switch is
	// refused.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	Args []LaunchArg `json:"args,omitempty"`

	// executablePath is the browser binary inside the runner image. Only
	// the paths the operator lists (the manager's
	// runner.allowedExecutables) are accepted; a session naming another
	// fails.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	ExecutablePath string `json:"executablePath,omitempty"`

	// port is the browser's remote-debugging port inside the runner pod.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"` //nolint:kubeapilinter // 0 is refused, so no pointer is needed; kept one for the runner, which reads it

	// userDataDir names the browser profile: a directory name, never a
	// path, which the runner keeps under its data directory
	// (`<data-dir>/profiles/<name>`).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`
	UserDataDir string `json:"userDataDir,omitempty"`

	// preserveUserDataDir keeps userDataDir when the browser closes.
	// +optional
	PreserveUserDataDir *bool `json:"preserveUserDataDir,omitempty"`

	// headless runs the browser without a window (default true).
	// +optional
	Headless *bool `json:"headless,omitempty"`

	// devtools opens DevTools for each tab (headful only).
	// +optional
	Devtools *bool `json:"devtools,omitempty"`

	// chromiumSandbox enables Chromium's own sandbox.
	// +optional
	ChromiumSandbox *bool `json:"chromiumSandbox,omitempty"`

	// ignoreDefaultArgs lists default arguments not to pass to the browser.
	// The /v1 API's `ignoreDefaultArgs: true` maps to ignoreAllDefaultArgs.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	// +listType=atomic
	IgnoreDefaultArgs []string `json:"ignoreDefaultArgs,omitempty"`

	// ignoreAllDefaultArgs passes none of the default arguments.
	// +optional
	IgnoreAllDefaultArgs *bool `json:"ignoreAllDefaultArgs,omitempty"`

	// proxy routes the browser's traffic through a proxy.
	// +optional
	Proxy *LaunchProxy `json:"proxy,omitempty"`

	// locale is the browser's locale, for example `en-US`.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=35
	// +kubebuilder:validation:Pattern=`^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$`
	Locale string `json:"locale,omitempty"`

	// viewport is the page's size in CSS pixels.
	// +optional
	Viewport *Viewport `json:"viewport,omitempty"`

	// deviceScaleFactor is the device pixel ratio.
	// +optional
	// +kubebuilder:validation:Minimum=0.1
	// +kubebuilder:validation:Maximum=10
	DeviceScaleFactor *float64 `json:"deviceScaleFactor,omitempty"` //nolint:kubeapilinter // a ratio such as 1.5 or 2.625, as in the /v1 API; see docs/sessions.md

	// hasTouch emulates a touch screen.
	// +optional
	HasTouch *bool `json:"hasTouch,omitempty"`

	// ignoreHTTPSErrors accepts invalid TLS certificates.
	// +optional
	IgnoreHTTPSErrors *bool `json:"ignoreHTTPSErrors,omitempty"`

	// cdpHeadersSecretRef is the Secret key that holds the HTTP headers sent
	// when connecting to the browser of cdpUrlSecretRef, as a JSON object of
	// header names to values (at most 32). They are secrets: hosted browsers
	// authenticate with them.
	// +optional
	CDPHeadersSecretRef *SecretKeyReference `json:"cdpHeadersSecretRef,omitempty"`

	// connectTimeoutMs bounds the connection to cdpUrlSecretRef's browser,
	// in milliseconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=600000
	ConnectTimeoutMs *int32 `json:"connectTimeoutMs,omitempty"`

	// downloadsPath names the directory downloads are saved in: a
	// directory name, never a path, which the runner keeps under its data
	// directory (`<data-dir>/downloads/<name>`).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`
	DownloadsPath string `json:"downloadsPath,omitempty"`

	// acceptDownloads lets pages download files.
	// +optional
	AcceptDownloads *bool `json:"acceptDownloads,omitempty"`
}

// LaunchProxy is the local browser's proxy.
// +kubebuilder:validation:XValidation:rule="!self.server.matches('^([A-Za-z][A-Za-z0-9+.-]*://)?[^/?#]*@')",message="server must not carry credentials (user:password@): use username and passwordSecretRef",fieldPath=".server"
type LaunchProxy struct {
	// server is the proxy's address, for example `http://proxy:3128`.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	Server string `json:"server,omitempty"`

	// bypass is a comma-separated list of hosts that skip the proxy.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Bypass string `json:"bypass,omitempty"`

	// username authenticates to the proxy.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Username string `json:"username,omitempty"`

	// passwordSecretRef is the Secret key that holds the proxy password.
	// +optional
	PasswordSecretRef *SecretKeyReference `json:"passwordSecretRef,omitempty"`
}

// Viewport is a page size in CSS pixels.
type Viewport struct {
	// width in CSS pixels.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16384
	Width int32 `json:"width,omitempty"`

	// height in CSS pixels.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16384
	Height int32 `json:"height,omitempty"`
}

// Region is where a cloud browser runs. The manager places the runner pod
// on nodes of the region (its runner.regions table, docs/sessions.md).
// +kubebuilder:validation:Enum=us-west-2;us-east-1;eu-central-1;ap-southeast-1
type Region string

// The regions a session may name: the enum above, kept next to it.
const (
	RegionUSWest2      Region = "us-west-2"
	RegionUSEast1      Region = "us-east-1"
	RegionEUCentral1   Region = "eu-central-1"
	RegionAPSoutheast1 Region = "ap-southeast-1"
)

// Regions are every region a session may name, in the enum's order.
var Regions = []Region{RegionUSWest2, RegionUSEast1, RegionEUCentral1, RegionAPSoutheast1}

// CloudSessionCreateParams configure a cloud browser.
type CloudSessionCreateParams struct {
	// browserSettings configure the browser itself.
	// +optional
	BrowserSettings *BrowserSettings `json:"browserSettings,omitempty"`

	// extensionId is a browser extension to load.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ExtensionID string `json:"extensionId,omitempty"`

	// keepAlive keeps the session running when its clients disconnect, until
	// it is ended or times out.
	// +optional
	KeepAlive *bool `json:"keepAlive,omitempty"`

	// proxies route the browser's traffic. The /v1 API's `proxies: true` maps
	// to one cloud proxy with no geolocation.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Proxies []Proxy `json:"proxies,omitempty"`

	// region is where the browser runs: the manager keeps the runner on
	// the region's nodes (its runner.regions table; by default nodes
	// labelled topology.kubernetes.io/region=<region>). A region the
	// operator does not accept, or that no node serves, fails the session
	// before a pod is made.
	// +optional
	Region Region `json:"region,omitempty"`

	// timeoutSeconds is the session's lifetime in seconds, counted from its
	// creation; the session ends when it runs out. Omitted, the manager's
	// default applies; it is capped at the manager's maximum.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`

	// userMetadata is free-form metadata: string keys, any JSON values.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	UserMetadata map[string]apiextensionsv1.JSON `json:"userMetadata,omitempty"` //nolint:kubeapilinter // free-form metadata of the /v1 API, keyed by the user
}

// OS is the operating system a cloud browser presents.
// +kubebuilder:validation:Enum=windows;mac;linux;mobile;tablet
type OS string

// BrowserSettings configure a cloud browser.
// +kubebuilder:validation:XValidation:rule="!has(self.captchaInputSelector) || has(self.captchaImageSelector)",message="captchaImageSelector is required with captchaInputSelector",fieldPath=".captchaImageSelector",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.captchaImageSelector) || has(self.captchaInputSelector)",message="captchaInputSelector is required with captchaImageSelector",fieldPath=".captchaInputSelector",reason=FieldValueRequired
type BrowserSettings struct {
	// advancedStealth enables stronger anti-bot evasion.
	// +optional
	AdvancedStealth *bool `json:"advancedStealth,omitempty"`

	// blockAds blocks requests to known ad and tracker hosts.
	// +optional
	BlockAds *bool `json:"blockAds,omitempty"`

	// captchaImageSelector locates a captcha image (CSS, or XPath with an
	// xpath= prefix) in the page; with captchaInputSelector, the runner
	// sends a screenshot of it to the session's model when it appears and
	// types the text the model reads into the answer field.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	CaptchaImageSelector string `json:"captchaImageSelector,omitempty"`

	// captchaInputSelector locates the captcha's answer field; it goes with
	// captchaImageSelector.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	CaptchaInputSelector string `json:"captchaInputSelector,omitempty"`

	// context is a persisted browser context (cookies, storage) to use.
	// +optional
	Context *BrowserContext `json:"context,omitempty"`

	// extensionId is a browser extension to load.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ExtensionID string `json:"extensionId,omitempty"`

	// fingerprint shapes the identity the browser presents.
	// +optional
	Fingerprint *Fingerprint `json:"fingerprint,omitempty"`

	// logSession keeps the session's logs.
	// +optional
	LogSession *bool `json:"logSession,omitempty"`

	// os is the operating system the browser presents.
	// +optional
	OS OS `json:"os,omitempty"`

	// recordSession records the session.
	// +optional
	RecordSession *bool `json:"recordSession,omitempty"`

	// solveCaptchas solves the captcha captchaImageSelector and
	// captchaInputSelector locate; it defaults to true, so false turns
	// them off. There is no built-in detection of any captcha provider.
	// +optional
	SolveCaptchas *bool `json:"solveCaptchas,omitempty"`

	// verified presents the browser as verified.
	// +optional
	Verified *bool `json:"verified,omitempty"`

	// viewport is the page's size in CSS pixels.
	// +optional
	Viewport *Viewport `json:"viewport,omitempty"`
}

// BrowserContext names a persisted browser context.
type BrowserContext struct {
	// id identifies the context.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	ID string `json:"id,omitempty"`

	// persist saves the context's changes when the session ends.
	// +optional
	Persist *bool `json:"persist,omitempty"`
}

// FingerprintBrowser is a browser a fingerprint may imitate.
// +kubebuilder:validation:Enum=chrome;edge;firefox;safari
type FingerprintBrowser string

// FingerprintDevice is a device class a fingerprint may imitate.
// +kubebuilder:validation:Enum=desktop;mobile
type FingerprintDevice string

// FingerprintOS is an operating system a fingerprint may imitate.
// +kubebuilder:validation:Enum=android;ios;linux;macos;windows
type FingerprintOS string

// HTTPVersion is the HTTP version a fingerprint presents.
// +kubebuilder:validation:Enum="1";"2"
type HTTPVersion string

// Fingerprint shapes the identity a browser presents.
type Fingerprint struct {
	// browsers the fingerprint may imitate.
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=set
	Browsers []FingerprintBrowser `json:"browsers,omitempty"`

	// devices the fingerprint may imitate.
	// +optional
	// +kubebuilder:validation:MaxItems=2
	// +listType=set
	Devices []FingerprintDevice `json:"devices,omitempty"`

	// httpVersion the fingerprint presents: "1" or "2".
	// +optional
	HTTPVersion HTTPVersion `json:"httpVersion,omitempty"`

	// locales the fingerprint may present, for example `en-US`.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=35
	// +listType=set
	Locales []string `json:"locales,omitempty"`

	// operatingSystems the fingerprint may imitate.
	// +optional
	// +kubebuilder:validation:MaxItems=5
	// +listType=set
	OperatingSystems []FingerprintOS `json:"operatingSystems,omitempty"`

	// screen bounds the screen size the fingerprint presents.
	// +optional
	Screen *Screen `json:"screen,omitempty"`
}

// Screen bounds a fingerprint's screen size, in pixels.
// +kubebuilder:validation:XValidation:rule="!has(self.minWidth) || !has(self.maxWidth) || self.minWidth <= self.maxWidth",message="minWidth must not exceed maxWidth",fieldPath=".minWidth"
// +kubebuilder:validation:XValidation:rule="!has(self.minHeight) || !has(self.maxHeight) || self.minHeight <= self.maxHeight",message="minHeight must not exceed maxHeight",fieldPath=".minHeight"
type Screen struct {
	// maxHeight is the largest screen height.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=16384
	MaxHeight *int32 `json:"maxHeight,omitempty"`

	// maxWidth is the largest screen width.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=16384
	MaxWidth *int32 `json:"maxWidth,omitempty"`

	// minHeight is the smallest screen height.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=16384
	MinHeight *int32 `json:"minHeight,omitempty"`

	// minWidth is the smallest screen width.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=16384
	MinWidth *int32 `json:"minWidth,omitempty"`
}

// ProxyType discriminates a proxy entry.
// +kubebuilder:validation:Enum=cloud;external
type ProxyType string

const (
	// ProxyTypeCloud is a proxy the service provides.
	ProxyTypeCloud ProxyType = "cloud"
	// ProxyTypeExternal is a proxy the user provides.
	ProxyTypeExternal ProxyType = "external"
)

// Proxy is one proxy of a cloud browser, discriminated by type: a cloud proxy
// may have a geolocation; an external proxy needs a server.
// +union
// +kubebuilder:validation:XValidation:rule="self.type != 'external' || has(self.server)",message="server is required for an external proxy",fieldPath=".server",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="self.type == 'external' || !has(self.server)",message="server applies only to an external proxy",fieldPath=".server"
// +kubebuilder:validation:XValidation:rule="self.type == 'external' || (!has(self.username) && !has(self.passwordSecretRef))",message="username and passwordSecretRef apply only to an external proxy",fieldPath=".username"
// +kubebuilder:validation:XValidation:rule="self.type == 'cloud' || !has(self.geolocation)",message="geolocation applies only to a cloud proxy",fieldPath=".geolocation"
// +kubebuilder:validation:XValidation:rule="!has(self.server) || !self.server.matches('^([A-Za-z][A-Za-z0-9+.-]*://)?[^/?#]*@')",message="server must not carry credentials (user:password@): use username and passwordSecretRef",fieldPath=".server"
type Proxy struct {
	// type is `cloud` or `external`.
	// +required
	// +unionDiscriminator
	Type ProxyType `json:"type,omitempty"`

	// domainPattern limits the proxy to the hosts it matches: a regular
	// expression (RE2 syntax) matched against the whole host name, without
	// its port, ignoring case, e.g. `(.*\.)?example\.com`. The first proxy
	// whose pattern matches a host carries it; one without a pattern carries
	// any host; a host no proxy takes goes directly.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	DomainPattern string `json:"domainPattern,omitempty"`

	// geolocation is where a cloud proxy's exit is.
	// +optional
	Geolocation *ProxyGeolocation `json:"geolocation,omitempty"`

	// server is an external proxy's address, for example `http://proxy:3128`.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	Server string `json:"server,omitempty"`

	// username authenticates to an external proxy.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Username string `json:"username,omitempty"`

	// passwordSecretRef is the Secret key that holds an external proxy's
	// password.
	// +optional
	PasswordSecretRef *SecretKeyReference `json:"passwordSecretRef,omitempty"`
}

// ProxyGeolocation is where a cloud proxy's exit is.
type ProxyGeolocation struct {
	// country is an ISO 3166-1 alpha-2 country code, for example `US`.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=2
	// +kubebuilder:validation:Pattern=`^[A-Za-z]{2}$`
	Country string `json:"country,omitempty"`

	// city is a city within the country.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	City string `json:"city,omitempty"`

	// state is a state or region within the country.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	State string `json:"state,omitempty"`
}

// BrowserSessionPhase is a one-word summary of a session's conditions, for
// people to read. Conditions are the source of truth.
// +kubebuilder:validation:Enum=Pending;Starting;Ready;Ending;Ended;Failed
type BrowserSessionPhase string

const (
	// BrowserSessionPending means no runner pod exists yet.
	BrowserSessionPending BrowserSessionPhase = "Pending"
	// BrowserSessionStarting means the runner pod exists but is not ready.
	BrowserSessionStarting BrowserSessionPhase = "Starting"
	// BrowserSessionReady means the runner is ready to serve calls.
	BrowserSessionReady BrowserSessionPhase = "Ready"
	// BrowserSessionEnding means the session was ended and its browser is stopping.
	BrowserSessionEnding BrowserSessionPhase = "Ending"
	// BrowserSessionEnded means the browser is stopped and its pod is gone.
	BrowserSessionEnded BrowserSessionPhase = "Ended"
	// BrowserSessionFailed means the runner failed or disappeared.
	BrowserSessionFailed BrowserSessionPhase = "Failed"
)

// Condition types of a BrowserSession.
const (
	// BrowserSessionConditionReady is True while the runner serves calls.
	BrowserSessionConditionReady = "Ready"
	// BrowserSessionConditionEnding is True once the session was asked to
	// end: by spec.ended, by its timeout, or by its deletion.
	BrowserSessionConditionEnding = "Ending"
	// BrowserSessionConditionEnded is True once an ending session's browser
	// has stopped and its pod is gone.
	BrowserSessionConditionEnded = "Ended"
	// BrowserSessionConditionFailed is True once the runner failed or its
	// pod disappeared without the session being ended.
	BrowserSessionConditionFailed = "Failed"
	// BrowserSessionConditionQuotaExceeded is True while the session waits
	// for its project's quota (the manager's quota) to let it
	// have a browser, and when the quota made it fail; False once it was
	// let through after waiting. Absent when it never had to wait.
	BrowserSessionConditionQuotaExceeded = "QuotaExceeded"
	// BrowserSessionConditionUnsupportedSetting is True while the spec asks
	// for settings this installation accepts and does not honour; its
	// message names each (UnsupportedSettings). Absent when there are none.
	BrowserSessionConditionUnsupportedSetting = "UnsupportedSetting"
)

// Condition reasons of a BrowserSession.
const (
	// BrowserSessionReasonPodPending: the runner pod is not running yet.
	BrowserSessionReasonPodPending = "PodPending"
	// BrowserSessionReasonPodCreateFailed: the runner pod could not be
	// created; the manager keeps trying.
	BrowserSessionReasonPodCreateFailed = "PodCreateFailed"
	// BrowserSessionReasonRunnerNotReady: the runner container runs but is not ready.
	BrowserSessionReasonRunnerNotReady = "RunnerNotReady"
	// BrowserSessionReasonRunnerReady: the runner is ready.
	BrowserSessionReasonRunnerReady = "RunnerReady"
	// BrowserSessionReasonSessionOver: the session ended or failed.
	BrowserSessionReasonSessionOver = "SessionOver"
	// BrowserSessionReasonEndRequested: spec.ended was set.
	BrowserSessionReasonEndRequested = "EndRequested"
	// BrowserSessionReasonTimedOut: the session's timeout ran out.
	BrowserSessionReasonTimedOut = "TimedOut"
	// BrowserSessionReasonDeleted: the session is being deleted.
	BrowserSessionReasonDeleted = "Deleted"
	// BrowserSessionReasonBrowserStopped: the browser stopped and its pod is gone.
	BrowserSessionReasonBrowserStopped = "BrowserStopped"
	// BrowserSessionReasonPodFailed: the runner pod failed.
	BrowserSessionReasonPodFailed = "PodFailed"
	// BrowserSessionReasonRunnerExited: the runner exited without the
	// session being ended.
	BrowserSessionReasonRunnerExited = "RunnerExited"
	// BrowserSessionReasonPodDeleted: the runner pod was deleted, or is being
	// deleted, without the session being ended.
	BrowserSessionReasonPodDeleted = "PodDeleted"
	// BrowserSessionReasonExecutableNotAllowed: the session's
	// launchOptions.executablePath is not one the operator allows; no
	// runner pod was created.
	BrowserSessionReasonExecutableNotAllowed = "ExecutableNotAllowed"
	// BrowserSessionReasonRegionNotAllowed: the session's
	// cloudSessionCreateParams.region is not one the operator accepts
	// (the manager's runner.regions.accepted); no runner pod was created.
	BrowserSessionReasonRegionNotAllowed = "RegionNotAllowed"
	// BrowserSessionReasonRegionUnavailable: no node has the label that
	// places a runner in the session's region (the manager's
	// runner.regions table, with runner.nodeSelector), so its pod could
	// never be scheduled; no runner pod was created.
	BrowserSessionReasonRegionUnavailable = "RegionUnavailable"
	// BrowserSessionReasonSecretNotAllowed: the session references a Secret
	// that does not exist or has not opted in to it (LabelSessionSecret).
	// The session waits for it a while (Ready False), then fails.
	BrowserSessionReasonSecretNotAllowed = "SecretNotAllowed"
	// BrowserSessionReasonStartupTimedOut: the session did not become
	// Ready within the manager's startup deadline; the message carries the
	// pod's own words (ImagePullBackOff, Unschedulable, ...), and its
	// runner pod is deleted.
	BrowserSessionReasonStartupTimedOut = "StartupTimedOut"
	// BrowserSessionReasonUnclaimed: the /v1 API created the session but
	// its client never received the id before the claim deadline
	// (AnnotationClaimDeadline); the session ends.
	BrowserSessionReasonUnclaimed = "Unclaimed"
	// BrowserSessionReasonQuotaExceeded: the project has as many sessions
	// running as its quota allows, and this one waits (Ready False); or as
	// many live sessions, and this one fails.
	BrowserSessionReasonQuotaExceeded = "QuotaExceeded"
	// BrowserSessionReasonHandingOver: the session claimed a ready runner
	// of a BrowserPool, and the manager is handing it the session.
	BrowserSessionReasonHandingOver = "HandingOver"
	// BrowserSessionReasonClaimFailed: the session claimed a runner of a
	// BrowserPool, and the runner could not be handed the session; the
	// runner pod is deleted.
	BrowserSessionReasonClaimFailed = "ClaimFailed"
	// BrowserSessionReasonQuotaAdmitted: a session that waited for its
	// quota got its turn (QuotaExceeded False).
	BrowserSessionReasonQuotaAdmitted = "Admitted"
	// BrowserSessionReasonSettingsIgnored: the spec asks for settings this
	// installation does not honour (the UnsupportedSetting condition).
	BrowserSessionReasonSettingsIgnored = "SettingsIgnored"
)

// BrowserSessionStatus is the observed state of a BrowserSession.
type BrowserSessionStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is a one-word summary of the conditions: Pending, Starting,
	// Ready, Ending, Ended or Failed.
	// +optional
	Phase BrowserSessionPhase `json:"phase,omitempty"` //nolint:kubeapilinter // a summary of the conditions for kubectl get, which remain the source of truth

	// conditions are the source of truth of the session's state: Ready,
	// Ending, Ended and Failed.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// podName is the name of the session's runner pod.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	PodName string `json:"podName,omitempty"`

	// pool is the BrowserPool whose warm runner the session claimed;
	// absent, the session's runner was started for it (a cold start).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Pool string `json:"pool,omitempty"`

	// endpoint is the runner's in-cluster RPC address, `http://<podIP>:<port>`.
	// Calls to it need the session's runner token.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Endpoint string `json:"endpoint,omitempty"`

	// cdpUrl is the runner's in-cluster DevTools WebSocket proxy. Connecting
	// needs the session's runner token.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	CDPURL string `json:"cdpUrl,omitempty"`

	// startedAt is when the runner first became ready.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// expiresAt is when the session's timeout ends it.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// endedAt is when the session ended or failed.
	// +optional
	EndedAt *metav1.Time `json:"endedAt,omitempty"`

	// message says, for people, why the session is in its phase.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`

	// history is what the runner's history of calls left when the runner
	// stopped: counts per method and token usage, never a call's
	// parameters or result. The runner keeps the calls themselves in
	// memory while it runs (GET /v1/sessions/{id}/replay); the manager
	// copies this summary from the runner container's termination
	// message. Absent while the runner runs, and when it left none.
	// +optional
	History *BrowserSessionHistory `json:"history,omitempty"`
}

// BrowserSessionHistory summarizes the calls a session's runner served. A
// count of zero is left out.
type BrowserSessionHistory struct {
	// calls is how many operations (act, observe, extract, navigate) the
	// runner served, failures included.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Calls int64 `json:"calls,omitempty"`

	// failed is how many of them failed.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Failed int64 `json:"failed,omitempty"`

	// byMethod counts the calls per method.
	// +optional
	// +listType=map
	// +listMapKey=method
	// +kubebuilder:validation:MaxItems=16
	ByMethod []MethodCalls `json:"byMethod,omitempty"`

	// usage is the model usage of all calls.
	// +optional
	Usage *Usage `json:"usage,omitempty"`

	// firstCallAt is when the first call started.
	// +optional
	FirstCallAt *metav1.Time `json:"firstCallAt,omitempty"`

	// lastCallAt is when the last call ended.
	// +optional
	LastCallAt *metav1.Time `json:"lastCallAt,omitempty"`
}

// MethodCalls counts the calls of one method.
type MethodCalls struct {
	// method is the operation: act, observe, extract, navigate, or other.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Method string `json:"method,omitempty"`

	// calls is how many calls of the method the runner served.
	// +required
	// +kubebuilder:validation:Minimum=1
	Calls int64 `json:"calls,omitempty"`
}

// Finished reports whether the session has ended or failed: it holds no
// browser and never will again.
func (st *BrowserSessionStatus) Finished() bool {
	return meta.IsStatusConditionTrue(st.Conditions, BrowserSessionConditionFailed) ||
		meta.IsStatusConditionTrue(st.Conditions, BrowserSessionConditionEnded)
}

// BrowserSession is one browser, run by one runner pod, with the model
// settings that act, observe, extract and agents use against it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bs,categories=browserfleet
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Model",type=string,JSONPath=`.spec.model.name`
// +kubebuilder:printcolumn:name="Pod",type=string,JSONPath=`.status.podName`
// +kubebuilder:printcolumn:name="Pool",type=string,JSONPath=`.status.pool`,priority=1
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.status.expiresAt`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name must be at most 63 characters: it labels the session's runner pod"
type BrowserSession struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the object's metadata; its name is the session id.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the session.
	// +required
	Spec BrowserSessionSpec `json:"spec,omitzero"`

	// status is the observed state of the session.
	// +optional
	Status BrowserSessionStatus `json:"status,omitempty"` //nolint:kubeapilinter // a value, as in every kubebuilder API; the apiserver starts it empty
}

// BrowserSessionList is a list of BrowserSessions.
// +kubebuilder:object:root=true
type BrowserSessionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BrowserSession `json:"items"`
}
