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
	"strings"

	"k8s.io/utils/ptr"
)

// UnsupportedSetting is a setting a session's spec asks for that this
// installation accepts and does not honour. The manager reports each in the
// session's UnsupportedSetting condition and a Warning event, the API in a
// streamed start's log, the runner in its log.
type UnsupportedSetting struct {
	// Field is the setting's path in the spec, which is its path in the /v1
	// start request too, e.g.
	// "cloudSessionCreateParams.browserSettings.recordSession".
	Field string //nolint:kubeapilinter // not part of any resource: the condition's message carries it
	// Detail says what the session gets instead.
	Detail string //nolint:kubeapilinter // not part of any resource: the condition's message carries it
}

// String is "field: detail".
func (u UnsupportedSetting) String() string { return u.Field + ": " + u.Detail }

// notSupported is the detail of a setting no part of this installation
// implements.
const notSupported = "not supported by this installation; ignored"

// UnsupportedSettings lists what spec asks for that this installation does
// not honour, in the order of the spec's fields. It is the one list of them:
// a setting leaves it when it gets its behaviour.
func UnsupportedSettings(spec *BrowserSessionSpec) []UnsupportedSetting {
	var out []UnsupportedSetting
	// The model providers' SDKs are called with an API key (or the
	// gateway); Vertex AI's credentials and options have no counterpart
	// in them yet.
	if spec.Model.Auth != nil {
		out = append(out, UnsupportedSetting{Field: "model.auth", Detail: "not supported by this installation: the model is called with its API key"})
	}
	if spec.Model.ProviderOptions != nil {
		out = append(out, UnsupportedSetting{Field: "model.providerOptions", Detail: "not supported by this installation: the model is called with its API key"})
	}
	add := func(field, detail string) {
		out = append(out, UnsupportedSetting{Field: "cloudSessionCreateParams." + field, Detail: detail})
	}
	params := spec.CloudSessionCreateParams
	if params == nil {
		return out
	}
	if bs := params.BrowserSettings; bs != nil {
		for _, o := range []struct {
			name string
			set  bool
		}{
			{"context", bs.Context != nil},
			{"extensionId", bs.ExtensionID != ""},
			{"logSession", ptr.Deref(bs.LogSession, false)},
			{"recordSession", ptr.Deref(bs.RecordSession, false)},
			{"verified", ptr.Deref(bs.Verified, false)},
		} {
			if o.set {
				add("browserSettings."+o.name, notSupported)
			}
		}
		if ptr.Deref(bs.SolveCaptchas, false) && bs.CaptchaImageSelector == "" && bs.CaptchaInputSelector == "" {
			add("browserSettings.solveCaptchas", "there is no built-in captcha detection: set captchaImageSelector and captchaInputSelector to solve a text captcha")
		}
	}
	if params.ExtensionID != "" {
		add("extensionId", notSupported)
	}
	for i, p := range params.Proxies {
		if p.Type == ProxyTypeCloud {
			add(fmt.Sprintf("proxies[%d]", i), "this installation has no cloud proxies; the entry is ignored")
		}
	}
	return out
}

// UnsupportedSettingsMessage is the message of the UnsupportedSetting
// condition: the settings, one after another, at most
// maxUnsupportedMessage bytes.
func UnsupportedSettingsMessage(list []UnsupportedSetting) string {
	parts := make([]string, len(list))
	for i, u := range list {
		parts[i] = u.String()
	}
	msg := strings.Join(parts, "; ")
	if len(msg) > maxUnsupportedMessage {
		msg = msg[:maxUnsupportedMessage-3] + "..."
	}
	return msg
}

// maxUnsupportedMessage bounds UnsupportedSettingsMessage, well within a
// condition message's 32768 bytes; a spec's lists are bounded, so it is
// reached only by a spec with many proxies.
const maxUnsupportedMessage = 4096
