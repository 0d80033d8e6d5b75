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
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
	"math"
)

// Viewport is the visible part of the page, in CSS pixels.
type Viewport struct {
	Width, Height float64
	// DeviceScaleFactor is how many screen pixels a CSS pixel takes.
	DeviceScaleFactor float64
}

// layoutMetrics is the part of Page.getLayoutMetrics this package reads.
type layoutMetrics struct {
	CSSVisualViewport struct {
		PageX        float64 `json:"pageX"`
		PageY        float64 `json:"pageY"`
		ClientWidth  float64 `json:"clientWidth"`
		ClientHeight float64 `json:"clientHeight"`
		Scale        float64 `json:"scale"`
	} `json:"cssVisualViewport"`
}

// Viewport returns the size of the tab's viewport.
func (p *Page) Viewport(ctx context.Context) (Viewport, error) {
	var m layoutMetrics
	if err := p.main.call(ctx, "Page.getLayoutMetrics", nil, &m); err != nil {
		return Viewport{}, fmt.Errorf("viewport: %w", err)
	}
	o, err := p.main.evaluate(ctx, "window.devicePixelRatio", true)
	if err != nil {
		return Viewport{}, fmt.Errorf("viewport: %w", err)
	}
	var dpr float64
	if err := unmarshalValue(o.Value, &dpr); err != nil || dpr <= 0 {
		dpr = 1
	}
	v := m.CSSVisualViewport
	return Viewport{Width: v.ClientWidth, Height: v.ClientHeight, DeviceScaleFactor: dpr}, nil
}

// ScreenshotOptions bound a screenshot's size.
type ScreenshotOptions struct {
	// MaxWidth and MaxHeight, when set, bound the image in pixels: a larger
	// viewport (or a high device scale factor) is scaled down, keeping its
	// aspect ratio.
	MaxWidth, MaxHeight int
}

// Screenshot is a PNG image of the viewport.
type Screenshot struct {
	// PNG is the encoded image.
	PNG []byte
	// Width and Height are the image's size in pixels.
	Width, Height int
	// Viewport is the viewport the image shows.
	Viewport Viewport
}

// ToViewport converts a point in the image's pixels into the viewport's
// CSS pixels, which the coordinate actions take.
func (s *Screenshot) ToViewport(x, y float64) (float64, float64) {
	if s.Width == 0 || s.Height == 0 {
		return x, y
	}
	return x * s.Viewport.Width / float64(s.Width), y * s.Viewport.Height / float64(s.Height)
}

// Contains reports whether a point in the image's pixels lies inside it.
func (s *Screenshot) Contains(x, y float64) bool {
	return x >= 0 && y >= 0 && x < float64(s.Width) && y < float64(s.Height)
}

// Screenshot captures the viewport as a PNG, scaled down to the options'
// bounds. The tab is brought to the front first: a background tab renders
// no frames to capture.
func (p *Page) Screenshot(ctx context.Context, opts ScreenshotOptions) (*Screenshot, error) {
	if err := p.main.call(ctx, "Page.bringToFront", nil, nil); err != nil {
		return nil, fmt.Errorf("screenshot: bring tab to front: %w", err)
	}
	vp, err := p.Viewport(ctx)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	if vp.Width <= 0 || vp.Height <= 0 {
		return nil, errors.New("screenshot: the viewport is empty")
	}
	params := map[string]any{"format": "png"}
	// The image is the viewport times the device scale factor; a clip
	// with a scale shrinks it in the renderer, which saves decoding and
	// re-encoding it here.
	scale := 1.0
	w, h := vp.Width*vp.DeviceScaleFactor, vp.Height*vp.DeviceScaleFactor
	if opts.MaxWidth > 0 && w > float64(opts.MaxWidth) {
		scale = math.Min(scale, float64(opts.MaxWidth)/w)
	}
	if opts.MaxHeight > 0 && h > float64(opts.MaxHeight) {
		scale = math.Min(scale, float64(opts.MaxHeight)/h)
	}
	if scale < 1 {
		var m layoutMetrics
		if err := p.main.call(ctx, "Page.getLayoutMetrics", nil, &m); err != nil {
			return nil, fmt.Errorf("screenshot: %w", err)
		}
		v := m.CSSVisualViewport
		params["clip"] = map[string]any{
			"x": v.PageX, "y": v.PageY, "width": vp.Width, "height": vp.Height,
			// The clip's scale multiplies the device scale factor.
			"scale": scale,
		}
	}
	var res struct {
		Data string `json:"data"`
	}
	if err := p.main.call(ctx, "Page.captureScreenshot", params, &res); err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	img, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		return nil, fmt.Errorf("screenshot: decoding the image: %w", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("screenshot: reading the image's size: %w", err)
	}
	return &Screenshot{PNG: img, Width: cfg.Width, Height: cfg.Height, Viewport: vp}, nil
}

// ScreenshotElement captures the box of el, an element of the main frame's
// document (as MainFrame().Query finds it), as a PNG scaled down to the
// options' bounds. The element is scrolled into view and the tab brought
// to the front first. The Screenshot's Viewport is the element's box.
func (p *Page) ScreenshotElement(ctx context.Context, el *Element, opts ScreenshotOptions) (*Screenshot, error) {
	if el == nil || el.Frame == nil || el.Frame.Parent != nil || el.Frame.sess != p.main || el.text {
		return nil, fmt.Errorf("screenshot of %s: only an element of the main frame can be captured", el)
	}
	defer p.unhold(el.held)
	ctx, release := withObjects(ctx)
	defer func() { go release() }()
	if err := p.main.call(ctx, "Page.bringToFront", nil, nil); err != nil {
		return nil, fmt.Errorf("screenshot of %s: bring tab to front: %w", el, err)
	}
	obj := el.held.object()
	if obj == "" {
		var err error
		if obj, err = p.main.resolveNode(ctx, el.BackendNodeID); err != nil {
			return nil, fmt.Errorf("screenshot of %s: %w", el, err)
		}
	}
	res, err := p.main.callOn(ctx, obj, jsElementBox, true)
	if err != nil {
		return nil, fmt.Errorf("screenshot of %s: %w", el, err)
	}
	var box struct {
		X      float64 `json:"x"`
		Y      float64 `json:"y"`
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
		DPR    float64 `json:"dpr"`
	}
	if err := unmarshalValue(res.Value, &box); err != nil {
		return nil, fmt.Errorf("screenshot of %s: %w", el, err)
	}
	if box.Width < 1 || box.Height < 1 {
		return nil, fmt.Errorf("screenshot of %s: the element has no visible box", el)
	}
	if box.DPR <= 0 {
		box.DPR = 1
	}
	scale := 1.0
	w, h := box.Width*box.DPR, box.Height*box.DPR
	if opts.MaxWidth > 0 && w > float64(opts.MaxWidth) {
		scale = math.Min(scale, float64(opts.MaxWidth)/w)
	}
	if opts.MaxHeight > 0 && h > float64(opts.MaxHeight) {
		scale = math.Min(scale, float64(opts.MaxHeight)/h)
	}
	params := map[string]any{
		"format": "png",
		// The clip is in the document's CSS pixels; its scale multiplies
		// the device scale factor.
		"clip": map[string]any{"x": box.X, "y": box.Y, "width": box.Width, "height": box.Height, "scale": scale},
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := p.main.call(ctx, "Page.captureScreenshot", params, &shot); err != nil {
		return nil, fmt.Errorf("screenshot of %s: %w", el, err)
	}
	img, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return nil, fmt.Errorf("screenshot of %s: decoding the image: %w", el, err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("screenshot of %s: reading the image's size: %w", el, err)
	}
	return &Screenshot{PNG: img, Width: cfg.Width, Height: cfg.Height,
		Viewport: Viewport{Width: box.Width, Height: box.Height, DeviceScaleFactor: box.DPR}}, nil
}

// jsElementBox scrolls this element into view and returns its box in the
// document's CSS pixels, and the device pixel ratio.
const jsElementBox = `function() {
  this.scrollIntoViewIfNeeded(true);
  const r = this.getBoundingClientRect();
  return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height, dpr: window.devicePixelRatio};
}`
