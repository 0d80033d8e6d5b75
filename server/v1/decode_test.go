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

package v1

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeStartIssues(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []Issue
	}{
		{"not JSON", `{"modelName":`, []Issue{{"", "request body is not valid JSON: unexpected EOF"}}},
		{"empty body", ``, []Issue{{"", "request body is empty; want a JSON object"}}},
		{"not an object", `[]`, []Issue{{"", "must be an object; got an array"}}},
		{"missing modelName", `{}`, []Issue{{"modelName", issueModelRequired}}},
		{"auto without a gateway", `{"modelName":"auto"}`, []Issue{{"modelName", issueAutoNoGateway}}},
		{"unprefixed modelName", `{"modelName":"gpt-4o"}`, []Issue{{"modelName", "must be provider-prefixed, <provider>/<model>, for example openai/gpt-4.1-mini, or auto (the model gateway's default model)"}}},
		{"modelName is case-sensitive", `{"ModelName":"openai/gpt-4o"}`, []Issue{{"modelName", issueModelRequired}}},
		{"verbose wrong type", `{"modelName":"openai/gpt-4o","verbose":"loud"}`, []Issue{{"verbose", "must be an integer; got a string"}}},
		{"verbose out of enum", `{"modelName":"openai/gpt-4o","verbose":3}`, []Issue{{"verbose", "must be one of 0, 1, 2; got 3"}}},
		{"region enum", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"region":"mars-1"}}`,
			[]Issue{{"cloudSessionCreateParams.region", `must be one of "us-west-2", "us-east-1", "eu-central-1", "ap-southeast-1"; got "mars-1"`}}},
		{"os enum", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"browserSettings":{"os":"beos"}}}`,
			[]Issue{{"cloudSessionCreateParams.browserSettings.os", `must be one of "windows", "mac", "linux", "mobile", "tablet"; got "beos"`}}},
		{"fingerprint enums", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"browserSettings":{"fingerprint":{
			"browsers":["chrome","netscape"],"devices":["toaster"],"operatingSystems":["plan9"],"httpVersion":"3"}}}}`,
			[]Issue{
				{"cloudSessionCreateParams.browserSettings.fingerprint.browsers[1]", `must be one of "chrome", "edge", "firefox", "safari"; got "netscape"`},
				{"cloudSessionCreateParams.browserSettings.fingerprint.devices[0]", `must be one of "desktop", "mobile"; got "toaster"`},
				{"cloudSessionCreateParams.browserSettings.fingerprint.httpVersion", `must be one of "1", "2"; got "3"`},
				{"cloudSessionCreateParams.browserSettings.fingerprint.operatingSystems[0]", `must be one of "android", "ios", "linux", "macos", "windows"; got "plan9"`},
			}},
		{"httpVersion as a number", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"browserSettings":{"fingerprint":{"httpVersion":2}}}}`,
			[]Issue{{"cloudSessionCreateParams.browserSettings.fingerprint.httpVersion", "must be a string; got a number"}}},
		{"userMetadata over 16 KiB", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"userMetadata":{"a":"` + strings.Repeat("x", 16<<10) + `"}}}`,
			[]Issue{{"cloudSessionCreateParams.userMetadata", "is 16392 bytes of JSON; at most 16384"}}},
		{"browser type enum", `{"modelName":"openai/gpt-4o","browser":{"type":"browserbase","cdpUrl":"ws://x"}}`,
			[]Issue{{"browser.type", `must be one of "local", "cloud"; got "browserbase"`}}},
		{"unknown launchOptions field", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"headless":true,"stealth":true}}}`,
			[]Issue{{"browser.launchOptions.stealth", "unknown field"}}},
		{"unknown launch proxy and viewport fields", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{
			"proxy":{"server":"http://p:3128","pass":"x"},"viewport":{"width":800,"height":600,"depth":24}}}}`,
			[]Issue{
				{"browser.launchOptions.proxy.pass", "unknown field"},
				{"browser.launchOptions.viewport.depth", "unknown field"},
			}},
		{"unknown fields elsewhere are ignored", `{"modelName":"openai/gpt-4o","sdkVersion":"3.1.0","browser":{"extra":1},
			"cloudSessionCreateParams":null}`,
			[]Issue{{"cloudSessionCreateParams", "must be an object; got null"}}},
		{"proxies as a string", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":"yes"}}`,
			[]Issue{{"cloudSessionCreateParams.proxies", "must be a boolean or an array; got a string"}}},
		{"proxy without type", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":[{"server":"http://p"}]}}`,
			[]Issue{{"cloudSessionCreateParams.proxies[0].type", "is required"}}},
		{"proxy type enum", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":[{"type":"browserbase"}]}}`,
			[]Issue{{"cloudSessionCreateParams.proxies[0].type", `must be one of "cloud", "external"; got "browserbase"`}}},
		{"external proxy with credentials in its server", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":[{"type":"external","server":"http://me:hunter2@p:3128"}]}}`,
			[]Issue{{"cloudSessionCreateParams.proxies[0].server", "must not carry credentials (user:password@): use username and password"}}},
		{"launch proxy with credentials in its server", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"proxy":{"server":"me:hunter2@p:3128"}}}}`,
			[]Issue{{"browser.launchOptions.proxy.server", "must not carry credentials (user:password@): use username and password"}}},
		{"domainPattern that is no regular expression", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":[{"type":"external","server":"http://p:3128","domainPattern":"(shop"}]}}`,
			[]Issue{{"cloudSessionCreateParams.proxies[0].domainPattern", `is not a regular expression (RE2 syntax, matched against the whole host name, e.g. "(.*\.)?example\.com"): error parsing regexp: missing closing ): ` + "`(shop`"}}},
		{"external proxy without server", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":[{"type":"cloud"},{"type":"external","username":"u"}]}}`,
			[]Issue{{"cloudSessionCreateParams.proxies[1].server", "is required for an external proxy"}}},
		{"proxy fields of the other variant", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":[
			{"type":"cloud","server":"http://p","password":"pw"},{"type":"external","server":"http://p","geolocation":{"country":"US"}}]}}`,
			[]Issue{
				{"cloudSessionCreateParams.proxies[0].password", "applies only to an external proxy"},
				{"cloudSessionCreateParams.proxies[0].server", "applies only to an external proxy"},
				{"cloudSessionCreateParams.proxies[1].geolocation", "applies only to a cloud proxy"},
			}},
		{"cloud proxy geolocation without country", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":[{"type":"cloud","geolocation":{"city":"Paris"}}]}}`,
			[]Issue{{"cloudSessionCreateParams.proxies[0].geolocation.country", "is required"}}},
		{"launch proxy without server", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"proxy":{"username":"u"}}}}`,
			[]Issue{{"browser.launchOptions.proxy.server", "is required"}}},
		{"viewport without height, negative width", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"viewport":{"width":-1}}}}`,
			[]Issue{
				{"browser.launchOptions.viewport.height", "is required"},
				{"browser.launchOptions.viewport.width", "must be at least 1"},
			}},
		{"cloud viewport needs both sides", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"browserSettings":{"viewport":{"width":1280}}}}`,
			[]Issue{{"cloudSessionCreateParams.browserSettings.viewport.height", "is required"}}},
		{"negative timeouts", `{"modelName":"openai/gpt-4o","domSettleTimeoutMs":-5,"cloudSessionCreateParams":{"timeout":-1}}`,
			[]Issue{
				{"cloudSessionCreateParams.timeout", "must be at least 1"},
				{"domSettleTimeoutMs", "must be at least 0"},
			}},
		{"negative connectTimeoutMs, fractional port", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"connectTimeoutMs":-1,"port":92.5}}}`,
			[]Issue{
				{"browser.launchOptions.connectTimeoutMs", "must be at least 0"},
				{"browser.launchOptions.port", "must be a whole number"},
			}},
		{"cdpUrl with cloud", `{"modelName":"openai/gpt-4o","browser":{"type":"cloud","cdpUrl":"ws://127.0.0.1:9222"}}`,
			[]Issue{{"browser.cdpUrl", "requires browser.type local"}}},
		{"cdpUrl and launchOptions without type (cloud by default)", `{"modelName":"openai/gpt-4o","browser":{"cdpUrl":"ws://h:9222","launchOptions":{}}}`,
			[]Issue{
				{"browser.cdpUrl", "requires browser.type local"},
				{"browser.launchOptions", "requires browser.type local"},
			}},
		{"cloudSessionCreateParams with local", `{"modelName":"openai/gpt-4o","browser":{"type":"local"},"cloudSessionCreateParams":{}}`,
			[]Issue{{"cloudSessionCreateParams", "requires browser.type cloud or no browser"}}},
		{"cdpUrl scheme", `{"modelName":"openai/gpt-4o","browser":{"type":"local","cdpUrl":"localhost:9222"}}`,
			[]Issue{{"browser.cdpUrl", "must be a ws://, wss://, http:// or https:// URL"}}},
		{"cdpHeaders without a cdpUrl", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"cdpHeaders":{"Authorization":"Bearer x"}}}}`,
			[]Issue{{"browser.launchOptions.cdpHeaders", "requires cdpUrl"}}},
		{"a captcha image without its answer field", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"browserSettings":{"solveCaptchas":true,"captchaImageSelector":"#captcha"}}}`,
			[]Issue{{"cloudSessionCreateParams.browserSettings.captchaInputSelector", "is required with captchaImageSelector"}}},
		{"a captcha answer field without its image", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"browserSettings":{"captchaInputSelector":"#answer"}}}`,
			[]Issue{{"cloudSessionCreateParams.browserSettings.captchaImageSelector", "is required with captchaInputSelector"}}},
		{"preserveUserDataDir without userDataDir", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"preserveUserDataDir":true}}}`,
			[]Issue{{"browser.launchOptions.preserveUserDataDir", "requires userDataDir"}}},
		{"ignoreDefaultArgs wrong item type", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{"ignoreDefaultArgs":["--a",1]}}}`,
			[]Issue{{"browser.launchOptions.ignoreDefaultArgs[1]", "must be a string; got a number"}}},
		{"screen minimum above maximum", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"browserSettings":{"fingerprint":{"screen":{"minWidth":1920,"maxWidth":800}}}}}`,
			[]Issue{{"cloudSessionCreateParams.browserSettings.fingerprint.screen.minWidth", "must not exceed maxWidth"}}},
		{"duplicate fingerprint browsers", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"browserSettings":{"fingerprint":{"browsers":["chrome","chrome"]}}}}`,
			[]Issue{{"cloudSessionCreateParams.browserSettings.fingerprint.browsers", "must not contain duplicates (items 0 and 1 are equal)"}}},
		{"deprecated fields of the wrong type", `{"modelName":"openai/gpt-4o","waitForCaptchaSolves":"yes","actTimeoutMs":"1s","cloudSessionCreateParams":{"projectId":7}}`,
			[]Issue{
				{"actTimeoutMs", "must be a number; got a string"},
				{"cloudSessionCreateParams.projectId", "must be a string; got a number"},
				{"waitForCaptchaSolves", "must be a boolean; got a string"},
			}},
		{"userMetadata must be an object", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"userMetadata":[1]}}`,
			[]Issue{{"cloudSessionCreateParams.userMetadata", "must be an object; got an array"}}},
		{"several problems at once", `{"verbose":"loud","domSettleTimeoutMs":-1,
			"browser":{"type":"cloud","cdpUrl":"ws://h:9222","launchOptions":{"viewport":{"width":0,"height":600},"bogus":1}},
			"cloudSessionCreateParams":{"region":"mars-1","proxies":[{"type":"external"}]}}`,
			[]Issue{
				{"browser.cdpUrl", "requires browser.type local"},
				{"browser.launchOptions", "requires browser.type local"},
				{"browser.launchOptions.bogus", "unknown field"},
				{"browser.launchOptions.viewport.width", "must be at least 1"},
				{"cloudSessionCreateParams.proxies[0].server", "is required for an external proxy"},
				{"cloudSessionCreateParams.region", `must be one of "us-west-2", "us-east-1", "eu-central-1", "ap-southeast-1"; got "mars-1"`},
				{"domSettleTimeoutMs", "must be at least 0"},
				{"modelName", issueModelRequired},
				{"verbose", "must be an integer; got a string"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, verr := DecodeStart([]byte(tt.body))
			if verr == nil {
				t.Fatalf("DecodeStart accepted the body: %+v", req)
			}
			if req != nil {
				t.Errorf("DecodeStart returned a request with issues: %+v", req)
			}
			if diff := cmp.Diff(tt.want, verr.Issues); diff != "" {
				t.Errorf("issues (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeStartRegion: a region off the operator's list is refused,
// naming the field and the regions there are; without a list, every
// region of the schema is accepted.
func TestDecodeStartRegion(t *testing.T) {
	body := func(region string) string {
		return `{"modelName":"openai/x","cloudSessionCreateParams":{"region":"` + region + `"}}`
	}
	accepted := StartOptions{AcceptedRegions: []string{"us-east-1", "eu-central-1"}}
	tests := []struct {
		name string
		body string
		opts StartOptions
		want []Issue // nil: accepted
	}{
		{"any region without a list", body("ap-southeast-1"), StartOptions{}, nil},
		{"an accepted region", body("eu-central-1"), accepted, nil},
		{"a region off the list", body("us-west-2"), accepted,
			[]Issue{{"cloudSessionCreateParams.region", "is not a region this service runs browsers in; it accepts us-east-1, eu-central-1"}}},
		{"no region with a list", `{"modelName":"openai/x","cloudSessionCreateParams":{"timeout":60}}`, accepted, nil},
		{"not a region: the schema's enum", body("mars-1"), accepted,
			[]Issue{{"cloudSessionCreateParams.region", `must be one of "us-west-2", "us-east-1", "eu-central-1", "ap-southeast-1"; got "mars-1"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, verr := DecodeStartWith([]byte(tt.body), tt.opts)
			var got []Issue
			if verr != nil {
				got = verr.Issues
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("issues (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeStartLaunchOptions: launch switches by allowlist, executables
// by the operator's list, directories by name; each refusal names the item.
func TestDecodeStartLaunchOptions(t *testing.T) {
	const notAllowed = " is not an allowed Chromium switch; the allowed ones are listed in docs/launch-args.md"
	const dirName = "must be a directory name, not a path: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
	local := func(launchOptions string) string {
		return `{"modelName":"openai/x","browser":{"type":"local","launchOptions":` + launchOptions + `}}`
	}
	allowed := StartOptions{AllowedExecutables: []string{"/opt/chrome/chrome"}}
	tests := []struct {
		name string
		body string
		opts StartOptions
		want []Issue // nil: accepted
	}{
		{"the issue's command execution",
			`{"modelName":"openai/x","browser":{"type":"local","launchOptions":{"args":["--renderer-cmd-prefix=/bin/sh -c id>/tmp/out;exec${IFS}\"$0\"${IFS}\"$@\""]}}}`,
			StartOptions{}, []Issue{{"browser.launchOptions.args[0]", "--renderer-cmd-prefix" + notAllowed}}},
		{"every switch the issue names, each at its index",
			local(`{"args":["--mute-audio","--utility-cmd-prefix=/bin/sh","--gpu-launcher=/bin/sh","--browser-subprocess-path=/bin/sh",
				"--disable-web-security","--remote-allow-origins=*","--load-extension=/tmp/x","--remote-debugging-port=1",
				"--user-data-dir=/etc","--proxy-server=http://127.0.0.1:1","--host-resolver-rules=MAP * 127.0.0.1","--log-file=/tmp/l",
				"--js-flags=--x","--use-file-for-fake-video-capture=/etc/shadow"]}`),
			StartOptions{}, []Issue{
				{"browser.launchOptions.args[10]", "--host-resolver-rules" + notAllowed},
				{"browser.launchOptions.args[11]", "--log-file" + notAllowed},
				{"browser.launchOptions.args[12]", "--js-flags" + notAllowed},
				{"browser.launchOptions.args[13]", "--use-file-for-fake-video-capture" + notAllowed},
				{"browser.launchOptions.args[1]", "--utility-cmd-prefix" + notAllowed},
				{"browser.launchOptions.args[2]", "--gpu-launcher" + notAllowed},
				{"browser.launchOptions.args[3]", "--browser-subprocess-path" + notAllowed},
				{"browser.launchOptions.args[4]", "--disable-web-security" + notAllowed},
				{"browser.launchOptions.args[5]", "--remote-allow-origins" + notAllowed},
				{"browser.launchOptions.args[6]", "--load-extension" + notAllowed},
				{"browser.launchOptions.args[7]", "--remote-debugging-port" + notAllowed},
				{"browser.launchOptions.args[8]", "--user-data-dir" + notAllowed},
				{"browser.launchOptions.args[9]", "--proxy-server" + notAllowed},
			}},
		{"a value a switch does not allow", local(`{"args":["--disable-gpu=1","--lang=../x"]}`), StartOptions{}, []Issue{
			{"browser.launchOptions.args[0]", "--disable-gpu takes no value"},
			{"browser.launchOptions.args[1]", `--lang: the value "../x" is not allowed; want a locale such as ` + "`de-DE`"},
		}},
		{"allowed switches", local(`{"args":["--mute-audio","--lang=de-DE","--disable-blink-features=AutomationControlled","--user-agent=Bot/1.0 (x)"]}`), StartOptions{}, nil},
		{"an executablePath nobody allowed", local(`{"executablePath":"/bin/sh"}`), StartOptions{},
			[]Issue{{"browser.launchOptions.executablePath", "is not a browser this service allows; leave it out to use the runner's Chromium"}}},
		{"an executablePath off the operator's list", local(`{"executablePath":"/opt/chrome/../../bin/sh"}`), allowed,
			[]Issue{{"browser.launchOptions.executablePath", "is not a browser this service allows; leave it out to use the runner's Chromium"}}},
		{"an executablePath on the operator's list", local(`{"executablePath":"/opt/chrome/chrome"}`), allowed, nil},
		{"an absolute userDataDir", local(`{"userDataDir":"/etc"}`), StartOptions{}, []Issue{{"browser.launchOptions.userDataDir", dirName}}},
		{"a userDataDir that climbs", local(`{"userDataDir":".."}`), StartOptions{}, []Issue{{"browser.launchOptions.userDataDir", dirName}}},
		{"a downloadsPath of two segments", local(`{"downloadsPath":"a/b"}`), StartOptions{}, []Issue{{"browser.launchOptions.downloadsPath", dirName}}},
		{"directory names", local(`{"userDataDir":"profile-1","preserveUserDataDir":true,"downloadsPath":"dl.2026"}`), StartOptions{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, verr := DecodeStartWith([]byte(tt.body), tt.opts)
			var got []Issue
			if verr != nil {
				got = verr.Issues
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("issues (-want +got):\n%s", diff)
			}
			if (req == nil) != (tt.want != nil) {
				t.Errorf("request %+v with issues %v", req, got)
			}
		})
	}
}

func TestDecodeStartDuplicateNames(t *testing.T) {
	_, verr := DecodeStart([]byte(`{"modelName":"openai/gpt-4o","modelName":"openai/x"}`))
	if verr == nil || len(verr.Issues) != 1 || verr.Issues[0].Path != "" {
		t.Fatalf("want one issue at the body for duplicate names, got %v", verr)
	}
}

type jsonRaw = json.RawMessage

func ptr[T any](v T) *T { return &v }

func TestDecodeStartAccepts(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *StartRequest
	}{
		{"minimal", `{"modelName":"openai/gpt-4.1-mini"}`, &StartRequest{ModelName: "openai/gpt-4.1-mini"}},
		{"deprecated fields and unknown fields accepted", `{"modelName":"anthropic/claude-sonnet-4-5","waitForCaptchaSolves":true,"actTimeoutMs":1000,
			"sdkVersion":"3.1.0","verbose":2.0,"domSettleTimeoutMs":3000,
			"cloudSessionCreateParams":{"projectId":"p-1","timeout":600,"region":"eu-central-1","unknown":{}}}`,
			&StartRequest{
				ModelName: "anthropic/claude-sonnet-4-5", WaitForCaptchaSolves: ptr(true), ActTimeoutMs: ptr(1000.0),
				Verbose: ptr(Verbose(2)), DOMSettleTimeoutMs: ptr(3000.0),
				CloudSessionCreateParams: &CloudSessionCreateParams{ProjectID: "p-1", Timeout: ptr(600.0), Region: "eu-central-1"},
			}},
		{"proxies true, ignoreDefaultArgs true", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":true}}`,
			&StartRequest{ModelName: "openai/gpt-4o", CloudSessionCreateParams: &CloudSessionCreateParams{Proxies: &Proxies{Enabled: ptr(true)}}}},
		{"array forms", `{"modelName":"openai/gpt-4o","cloudSessionCreateParams":{"proxies":[{"type":"cloud","geolocation":{"country":"US","city":"NYC"}},
			{"type":"external","server":"http://p:3128","username":"u","password":"pw"}],"userMetadata":{"a":1,"b":{"c":[true,null]}}}}`,
			&StartRequest{ModelName: "openai/gpt-4o", CloudSessionCreateParams: &CloudSessionCreateParams{
				Proxies: &Proxies{List: []ProxyConfig{
					{Type: ProxyTypeCloud, Geolocation: &ProxyGeolocation{Country: "US", City: "NYC"}},
					{Type: ProxyTypeExternal, Server: "http://p:3128", Username: "u", Password: "pw"},
				}},
				UserMetadata: map[string]jsonRaw{"a": jsonRaw(`1`), "b": jsonRaw(`{"c":[true,null]}`)},
			}}},
		{"local launch options, both ignoreDefaultArgs forms", `{"modelName":"openai/gpt-4o","browser":{"type":"local","launchOptions":{
			"ignoreDefaultArgs":["--mute-audio"],"headless":false,"viewport":{"width":1280,"height":720}}}}`,
			&StartRequest{ModelName: "openai/gpt-4o", Browser: &BrowserConfig{Type: BrowserTypeLocal, LaunchOptions: &LaunchOptions{
				IgnoreDefaultArgs: &IgnoreDefaultArgs{Args: []string{"--mute-audio"}}, Headless: ptr(false),
				Viewport: &Viewport{Width: 1280, Height: 720},
			}}}},
		{"ignoreDefaultArgs true, local cdpUrl", `{"modelName":"openai/gpt-4o","browser":{"type":"local","cdpUrl":"ws://h:9222","launchOptions":{"ignoreDefaultArgs":true}}}`,
			&StartRequest{ModelName: "openai/gpt-4o", Browser: &BrowserConfig{Type: BrowserTypeLocal, CDPURL: "ws://h:9222",
				LaunchOptions: &LaunchOptions{IgnoreDefaultArgs: &IgnoreDefaultArgs{All: ptr(true)}}}}},
		{"cloud browser with params", `{"modelName":"openai/gpt-4o","browser":{"type":"cloud"},"cloudSessionCreateParams":{"keepAlive":true}}`,
			&StartRequest{ModelName: "openai/gpt-4o", Browser: &BrowserConfig{Type: BrowserTypeCloud},
				CloudSessionCreateParams: &CloudSessionCreateParams{KeepAlive: ptr(true)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verr := DecodeStart([]byte(tt.body))
			if verr != nil {
				t.Fatalf("DecodeStart refused the body: %v", verr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Transformer("raw", func(r jsonRaw) string { return string(r) })); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeStartWithGateway: with a model gateway, a start may omit its
// model or name auto; the session's model is then auto.
func TestDecodeStartWithGateway(t *testing.T) {
	for _, body := range []string{`{}`, `{"modelName":"auto"}`} {
		t.Run(body, func(t *testing.T) {
			req, verr := DecodeStartWith([]byte(body), StartOptions{Gateway: true})
			if verr != nil {
				t.Fatalf("DecodeStartWith refused the body: %v", verr.Issues)
			}
			bs, _, err := req.ToSession("s1", "team-a")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ModelAuto, bs.Spec.Model.Name); diff != "" {
				t.Errorf("the session's model (-want +got):\n%s", diff)
			}
		})
	}
}
