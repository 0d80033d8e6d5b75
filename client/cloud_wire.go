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

package client

import (
	"encoding/json"
	"math"
	"time"
)

// The bodies the library sends to the service's /v1 and the data it reads
// back, as the service's OpenAPI document (GET /v1/openapi.json) has them.
// They mirror server/v1 without importing it: the library must not pull
// in the server's Kubernetes dependencies. The package's tests hold them to
// that document with the server's own validator.

// maxSessionTimeout is the longest session lifetime the service takes.
const maxSessionTimeout = 7 * 24 * time.Hour

// startWire is the body of POST /v1/sessions/start.
type startWire struct {
	ModelName string `json:"modelName,omitempty"`
	// Cache is the session's cache setting (cacheWire).
	Cache   any              `json:"cache,omitempty"`
	Browser browserWire      `json:"browser"`
	Cloud   *cloudParamsWire `json:"cloudSessionCreateParams,omitempty"`
}

type browserWire struct {
	Type string `json:"type"`
}

type cloudParamsWire struct {
	BrowserSettings *browserSettingsWire       `json:"browserSettings,omitempty"`
	KeepAlive       *bool                      `json:"keepAlive,omitempty"`
	Proxies         any                        `json:"proxies,omitempty"`
	Region          string                     `json:"region,omitempty"`
	Timeout         *int64                     `json:"timeout,omitempty"`
	UserMetadata    map[string]json.RawMessage `json:"userMetadata,omitempty"`
}

type browserSettingsWire struct {
	AdvancedStealth      *bool            `json:"advancedStealth,omitempty"`
	BlockAds             *bool            `json:"blockAds,omitempty"`
	CaptchaImageSelector string           `json:"captchaImageSelector,omitempty"`
	CaptchaInputSelector string           `json:"captchaInputSelector,omitempty"`
	Context              *contextWire     `json:"context,omitempty"`
	ExtensionID          string           `json:"extensionId,omitempty"`
	Fingerprint          *fingerprintWire `json:"fingerprint,omitempty"`
	LogSession           *bool            `json:"logSession,omitempty"`
	OS                   string           `json:"os,omitempty"`
	RecordSession        *bool            `json:"recordSession,omitempty"`
	SolveCaptchas        *bool            `json:"solveCaptchas,omitempty"`
	Verified             *bool            `json:"verified,omitempty"`
	Viewport             *viewportWire    `json:"viewport,omitempty"`
}

type contextWire struct {
	ID      string `json:"id"`
	Persist *bool  `json:"persist,omitempty"`
}

type fingerprintWire struct {
	Browsers         []string    `json:"browsers,omitempty"`
	Devices          []string    `json:"devices,omitempty"`
	HTTPVersion      string      `json:"httpVersion,omitempty"`
	Locales          []string    `json:"locales,omitempty"`
	OperatingSystems []string    `json:"operatingSystems,omitempty"`
	Screen           *screenWire `json:"screen,omitempty"`
}

type screenWire struct {
	MaxHeight *int `json:"maxHeight,omitempty"`
	MaxWidth  *int `json:"maxWidth,omitempty"`
	MinHeight *int `json:"minHeight,omitempty"`
	MinWidth  *int `json:"minWidth,omitempty"`
}

type viewportWire struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

type proxyWire struct {
	Type          string           `json:"type"`
	DomainPattern string           `json:"domainPattern,omitempty"`
	Geolocation   *geolocationWire `json:"geolocation,omitempty"`
	Server        string           `json:"server,omitempty"`
	Username      string           `json:"username,omitempty"`
	Password      string           `json:"password,omitempty"`
}

type geolocationWire struct {
	Country string `json:"country"`
	City    string `json:"city,omitempty"`
	State   string `json:"state,omitempty"`
}

// startBody is the start request of opts. The service checks the values
// (regions, bounds, proxy variants) and answers a 400 naming the field;
// only what has no wire form of its own is checked here.
func startBody(opts CloudBrowserLaunchOptions) (*startWire, error) {
	if err := checkCache("CloudBrowserLaunchOptions.Cache", opts.Cache); err != nil {
		return nil, err
	}
	body := &startWire{ModelName: opts.ModelName, Browser: browserWire{Type: "cloud"}, Cache: cacheWire(opts.Cache)}
	p := &cloudParamsWire{
		BrowserSettings: browserSettings(opts.BrowserSettings),
		KeepAlive:       trueOrNil(opts.KeepAlive),
		Proxies:         proxies(opts.Proxies),
		Region:          opts.Region,
		UserMetadata:    opts.UserMetadata,
	}
	switch {
	case opts.Timeout < 0:
		return nil, invalid("Timeout", "must not be negative")
	case opts.Timeout > maxSessionTimeout:
		return nil, invalid("Timeout", "must be at most %v", maxSessionTimeout)
	case opts.Timeout > 0:
		// The service counts whole seconds; a part of one is one more.
		s := int64(math.Ceil(opts.Timeout.Seconds()))
		p.Timeout = &s
	}
	if p.BrowserSettings != nil || p.KeepAlive != nil || p.Proxies != nil || p.Region != "" || p.Timeout != nil || p.UserMetadata != nil {
		body.Cloud = p
	}
	return body, nil
}

// trueOrNil is &true for true, nil (left out: the default) for false.
func trueOrNil(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}

func browserSettings(s *CloudBrowserSettings) *browserSettingsWire {
	if s == nil {
		return nil
	}
	w := &browserSettingsWire{
		AdvancedStealth:      trueOrNil(s.AdvancedStealth),
		BlockAds:             trueOrNil(s.BlockAds),
		CaptchaImageSelector: s.CaptchaImageSelector,
		CaptchaInputSelector: s.CaptchaInputSelector,
		ExtensionID:          s.ExtensionID,
		LogSession:           trueOrNil(s.LogSession),
		OS:                   s.OS,
		RecordSession:        trueOrNil(s.RecordSession),
		SolveCaptchas:        trueOrNil(s.SolveCaptchas),
		Verified:             trueOrNil(s.Verified),
	}
	if s.Viewport != nil {
		w.Viewport = &viewportWire{Width: s.Viewport.Width, Height: s.Viewport.Height}
	}
	if s.Context != nil {
		w.Context = &contextWire{ID: s.Context.ID, Persist: trueOrNil(s.Context.Persist)}
	}
	if f := s.Fingerprint; f != nil {
		w.Fingerprint = &fingerprintWire{Browsers: f.Browsers, Devices: f.Devices, HTTPVersion: f.HTTPVersion,
			Locales: f.Locales, OperatingSystems: f.OperatingSystems}
		if sc := f.Screen; sc != nil {
			w.Fingerprint.Screen = &screenWire{MaxHeight: positive(sc.MaxHeight), MaxWidth: positive(sc.MaxWidth),
				MinHeight: positive(sc.MinHeight), MinWidth: positive(sc.MinWidth)}
		}
	}
	return w
}

// positive is &n for n > 0, nil (no bound) otherwise.
func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

// proxies is the wire form of p: its list, true, or nil (none).
func proxies(p *CloudProxies) any {
	switch {
	case p == nil:
		return nil
	case p.List != nil:
		list := make([]proxyWire, 0, len(p.List))
		for _, x := range p.List {
			w := proxyWire{Type: string(x.Type), DomainPattern: x.DomainPattern, Server: x.Server, Username: x.Username, Password: x.Password}
			if g := x.Geolocation; g != nil {
				w.Geolocation = &geolocationWire{Country: g.Country, City: g.City, State: g.State}
			}
			list = append(list, w)
		}
		return list
	case p.Enabled:
		return true
	}
	return nil
}

// cacheWire is the wire form of a cache setting: false, true, or
// {"threshold": n}; nil (left out) for none.
func cacheWire(c *Caching) any {
	switch {
	case c == nil:
		return nil
	case !c.enabled:
		return false
	case c.thresholdSet:
		return map[string]int{"threshold": c.threshold}
	}
	return true
}

// modelWire is an operation's options.model.
type modelWire struct {
	ModelName string            `json:"modelName,omitempty"`
	APIKey    string            `json:"apiKey,omitempty"`
	BaseURL   string            `json:"baseURL,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// variableWire is one variable: {value, description}.
type variableWire struct {
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
}

// opOptionsWire are the options act, observe and extract share.
type opOptionsWire struct {
	Model              *modelWire              `json:"model,omitempty"`
	Variables          map[string]variableWire `json:"variables,omitempty"`
	Timeout            *float64                `json:"timeout,omitempty"`
	Selector           string                  `json:"selector,omitempty"`
	IgnoreSelectors    []string                `json:"ignoreSelectors,omitempty"`
	SystemPrompt       *string                 `json:"systemPrompt,omitempty"`
	DOMSettleTimeoutMs *int                    `json:"domSettleTimeoutMs,omitempty"`
	// Cache is the call's cache setting (cacheWire); nil leaves the
	// session's.
	Cache any `json:"cache,omitempty"`
	// act only.
	SelfHeal *bool `json:"selfHeal,omitempty"`
	// extract only.
	Screenshot *bool `json:"screenshot,omitempty"`
}

// actWire is act's body. Input is the instruction (a string) or an Action.
type actWire struct {
	Input   any           `json:"input"`
	Options opOptionsWire `json:"options"`
	FrameID string        `json:"frameId,omitempty"`
}

// observeWire is observe's body.
type observeWire struct {
	Instruction string        `json:"instruction,omitempty"`
	Options     opOptionsWire `json:"options"`
	FrameID     string        `json:"frameId,omitempty"`
}

// extractWire is extract's body.
type extractWire struct {
	Instruction string          `json:"instruction,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Options     opOptionsWire   `json:"options"`
	FrameID     string          `json:"frameId,omitempty"`
}

// opData is the data of an act, observe or extract success.
type opData[T any] struct {
	Result   T            `json:"result"`
	ActionID string       `json:"actionId"`
	Metadata metadataWire `json:"metadata"`
}

// metadataWire is data.metadata.
type metadataWire struct {
	Cache struct {
		Status      CacheStatus `json:"status"`
		Count       int         `json:"count"`
		Threshold   int         `json:"threshold"`
		MissReason  string      `json:"missReason"`
		TokensSaved *struct {
			InputTokens  float64 `json:"inputTokens"`
			OutputTokens float64 `json:"outputTokens"`
			TotalTokens  float64 `json:"totalTokens"`
		} `json:"tokensSaved"`
	} `json:"cache"`
	Usage struct {
		InputTokens       float64 `json:"inputTokens"`
		OutputTokens      float64 `json:"outputTokens"`
		ReasoningTokens   float64 `json:"reasoningTokens"`
		CachedInputTokens float64 `json:"cachedInputTokens"`
		InferenceTimeMs   float64 `json:"inferenceTimeMs"`
	} `json:"usage"`
}

// metadata is the library's Metadata of a result; a service that sent no
// cache status ran no lookup.
func (w metadataWire) metadata(actionID string) Metadata {
	md := Metadata{
		Cache: CacheMetadata{
			Status:     w.Cache.Status,
			Count:      w.Cache.Count,
			Threshold:  w.Cache.Threshold,
			MissReason: w.Cache.MissReason,
		},
		ActionID: actionID,
		Usage: Usage{
			InputTokens:       w.Usage.InputTokens,
			OutputTokens:      w.Usage.OutputTokens,
			ReasoningTokens:   w.Usage.ReasoningTokens,
			CachedInputTokens: w.Usage.CachedInputTokens,
			InferenceTimeMs:   w.Usage.InferenceTimeMs,
		},
	}
	if md.Cache.Status == "" {
		md.Cache.Status = CacheStatusDISABLED
	}
	if t := w.Cache.TokensSaved; t != nil {
		md.Cache.TokensSaved = &TokensSaved{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, TotalTokens: t.TotalTokens}
	}
	return md
}

// actResultWire is act's result.
type actResultWire struct {
	Success           bool     `json:"success"`
	Message           string   `json:"message"`
	ActionDescription string   `json:"actionDescription"`
	Actions           []Action `json:"actions"`
}
