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
	"fmt"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/emulation"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// The identity a session presents: operating system, device class and
// browser brand, chosen from browserSettings.os and the fingerprint, and
// everything that must agree with it (user agent, navigator.platform, client
// hints, viewport, touch). A site that sees a macOS user agent with
// navigator.platform "Linux x86_64", or a phone user agent without touch,
// knows it is talking to automation; so the runner always presents one
// coherent profile, even when the session asks for nothing (then: Chrome on
// Linux desktop, what the runner really is, minus "HeadlessChrome").

type osFamily string

const (
	osWindows osFamily = "windows"
	osMacOS   osFamily = "macos"
	osLinux   osFamily = "linux"
	osAndroid osFamily = "android"
	osIOS     osFamily = "ios"
)

type deviceClass string

const (
	deviceDesktop deviceClass = "desktop"
	deviceMobile  deviceClass = "mobile"
	deviceTablet  deviceClass = "tablet"
)

type browserBrand string

const (
	brandChrome browserBrand = "chrome"
	brandEdge   browserBrand = "edge"
)

type size struct{ Width, Height int64 }

// deviceProfile is a coherent identity and the page metrics that go with it.
type deviceProfile struct {
	OS     osFamily
	Device deviceClass
	Brand  browserBrand

	Viewport          size
	Screen            size
	DeviceScaleFactor float64
	// Mobile turns on mobile emulation: the meta viewport is honoured and
	// the page is laid out as on a phone.
	Mobile         bool
	Touch          bool
	MaxTouchPoints int64
}

// Metrics of the default device of each class: common sizes of real
// devices, so that nothing stands out.
var (
	desktopProfile = deviceProfile{Viewport: size{1280, 720}, Screen: size{1920, 1080}, DeviceScaleFactor: 1}
	// A Pixel 7 and an iPhone 13-15.
	androidPhoneProfile = deviceProfile{Viewport: size{412, 915}, Screen: size{412, 915}, DeviceScaleFactor: 2.625, Mobile: true, Touch: true, MaxTouchPoints: 5}
	iPhoneProfile       = deviceProfile{Viewport: size{390, 844}, Screen: size{390, 844}, DeviceScaleFactor: 3, Mobile: true, Touch: true, MaxTouchPoints: 5}
	// A 10" Android tablet and an iPad Air.
	androidTabletProfile = deviceProfile{Viewport: size{800, 1280}, Screen: size{800, 1280}, DeviceScaleFactor: 2, Mobile: true, Touch: true, MaxTouchPoints: 10}
	iPadProfile          = deviceProfile{Viewport: size{820, 1180}, Screen: size{820, 1180}, DeviceScaleFactor: 2, Mobile: true, Touch: true, MaxTouchPoints: 5}
)

// chooseProfile picks the identity a session presents. browserSettings.os
// decides when set; else the fingerprint's devices and operatingSystems, the
// first listed value that fits winning (the choice is deterministic, so a
// session looks the same every time it starts). notes says, for the log,
// what was asked for and cannot be presented.
func chooseProfile(os v1alpha1.OS, fp *v1alpha1.Fingerprint) (p deviceProfile, notes []string) {
	var family osFamily
	var device deviceClass
	switch os {
	case "windows":
		family, device = osWindows, deviceDesktop
	case "mac":
		family, device = osMacOS, deviceDesktop
	case "linux":
		family, device = osLinux, deviceDesktop
	case "mobile":
		device = deviceMobile
	case "tablet":
		device = deviceTablet
	case "":
	default:
		notes = append(notes, fmt.Sprintf("unknown os %q; presenting the default", os))
	}
	if fp != nil {
		if device == "" {
			switch {
			case slices.Contains(fp.Devices, "desktop"):
				device = deviceDesktop
			case slices.Contains(fp.Devices, "mobile"):
				device = deviceMobile
			}
		}
		if family == "" {
			for _, o := range fp.OperatingSystems {
				f := osFamily(o)
				mobileOS := f == osAndroid || f == osIOS
				if device == "" || (device == deviceDesktop) != mobileOS {
					family = f
					break
				}
			}
			if family == "" && len(fp.OperatingSystems) > 0 {
				notes = append(notes, fmt.Sprintf("fingerprint operatingSystems %v do not fit a %s device", fp.OperatingSystems, device))
			}
		}
	}
	if device == "" {
		if family == osAndroid || family == osIOS {
			device = deviceMobile
		} else {
			device = deviceDesktop
		}
	}
	if family == "" {
		family = osLinux
		if device != deviceDesktop {
			family = osAndroid
		}
	}

	switch {
	case device == deviceDesktop:
		p = desktopProfile
	case device == deviceMobile && family == osIOS:
		p = iPhoneProfile
	case device == deviceMobile:
		p = androidPhoneProfile
	case family == osIOS:
		p = iPadProfile
	default:
		p = androidTabletProfile
	}
	p.OS, p.Device, p.Brand = family, device, brandChrome

	if fp != nil && len(fp.Browsers) > 0 {
		switch {
		case slices.Contains(fp.Browsers, "chrome"):
		case slices.Contains(fp.Browsers, "edge") && family != osIOS:
			p.Brand = brandEdge
		default:
			notes = append(notes, fmt.Sprintf("fingerprint browsers %v cannot be presented by Chromium; presenting Chrome", fp.Browsers))
		}
	}
	if fp != nil && fp.Screen != nil {
		p.Screen = size{
			Width:  clamp(p.Screen.Width, fp.Screen.MinWidth, fp.Screen.MaxWidth),
			Height: clamp(p.Screen.Height, fp.Screen.MinHeight, fp.Screen.MaxHeight),
		}
		// The window cannot be larger than its screen.
		p.Viewport.Width = min(p.Viewport.Width, p.Screen.Width)
		p.Viewport.Height = min(p.Viewport.Height, p.Screen.Height)
	}
	return p, notes
}

func clamp(v int64, lo, hi *int32) int64 {
	if hi != nil && *hi > 0 && v > int64(*hi) {
		v = int64(*hi)
	}
	if lo != nil && v < int64(*lo) {
		v = int64(*lo)
	}
	return v
}

// majorVersion turns "156.0.8078.79" into "156".
func majorVersion(full string) string {
	major, _, _ := strings.Cut(full, ".")
	return major
}

// userAgent is the profile's User-Agent for a browser of version full
// ("156.0.8078.79"). It follows Chrome's reduced user agent: the minor
// version is zeroed and the OS version frozen, as real Chrome sends it.
func (p deviceProfile) userAgent(full string) string {
	major := majorVersion(full)
	reduced := major + ".0.0.0"
	const webkit = "AppleWebKit/537.36 (KHTML, like Gecko)"
	var ua string
	switch {
	case p.OS == osIOS:
		device := "iPhone; CPU iPhone OS 17_5 like Mac OS X"
		if p.Device == deviceTablet {
			device = "iPad; CPU OS 17_5 like Mac OS X"
		}
		// Chrome on iOS runs on WebKit and says so.
		return "Mozilla/5.0 (" + device + ") AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/" + full + " Mobile/15E148 Safari/604.1"
	case p.OS == osAndroid && p.Device == deviceMobile:
		ua = "Mozilla/5.0 (Linux; Android 10; K) " + webkit + " Chrome/" + reduced + " Mobile Safari/537.36"
	case p.OS == osAndroid:
		ua = "Mozilla/5.0 (Linux; Android 10; K) " + webkit + " Chrome/" + reduced + " Safari/537.36"
	case p.OS == osWindows:
		ua = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) " + webkit + " Chrome/" + reduced + " Safari/537.36"
	case p.OS == osMacOS:
		ua = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) " + webkit + " Chrome/" + reduced + " Safari/537.36"
	default:
		ua = "Mozilla/5.0 (X11; Linux x86_64) " + webkit + " Chrome/" + reduced + " Safari/537.36"
	}
	if p.Brand == brandEdge {
		if p.OS == osAndroid {
			ua += " EdgA/" + reduced
		} else {
			ua += " Edg/" + reduced
		}
	}
	return ua
}

// platform is navigator.platform on the profile's OS.
func (p deviceProfile) platform() string {
	switch p.OS {
	case osWindows:
		return "Win32"
	case osMacOS:
		return "MacIntel"
	case osAndroid:
		return "Linux armv81"
	case osIOS:
		if p.Device == deviceTablet {
			return "iPad"
		}
		return "iPhone"
	default:
		return "Linux x86_64"
	}
}

// metadata is what navigator.userAgentData and the Sec-CH-UA headers say.
// Chrome on iOS has no client hints (WebKit does not implement them), so it
// returns nil there.
func (p deviceProfile) metadata(full string) *emulation.UserAgentMetadata {
	if p.OS == osIOS {
		return nil
	}
	major := majorVersion(full)
	brand := "Google Chrome"
	if p.Brand == brandEdge {
		brand = "Microsoft Edge"
	}
	// The GREASE brand and the order are Chrome's for this era; sites
	// fingerprint the shape, not the exact string.
	brands := []*emulation.UserAgentBrandVersion{
		{Brand: "Not/A)Brand", Version: "8"},
		{Brand: "Chromium", Version: major},
		{Brand: brand, Version: major},
	}
	fullList := []*emulation.UserAgentBrandVersion{
		{Brand: "Not/A)Brand", Version: "8.0.0.0"},
		{Brand: "Chromium", Version: full},
		{Brand: brand, Version: full},
	}
	m := &emulation.UserAgentMetadata{
		Brands:          brands,
		FullVersionList: fullList,
		Mobile:          p.Device == deviceMobile,
		Bitness:         "64",
		FormFactors:     []string{"Desktop"},
	}
	switch p.OS {
	case osWindows:
		m.Platform, m.PlatformVersion, m.Architecture = "Windows", "15.0.0", "x86"
	case osMacOS:
		m.Platform, m.PlatformVersion, m.Architecture = "macOS", "14.5.0", "arm"
	case osAndroid:
		m.Platform, m.PlatformVersion, m.Architecture, m.Bitness = "Android", "14.0.0", "", ""
		m.FormFactors = []string{"Mobile"}
		if p.Device == deviceTablet {
			m.FormFactors = []string{"Tablet"}
		}
	default:
		m.Platform, m.PlatformVersion, m.Architecture = "Linux", "6.1.0", "x86"
	}
	return m
}
