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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// Keys of the request Secret. The runner does not read them directly: the
// manager turns each secretKeyRef of the session into an environment
// variable, so only the refs have to agree with these.
const (
	// SecretKeyModelAPIKey holds the model provider's API key.
	SecretKeyModelAPIKey = "model-api-key"
	// SecretKeyLaunchProxyPassword holds launchOptions.proxy.password.
	SecretKeyLaunchProxyPassword = "launch-proxy-password"
	// SecretKeyCDPURL holds browser.cdpUrl (or launchOptions.cdpUrl): hosted
	// browsers put a token in it.
	SecretKeyCDPURL = "cdp-url"
	// SecretKeyCDPHeaders holds launchOptions.cdpHeaders as a JSON object.
	SecretKeyCDPHeaders = "cdp-headers"
	// secretKeyProxyPasswordFormat holds cloudSessionCreateParams.proxies[i].password.
	secretKeyProxyPasswordFormat = "proxy-%d-password"
)

// ErrResume is returned by ToSession for a request with cloudSessionID: such
// a request resumes the existing session of that name (docs/sessions.md) and
// must not create a new one.
var ErrResume = errors.New("the request resumes an existing session (cloudSessionID); it creates no BrowserSession")

// RequestSecretName is the name of the Secret that holds a session's
// request-borne secrets.
func RequestSecretName(session string) string {
	return session + "-request-secrets"
}

// SecretKeyProxyPassword is the request Secret's key for the password of
// cloudSessionCreateParams.proxies[i].
func SecretKeyProxyPassword(i int) string {
	return fmt.Sprintf(secretKeyProxyPasswordFormat, i)
}

// ToSession maps a decoded start request onto the BrowserSession `name` (the
// session id) in `namespace` (the project), following docs/sessions.md:
// `proxies: true` becomes one cloud proxy, `ignoreDefaultArgs: true` becomes
// ignoreAllDefaultArgs, timeout stays in seconds, the deprecated fields are
// dropped.
//
// Secrets carried by the request (ModelAPIKey, launchOptions.proxy.password,
// the external proxies' passwords) go into ONE Secret,
// RequestSecretName(name), and the session references its keys; no secret
// value is in the BrowserSession. The Secret is nil when there is none.
//
// The Secret has no owner reference: that needs the session's UID, so the
// caller sets it once the session exists. Create the Secret first (so the
// runner pod never waits for it), then the session, then add the owner
// reference to the Secret; delete the Secret if the session's create fails.
//
// The request must come from DecodeStart: ToSession trusts its bounds.
func (r *StartRequest) ToSession(name, namespace string) (*v1alpha1.BrowserSession, *corev1.Secret, error) {
	if r.CloudSessionID != "" {
		return nil, nil, fmt.Errorf("session %q: %w", r.CloudSessionID, ErrResume)
	}
	// The session name labels the runner pod, hence a DNS label.
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return nil, nil, fmt.Errorf("session name %q: %s", name, errs[0])
	}

	secretName := RequestSecretName(name)
	data := map[string][]byte{}
	ref := func(key, value string) *v1alpha1.SecretKeyReference {
		data[key] = []byte(value)
		return &v1alpha1.SecretKeyReference{Name: secretName, Key: key}
	}

	model := r.ModelName
	if model == "" {
		// Only a deployment with a gateway lets it be omitted
		// (StartOptions.Gateway): its default model serves.
		model = ModelAuto
	}
	spec := v1alpha1.BrowserSessionSpec{
		Model:        v1alpha1.ModelSpec{Name: model},
		SystemPrompt: r.SystemPrompt,
		SelfHeal:     r.SelfHeal,
		Experimental: r.Experimental,
	}
	if r.ModelAPIKey != "" {
		spec.Model.APIKeySecretRef = ref(SecretKeyModelAPIKey, r.ModelAPIKey)
	}
	spec.DOMSettleTimeoutMs = int32Ptr(r.DOMSettleTimeoutMs)
	if r.Verbose != nil {
		v := int32(*r.Verbose)
		spec.Verbose = &v
	}
	if b := r.Browser; b != nil {
		spec.Browser = &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserType(b.Type)}
		cdpURL := b.CDPURL
		if lo := b.LaunchOptions; lo != nil {
			spec.Browser.LaunchOptions = launchOptions(lo, ref)
			if cdpURL == "" {
				cdpURL = lo.CDPURL
			}
			if len(lo.CDPHeaders) > 0 {
				headers, err := json.Marshal(lo.CDPHeaders)
				if err != nil {
					return nil, nil, fmt.Errorf("encoding cdpHeaders: %w", err)
				}
				spec.Browser.LaunchOptions.CDPHeadersSecretRef = ref(SecretKeyCDPHeaders, string(headers))
			}
		}
		if cdpURL != "" {
			spec.Browser.CDPURLSecretRef = ref(SecretKeyCDPURL, cdpURL)
		}
	}
	if c := r.CloudSessionCreateParams; c != nil {
		out, err := cloudParams(c, ref)
		if err != nil {
			return nil, nil, err
		}
		spec.CloudSessionCreateParams = out
	}

	session := &v1alpha1.BrowserSession{
		TypeMeta: metav1.TypeMeta{
			APIVersion: v1alpha1.GroupVersion.String(),
			Kind:       "BrowserSession",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       spec,
	}
	if len(data) == 0 {
		return session, nil, nil
	}
	immutable := true
	secret := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      secretName,
			Namespace: namespace,
			// The session references it: it opts in for that session
			// only.
			Labels: map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedBy, v1alpha1.LabelSession: name, v1alpha1.LabelSessionSecret: name},
		},
		Type: corev1.SecretTypeOpaque,
		// The values are fixed for the session's life (its spec is
		// immutable), and an immutable Secret spares the kubelet a watch.
		Immutable: &immutable,
		Data:      data,
	}
	return session, secret, nil
}

// launchOptions maps the local launch options; the proxy password goes into
// the request Secret through ref.
func launchOptions(lo *LaunchOptions, ref func(key, value string) *v1alpha1.SecretKeyReference) *v1alpha1.LaunchOptions {
	out := &v1alpha1.LaunchOptions{
		Args:                launchArgs(lo.Args),
		ExecutablePath:      lo.ExecutablePath,
		Port:                int32Ptr(lo.Port),
		UserDataDir:         lo.UserDataDir,
		PreserveUserDataDir: lo.PreserveUserDataDir,
		Headless:            lo.Headless,
		Devtools:            lo.Devtools,
		ChromiumSandbox:     lo.ChromiumSandbox,
		Locale:              lo.Locale,
		DeviceScaleFactor:   lo.DeviceScaleFactor,
		HasTouch:            lo.HasTouch,
		IgnoreHTTPSErrors:   lo.IgnoreHTTPSErrors,
		ConnectTimeoutMs:    int32Ptr(lo.ConnectTimeoutMs),
		DownloadsPath:       lo.DownloadsPath,
		AcceptDownloads:     lo.AcceptDownloads,
		Viewport:            viewport(lo.Viewport),
	}
	if ida := lo.IgnoreDefaultArgs; ida != nil {
		switch {
		case len(ida.Args) > 0:
			out.IgnoreDefaultArgs = ida.Args
		case ida.All != nil && *ida.All:
			all := true
			out.IgnoreAllDefaultArgs = &all
		}
		// false and [] both mean "pass the default arguments", which is
		// what the session does with neither field set.
	}
	if p := lo.Proxy; p != nil {
		out.Proxy = &v1alpha1.LaunchProxy{Server: p.Server, Bypass: p.Bypass, Username: p.Username}
		if p.Password != "" {
			out.Proxy.PasswordSecretRef = ref(SecretKeyLaunchProxyPassword, p.Password)
		}
	}
	return out
}

// launchArgs maps the switches; DecodeStart checked them against the
// allowlist.
func launchArgs(args []string) []v1alpha1.LaunchArg {
	if args == nil {
		return nil
	}
	out := make([]v1alpha1.LaunchArg, len(args))
	for i, a := range args {
		out[i] = v1alpha1.LaunchArg(a)
	}
	return out
}

// cloudParams maps the cloud session create params; external proxies'
// passwords go into the request Secret through ref.
func cloudParams(c *CloudSessionCreateParams, ref func(key, value string) *v1alpha1.SecretKeyReference) (*v1alpha1.CloudSessionCreateParams, error) {
	out := &v1alpha1.CloudSessionCreateParams{
		ExtensionID: c.ExtensionID,
		KeepAlive:   c.KeepAlive,
		Region:      v1alpha1.Region(c.Region),
		// Both the wire and the CRD count the timeout in seconds.
		TimeoutSeconds: int32Of(c.Timeout),
	}
	if bs := c.BrowserSettings; bs != nil {
		out.BrowserSettings = &v1alpha1.BrowserSettings{
			AdvancedStealth:      bs.AdvancedStealth,
			BlockAds:             bs.BlockAds,
			CaptchaImageSelector: bs.CaptchaImageSelector,
			CaptchaInputSelector: bs.CaptchaInputSelector,
			ExtensionID:          bs.ExtensionID,
			LogSession:           bs.LogSession,
			OS:                   v1alpha1.OS(bs.OS),
			RecordSession:        bs.RecordSession,
			SolveCaptchas:        bs.SolveCaptchas,
			Verified:             bs.Verified,
			Viewport:             viewport(bs.Viewport),
		}
		if ctx := bs.Context; ctx != nil {
			out.BrowserSettings.Context = &v1alpha1.BrowserContext{ID: ctx.ID, Persist: ctx.Persist}
		}
		if fp := bs.Fingerprint; fp != nil {
			out.BrowserSettings.Fingerprint = fingerprint(fp)
		}
	}
	if p := c.Proxies; p != nil {
		switch {
		case p.List != nil:
			for i, pc := range p.List {
				proxy := v1alpha1.Proxy{
					Type:          v1alpha1.ProxyType(pc.Type),
					DomainPattern: pc.DomainPattern,
					Server:        pc.Server,
					Username:      pc.Username,
				}
				if g := pc.Geolocation; g != nil {
					proxy.Geolocation = &v1alpha1.ProxyGeolocation{Country: g.Country, City: g.City, State: g.State}
				}
				if pc.Password != "" {
					proxy.PasswordSecretRef = ref(SecretKeyProxyPassword(i), pc.Password)
				}
				out.Proxies = append(out.Proxies, proxy)
			}
		case p.Enabled != nil && *p.Enabled:
			out.Proxies = []v1alpha1.Proxy{{Type: v1alpha1.ProxyTypeCloud}}
		}
	}
	if len(c.UserMetadata) > 0 {
		out.UserMetadata = make(map[string]apiextensionsv1.JSON, len(c.UserMetadata))
		for k, raw := range c.UserMetadata {
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return nil, fmt.Errorf("userMetadata %q: %w", k, err)
			}
			out.UserMetadata[k] = apiextensionsv1.JSON{Raw: buf.Bytes()}
		}
	}
	return out, nil
}

// fingerprint maps a fingerprint; the enum strings become the CRD's types.
func fingerprint(fp *Fingerprint) *v1alpha1.Fingerprint {
	out := &v1alpha1.Fingerprint{
		HTTPVersion: v1alpha1.HTTPVersion(fp.HTTPVersion),
		Locales:     fp.Locales,
	}
	for _, b := range fp.Browsers {
		out.Browsers = append(out.Browsers, v1alpha1.FingerprintBrowser(b))
	}
	for _, d := range fp.Devices {
		out.Devices = append(out.Devices, v1alpha1.FingerprintDevice(d))
	}
	for _, o := range fp.OperatingSystems {
		out.OperatingSystems = append(out.OperatingSystems, v1alpha1.FingerprintOS(o))
	}
	if s := fp.Screen; s != nil {
		out.Screen = &v1alpha1.Screen{
			MaxHeight: int32Ptr(s.MaxHeight),
			MaxWidth:  int32Ptr(s.MaxWidth),
			MinHeight: int32Ptr(s.MinHeight),
			MinWidth:  int32Ptr(s.MinWidth),
		}
	}
	return out
}

// viewport maps a viewport; DecodeStart checked both sides are whole numbers
// in range.
func viewport(v *Viewport) *v1alpha1.Viewport {
	if v == nil {
		return nil
	}
	return &v1alpha1.Viewport{Width: int32(v.Width), Height: int32(v.Height)}
}

// int32Ptr converts a whole number DecodeStart bounded to the CRD's int32.
func int32Ptr(f *float64) *int32 {
	if f == nil {
		return nil
	}
	v := int32(*f)
	return &v
}

// int32Of is a whole number the decoder checked, 0 when absent.
func int32Of(f *float64) int32 {
	if f == nil {
		return 0
	}
	return int32(*f)
}
