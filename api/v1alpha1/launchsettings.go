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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/equality"
)

// LaunchSettingsOf is the launch-time part of a session's spec: what a
// browser is started with, which a warm pool fixes before any session
// exists. Everything else (the model, prompts, cache, timeoutSeconds,
// keepAlive, userMetadata, ttlSecondsAfterEnded) is applied when a session
// claims a pooled runner. A field that is not known to be claim-time is
// launch-time, so that a setting nobody sorted makes a session start cold
// rather than ignored. ok is false for a session that can never claim a
// pooled runner: one that attaches to a browser at cdpUrlSecretRef, or
// loads a persistent context.
//
// The result is normalized: a missing browser is the default cloud one,
// and empty structs are nil, so that two ways of writing the same launch
// compare equal.
func LaunchSettingsOf(spec *BrowserSessionSpec) (t BrowserPoolTemplate, ok bool) {
	t = BrowserPoolTemplate{Browser: spec.Browser.DeepCopy(), CloudSessionCreateParams: spec.CloudSessionCreateParams.DeepCopy()}
	if t.Browser != nil && t.Browser.CDPURLSecretRef != nil {
		return t, false
	}
	if c := t.CloudSessionCreateParams; c != nil && c.BrowserSettings != nil && c.BrowserSettings.Context != nil {
		return t, false
	}
	return NormalizeTemplate(t), true
}

// NormalizeTemplate returns t with the defaults the API server would set
// made explicit, the claim-time settings (timeoutSeconds, keepAlive,
// userMetadata) dropped, and empty parts dropped.
func NormalizeTemplate(t BrowserPoolTemplate) BrowserPoolTemplate {
	out := *t.DeepCopy()
	if c := out.CloudSessionCreateParams; c != nil {
		c.TimeoutSeconds = 0
		c.KeepAlive = nil
		c.UserMetadata = nil
	}
	if out.Browser == nil {
		out.Browser = &BrowserConfig{}
	}
	if out.Browser.Type == "" {
		out.Browser.Type = BrowserTypeCloud
	}
	if c := out.CloudSessionCreateParams; c != nil {
		if c.BrowserSettings != nil && equality.Semantic.DeepEqual(*c.BrowserSettings, BrowserSettings{}) {
			c.BrowserSettings = nil
		}
		if len(c.Proxies) == 0 {
			c.Proxies = nil
		}
		if equality.Semantic.DeepEqual(*c, CloudSessionCreateParams{}) {
			out.CloudSessionCreateParams = nil
		}
	}
	return out
}

// LaunchHash identifies a normalized template: 40 hex digits of the
// SHA-256 of its JSON, which fits a label value (LabelLaunchHash).
func LaunchHash(t BrowserPoolTemplate) string {
	b, err := json.Marshal(NormalizeTemplate(t))
	if err != nil {
		// The template's types all encode.
		panic("encoding a pool template: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:40]
}
