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
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/runner/config"

	"golang.org/x/net/http/httpguts"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// MaxCDPHeaders bounds the headers of a session's cdpHeadersSecretRef, as
// the /v1 API bounds cdpHeaders.
const MaxCDPHeaders = 32

// DefaultConnectTimeout bounds attaching to a session's cdpUrl when
// launchOptions.connectTimeoutMs is not set, as Playwright's connectOverCDP.
const DefaultConnectTimeout = 30 * time.Second

// settings is what the runner does with a session's spec: the union of
// launchOptions (type local) and cloudSessionCreateParams (type cloud; both
// run a Chromium on the runner pod), with defaults applied and the device
// profile chosen. newSettings is the only place that reads the spec's
// browser fields.
type settings struct {
	// attach, when set, attaches to an existing browser instead of
	// launching one; the launch fields are then unused.
	attach *attachSettings

	execPath string
	// headlessShell says execPath is Chromium's headless-only build.
	headlessShell bool
	// siteIsolation keeps cross-site iframes in renderers of their own
	// (Chromium's default); the operator may turn it off.
	siteIsolation bool
	// webgl keeps the software GPU that runs WebGL; see
	// config.DisableWebGL.
	webgl             bool
	port              int32
	headless          bool
	devtools          bool
	sandbox           bool
	userArgs          []flag
	ignoreDefaultArgs []string
	ignoreAllDefaults bool
	// proxies are the session's upstream proxies, in order (egressRoute).
	proxies []proxySettings

	// userDataDir is the profile's path under the data directory; empty
	// means a temporary profile removed at close.
	userDataDir         string
	preserveUserDataDir bool

	// downloadsPath is the downloads directory's path under the data
	// directory; empty means a temporary directory removed at close.
	downloadsPath     string
	acceptDownloads   bool
	downloadsExplicit bool

	ignoreHTTPSErrors bool
	blockAds          bool
	// stealth is browserSettings.advancedStealth: see stealth.go.
	stealth bool

	profile deviceProfile
	// locale is a BCP 47 tag ("de-DE"), or empty for Chromium's default.
	locale string
	// userAgent, from a --user-agent switch, replaces the profile's user
	// agent string.
	userAgent string

	// captchaImage and captchaInput are the captcha's selectors when the
	// session's captchas are to be solved (see captchaSettings); empty
	// otherwise.
	captchaImage, captchaInput string

	// notes say what the session asked for and the runner cannot do; they
	// are logged once at start.
	notes []string
}

type attachSettings struct {
	url            string
	headers        map[string]string
	connectTimeout time.Duration
}

type proxySettings struct {
	server   string
	bypass   string
	username string
	password config.Secret
	// domain, when not nil, limits the proxy to the hosts it matches
	// (a cloud session's domainPattern).
	domain *regexp.Regexp
}

// flag is one Chromium command-line switch: value is a string (--name=value)
// or true (--name).
type flag struct {
	name  string
	value any
}

func newSettings(cfg *config.Config) (*settings, error) {
	spec := &cfg.Spec
	var lo *v1alpha1.LaunchOptions
	var attach bool
	if b := spec.Browser; b != nil {
		lo = b.LaunchOptions
		attach = b.CDPURLSecretRef != nil
	}
	if lo == nil {
		lo = &v1alpha1.LaunchOptions{}
	}
	var params *v1alpha1.CloudSessionCreateParams
	var bs *v1alpha1.BrowserSettings
	if params = spec.CloudSessionCreateParams; params != nil {
		bs = params.BrowserSettings
	}
	if bs == nil {
		bs = &v1alpha1.BrowserSettings{}
	}

	s := &settings{
		execPath:            cfg.ChromiumPath,
		headless:            ptr.Deref(lo.Headless, true),
		devtools:            ptr.Deref(lo.Devtools, false),
		sandbox:             ptr.Deref(lo.ChromiumSandbox, false),
		ignoreDefaultArgs:   lo.IgnoreDefaultArgs,
		ignoreAllDefaults:   ptr.Deref(lo.IgnoreAllDefaultArgs, false),
		preserveUserDataDir: ptr.Deref(lo.PreserveUserDataDir, false),
		acceptDownloads:     ptr.Deref(lo.AcceptDownloads, true),
		downloadsExplicit:   lo.DownloadsPath != "" || lo.AcceptDownloads != nil,
		ignoreHTTPSErrors:   ptr.Deref(lo.IgnoreHTTPSErrors, false),
		blockAds:            ptr.Deref(bs.BlockAds, false),
		stealth:             ptr.Deref(bs.AdvancedStealth, false),
		siteIsolation:       !cfg.DisableSiteIsolation,
		webgl:               !cfg.DisableWebGL,
	}
	if lo.Port != nil {
		s.port = *lo.Port
	}

	// The manager and the API check all of this first; the runner checks
	// again, so that a session that reached it another way gets nothing
	// the allowlists refuse.
	var errs []error
	if p := lo.ExecutablePath; p != "" {
		if p != cfg.ChromiumPath && !rpc.ExecutableAllowed(p, cfg.AllowedExecutables) {
			errs = append(errs, fmt.Errorf("launchOptions.executablePath %q is not a browser this runner allows (its --chromium and --allowed-executable)", p))
		} else {
			s.execPath = p
		}
	}
	if lo.ExecutablePath == "" && s.headless && !s.devtools && !s.ignoresDefault("headless") && executable(cfg.HeadlessShellPath) {
		// The headless-only build holds less memory (docs/performance.md);
		// it cannot show a window, so a session that asks for one, or
		// drops the --headless switch, gets the full browser.
		s.execPath, s.headlessShell = cfg.HeadlessShellPath, true
	}
	dataDir := cfg.DataDir
	if dataDir == "" {
		dataDir = config.DefaultDataDir()
	}
	for _, d := range []struct {
		field, name, sub string
		path             *string
	}{
		{"userDataDir", lo.UserDataDir, "profiles", &s.userDataDir},
		{"downloadsPath", lo.DownloadsPath, "downloads", &s.downloadsPath},
	} {
		if d.name == "" {
			continue
		}
		if err := v1alpha1.ValidateDataDirName(d.name); err != nil {
			errs = append(errs, fmt.Errorf("launchOptions.%s: %w", d.field, err))
			continue
		}
		*d.path = filepath.Join(dataDir, d.sub, d.name)
	}
	for i, a := range lo.Args {
		name, value, err := v1alpha1.ParseLaunchArg(string(a))
		if err != nil {
			errs = append(errs, fmt.Errorf("launchOptions.args[%d]: %w", i, err))
			continue
		}
		f := flag{name: name, value: true}
		if value != "" {
			f.value = value
		}
		if name == "user-agent" {
			s.userAgent = value
		}
		s.userArgs = append(s.userArgs, f)
	}

	if attach {
		// The URL and the headers are secrets (files the manager mounts):
		// no error quotes them.
		cdpURL := cfg.Secrets.CDPURL.Reveal()
		u, err := url.Parse(cdpURL)
		switch {
		case cdpURL == "":
			errs = append(errs, fmt.Errorf("browser.cdpUrlSecretRef: the runner has no cdpUrl (file %s is missing or empty)", rpc.FileCDPURL))
		case err != nil:
			errs = append(errs, errors.New("cdpUrl is not a URL"))
		case u.Scheme != "ws" && u.Scheme != "wss" && u.Scheme != "http" && u.Scheme != "https":
			errs = append(errs, fmt.Errorf("cdpUrl scheme %q is not ws, wss, http or https", u.Scheme))
		case u.Host == "":
			errs = append(errs, errors.New("cdpUrl has no host"))
		}
		if n := len(cfg.Secrets.CDPHeaders); n > MaxCDPHeaders {
			errs = append(errs, fmt.Errorf("browser.launchOptions.cdpHeadersSecretRef: %d headers, at most %d", n, MaxCDPHeaders))
		}
		var headers map[string]string
		for k, v := range cfg.Secrets.CDPHeaders {
			// A header's name is no secret; its value is.
			if !httpguts.ValidHeaderFieldName(k) {
				errs = append(errs, fmt.Errorf("browser.launchOptions.cdpHeadersSecretRef: %q is not a header name", k))
			} else if !httpguts.ValidHeaderFieldValue(v.Reveal()) {
				errs = append(errs, fmt.Errorf("browser.launchOptions.cdpHeadersSecretRef: the value of header %s is not a valid header value", k))
			}
			if headers == nil {
				headers = map[string]string{}
			}
			headers[k] = v.Reveal()
		}
		s.attach = &attachSettings{url: cdpURL, headers: headers, connectTimeout: DefaultConnectTimeout}
		if s.stealth {
			// An attached browser is someone else's: the runner opens
			// no connection to it of its own (stealth.go needs one).
			s.stealth = false
			s.notes = append(s.notes, "browserSettings.advancedStealth does not apply when attaching to cdpUrl")
		}
		if lo.ConnectTimeoutMs != nil && *lo.ConnectTimeoutMs > 0 {
			s.attach.connectTimeout = time.Duration(*lo.ConnectTimeoutMs) * time.Millisecond
		}
		for _, o := range []struct {
			name string
			set  bool
		}{
			{"args", len(lo.Args) > 0},
			{"executablePath", lo.ExecutablePath != ""},
			{"port", lo.Port != nil},
			{"userDataDir", lo.UserDataDir != ""},
			{"headless", lo.Headless != nil},
			{"devtools", lo.Devtools != nil},
			{"chromiumSandbox", lo.ChromiumSandbox != nil},
			{"ignoreDefaultArgs", len(lo.IgnoreDefaultArgs) > 0 || lo.IgnoreAllDefaultArgs != nil},
			{"proxy", lo.Proxy != nil},
		} {
			if o.set {
				s.notes = append(s.notes, "launchOptions."+o.name+" does not apply when attaching to cdpUrl")
			}
		}
	}

	// The proxies: the launch proxy, for every host its bypass list does
	// not name; else the external proxies of the cloud parameters, each
	// for the hosts its domainPattern matches, the first match winning,
	// one without a pattern for any host (see egressRoute). Cloud proxies
	// are not served here (v1alpha1.UnsupportedSettings says so).
	if p := lo.Proxy; p != nil {
		s.proxies = []proxySettings{{server: p.Server, bypass: p.Bypass, username: p.Username, password: cfg.Secrets.LaunchProxyPassword}}
	} else if params != nil {
		for i, p := range params.Proxies {
			if p.Type == v1alpha1.ProxyTypeCloud {
				continue
			}
			ps := proxySettings{server: p.Server, username: p.Username, password: cfg.Secrets.ProxyPasswords[i]}
			if p.DomainPattern != "" {
				re, err := v1alpha1.DomainPatternRegexp(p.DomainPattern)
				if err != nil {
					errs = append(errs, fmt.Errorf("cloudSessionCreateParams.proxies[%d].domainPattern: %w", i, err))
					continue
				}
				ps.domain = re
			}
			s.proxies = append(s.proxies, ps)
		}
	}
	for _, p := range s.proxies {
		if _, err := egress.ParseUpstream(p.server); err != nil {
			errs = append(errs, err)
		}
	}
	for _, a := range s.ignoreDefaultArgs {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); isSafetyFlag(name) {
			s.notes = append(s.notes, fmt.Sprintf("launchOptions.ignoreDefaultArgs: --%s is one of the runner's safety switches and stays", name))
		}
	}

	s.profile, s.notes = chooseProfileNotes(bs, s.notes)
	vp := lo.Viewport
	if vp == nil {
		vp = bs.Viewport
	}
	if vp != nil {
		s.profile.Viewport = size{int64(vp.Width), int64(vp.Height)}
		s.profile.Screen.Width = max(s.profile.Screen.Width, s.profile.Viewport.Width)
		s.profile.Screen.Height = max(s.profile.Screen.Height, s.profile.Viewport.Height)
	}
	if lo.DeviceScaleFactor != nil {
		s.profile.DeviceScaleFactor = *lo.DeviceScaleFactor
	}
	if lo.HasTouch != nil {
		s.profile.Touch = *lo.HasTouch
		switch {
		case !s.profile.Touch:
			s.profile.MaxTouchPoints = 0
		case s.profile.MaxTouchPoints == 0:
			s.profile.MaxTouchPoints = 5
		}
	}
	s.locale = strings.ReplaceAll(lo.Locale, "_", "-")
	if s.locale == "" && bs.Fingerprint != nil && len(bs.Fingerprint.Locales) > 0 {
		s.locale = strings.ReplaceAll(bs.Fingerprint.Locales[0], "_", "-")
	}

	var cerr error
	s.captchaImage, s.captchaInput, s.notes, cerr = captchaSettings(bs, s.notes)
	if cerr != nil {
		errs = append(errs, cerr)
	}

	// What the manager reports in the session's UnsupportedSetting
	// condition, in the runner's log too.
	for _, u := range v1alpha1.UnsupportedSettings(spec) {
		s.notes = append(s.notes, u.String())
	}
	return s, errors.Join(errs...)
}

// captchaSettings reads the captcha fields of bs: the selectors when
// captchas are to be solved, which is when both are set and solveCaptchas
// is not false (it defaults to true, as in the reference service). One
// selector without the other, or one this runner cannot resolve, is an
// error naming the field; solveCaptchas without selectors, and selectors
// with solveCaptchas false, are noted.
func captchaSettings(bs *v1alpha1.BrowserSettings, notes []string) (image, input string, _ []string, _ error) {
	const base = "cloudSessionCreateParams.browserSettings."
	img, in := bs.CaptchaImageSelector, bs.CaptchaInputSelector
	var errs []error
	switch {
	case img == "" && in == "":
		// solveCaptchas alone: v1alpha1.UnsupportedSettings says so.
		return "", "", notes, nil
	case img == "":
		return "", "", notes, fmt.Errorf("%scaptchaImageSelector is required with captchaInputSelector", base)
	case in == "":
		return "", "", notes, fmt.Errorf("%scaptchaInputSelector is required with captchaImageSelector", base)
	}
	for _, f := range []struct{ name, sel string }{{"captchaImageSelector", img}, {"captchaInputSelector", in}} {
		if err := page.CheckSelector(f.sel); err != nil {
			errs = append(errs, fmt.Errorf("%s%s: %w", base, f.name, err))
		}
	}
	if len(errs) > 0 {
		return "", "", notes, errors.Join(errs...)
	}
	if !ptr.Deref(bs.SolveCaptchas, true) {
		return "", "", append(notes, "browserSettings.captchaImageSelector and captchaInputSelector: solveCaptchas is false, so captchas are not solved"), nil
	}
	return img, in, notes, nil
}

// CaptchaSelectors returns the selectors of the session's captcha image
// and answer field, and whether the session's captchas are to be solved.
func (b *Browser) CaptchaSelectors() (image, input string, ok bool) {
	s := b.settings
	return s.captchaImage, s.captchaInput, s.captchaImage != ""
}

// ignoresDefault reports whether the session drops the default switch
// name, by name or with all the defaults.
func (s *settings) ignoresDefault(name string) bool {
	if s.ignoreAllDefaults {
		return true
	}
	return slices.ContainsFunc(s.ignoreDefaultArgs, func(a string) bool {
		n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		return n == name
	})
}

// executable reports whether path names an executable file.
func executable(path string) bool {
	if path == "" {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func chooseProfileNotes(bs *v1alpha1.BrowserSettings, notes []string) (deviceProfile, []string) {
	p, more := chooseProfile(bs.OS, bs.Fingerprint)
	return p, append(notes, more...)
}

// egressRoute routes the egress proxy's connections through the session's
// proxies, nil when it has none: the launch proxy for every host its bypass
// list does not name; a cloud session's external proxies by their
// domainPattern, in order, the first that matches the host (or has no
// pattern) winning, and a host none matches directly. Either way every
// connection still goes through the egress gate's Dialer. newSettings
// checked the servers and patterns.
func (s *settings) egressRoute() egress.Router {
	type route struct {
		// via is the proxy's router: itself, but for the hosts its
		// bypass list names and loopback, which go directly.
		via    egress.Router
		domain *regexp.Regexp
	}
	var routes []route
	for _, p := range s.proxies {
		u, err := egress.ParseUpstream(p.server)
		if err != nil {
			return nil
		}
		up := &egress.Upstream{URL: u, Username: p.username, Password: p.password.Reveal()}
		routes = append(routes, route{egress.BypassRouter(up, p.bypass), p.domain})
	}
	switch len(routes) {
	case 0:
		return nil
	case 1:
		if routes[0].domain == nil {
			return routes[0].via
		}
	}
	return func(hostport string) *egress.Upstream {
		host := hostport
		if h, _, err := net.SplitHostPort(hostport); err == nil {
			host = h
		}
		for _, r := range routes {
			if r.domain == nil || r.domain.MatchString(host) {
				return r.via(hostport)
			}
		}
		return nil
	}
}

// ValidateSettings refuses the session settings StartBrowser would refuse,
// so that the runner fails before it serves.
func ValidateSettings(cfg *config.Config) error {
	_, err := newSettings(cfg)
	return err
}
