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
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestParseLaunchArg(t *testing.T) {
	type result struct {
		Name, Value string
		Err         string // a fragment of the error, "" for none
	}
	tests := []struct {
		arg  string
		want result
	}{
		{"--mute-audio", result{Name: "mute-audio"}},
		{"--lang=pt-BR", result{Name: "lang", Value: "pt-BR"}},
		{"--lang=pt_BR", result{Name: "lang", Value: "pt_BR"}},
		{"--accept-lang=de-DE,de,en", result{Name: "accept-lang", Value: "de-DE,de,en"}},
		{"--window-size=800,600", result{Name: "window-size", Value: "800,600"}},
		{"--disable-features=Translate,MediaRouter", result{Name: "disable-features", Value: "Translate,MediaRouter"}},
		{"--disable-blink-features=AutomationControlled", result{Name: "disable-blink-features", Value: "AutomationControlled"}},
		{"--autoplay-policy=no-user-gesture-required", result{Name: "autoplay-policy", Value: "no-user-gesture-required"}},
		{"--user-agent=Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.0.0", result{Name: "user-agent", Value: "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.0.0"}},

		// The command execution, and every switch it names.
		{`--renderer-cmd-prefix=/bin/sh -c id>/tmp/out;exec${IFS}"$0"${IFS}"$@"`, result{Err: "--renderer-cmd-prefix is not an allowed Chromium switch"}},
		{"--utility-cmd-prefix=/bin/sh", result{Err: "--utility-cmd-prefix is not an allowed"}},
		{"--gpu-launcher=/bin/sh", result{Err: "--gpu-launcher is not an allowed"}},
		{"--browser-subprocess-path=/bin/sh", result{Err: "--browser-subprocess-path is not an allowed"}},
		{"--disable-web-security", result{Err: "--disable-web-security is not an allowed"}},
		{"--remote-allow-origins=*", result{Err: "--remote-allow-origins is not an allowed"}},
		{"--load-extension=/tmp/ext", result{Err: "--load-extension is not an allowed"}},
		{"--remote-debugging-port=9222", result{Err: "--remote-debugging-port is not an allowed"}},
		{"--remote-debugging-address=0.0.0.0", result{Err: "--remote-debugging-address is not an allowed"}},
		{"--remote-debugging-pipe", result{Err: "--remote-debugging-pipe is not an allowed"}},
		{"--user-data-dir=/etc", result{Err: "--user-data-dir is not an allowed"}},
		{"--proxy-server=http://127.0.0.1:3128", result{Err: "--proxy-server is not an allowed"}},
		{"--proxy-bypass-list=*", result{Err: "--proxy-bypass-list is not an allowed"}},
		{"--proxy-pac-url=http://127.0.0.1/p.pac", result{Err: "--proxy-pac-url is not an allowed"}},
		{"--no-proxy-server", result{Err: "--no-proxy-server is not an allowed"}},
		{"--host-resolver-rules=MAP * 127.0.0.1", result{Err: "--host-resolver-rules is not an allowed"}},
		{"--host-rules=MAP * 127.0.0.1", result{Err: "--host-rules is not an allowed"}},
		{"--log-file=/etc/passwd", result{Err: "--log-file is not an allowed"}},
		{"--enable-logging", result{Err: "--enable-logging is not an allowed"}},
		{"--js-flags=--allow-natives-syntax", result{Err: "--js-flags is not an allowed"}},
		{"--use-file-for-fake-video-capture=/etc/shadow", result{Err: "--use-file-for-fake-video-capture is not an allowed"}},
		{"--use-file-for-fake-audio-capture=/etc/shadow", result{Err: "--use-file-for-fake-audio-capture is not an allowed"}},
		{"--disk-cache-dir=/etc", result{Err: "--disk-cache-dir is not an allowed"}},
		{"--ignore-certificate-errors", result{Err: "--ignore-certificate-errors is not an allowed"}},

		// Spellings Chromium would also take are not ours.
		{"-renderer-cmd-prefix=/bin/sh", result{Err: "is not a --switch"}},
		{"--Mute-Audio", result{Err: "--Mute-Audio is not an allowed"}},
		{"https://example.com", result{Err: "is not a --switch"}},
		{"--", result{Err: `"--" is not an allowed`}},
		{"--evil\nname", result{Err: `"--evil\nname" is not an allowed`}},

		// Allowed switches with values they do not allow.
		{"--disable-gpu=1", result{Err: "--disable-gpu takes no value"}},
		{"--mute-audio=", result{Err: "--mute-audio takes no value"}},
		{"--lang", result{Err: "--lang needs a value: a locale such as `de-DE`"}},
		{"--lang=../../etc", result{Err: `--lang: the value "../../etc" is not allowed; want a locale`}},
		{"--user-agent=", result{Err: "--user-agent: the value"}},
		{"--user-agent=a\nb", result{Err: "--user-agent: the value"}},
		{"--user-agent=" + strings.Repeat("a", 513), result{Err: "--user-agent: the value"}},
		{"--window-size=1,2,3", result{Err: "--window-size: the value"}},
		{"--disable-features=IsolateOrigins", result{Err: `--disable-features: the value "IsolateOrigins" is not allowed; want a comma-separated list`}},
		{"--disable-features=Translate,site-per-process", result{Err: "--disable-features: the value"}},
		{"--disable-features=Translate,", result{Err: "--disable-features: the value"}},
		{"--disable-features=" + strings.Repeat("Translate,", 32) + "Translate", result{Err: "--disable-features: the value"}},
		{"--enable-features=NetworkServiceInProcess", result{Err: "--enable-features: the value"}},
		{"--disable-blink-features=AutomationControlled,Foo", result{Err: "--disable-blink-features: the value"}},
		{"--password-store=gnome", result{Err: "--password-store: the value \"gnome\" is not allowed; want one of basic"}},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			name, value, err := ParseLaunchArg(tt.arg)
			got := result{Name: name, Value: value}
			if err != nil {
				got.Err = err.Error()
				if tt.want.Err != "" && strings.Contains(got.Err, tt.want.Err) {
					got.Err = tt.want.Err
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseLaunchArg(%q) (-want +got):\n%s", tt.arg, diff)
			}
		})
	}
}

// TestLaunchArgRulesAgreeWithParse holds the CRD's rules (read as regular
// expressions, as CEL's matches and startsWith do) to ParseLaunchArg: a
// switch the API accepts is never refused on create, and the other way
// round. The envtest suite evaluates the real rules.
func TestLaunchArgRulesAgreeWithParse(t *testing.T) {
	rules := LaunchArgRules()
	name := regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(rules[0].Rule, "self.matches('"), "')"))
	bare := regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(rules[1].Rule, "!self.matches('"), "')"))
	valued := regexp.MustCompile(`^!\(self == '--([a-z-]+)' \|\| self.startsWith\('--[a-z-]+='\)\) \|\| self.matches\('(.*)'\)$`)
	crdAccepts := func(arg string) bool {
		if !name.MatchString(arg) || bare.MatchString(arg) {
			return false
		}
		for _, r := range rules[2:] {
			m := valued.FindStringSubmatch(r.Rule)
			if m == nil {
				t.Fatalf("unexpected rule %s", r.Rule)
			}
			if (arg == "--"+m[1] || strings.HasPrefix(arg, "--"+m[1]+"=")) && !regexp.MustCompile(m[2]).MatchString(arg) {
				return false
			}
		}
		return true
	}
	args := []string{"--", "---lang=de", "--lang", "--lang=", "--lang=de", "--lang=de=x", "--langx=de", "--disable-gpu=", "--disable-gpu-sandbox",
		"--disable-features=Translate", "--disable-features=Translate,IsolateOrigins", "--user-agent=x y", "--user-agent=\t", "x"}
	for _, f := range LaunchSwitchFamilies() {
		for _, s := range f.Switches {
			args = append(args, s.ExampleArg(), s.ExampleArg()+"x", s.ExampleArg()+",", "--"+s.Name, "--"+s.Name+"=", "--"+s.Name+"=true", "--"+s.Name+"s")
		}
	}
	for _, arg := range args {
		_, _, err := ParseLaunchArg(arg)
		if got, want := crdAccepts(arg), err == nil; got != want {
			t.Errorf("%q: the CRD's rules accept it: %v; ParseLaunchArg: %v", arg, got, err)
		}
	}
}

func TestLaunchSwitchTable(t *testing.T) {
	for _, f := range LaunchSwitchFamilies() {
		if f.Reason == "" {
			t.Errorf("family %s gives no reason", f.Name)
		}
		for _, s := range f.Switches {
			if err := ValidateLaunchArg(s.ExampleArg()); err != nil {
				t.Errorf("the example of --%s is refused: %v", s.Name, err)
			}
			if (s.Value == OneOf || s.Value == ListOf) != (len(s.Values) > 0) {
				t.Errorf("--%s: values are for OneOf and ListOf switches, and those need some", s.Name)
			}
			if (s.Value == Matching) != (s.Pattern != "") || (s.Value == Matching) != (s.Describe != "") {
				t.Errorf("--%s: a pattern and its description are for Matching switches, and those need both", s.Name)
			}
		}
	}
}

// TestDataDirNamePatternInCRD holds the markers of userDataDir and
// downloadsPath to DataDirNamePattern.
func TestDataDirNamePatternInCRD(t *testing.T) {
	raw, err := os.ReadFile("../../config/crd/bases/browserfleet.io_browsersessions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	lo := dig(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, "properties", "spec", "properties", "browser", "properties", "launchOptions", "properties")
	for _, field := range []string{"userDataDir", "downloadsPath"} {
		if got := dig(lo, field, "pattern"); got != DataDirNamePattern {
			t.Errorf("%s's pattern is %v, want %s", field, got, DataDirNamePattern)
		}
	}
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"profile", true}, {"a", true}, {"dl.2026-01_x", true}, {strings.Repeat("a", 64), true},
		{"", false}, {".", false}, {"..", false}, {".hidden", false}, {"/etc", false}, {"a/b", false},
		{"../etc", false}, {"a b", false}, {strings.Repeat("a", 65), false}, {"é", false},
	} {
		if err := ValidateDataDirName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidateDataDirName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func dig(m any, path ...string) any {
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}
