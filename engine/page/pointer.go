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
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/chromedp/cdproto/input"
)

// Input at viewport coordinates, for agents that act on what a screenshot
// shows rather than on snapshot ids. Coordinates are CSS pixels of the tab's
// viewport, origin top left, as Input.dispatchMouseEvent takes them; callers
// that work in a screenshot's pixels convert with Screenshot.ToViewport. Each
// call brings the tab to the front first (Chrome holds back input to
// background tabs) and holds the Page's input lock, so that it never
// interleaves with a Perform.

// MouseButton names a mouse button.
type MouseButton string

// Mouse buttons.
const (
	ButtonLeft   MouseButton = "left"
	ButtonRight  MouseButton = "right"
	ButtonMiddle MouseButton = "middle"
)

// Point is a position in the viewport, in CSS pixels.
type Point struct {
	X, Y float64
}

// MaxHold bounds how long MouseHold keeps a button down.
const MaxHold = 10 * time.Second

// buttonOf maps a button to its CDP name and its bit in the buttons mask.
func buttonOf(b MouseButton) (input.MouseButton, int64, error) {
	switch b {
	case ButtonLeft, "":
		return input.Left, 1, nil
	case ButtonRight:
		return input.Right, 2, nil
	case ButtonMiddle:
		return input.Middle, 4, nil
	}
	return "", 0, fmt.Errorf("unknown mouse button %q (want left, right or middle)", b)
}

func checkPoint(x, y float64) error {
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return fmt.Errorf("coordinates (%g, %g) are not finite numbers", x, y)
	}
	return nil
}

// pointer runs fn under the input lock with the tab in front, and marks the
// end of an action for Settle.
func (p *Page) pointer(ctx context.Context, fn func() error) error {
	p.inputMu.Lock()
	defer p.inputMu.Unlock()
	defer p.noteAction()
	if err := p.toFront(ctx, false); err != nil {
		return err
	}
	return fn()
}

// mouseAt dispatches one mouse event; buttons is the mask of the buttons
// held during it.
func (p *Page) mouseAt(ctx context.Context, typ input.MouseType, x, y float64, button input.MouseButton, buttons, clicks int64) error {
	e := input.DispatchMouseEvent(typ, x, y).WithButton(button).WithButtons(buttons).WithPointerType(input.Mouse)
	if clicks > 0 {
		e = e.WithClickCount(clicks)
	}
	return p.main.do(ctx, e)
}

// ClickAt moves the mouse to (x, y) and clicks button count times (2 is a
// double click), as a user's clicks: moved, then pressed and released with
// rising click counts.
func (p *Page) ClickAt(ctx context.Context, x, y float64, button MouseButton, count int) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	b, mask, err := buttonOf(button)
	if err != nil {
		return err
	}
	if count < 1 || count > 3 {
		return fmt.Errorf("click count %d: want 1, 2 or 3", count)
	}
	err = p.pointer(ctx, func() error {
		if err := p.mouseAt(ctx, input.MouseMoved, x, y, input.None, 0, 0); err != nil {
			return err
		}
		for n := int64(1); n <= int64(count); n++ {
			if err := p.mouseAt(ctx, input.MousePressed, x, y, b, mask, n); err != nil {
				return err
			}
			if err := p.mouseAt(ctx, input.MouseReleased, x, y, b, 0, n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("click at (%g, %g): %w", x, y, err)
	}
	return nil
}

// MoveTo moves the mouse to (x, y) with no button held.
func (p *Page) MoveTo(ctx context.Context, x, y float64) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	err := p.pointer(ctx, func() error {
		return p.mouseAt(ctx, input.MouseMoved, x, y, input.None, 0, 0)
	})
	if err != nil {
		return fmt.Errorf("move to (%g, %g): %w", x, y, err)
	}
	return nil
}

// MouseDown moves the mouse to (x, y) and presses button, leaving it down
// until MouseUp.
func (p *Page) MouseDown(ctx context.Context, x, y float64, button MouseButton) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	b, mask, err := buttonOf(button)
	if err != nil {
		return err
	}
	err = p.pointer(ctx, func() error {
		if err := p.mouseAt(ctx, input.MouseMoved, x, y, input.None, 0, 0); err != nil {
			return err
		}
		return p.mouseAt(ctx, input.MousePressed, x, y, b, mask, 1)
	})
	if err != nil {
		return fmt.Errorf("mouse down at (%g, %g): %w", x, y, err)
	}
	return nil
}

// MouseUp releases button at (x, y).
func (p *Page) MouseUp(ctx context.Context, x, y float64, button MouseButton) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	b, _, err := buttonOf(button)
	if err != nil {
		return err
	}
	err = p.pointer(ctx, func() error {
		return p.mouseAt(ctx, input.MouseReleased, x, y, b, 0, 1)
	})
	if err != nil {
		return fmt.Errorf("mouse up at (%g, %g): %w", x, y, err)
	}
	return nil
}

// MouseHold presses the left button at (x, y), keeps it down for d (at most
// MaxHold) and releases it there: a long press. The button is released
// even when ctx ends during the hold, so that the page is not left with a
// button down.
func (p *Page) MouseHold(ctx context.Context, x, y float64, d time.Duration) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	if d < 0 || d > MaxHold {
		return fmt.Errorf("hold of %s: want between 0 and %s", d, MaxHold)
	}
	err := p.pointer(ctx, func() error {
		if err := p.mouseAt(ctx, input.MouseMoved, x, y, input.None, 0, 0); err != nil {
			return err
		}
		if err := p.mouseAt(ctx, input.MousePressed, x, y, input.Left, 1, 1); err != nil {
			return err
		}
		t := time.NewTimer(d)
		defer t.Stop()
		var waitErr error
		select {
		case <-t.C:
		case <-ctx.Done():
			waitErr = ctx.Err()
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if err := p.mouseAt(rctx, input.MouseReleased, x, y, input.Left, 0, 1); err != nil {
			return errors.Join(waitErr, err)
		}
		return waitErr
	})
	if err != nil {
		return fmt.Errorf("hold at (%g, %g): %w", x, y, err)
	}
	return nil
}

// jsTwoFrames resolves after two animation frames: by then the compositor
// has applied a wheel scroll and the page has seen its scroll events.
const jsTwoFrames = `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`

// HoldOn presses the left mouse button on el's centre (scrolled into
// view) for d, as MouseHold does at a point: a click-and-hold replayed on
// the element a recorded point named.
func (p *Page) HoldOn(ctx context.Context, el *Element, d time.Duration) error {
	ctx, release := withObjects(ctx)
	defer func() { go release() }()
	defer p.unhold(el.held)
	p.inputMu.Lock()
	x, y, err := p.point(context.WithValue(ctx, frontKey{}, new(bool)), el)
	p.inputMu.Unlock()
	if err != nil {
		return fmt.Errorf("hold on %s: %w", el, err)
	}
	return p.MouseHold(ctx, x, y, d)
}

// ScrollAt turns the mouse wheel over (x, y) by dx, dy CSS pixels
// (positive dy scrolls down), so that whatever scroll container is under
// the point scrolls, as a user's wheel does. It returns once the page has
// rendered twice since, by when the scroll has been applied.
func (p *Page) ScrollAt(ctx context.Context, x, y, dx, dy float64) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	if err := checkPoint(dx, dy); err != nil {
		return err
	}
	err := p.pointer(ctx, func() error {
		if err := p.mouseAt(ctx, input.MouseMoved, x, y, input.None, 0, 0); err != nil {
			return err
		}
		e := input.DispatchMouseEvent(input.MouseWheel, x, y).WithDeltaX(dx).WithDeltaY(dy).WithPointerType(input.Mouse)
		if err := p.main.do(ctx, e); err != nil {
			return err
		}
		return p.twoFrames(ctx)
	})
	if err != nil {
		return fmt.Errorf("scroll at (%g, %g) by (%g, %g): %w", x, y, dx, dy, err)
	}
	return nil
}

// twoFrames waits for two animation frames of the main document.
func (p *Page) twoFrames(ctx context.Context) error { return p.main.twoFrames(ctx) }

// twoFrames waits for two animation frames of the session's own document.
func (s *session) twoFrames(ctx context.Context) error {
	var r evalResult
	err := s.call(ctx, "Runtime.evaluate", map[string]any{
		"expression":    jsTwoFrames,
		"awaitPromise":  true,
		"returnByValue": true,
	}, &r)
	if err != nil {
		return err
	}
	return jsError(r.ExceptionDetails)
}

// TypeText types text into the focused element key by key, each character
// with its key events (keydown, keypress, input, keyup), as a user types.
func (p *Page) TypeText(ctx context.Context, text string) error {
	err := p.pointer(ctx, func() error { return p.typeText(ctx, text) })
	if err != nil {
		// The text may be a secret: the error does not quote it.
		return fmt.Errorf("type %d characters: %w", len([]rune(text)), err)
	}
	return nil
}

// PressKey presses a key combination on the focused element, such as
// "Enter", "Tab", "Escape", "Control+A" or "Shift+Tab" (see Perform's
// press for the names it knows).
func (p *Page) PressKey(ctx context.Context, key string) error {
	kp, err := parseKey(key)
	if err != nil {
		return err
	}
	err = p.pointer(ctx, func() error {
		for _, e := range kp.events() {
			if err := p.main.do(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("press %s: %w", key, err)
	}
	return nil
}

// HoldKey holds a key combination (as PressKey names it) down for d, at
// most MaxHold, and releases it: modifiers and key down, the wait, then the
// key and the modifiers up. The keys are released even when ctx ends during
// the hold, so that the page is not left with a key down.
func (p *Page) HoldKey(ctx context.Context, key string, d time.Duration) error {
	if d < 0 || d > MaxHold {
		return fmt.Errorf("hold of %s: want between 0 and %s", d, MaxHold)
	}
	kp, err := parseKey(key)
	if err != nil {
		return err
	}
	events := kp.events()
	up := len(events)
	for i, e := range events {
		if e.Type == input.KeyUp {
			up = i
			break
		}
	}
	err = p.pointer(ctx, func() error {
		for _, e := range events[:up] {
			if err := p.main.do(ctx, e); err != nil {
				return err
			}
		}
		t := time.NewTimer(d)
		defer t.Stop()
		var waitErr error
		select {
		case <-t.C:
		case <-ctx.Done():
			waitErr = ctx.Err()
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		for _, e := range events[up:] {
			if err := p.main.do(rctx, e); err != nil {
				return errors.Join(waitErr, err)
			}
		}
		return waitErr
	})
	if err != nil {
		return fmt.Errorf("hold %s: %w", key, err)
	}
	return nil
}

// dragSteps is how many mouse moves DragAt makes along each segment of its
// path: pages start a drag only past a threshold, and some track the
// pointer between the ends.
const dragSteps = 5

// jsDraggableAt reports whether pressing at (x, y) starts an HTML5 drag.
const jsDraggableAt = `function(x, y) {
  for (let e = document.elementFromPoint(x, y); e; e = e.parentElement)
    if (e.draggable) return true;
  return false;
}`

// DragAt presses the left button at path[0], moves through the other points
// and releases it at the last one. An HTML5 drag (an element with
// draggable) is completed with drag events, which a headless Chromium cannot
// produce from mouse events alone; other drags (pointer or mouse listeners)
// see the mouse events only.
func (p *Page) DragAt(ctx context.Context, path []Point) error {
	if len(path) < 2 {
		return fmt.Errorf("drag: a path needs at least two points, got %d", len(path))
	}
	for _, pt := range path {
		if err := checkPoint(pt.X, pt.Y); err != nil {
			return fmt.Errorf("drag: %w", err)
		}
	}
	start, end := path[0], path[len(path)-1]
	err := p.pointer(ctx, func() error { return p.drag(ctx, path) })
	if err != nil {
		return fmt.Errorf("drag from (%g, %g) to (%g, %g): %w", start.X, start.Y, end.X, end.Y, err)
	}
	return nil
}

func (p *Page) drag(ctx context.Context, path []Point) error {
	ctx, release := withObjects(ctx)
	defer func() { go release() }()
	start, end := path[0], path[len(path)-1]
	doc, err := p.main.evaluate(ctx, "document", false)
	if err != nil {
		return err
	}
	d, err := p.main.callOn(ctx, doc.ObjectID, jsDraggableAt, true, start.X, start.Y)
	if err != nil {
		return err
	}
	html5 := string(d.Value) == "true"

	var intercepted <-chan *input.DragData
	if html5 {
		var stop func()
		if intercepted, stop, err = p.interceptDrags(ctx); err != nil {
			return err
		}
		defer stop()
	}

	if err := p.mouseAt(ctx, input.MouseMoved, start.X, start.Y, input.None, 0, 0); err != nil {
		return err
	}
	if err := p.mouseAt(ctx, input.MousePressed, start.X, start.Y, input.Left, 1, 1); err != nil {
		return err
	}
	prev := start
	for _, pt := range path[1:] {
		for i := 1; i <= dragSteps; i++ {
			f := float64(i) / dragSteps
			x, y := prev.X+(pt.X-prev.X)*f, prev.Y+(pt.Y-prev.Y)*f
			if err := p.mouseAt(ctx, input.MouseMoved, x, y, input.Left, 1, 0); err != nil {
				return err
			}
		}
		prev = pt
	}
	if html5 {
		select {
		case data := <-intercepted:
			for _, typ := range []input.DispatchDragEventType{input.DragEnter, input.DragOver, input.Drop} {
				if err := p.main.do(ctx, input.DispatchDragEvent(typ, end.X, end.Y, data)); err != nil {
					return err
				}
			}
		case <-time.After(dragInterceptWait):
			// The page cancelled the drag; finish with the mouse.
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return p.mouseAt(ctx, input.MouseReleased, end.X, end.Y, input.Left, 0, 1)
}

// XPathAt returns an absolute "xpath=" selector of the element at (x, y)
// in the main frame, the way snapshot XPaths are written, so that an action
// taken at coordinates can be replayed on the element. A point over an
// iframe names the <iframe> element. It returns an error wrapping
// ErrNotFound when no element is there (outside the viewport, say).
func (p *Page) XPathAt(ctx context.Context, x, y float64) (string, error) {
	if err := checkPoint(x, y); err != nil {
		return "", err
	}
	ctx, release := withObjects(ctx)
	defer func() { go release() }()
	call, err := jsCall(`function(x, y) { return this.elementFromPoint(x, y); }`, "document", x, y)
	if err != nil {
		return "", err
	}
	el, err := p.main.evaluate(ctx, call, false)
	if err != nil {
		return "", fmt.Errorf("element at (%g, %g): %w", x, y, err)
	}
	if el.ObjectID == "" {
		return "", fmt.Errorf("element at (%g, %g): %w", x, y, ErrNotFound)
	}
	xp, err := p.main.callOn(ctx, el.ObjectID, jsXPathOf, true)
	if err != nil {
		return "", fmt.Errorf("element at (%g, %g): %w", x, y, err)
	}
	var path string
	if err := unmarshalValue(xp.Value, &path); err != nil {
		return "", err
	}
	return xpathPrefix + path, nil
}
