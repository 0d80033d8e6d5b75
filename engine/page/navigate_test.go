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

package page

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestNavigateWaitUntil(t *testing.T) {
	// /nav-target has an image that takes 600 ms and, 100 ms after its
	// load event, a fetch that takes 300 ms.
	for _, tc := range []struct {
		wait               WaitUntil
		wantImage, wantXHR bool
		minTime            time.Duration
	}{
		{WaitDOMContentLoaded, false, false, 0},
		{WaitLoad, true, false, 600 * time.Millisecond},
		{WaitNetworkIdle, true, true, 900 * time.Millisecond},
		{"", true, false, 600 * time.Millisecond}, // load is the default
	} {
		t.Run(string(tc.wait), func(t *testing.T) {
			tb := newTab(t)
			start := time.Now()
			if err := tb.p.Navigate(tb.testCtx(), originA+"/nav-target", NavigateOptions{WaitUntil: tc.wait}); err != nil {
				t.Fatalf("navigate: %v", err)
			}
			d := time.Since(start)
			var image, fetched bool
			tb.eval(`document.getElementById('img').complete`, &image)
			tb.eval(`window.fetched`, &fetched)
			if image != tc.wantImage || fetched != tc.wantXHR {
				t.Errorf("after %v: image loaded %v (want %v), fetch done %v (want %v)", d, image, tc.wantImage, fetched, tc.wantXHR)
			}
			if d < tc.minTime {
				t.Errorf("returned after %v, want at least %v", d, tc.minTime)
			}
		})
	}
}

func TestNavigateReferer(t *testing.T) {
	tb := newTab(t)
	const ref = "https://referrer.example/search?q=1"
	if err := tb.p.Navigate(tb.testCtx(), originA+"/referer", NavigateOptions{Referer: ref}); err != nil {
		t.Fatal(err)
	}
	if got := sawReferer("/referer"); got != ref {
		t.Errorf("server saw Referer %q, want %q", got, ref)
	}
	var docRef string
	tb.eval(`document.referrer`, &docRef)
	if docRef != ref {
		t.Errorf("document.referrer %q", docRef)
	}
}

func TestNavigateErrors(t *testing.T) {
	tb := newTab(t)
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	for _, tc := range []struct {
		name, url string
		opts      NavigateOptions
		want      string
	}{
		{"refused connection", closed, NavigateOptions{}, "ERR_CONNECTION_REFUSED"},
		{"unknown waitUntil", originA + "/content", NavigateOptions{WaitUntil: "idle"}, "unknown waitUntil"},
		{"timeout", originA + "/nav-target", NavigateOptions{Timeout: 200 * time.Millisecond}, "timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tb.p.Navigate(tb.testCtx(), tc.url, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestNavigateSameDocument(t *testing.T) {
	tb := newTab(t)
	tb.open("/content")
	start := time.Now()
	if err := tb.p.Navigate(tb.testCtx(), originA+"/content#main", NavigateOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("fragment navigation took %v", d)
	}
	var hash string
	tb.eval(`location.hash`, &hash)
	if hash != "#main" {
		t.Errorf("hash %q", hash)
	}
}

func TestStopLoadingReleasesAPendingNavigation(t *testing.T) {
	tb := newTab(t)
	tb.open("/content")
	// The server never answers: the navigation stays pending after the
	// caller gave up on it.
	err := tb.p.Navigate(tb.testCtx(), originB+"/api/hang", NavigateOptions{Timeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("navigating to a server that never answers gave %v", err)
	}
	if err := tb.p.StopLoading(tb.testCtx()); err != nil {
		t.Fatal(err)
	}
	// Chromium holds Page.getLayoutMetrics while a navigation is pending;
	// stopped, the tab answers and still shows the page it had.
	if _, err := tb.p.Viewport(tb.testCtx()); err != nil {
		t.Errorf("the viewport after stopping: %v", err)
	}
	if u, err := tb.p.URL(tb.testCtx()); err != nil || u != originA+"/content" {
		t.Errorf("the tab shows %s (%v), want %s", u, err, originA+"/content")
	}
}
