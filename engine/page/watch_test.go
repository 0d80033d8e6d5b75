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
	"bytes"
	"image/png"
	"net/url"
	"strings"
	"testing"
	"time"
)

// watchPage has a hidden image #c that show() shows and swap() gives a
// new source, and an element of the page that reports whether any of the
// watcher's names reached the page's world.
const watchPage = `<!doctype html><title>watch</title>
<img id="c" style="display:none" width="40" height="20" src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7">
<script>
window.show = () => { document.getElementById('c').style.display = ''; };
window.swap = () => { document.getElementById('c').src = 'data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAIBRAA7'; };
window.leaked = () => Object.keys(window).some(k => k.includes('browserfleet'));
</script>`

func dataURL(html string) string { return "data:text/html," + url.PathEscape(html) }

// wait receives from ch within a generous bound.
func wait[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

func TestWatchSelector(t *testing.T) {
	tb := newTab(t)
	seen := make(chan error, 16)
	// Watching starts on the tab's blank page: the page loaded next gets
	// the watcher as its document starts.
	if err := tb.p.WatchSelector(tb.testCtx(), "#c", func(err error) { seen <- err }); err != nil {
		t.Fatal(err)
	}
	tb.open(dataURL(watchPage))
	var leaked bool
	tb.eval("leaked()", &leaked)
	if leaked {
		t.Error("the page's world sees the watcher's binding")
	}
	tb.eval("show()", nil)
	if err := wait(t, "the image to be reported once shown", seen); err != nil {
		t.Fatalf("shown: %v", err)
	}
	tb.eval("swap()", nil)
	if err := wait(t, "the image to be reported with its new source", seen); err != nil {
		t.Fatalf("new source: %v", err)
	}
	if n := len(seen); n != 0 {
		t.Errorf("%d reports more than the two changes", n)
	}

	// A page already loaded when watching starts is watched too.
	tb2 := newTab(t)
	tb2.open(dataURL(strings.Replace(watchPage, `style="display:none" `, "", 1)))
	seen2 := make(chan error, 16)
	if err := tb2.p.WatchSelector(tb2.testCtx(), "xpath=//img[@id='c']", func(err error) { seen2 <- err }); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, "the image of the loaded page", seen2); err != nil {
		t.Fatalf("loaded page: %v", err)
	}
}

func init() {
	// An image that takes half a second to load.
	pages["/watch-image"] = `<!doctype html><title>watch</title><img id="c" width="40" height="20" src="/api/slow?type=gif&ms=500">`
}

// An image is reported once it has loaded, not when its element appears:
// its screenshot would be blank.
func TestWatchSelectorWaitsForAnImage(t *testing.T) {
	tb := newTab(t)
	seen := make(chan error, 16)
	if err := tb.p.WatchSelector(tb.testCtx(), "#c", func(err error) { seen <- err }); err != nil {
		t.Fatal(err)
	}
	// Not waiting for the load event, which waits for the image.
	if err := tb.p.Navigate(tb.testCtx(), originA+"/watch-image", NavigateOptions{WaitUntil: WaitDOMContentLoaded}); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, "the image to be reported", seen); err != nil {
		t.Fatal(err)
	}
	var complete bool
	tb.eval("document.getElementById('c').complete && document.getElementById('c').naturalWidth > 0", &complete)
	if !complete {
		t.Error("the image was reported before it loaded")
	}
}

func TestWatchSelectorReportsAnInvalidSelector(t *testing.T) {
	tb := newTab(t)
	seen := make(chan error, 16)
	if err := tb.p.WatchSelector(tb.testCtx(), "img[", func(err error) { seen <- err }); err != nil {
		t.Fatal(err)
	}
	tb.open(dataURL(watchPage))
	err := wait(t, "the selector's error", seen)
	if err == nil || !strings.Contains(err.Error(), "is not a valid selector") {
		t.Errorf("error = %v, want the page's word that the selector is not valid", err)
	}
	if err := tb.p.WatchSelector(tb.testCtx(), "text=Captcha", func(error) {}); err == nil {
		t.Error("a text= selector was accepted")
	}
}

func TestScreenshotElement(t *testing.T) {
	tb := newTab(t)
	tb.open(dataURL(`<!doctype html><div style="height:1500px"></div>
<canvas id="c" width="120" height="40"></canvas>
<script>const g = document.getElementById('c').getContext('2d'); g.fillStyle = '#f00'; g.fillRect(0, 0, 120, 40);</script>`))
	el, err := tb.p.MainFrame().Query(tb.testCtx(), "#c")
	if err != nil {
		t.Fatal(err)
	}
	shot, err := tb.p.ScreenshotElement(tb.testCtx(), el, ScreenshotOptions{MaxWidth: 60})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot.PNG))
	if err != nil {
		t.Fatal(err)
	}
	// Below the fold, scaled to half: the red canvas, all of it.
	if b := img.Bounds(); b.Dx() != 60 || b.Dy() != 20 {
		t.Errorf("image is %dx%d, want 60x20", b.Dx(), b.Dy())
	}
	for _, p := range [][2]int{{1, 1}, {30, 10}, {58, 18}} {
		r, g, b, _ := img.At(p[0], p[1]).RGBA()
		if r>>8 < 200 || g>>8 > 60 || b>>8 > 60 {
			t.Errorf("pixel %v is %d,%d,%d, want the canvas's red", p, r>>8, g>>8, b>>8)
		}
	}
}
