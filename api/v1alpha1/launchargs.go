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
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The Chromium switches a session may pass in launchOptions.args: an
// allowlist, because a browser that runs untrusted content for many tenants
// must not take a switch that launches a program (--renderer-cmd-prefix,
// --gpu-launcher, --browser-subprocess-path), reads or writes a file
// (--log-file, --js-flags, --use-file-for-fake-video-capture), loads code
// (--load-extension), opens the browser to others (--remote-debugging-*,
// --remote-allow-origins), bypasses the runner's network gate (--proxy-*,
// --host-resolver-rules) or weakens its security checks
// (--disable-web-security). Chromium has hundreds of switches and adds new
// ones with each release; only those listed here, each with the values it
// may take, are accepted.
//
// This table is the one home of the list. The BrowserSession CRD checks each
// item of launchOptions.args with the CEL rules generated from it
// (hack/launchargs writes zz_generated.launchargs.go and
// docs/launch-args.md; `make generate`), the /v1 API checks start requests
// with ValidateLaunchArg, and the runner checks its session's args again
// with ParseLaunchArg.

// LaunchArgValue says what value a launch switch takes.
//
//nolint:kubeapilinter // a Go enum of the switch table, never serialized
type LaunchArgValue int

const (
	// NoValue switches stand alone: `--name`.
	NoValue LaunchArgValue = iota
	// OneOf switches take one of Values: `--name=value`.
	OneOf
	// Matching switches take a value that matches Pattern: `--name=value`.
	Matching
	// ListOf switches take a comma-separated list of Values, at most
	// MaxLaunchArgListItems of them: `--name=a,b`.
	ListOf
)

// MaxLaunchArgListItems bounds the names of a ListOf switch.
const MaxLaunchArgListItems = 32

// LaunchSwitch is one allowed switch.
//
//nolint:kubeapilinter // a row of the Go switch table, not an API type
type LaunchSwitch struct {
	// Name is the switch without its leading `--`.
	Name string
	// Value says what value it takes.
	Value LaunchArgValue
	// Values are the values of a OneOf switch, or the names a ListOf
	// switch's list is drawn from.
	Values []string
	// Pattern is the RE2 pattern a Matching switch's whole value must
	// match, without anchors. It holds neither backslashes nor quotes, so
	// that it reads the same in Go, in a CEL string and in a marker.
	Pattern string
	// Describe says in words what a Matching value is.
	Describe string
	// Example is a value a Matching switch allows.
	Example string
}

// LaunchSwitchFamily is a group of switches allowed for the same reason.
//
//nolint:kubeapilinter // a row of the Go switch table, not an API type
type LaunchSwitchFamily struct {
	// Name names the family.
	Name string
	// Reason says why its switches are allowed.
	Reason string
	// Switches are its switches.
	Switches []LaunchSwitch
}

// Value patterns shared by several switches.
const (
	localePattern = `[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}`
)

// launchSwitchFamilies is the allowlist. When in doubt, a switch stays out:
// a session that needs one more switch asks for it to be added here, with
// its reason.
var launchSwitchFamilies = []LaunchSwitchFamily{
	{
		Name: "Rendering and fonts",
		Reason: "Predictable pixels for screenshots and layout, and rendering that works without a GPU. " +
			"They change how pages are drawn, nothing else.",
		Switches: []LaunchSwitch{
			{Name: "disable-gpu"},
			{Name: "disable-software-rasterizer"},
			{Name: "disable-lcd-text"},
			{Name: "disable-smooth-scrolling"},
			{Name: "font-render-hinting", Value: OneOf, Values: []string{"none", "slight", "medium", "full"}},
			{Name: "force-color-profile", Value: OneOf, Values: []string{"srgb", "display-p3-d65", "generic-rgb"}},
			{Name: "force-device-scale-factor", Value: Matching, Pattern: `[0-9]{1,2}([.][0-9]{1,3})?`, Describe: "a number such as `2` or `1.5`", Example: "1.5"},
			{Name: "force-dark-mode"},
			{Name: "force-prefers-reduced-motion"},
			{Name: "hide-scrollbars"},
			{Name: "start-maximized"},
			{Name: "window-size", Value: Matching, Pattern: `[1-9][0-9]{0,4},[1-9][0-9]{0,4}`, Describe: "`width,height` in pixels", Example: "1366,768"},
		},
	},
	{
		Name: "Language",
		Reason: "The language the browser asks pages for and formats dates and numbers in. " +
			"launchOptions.locale sets both; these refine it.",
		Switches: []LaunchSwitch{
			{Name: "lang", Value: Matching, Pattern: localePattern, Describe: "a locale such as `de-DE`", Example: "de-DE"},
			{Name: "accept-lang", Value: Matching, Pattern: localePattern + "(," + localePattern + "){0,15}", Describe: "up to 16 comma-separated locales such as `de-DE,de,en`", Example: "de-DE,de,en"},
		},
	},
	{
		Name: "Media and autoplay",
		Reason: "Media that plays without a user gesture, sound off, and fake capture devices that produce test patterns. " +
			"The fake devices read no file: the switches that name one (--use-file-for-fake-*) are refused.",
		Switches: []LaunchSwitch{
			{Name: "autoplay-policy", Value: OneOf, Values: []string{"no-user-gesture-required", "user-gesture-required", "document-user-activation-required"}},
			{Name: "mute-audio"},
			{Name: "use-fake-device-for-media-stream"},
		},
	},
	{
		Name: "Background throttling",
		Reason: "Timers and rendering keep running in tabs and windows nobody looks at, as automation needs; " +
			"the runner passes them by default.",
		Switches: []LaunchSwitch{
			{Name: "disable-background-timer-throttling"},
			{Name: "disable-backgrounding-occluded-windows"},
			{Name: "disable-renderer-backgrounding"},
			{Name: "disable-ipc-flooding-protection"},
			{Name: "disable-hang-monitor"},
		},
	},
	{
		Name: "Automation defaults",
		Reason: "The switches Puppeteer and Playwright pass by default, so that a client that passes its own list " +
			"(with ignoreDefaultArgs) keeps working: no first-run UI, no prompts, infobars or crash bubbles, " +
			"nothing that phones home, a basic password store. The runner's safety switches are among them; " +
			"passing them again changes nothing.",
		Switches: []LaunchSwitch{
			{Name: "allow-pre-commit-input"},
			{Name: "disable-back-forward-cache"},
			{Name: "disable-background-networking"},
			{Name: "disable-breakpad"},
			{Name: "disable-client-side-phishing-detection"},
			{Name: "disable-component-extensions-with-background-pages"},
			{Name: "disable-component-update"},
			{Name: "disable-default-apps"},
			{Name: "disable-dev-shm-usage"},
			{Name: "disable-domain-reliability"},
			{Name: "disable-extensions"},
			{Name: "disable-field-trial-config"},
			{Name: "disable-infobars"},
			{Name: "disable-notifications"},
			{Name: "disable-popup-blocking"},
			{Name: "disable-prompt-on-repost"},
			{Name: "disable-quic"},
			{Name: "disable-search-engine-choice-screen"},
			{Name: "disable-session-crashed-bubble"},
			{Name: "disable-sync"},
			{Name: "enable-automation"},
			{Name: "export-tagged-pdf"},
			{Name: "hide-crash-restore-bubble"},
			{Name: "metrics-recording-only"},
			{Name: "no-default-browser-check"},
			{Name: "no-first-run"},
			{Name: "no-pings"},
			{Name: "no-service-autorun"},
			{Name: "noerrdialogs"},
			{Name: "password-store", Value: OneOf, Values: []string{"basic"}},
			{Name: "safebrowsing-disable-auto-update"},
			{Name: "use-mock-keychain"},
		},
	},
	{
		Name: "Sandbox",
		Reason: "Chromium's own sandbox is off by default (chromiumSandbox: false): the runner pod is the sandbox. " +
			"Clients that say so with a switch instead get the same.",
		Switches: []LaunchSwitch{
			{Name: "no-sandbox"},
			{Name: "disable-setuid-sandbox"},
		},
	},
	{
		Name: "Features",
		Reason: "Named features only: ones automation commonly turns off (translation, media routing, " +
			"optimization hints, back-forward cache, lazy loading, paint holding, ...) or on (overlay scrollbars, " +
			"forced dark pages), and AutomationControlled, which sets navigator.webdriver. " +
			"None turns off site isolation or a security check.",
		Switches: []LaunchSwitch{
			{Name: "disable-features", Value: ListOf, Values: []string{
				"AcceptCHFrame", "AutoExpandDetailsElement", "AutofillServerCommunication",
				"AvoidUnnecessaryBeforeUnloadCheckSync", "BackForwardCache", "CalculateNativeWinOcclusion",
				"CertificateTransparencyComponentUpdater", "DestroyProfileOnBrowserClose", "DialMediaRouteProvider",
				"GlobalMediaControls", "HttpsUpgrades", "ImprovedCookieControls", "InterestFeedContentSuggestions",
				"LazyFrameLoading", "LensOverlay", "MediaRouter", "OptimizationHints", "PaintHolding",
				"ThirdPartyStoragePartitioning", "Translate",
			}},
			{Name: "enable-features", Value: ListOf, Values: []string{"OverlayScrollbar", "WebContentsForceDark"}},
			{Name: "disable-blink-features", Value: ListOf, Values: []string{"AutomationControlled"}},
		},
	},
	{
		Name: "Identity",
		Reason: "What the browser tells pages about itself. A value is a string, never a path. " +
			"--user-agent replaces the user agent string of every tab; the client hints stay those of the " +
			"session's device profile.",
		Switches: []LaunchSwitch{
			{Name: "user-agent", Value: Matching, Pattern: `[ -~]{1,512}`, Describe: "up to 512 printable ASCII characters",
				Example: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"},
		},
	},
}

// LaunchSwitchFamilies returns the allowlist of launchOptions.args, by
// family. The caller may change what it gets.
func LaunchSwitchFamilies() []LaunchSwitchFamily {
	out := make([]LaunchSwitchFamily, len(launchSwitchFamilies))
	for i, f := range launchSwitchFamilies {
		out[i] = f
		out[i].Switches = make([]LaunchSwitch, len(f.Switches))
		for j, s := range f.Switches {
			s.Values = slices.Clone(s.Values)
			out[i].Switches[j] = s
		}
	}
	return out
}

// launchSwitches indexes the allowlist by name.
var launchSwitches = func() map[string]LaunchSwitch {
	m := map[string]LaunchSwitch{}
	for _, f := range launchSwitchFamilies {
		for _, s := range f.Switches {
			if _, dup := m[s.Name]; dup {
				panic("v1alpha1: launch switch listed twice: " + s.Name)
			}
			m[s.Name] = s
		}
	}
	return m
}()

// valueRegexp is the unanchored pattern of a switch's value; "" for NoValue.
func (s LaunchSwitch) valueRegexp() string {
	switch s.Value {
	case OneOf:
		return "(" + strings.Join(s.Values, "|") + ")"
	case Matching:
		return "(" + s.Pattern + ")"
	case ListOf:
		one := "(" + strings.Join(s.Values, "|") + ")"
		return one + "(," + one + fmt.Sprintf("){0,%d}", MaxLaunchArgListItems-1)
	}
	return ""
}

// argRegexp is the unanchored pattern of the whole argument.
func (s LaunchSwitch) argRegexp() string {
	if s.Value == NoValue {
		return "--" + s.Name
	}
	return "--" + s.Name + "=" + s.valueRegexp()
}

// sortedSwitches lists the allowlist by name, so that generated rules are
// stable.
func sortedSwitches() []LaunchSwitch {
	out := make([]LaunchSwitch, 0, len(launchSwitches))
	for _, s := range launchSwitches {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b LaunchSwitch) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// LaunchArgRule is one CEL rule, with its message, that the BrowserSession
// CRD checks each launchOptions.args item with.
//
//nolint:kubeapilinter // input of hack/launchargs, not an API type
type LaunchArgRule struct {
	Rule, Message string
}

// LaunchArgRules are the CRD's rules on each launchOptions.args item,
// generated from the allowlist: the switch is on it, a switch that takes no
// value gets none, and each switch that takes one gets one it allows. One
// rule per switch keeps each regular expression short: the API server
// bounds a rule's estimated cost, which grows with the expression's length
// times the item's (1024) times the list's (64).
func LaunchArgRules() []LaunchArgRule {
	var all, bare []string
	var valued []LaunchSwitch
	for _, s := range sortedSwitches() {
		all = append(all, s.Name)
		if s.Value == NoValue {
			bare = append(bare, s.Name)
		} else {
			valued = append(valued, s)
		}
	}
	rules := []LaunchArgRule{
		{
			Rule:    "self.matches('^--(" + strings.Join(all, "|") + ")(=|$)')",
			Message: "is not an allowed Chromium switch (the allowed ones are listed in docs/launch-args.md)",
		},
		{
			Rule:    "!self.matches('^--(" + strings.Join(bare, "|") + ")=')",
			Message: "gives a value to a switch that takes none",
		},
	}
	for _, s := range valued {
		rules = append(rules, LaunchArgRule{
			Rule:    fmt.Sprintf("!(self == '--%s' || self.startsWith('--%s=')) || self.matches('^%s$')", s.Name, s.Name, s.argRegexp()),
			Message: fmt.Sprintf("--%s takes %s", s.Name, s.describeValue()),
		})
	}
	return rules
}

// launchArgRegexps are compiled on first use: every process that links
// the API types (a runner among them) would otherwise hold them, some
// 5 MB, though most never parse a launch argument.
var launchArgRegexps = sync.OnceValue(func() map[string]*regexp.Regexp {
	m := map[string]*regexp.Regexp{}
	for name, s := range launchSwitches {
		m[name] = regexp.MustCompile("^" + s.argRegexp() + "$")
	}
	return m
})

// ParseLaunchArg checks one item of launchOptions.args against the
// allowlist and splits it: name without the leading `--`, and value, empty
// for a switch that takes none. The error names the switch and says what it
// takes; it is a message for the author of the session.
func ParseLaunchArg(arg string) (name, value string, err error) {
	rest, ok := strings.CutPrefix(arg, "--")
	if !ok {
		return "", "", fmt.Errorf("%s is not a --switch: Chromium would open a positional argument as a page, and the runner owns the first tab", quoteArg(arg))
	}
	name, value, hasValue := strings.Cut(rest, "=")
	s, ok := launchSwitches[name]
	if !ok {
		return "", "", fmt.Errorf("%s is not an allowed Chromium switch; the allowed ones are listed in docs/launch-args.md", switchName(name))
	}
	if launchArgRegexps()[name].MatchString(arg) {
		return name, value, nil
	}
	switch {
	case s.Value == NoValue:
		return "", "", fmt.Errorf("--%s takes no value", name)
	case !hasValue:
		return "", "", fmt.Errorf("--%s needs a value: %s", name, s.describeValue())
	}
	return "", "", fmt.Errorf("--%s: the value %s is not allowed; want %s", name, quoteArg(value), s.describeValue())
}

// ValidateLaunchArg reports whether arg is an allowed launch switch, as
// ParseLaunchArg does.
func ValidateLaunchArg(arg string) error {
	_, _, err := ParseLaunchArg(arg)
	return err
}

// DescribeValue says in words what value the switch takes.
func (s LaunchSwitch) DescribeValue() string { return s.describeValue() }

// ExampleArg is an argument that passes the switch: `--name`, or
// `--name=value` with its example or first allowed value.
func (s LaunchSwitch) ExampleArg() string {
	switch s.Value {
	case OneOf, ListOf:
		return "--" + s.Name + "=" + s.Values[0]
	case Matching:
		return "--" + s.Name + "=" + s.Example
	}
	return "--" + s.Name
}

func (s LaunchSwitch) describeValue() string {
	switch s.Value {
	case OneOf:
		return "one of " + strings.Join(s.Values, ", ")
	case Matching:
		return s.Describe
	case ListOf:
		return fmt.Sprintf("a comma-separated list of up to %d of %s", MaxLaunchArgListItems, strings.Join(s.Values, ", "))
	}
	return "no value"
}

// switchName shows a switch a caller named: as written when it looks like
// a switch, quoted otherwise.
func switchName(name string) string {
	if switchLike.MatchString(name) {
		return "--" + name
	}
	return quoteArg("--" + name)
}

var switchLike = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// quoteArg quotes a caller's text for a message, shortened.
func quoteArg(s string) string { return fmt.Sprintf("%q", shorten(s)) }

func shorten(s string) string {
	const maxLen = 64
	if len(s) <= maxLen {
		return s
	}
	return s[:maxLen] + "..."
}

// DataDirNamePattern is what launchOptions.userDataDir and downloadsPath
// hold: a name, one path segment that is neither `.` nor `..`, which the
// runner resolves under its data directory. The fields' markers repeat it
// (a test holds them to it).
const DataDirNamePattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`

var dataDirName = regexp.MustCompile(DataDirNamePattern)

// ValidateDataDirName reports whether name is a valid userDataDir or
// downloadsPath.
func ValidateDataDirName(name string) error {
	if !dataDirName.MatchString(name) {
		return fmt.Errorf("%s is not a directory name: want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (a name under the runner's data directory, never a path)", quoteArg(name))
	}
	return nil
}
