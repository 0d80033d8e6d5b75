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
	"context"
	"errors"
	"image/png"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The coordinate fixture places everything at known viewport positions
// (the page starts unscrolled, 1280x800).
func init() {
	pages["/coords"] = `<!doctype html><title>Coordinates</title>` + eventsJS + `
<style>body{margin:0;height:3000px} .abs{position:absolute}</style>
<button id=btn class=abs style="left:100px;top:100px;width:120px;height:40px"
  onclick="window.events.push('clicks:' + event.detail + ':' + event.button)"
  oncontextmenu="event.preventDefault(); window.events.push('context')"
  onmousedown="window.downAt = performance.now()"
  onmouseup="window.events.push('held:' + (performance.now() - window.downAt >= 250))">Press</button>
<input id=field class=abs style="left:100px;top:200px;width:200px;height:30px" aria-label="Field">
<div id=box class=abs style="left:400px;top:100px;width:200px;height:150px;overflow:auto">
  <div style="height:1000px">Inner</div></div>
<div id=red class=abs style="left:700px;top:100px;width:100px;height:100px;background:#ff0000"></div>
<div id=knob class=abs style="left:100px;top:300px;width:60px;height:60px;background:#39f"></div>
<div id=src class=abs draggable=true style="left:300px;top:300px;width:60px;height:60px;background:#acf">Drag</div>
<div id=dst class=abs style="left:500px;top:300px;width:120px;height:80px;background:#fca"
  ondragover="event.preventDefault()" ondrop="event.preventDefault(); window.events.push('dropped')">Drop</div>
<script>
// A pointer-driven slider knob: follows the mouse while the button is down.
knob.addEventListener('mousedown', e => {
  const move = m => { knob.style.left = (m.clientX - 30) + 'px'; knob.style.top = (m.clientY - 30) + 'px'; };
  const up = u => { removeEventListener('mousemove', move); removeEventListener('mouseup', up); window.events.push('knob:' + knob.style.left + ',' + knob.style.top); };
  addEventListener('mousemove', move); addEventListener('mouseup', up);
});
</script>`
}

func (tb *tab) has(event string) bool {
	return contains(tb.events(), event)
}

func TestClickAtReachesTheElementUnderThePoint(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	ctx := tb.testCtx()

	if err := tb.p.MoveTo(ctx, 160, 120); err != nil {
		t.Fatal(err)
	}
	if !tb.has("mouseover:btn") || tb.has("clicks:1:0") {
		t.Errorf("moving over the button: %v", tb.events())
	}
	if err := tb.p.ClickAt(ctx, 160, 120, ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	if err := tb.p.ClickAt(ctx, 160, 120, ButtonLeft, 2); err != nil {
		t.Fatal(err)
	}
	if err := tb.p.ClickAt(ctx, 160, 120, ButtonRight, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"clicks:1:0", "clicks:2:0", "dblclick:btn", "context"} {
		if !tb.has(want) {
			t.Errorf("the page did not see %q; it saw %v", want, tb.events())
		}
	}
	if err := tb.p.ClickAt(ctx, 160, 120, "wheel", 1); err == nil || !strings.Contains(err.Error(), "unknown mouse button") {
		t.Errorf("an unknown button gave %v", err)
	}
}

func TestTypeTextAndPressKeyGoToTheFocusedElement(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	ctx := tb.testCtx()
	if err := tb.p.ClickAt(ctx, 200, 215, ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	if err := tb.p.TypeText(ctx, "héllo wörld"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"Control+A", "Backspace"} {
		if err := tb.p.PressKey(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.p.TypeText(ctx, "ok"); err != nil {
		t.Fatal(err)
	}
	var v string
	tb.eval(`document.getElementById('field').value`, &v)
	if v != "ok" {
		t.Errorf("field value %q, want %q (typed, selected all, deleted, typed again)", v, "ok")
	}
	if !tb.has("keydown:field") || !tb.has("input:field") {
		t.Errorf("the field did not see key and input events: %v", tb.events())
	}
	if err := tb.p.PressKey(ctx, "Hyper+Q"); err == nil {
		t.Error("an unknown modifier was accepted")
	}
}

func TestScrollAtScrollsWhatIsUnderThePoint(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	ctx := tb.testCtx()
	if err := tb.p.ScrollAt(ctx, 500, 175, 0, 300); err != nil {
		t.Fatal(err)
	}
	var box, page float64
	tb.eval(`document.getElementById('box').scrollTop`, &box)
	tb.eval(`window.scrollY`, &page)
	if box <= 0 || page != 0 {
		t.Errorf("over the inner box: box scrolled to %v and the page to %v; want the box only", box, page)
	}
	if err := tb.p.ScrollAt(ctx, 1000, 600, 0, 400); err != nil {
		t.Fatal(err)
	}
	tb.eval(`window.scrollY`, &page)
	if page <= 0 {
		t.Errorf("outside the box the page did not scroll (scrollY %v)", page)
	}
	before := page
	if err := tb.p.ScrollAt(ctx, 1000, 600, 0, -100); err != nil {
		t.Fatal(err)
	}
	tb.eval(`window.scrollY`, &page)
	if page >= before {
		t.Errorf("scrolling up left scrollY at %v (was %v)", page, before)
	}
}

func TestDragAtPointerAndHTML5(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	ctx := tb.testCtx()

	// A pointer-driven knob follows the mouse along the path.
	if err := tb.p.DragAt(ctx, []Point{{130, 330}, {200, 330}, {250, 380}}); err != nil {
		t.Fatal(err)
	}
	if !tb.has("knob:220px,350px") {
		t.Errorf("the knob did not end under the last point: %v", tb.events())
	}
	// An HTML5 draggable is dropped on the element under the last point.
	if err := tb.p.DragAt(ctx, []Point{{330, 330}, {560, 340}}); err != nil {
		t.Fatal(err)
	}
	if !tb.has("dragstart:src") || !tb.has("dropped") {
		t.Errorf("the HTML5 drag did not drop: %v", tb.events())
	}
	if err := tb.p.DragAt(ctx, []Point{{1, 1}}); err == nil {
		t.Error("a one-point path was accepted")
	}
}

func TestMouseHoldKeepsTheButtonDown(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	if err := tb.p.MouseHold(tb.testCtx(), 160, 120, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !tb.has("held:true") {
		t.Errorf("the button was not held for the duration: %v", tb.events())
	}
	if err := tb.p.MouseHold(tb.testCtx(), 160, 120, MaxHold+time.Second); err == nil {
		t.Error("a hold past MaxHold was accepted")
	}

	// MouseDown and MouseUp apart make the same press.
	if err := tb.p.MouseDown(tb.testCtx(), 160, 120, ButtonLeft); err != nil {
		t.Fatal(err)
	}
	if err := tb.p.MouseUp(tb.testCtx(), 160, 120, ButtonLeft); err != nil {
		t.Fatal(err)
	}
	var ev []string
	for _, e := range tb.events() {
		if strings.HasPrefix(e, "clicks:") {
			ev = append(ev, e)
		}
	}
	if diff := cmp.Diff([]string{"clicks:1:0", "clicks:1:0"}, ev); diff != "" {
		t.Errorf("clicks (-want +got):\n%s", diff)
	}
}

// pixel returns the colour of the image's pixel at (x, y) as 8-bit RGB.
func pixel(t *testing.T, pngData []byte, x, y int) [3]uint8 {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		t.Fatal(err)
	}
	r, g, b, _ := img.At(x, y).RGBA()
	return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

func TestScreenshotOfTheViewport(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	ctx := tb.testCtx()

	full, err := tb.p.Screenshot(ctx, ScreenshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if full.Width != int(full.Viewport.Width) || full.Height != int(full.Viewport.Height) {
		t.Errorf("image %dx%d for viewport %+v", full.Width, full.Height, full.Viewport)
	}
	if got := pixel(t, full.PNG, 750, 150); got != [3]uint8{255, 0, 0} {
		t.Errorf("pixel at the red box is %v", got)
	}

	half, err := tb.p.Screenshot(ctx, ScreenshotOptions{MaxWidth: full.Width / 2, MaxHeight: 2000})
	if err != nil {
		t.Fatal(err)
	}
	// The renderer rounds an odd height's half either way.
	if half.Width != full.Width/2 || math.Abs(float64(half.Height)-float64(full.Height)/2) > 1 {
		t.Errorf("bounded image is %dx%d, want %dx%d", half.Width, half.Height, full.Width/2, full.Height/2)
	}
	if got := pixel(t, half.PNG, 375, 75); got != [3]uint8{255, 0, 0} {
		t.Errorf("pixel at the red box in the half-size image is %v", got)
	}
	// A point read off the small image lands on the same spot of the page.
	x, y := half.ToViewport(80, 60)
	if x != 160 || math.Abs(y-120) > 0.5 {
		t.Errorf("ToViewport(80, 60) = (%v, %v), want (160, 120)", x, y)
	}
	if err := tb.p.ClickAt(ctx, x, y, ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	if !tb.has("clicks:1:0") {
		t.Errorf("the click at the converted point missed the button: %v", tb.events())
	}
}

func TestScreenshotWithADeviceScaleFactor(t *testing.T) {
	tb := newTab(t)
	if err := tb.p.main.call(tb.testCtx(), "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": 800, "height": 600, "deviceScaleFactor": 2, "mobile": false,
	}, nil); err != nil {
		t.Fatal(err)
	}
	tb.open("/coords")
	ctx := tb.testCtx()
	s, err := tb.p.Screenshot(ctx, ScreenshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Width != 1600 || s.Height != 1200 || s.Viewport.DeviceScaleFactor != 2 {
		t.Errorf("image %dx%d, viewport %+v; want 1600x1200 at scale 2", s.Width, s.Height, s.Viewport)
	}
	b, err := tb.p.Screenshot(ctx, ScreenshotOptions{MaxWidth: 800, MaxHeight: 800})
	if err != nil {
		t.Fatal(err)
	}
	if b.Width != 800 || b.Height != 600 {
		t.Errorf("bounded image %dx%d, want 800x600", b.Width, b.Height)
	}
	if x, y := b.ToViewport(160, 120); x != 160 || y != 120 {
		t.Errorf("ToViewport(160, 120) = (%v, %v) at scale 1 of CSS pixels", x, y)
	}
	if x, y := s.ToViewport(320, 240); x != 160 || y != 120 {
		t.Errorf("ToViewport(320, 240) = (%v, %v) on the 2x image, want (160, 120)", x, y)
	}
}

func TestShowCursorLetsInputThrough(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	ctx := tb.testCtx()
	if err := tb.p.ShowCursor(ctx, 50, 50); err != nil {
		t.Fatal(err)
	}
	if err := tb.p.ShowCursor(ctx, 160, 120); err != nil {
		t.Fatal(err)
	}
	var c struct {
		Count    int     `json:"count"`
		X        float64 `json:"x"`
		Y        float64 `json:"y"`
		Pointer  string  `json:"pointer"`
		Visible  bool    `json:"visible"`
		AtPoint  string  `json:"atPoint"`
		ZIndex   string  `json:"z"`
		Position string  `json:"position"`
	}
	tb.eval(`(() => {
  const c = document.getElementById('`+CursorID+`'), r = c.getBoundingClientRect(), s = getComputedStyle(c);
  return {count: document.querySelectorAll('#`+CursorID+`').length, x: r.left + r.width / 2, y: r.top + r.height / 2,
    pointer: s.pointerEvents, visible: s.visibility === 'visible' && r.width > 0, atPoint: document.elementFromPoint(160, 120).id,
    z: s.zIndex, position: s.position};
})()`, &c)
	if c.Count != 1 || c.X != 160 || c.Y != 120 || c.Pointer != "none" || !c.Visible || c.AtPoint != "btn" || c.Position != "fixed" {
		t.Errorf("cursor %+v; want one visible fixed ring centred on (160, 120) that lets the button take the point", c)
	}
	if err := tb.p.ClickAt(ctx, 160, 120, ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	if !tb.has("clicks:1:0") {
		t.Errorf("the click under the cursor did not reach the button: %v", tb.events())
	}
	// The screenshot shows it: red ring over the button's grey.
	s, err := tb.p.Screenshot(ctx, ScreenshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pixel(t, s.PNG, 160, 110); got[0] < 200 || got[1] > 80 {
		t.Errorf("the cursor's ring is not in the screenshot: pixel %v", got)
	}
	snap := tb.capture(SnapshotOptions{})
	if strings.Contains(snap.Tree, CursorID) || len(snap.XPaths) == 0 {
		t.Errorf("the snapshot shows the cursor:\n%s", snap.Tree)
	}
}

func TestXPathAtNamesTheElementUnderThePoint(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	ctx := tb.testCtx()
	xp, err := tb.p.XPathAt(ctx, 160, 120)
	if err != nil {
		t.Fatal(err)
	}
	el, err := tb.p.MainFrame().Query(ctx, xp)
	if err != nil {
		t.Fatalf("query %s: %v", xp, err)
	}
	if err := tb.p.Perform(ctx, el, "click", nil); err != nil {
		t.Fatal(err)
	}
	if !tb.has("clicks:1:0") {
		t.Errorf("the element of %s is not the button: %v", xp, tb.events())
	}
	if _, err := tb.p.XPathAt(ctx, 5000, 5000); !errors.Is(err, ErrNotFound) {
		t.Errorf("a point outside the viewport gave %v, want ErrNotFound", err)
	}
}

func TestURLAndGoBack(t *testing.T) {
	tb := newTab(t)
	ctx := tb.testCtx()
	if err := tb.p.GoBack(ctx, NavigateOptions{}); !errors.Is(err, ErrNoHistory) {
		t.Errorf("going back from the first page gave %v, want ErrNoHistory", err)
	}
	tb.open("/coords")
	tb.open("/referer")
	tb.open("/referer#part")
	// A same-document navigation enters the history a moment after
	// Navigate returns.
	waitFor(t, func() bool { u, _ := tb.p.URL(ctx); return strings.HasSuffix(u, "#part") })

	steps := []string{originA + "/referer", originA + "/coords"}
	for _, want := range steps {
		if err := tb.p.GoBack(ctx, NavigateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := tb.p.URL(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("after going back the URL is %s, want %s", got, want)
		}
	}
	// The page shown is the earlier document, loaded and scriptable.
	var title string
	tb.eval(`document.readyState + ':' + document.title`, &title)
	if title != "complete:Coordinates" {
		t.Errorf("after going back the document is %q", title)
	}
	if err := tb.p.ClickAt(ctx, 160, 120, ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}

	// Forward retraces the steps back, and stops at the latest entry.
	for _, want := range []string{originA + "/referer", originA + "/referer#part"} {
		if err := tb.p.GoForward(ctx, NavigateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, err := tb.p.URL(ctx); err != nil || got != want {
			t.Errorf("after going forward the URL is %s (%v), want %s", got, err, want)
		}
	}
	if err := tb.p.GoForward(ctx, NavigateOptions{}); !errors.Is(err, ErrNoForwardHistory) {
		t.Errorf("going forward from the latest page gave %v, want ErrNoForwardHistory", err)
	}
}

func TestHoldKeyKeepsTheKeyDown(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	tb.eval(`(() => {
  window.keys = [];
  addEventListener('keydown', e => { if (!e.repeat) { window.keys.push('down:' + e.key); window.downAt = performance.now(); } });
  addEventListener('keyup', e => window.keys.push('up:' + e.key + ':' + (performance.now() - window.downAt >= 250)));
  return true;
})()`, new(bool))
	if err := tb.p.ClickAt(tb.testCtx(), 200, 215, ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	if err := tb.p.HoldKey(tb.testCtx(), "Shift", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var keys []string
	tb.eval(`window.keys`, &keys)
	if diff := cmp.Diff([]string{"down:Shift", "up:Shift:true"}, keys); diff != "" {
		t.Errorf("key events (-want +got):\n%s", diff)
	}
	if err := tb.p.HoldKey(tb.testCtx(), "Shift", MaxHold+time.Second); err == nil {
		t.Error("a hold longer than MaxHold was accepted")
	}
}

func TestCoordinateInputHonoursTheContext(t *testing.T) {
	tb := newTab(t)
	tb.open("/coords")
	ctx, cancel := context.WithCancel(tb.ctx)
	cancel()
	if err := tb.p.ClickAt(ctx, 160, 120, ButtonLeft, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled click gave %v", err)
	}
	hctx, hcancel := context.WithTimeout(tb.ctx, time.Second)
	defer hcancel()
	if err := tb.p.MouseHold(hctx, 160, 120, 5*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a hold cut short gave %v", err)
	}
	// The button came up although the hold was cut short.
	if err := tb.p.ClickAt(tb.testCtx(), 160, 120, ButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	var downs int
	tb.eval(`window.events.filter(e => e.startsWith('held:')).length`, &downs)
	if downs != 2 {
		t.Errorf("%d mouse-ups on the button, want 2 (the cut hold's and the click's)", downs)
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// bound.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
