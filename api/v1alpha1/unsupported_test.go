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
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// settingClasses says of every setting of a session's spec (each leaf
// field, by its JSON path; "[]" stands for any element of a list) whether
// this installation honours it ("") or flags it as an UnsupportedSetting
// (the field UnsupportedSettings names when it is set to the value below).
// A field added to the spec fails TestEveryFieldIsHonouredOrFlagged until
// it is classified here.
var settingClasses = map[string]struct {
	// value is the JSON value the check sets; empty: a generic one.
	value string
	// flagged is the field UnsupportedSettings reports; empty: none.
	flagged string
}{
	"model.name":                                                            {},
	"model.apiKeySecretRef.name":                                            {},
	"model.apiKeySecretRef.key":                                             {},
	"model.baseURL":                                                         {},
	"model.provider":                                                        {},
	"model.headers":                                                         {},
	"model.headersSecretRef.name":                                           {},
	"model.auth.type":                                                       {flagged: "model.auth"},
	"model.auth.credentialsSecretRef.name":                                  {flagged: "model.auth"},
	"model.auth.credentialsSecretRef.key":                                   {flagged: "model.auth"},
	"model.auth.scopes":                                                     {flagged: "model.auth"},
	"model.auth.projectId":                                                  {flagged: "model.auth"},
	"model.auth.universeDomain":                                             {flagged: "model.auth"},
	"model.providerOptions.variant":                                         {flagged: "model.providerOptions"},
	"model.providerOptions.project":                                         {flagged: "model.providerOptions"},
	"model.providerOptions.location":                                        {flagged: "model.providerOptions"},
	"model.providerOptions.baseURL":                                         {flagged: "model.providerOptions"},
	"model.providerOptions.headers":                                         {flagged: "model.providerOptions"},
	"domSettleTimeoutMs":                                                    {},
	"verbose":                                                               {},
	"systemPrompt":                                                          {},
	"selfHeal":                                                              {},
	"cache.enabled":                                                         {},
	"cache.threshold":                                                       {},
	"experimental":                                                          {},
	"browser.type":                                                          {},
	"browser.cdpUrlSecretRef.name":                                          {},
	"browser.cdpUrlSecretRef.key":                                           {},
	"browser.launchOptions.args":                                            {},
	"browser.launchOptions.executablePath":                                  {},
	"browser.launchOptions.port":                                            {value: "9222"},
	"browser.launchOptions.userDataDir":                                     {},
	"browser.launchOptions.preserveUserDataDir":                             {},
	"browser.launchOptions.headless":                                        {},
	"browser.launchOptions.devtools":                                        {},
	"browser.launchOptions.chromiumSandbox":                                 {},
	"browser.launchOptions.ignoreDefaultArgs":                               {},
	"browser.launchOptions.ignoreAllDefaultArgs":                            {},
	"browser.launchOptions.proxy.server":                                    {},
	"browser.launchOptions.proxy.bypass":                                    {},
	"browser.launchOptions.proxy.username":                                  {},
	"browser.launchOptions.proxy.passwordSecretRef.name":                    {},
	"browser.launchOptions.proxy.passwordSecretRef.key":                     {},
	"browser.launchOptions.locale":                                          {},
	"browser.launchOptions.viewport.width":                                  {},
	"browser.launchOptions.viewport.height":                                 {},
	"browser.launchOptions.deviceScaleFactor":                               {},
	"browser.launchOptions.hasTouch":                                        {},
	"browser.launchOptions.ignoreHTTPSErrors":                               {},
	"browser.launchOptions.cdpHeadersSecretRef.name":                        {},
	"browser.launchOptions.cdpHeadersSecretRef.key":                         {},
	"browser.launchOptions.connectTimeoutMs":                                {},
	"browser.launchOptions.downloadsPath":                                   {},
	"browser.launchOptions.acceptDownloads":                                 {},
	"cloudSessionCreateParams.browserSettings.advancedStealth":              {},
	"cloudSessionCreateParams.browserSettings.blockAds":                     {},
	"cloudSessionCreateParams.browserSettings.captchaImageSelector":         {},
	"cloudSessionCreateParams.browserSettings.captchaInputSelector":         {},
	"cloudSessionCreateParams.browserSettings.context.id":                   {flagged: "cloudSessionCreateParams.browserSettings.context"},
	"cloudSessionCreateParams.browserSettings.context.persist":              {flagged: "cloudSessionCreateParams.browserSettings.context"},
	"cloudSessionCreateParams.browserSettings.extensionId":                  {flagged: "cloudSessionCreateParams.browserSettings.extensionId"},
	"cloudSessionCreateParams.browserSettings.fingerprint.browsers":         {},
	"cloudSessionCreateParams.browserSettings.fingerprint.devices":          {},
	"cloudSessionCreateParams.browserSettings.fingerprint.httpVersion":      {},
	"cloudSessionCreateParams.browserSettings.fingerprint.locales":          {},
	"cloudSessionCreateParams.browserSettings.fingerprint.operatingSystems": {},
	"cloudSessionCreateParams.browserSettings.fingerprint.screen.maxHeight": {},
	"cloudSessionCreateParams.browserSettings.fingerprint.screen.maxWidth":  {},
	"cloudSessionCreateParams.browserSettings.fingerprint.screen.minHeight": {},
	"cloudSessionCreateParams.browserSettings.fingerprint.screen.minWidth":  {},
	"cloudSessionCreateParams.browserSettings.logSession":                   {flagged: "cloudSessionCreateParams.browserSettings.logSession"},
	"cloudSessionCreateParams.browserSettings.os":                           {},
	"cloudSessionCreateParams.browserSettings.recordSession":                {flagged: "cloudSessionCreateParams.browserSettings.recordSession"},
	"cloudSessionCreateParams.browserSettings.solveCaptchas":                {flagged: "cloudSessionCreateParams.browserSettings.solveCaptchas"},
	"cloudSessionCreateParams.browserSettings.verified":                     {flagged: "cloudSessionCreateParams.browserSettings.verified"},
	"cloudSessionCreateParams.browserSettings.viewport.width":               {},
	"cloudSessionCreateParams.browserSettings.viewport.height":              {},
	"cloudSessionCreateParams.extensionId":                                  {flagged: "cloudSessionCreateParams.extensionId"},
	"cloudSessionCreateParams.keepAlive":                                    {},
	"cloudSessionCreateParams.proxies[].type":                               {value: `"cloud"`, flagged: "cloudSessionCreateParams.proxies[0]"},
	"cloudSessionCreateParams.proxies[].domainPattern":                      {},
	"cloudSessionCreateParams.proxies[].geolocation.country":                {},
	"cloudSessionCreateParams.proxies[].geolocation.city":                   {},
	"cloudSessionCreateParams.proxies[].geolocation.state":                  {},
	"cloudSessionCreateParams.proxies[].server":                             {},
	"cloudSessionCreateParams.proxies[].username":                           {},
	"cloudSessionCreateParams.proxies[].passwordSecretRef.name":             {},
	"cloudSessionCreateParams.proxies[].passwordSecretRef.key":              {},
	"cloudSessionCreateParams.region":                                       {value: `"us-west-2"`},
	"cloudSessionCreateParams.timeoutSeconds":                               {},
	"cloudSessionCreateParams.userMetadata":                                 {value: `{"a": 1}`},
	"ended":                                                                 {},
	"ttlSecondsAfterEnded":                                                  {},
}

// TestEveryFieldIsHonouredOrFlagged walks every setting of a session's spec:
// each is classified in settingClasses, and, set alone, is reported by
// UnsupportedSettings exactly when it is classified as flagged.
func TestEveryFieldIsHonouredOrFlagged(t *testing.T) {
	paths := leafPaths(reflect.TypeFor[BrowserSessionSpec](), "")
	for _, p := range paths {
		if _, ok := settingClasses[p]; !ok {
			t.Errorf("%s: a setting of the spec that settingClasses does not classify (honoured, or flagged by UnsupportedSettings?)", p)
		}
	}
	for p := range settingClasses {
		if !slices.Contains(paths, p) {
			t.Errorf("%s: classified, but the spec has no such field", p)
		}
	}
	for _, p := range paths {
		c, ok := settingClasses[p]
		if !ok {
			continue
		}
		t.Run(p, func(t *testing.T) {
			spec := specWith(t, p, c.value)
			var got []string
			for _, u := range UnsupportedSettings(&spec) {
				got = append(got, u.Field)
			}
			var want []string
			if c.flagged != "" {
				want = []string{c.flagged}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("UnsupportedSettings of a spec that sets only %s (-want +got):\n%s", p, diff)
			}
		})
	}
}

// leafPaths lists the JSON paths of t's leaf fields: those that are not
// structs (through pointers), with "[]" for a list's elements.
func leafPaths(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		path := prefix + name
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Slice && structType(ft.Elem()):
			out = append(out, leafPaths(ft.Elem(), path+"[].")...)
		case structType(ft):
			out = append(out, leafPaths(ft, path+".")...)
		default:
			out = append(out, path)
		}
	}
	return out
}

// structType reports whether t (through pointers) is a struct of fields of
// its own, not a JSON value type such as apiextensionsv1.JSON.
func structType(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	_, custom := reflect.PointerTo(t).MethodByName("UnmarshalJSON")
	return !custom
}

// specWith is a spec that sets only the leaf at path, to value (JSON) or to
// a generic non-empty value of its type: true, "x", 1, or a list or map of
// one such element.
func specWith(t *testing.T, path, value string) BrowserSessionSpec {
	t.Helper()
	parts := strings.Split(path, ".")
	var build func(i int) any
	build = func(i int) any {
		name, list := strings.CutSuffix(parts[i], "[]")
		var v any
		if i == len(parts)-1 {
			v = json.RawMessage(value)
			if value == "" {
				v = json.RawMessage(genericValue(t, path))
			}
		} else {
			v = build(i + 1)
		}
		if list {
			v = []any{v}
		}
		return map[string]any{name: v}
	}
	raw, err := json.Marshal(build(0))
	if err != nil {
		t.Fatal(err)
	}
	var spec BrowserSessionSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatalf("a spec setting %s: %v", path, err)
	}
	return spec
}

// genericValue is a JSON value of the type of the leaf at path.
func genericValue(t *testing.T, path string) string {
	t.Helper()
	typ := reflect.TypeFor[BrowserSessionSpec]()
	for part := range strings.SplitSeq(path, ".") {
		name, _ := strings.CutSuffix(part, "[]")
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		found := false
		for f := range typ.Fields() {
			if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
				typ, found = f.Type, true
				break
			}
		}
		if !found {
			t.Fatalf("%s: no field %s", path, name)
		}
	}
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.Bool:
		return "true"
	case reflect.String:
		return `"x"`
	case reflect.Int32, reflect.Int64, reflect.Int, reflect.Float64:
		return "1"
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.String {
			return `["x"]`
		}
		return `[{}]`
	case reflect.Map:
		return `{"x": "y"}`
	}
	t.Fatalf("%s: no generic value for a %s", path, typ)
	return ""
}
