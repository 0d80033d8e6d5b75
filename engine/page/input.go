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
	"strings"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/browserfleet/browserfleet/engine/action"
	"github.com/browserfleet/browserfleet/engine/cdpconn"
)

// ErrUnsupportedMethod reports a method Perform does not know.
var ErrUnsupportedMethod = errors.New("unsupported method")

// Perform carries out one action on el with real input events: the element
// is scrolled into view and located with DOM.getContentQuads, and the mouse
// and keyboard events go to the tab through Input.dispatchMouseEvent,
// Input.dispatchKeyEvent and Input.insertText, so the page sees the same
// events a user would cause (pointer, mouse, focus, key, input, change...).
//
// Methods and their arguments:
//
//	click, doubleClick, hover     no arguments
//	fill <text>                   clear the field, then insert text
//	type <text>                   type text key by key, without clearing
//	press <key>                   e.g. "Enter", "Tab", "ArrowDown", "Control+A";
//	                              on el if given, else on the focused element
//	scrollTo <percent>            e.g. "50%": scroll el's scroll container (or the
//	                              page, with a nil el) to that share of its height
//	nextChunk, prevChunk          scroll one viewport down or up
//	scrollIntoView                scroll el into view
//	selectOptionFromDropdown <option>...
//	                              select options of a native <select> by text or
//	                              value, firing input and change
//	dragAndDrop <target>          drag el onto target: a snapshot id ("0-42") or a
//	                              selector in el's frame
//
// Scrolling sets the scroll position directly (the page receives scroll
// events, not wheel events), so it is exact and finished when Perform
// returns. An id of a text node (a StaticText line) acts on its parent
// element. Perform brings the tab to the front first unless it is in front
// already, because Chrome holds back input to background tabs. Errors name
// the method and the element.
func (p *Page) Perform(ctx context.Context, el *Element, method string, args []string) error {
	p.inputMu.Lock()
	defer p.inputMu.Unlock()
	defer p.noteAction()
	ctx, release := withObjects(ctx)
	// Nothing needs the objects freed before Perform returns; releasing
	// them in the background saves the caller a round trip.
	defer func() { go release() }()
	if el != nil {
		defer p.unhold(el.held)
	}
	ctx = context.WithValue(ctx, frontKey{}, new(bool))
	err := p.perform(ctx, el, method, args)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", method, el, err)
	}
	return nil
}

func (p *Page) perform(ctx context.Context, el *Element, method string, args []string) error {
	m, ok := action.Canonical(method)
	if !ok {
		return fmt.Errorf("%w %q", ErrUnsupportedMethod, method)
	}
	switch m {
	case action.Click, action.DoubleClick, action.Hover, action.DragAndDrop:
		// Locating the element tells whether the tab is in front (see
		// point), which saves a Page.bringToFront when it is.
	default:
		if err := p.toFront(ctx, false); err != nil {
			return err
		}
	}
	arg := func() (string, error) {
		if len(args) == 0 {
			return "", errors.New("missing argument")
		}
		return args[0], nil
	}
	needEl := func() error {
		if el == nil {
			return errors.New("needs an element")
		}
		return nil
	}
	switch m {
	case action.Click:
		if err := needEl(); err != nil {
			return err
		}
		return p.click(ctx, el, 1)
	case action.DoubleClick:
		if err := needEl(); err != nil {
			return err
		}
		return p.click(ctx, el, 2)
	case action.Hover:
		if err := needEl(); err != nil {
			return err
		}
		x, y, err := p.point(ctx, el)
		if err != nil {
			return err
		}
		return p.moveTo(ctx, el, x, y)
	case action.Fill:
		if err := needEl(); err != nil {
			return err
		}
		text, err := arg()
		if err != nil {
			return err
		}
		return p.fill(ctx, el, text)
	case action.Type:
		text, err := arg()
		if err != nil {
			return err
		}
		if el != nil {
			if err := p.focus(ctx, el); err != nil {
				return err
			}
		}
		return p.typeText(ctx, text)
	case action.Press:
		key, err := arg()
		if err != nil {
			return err
		}
		kp, err := parseKey(key)
		if err != nil {
			return err
		}
		if el != nil {
			// As with a script's element.focus(), an element that cannot
			// take focus leaves it where it is; the key still goes out.
			if err := p.focus(ctx, el); err != nil && !strings.Contains(err.Error(), "not focusable") {
				return err
			}
		}
		for _, e := range kp.events() {
			if err := p.main.do(ctx, e); err != nil {
				return err
			}
		}
		return nil
	case action.ScrollTo:
		a, err := arg()
		if err != nil {
			return err
		}
		pct, err := parsePercent(a)
		if err != nil {
			return err
		}
		return p.scroll(ctx, el, "to", pct)
	case action.NextChunk:
		return p.scroll(ctx, el, "by", 1)
	case action.PrevChunk:
		return p.scroll(ctx, el, "by", -1)
	case action.ScrollIntoView:
		if err := needEl(); err != nil {
			return err
		}
		return el.Frame.sess.call(ctx, "DOM.scrollIntoViewIfNeeded", el.node(), nil)
	case action.SelectOption:
		if err := needEl(); err != nil {
			return err
		}
		if len(args) == 0 {
			return errors.New("missing option")
		}
		return p.selectOption(ctx, el, args)
	case action.DragAndDrop:
		if err := needEl(); err != nil {
			return err
		}
		to, err := arg()
		if err != nil {
			return err
		}
		return p.dragAndDrop(ctx, el, to)
	}
	return fmt.Errorf("%w %q", ErrUnsupportedMethod, method)
}

// node is the parameter naming the element in DOM commands.
func (e *Element) node() map[string]any {
	return map[string]any{"backendNodeId": e.BackendNodeID}
}

// object returns a remote object for the element, or for its parent element
// when it is a text node (a model may answer with a StaticText id).
func (e *Element) object(ctx context.Context) (string, error) {
	obj, err := e.Frame.sess.resolveNode(ctx, e.BackendNodeID)
	if err != nil {
		return "", err
	}
	if !e.text {
		return obj, nil
	}
	parent, err := e.Frame.sess.callOn(ctx, obj, `function() { return this.parentElement; }`, false)
	if err != nil {
		return "", err
	}
	if parent.ObjectID == "" {
		return "", errors.New("text node has no parent element")
	}
	return parent.ObjectID, nil
}

// frontKey keys the context value of one Perform that records whether it
// has brought the tab to the front.
type frontKey struct{}

// toFront brings the tab to the front unless visible says it is, once per
// Perform. Chrome delivers input only to the tab in front: in a background
// tab the first event waits for an input timeout (five seconds) before it
// is dropped through. A user switches to the tab first; so do we.
func (p *Page) toFront(ctx context.Context, visible bool) error {
	done, _ := ctx.Value(frontKey{}).(*bool)
	if visible || (done != nil && *done) {
		return nil
	}
	if err := p.main.call(ctx, "Page.bringToFront", nil, nil); err != nil {
		return fmt.Errorf("bring tab to front: %w", err)
	}
	if done != nil {
		*done = true
	}
	return nil
}

// point scrolls the element into view, returns the centre of its first
// visible box in the tab's viewport, and brings the tab to the front if it
// is not.
func (p *Page) point(ctx context.Context, el *Element) (float64, float64, error) {
	if el.Frame.Parent == nil && !el.text {
		return p.pointInMainFrame(ctx, el)
	}
	// Text nodes and nodes in iframes: DOM.getContentQuads measures text
	// and reports coordinates relative to the frame's local root, which
	// toViewport translates across out-of-process boundaries.
	s := el.Frame.sess
	if err := s.call(ctx, "DOM.scrollIntoViewIfNeeded", el.node(), nil); err != nil {
		return 0, 0, fmt.Errorf("scroll into view: %w", err)
	}
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := s.call(ctx, "DOM.getContentQuads", el.node(), &q); err != nil {
		return 0, 0, fmt.Errorf("locate: %w", err)
	}
	for _, quad := range q.Quads {
		if len(quad) != 8 || quadArea(quad) < 1 {
			continue
		}
		x := (quad[0] + quad[2] + quad[4] + quad[6]) / 4
		y := (quad[1] + quad[3] + quad[5] + quad[7]) / 4
		x, y, err := el.Frame.toViewport(ctx, x, y)
		if err != nil {
			return 0, 0, err
		}
		return x, y, p.toFront(ctx, false)
	}
	return 0, 0, errors.New("element has no visible box")
}

// Bounds of moveTo's wait for an out-of-process frame to receive input.
const (
	// routeAttempts bounds the mouse moves moveTo makes.
	routeAttempts = 10
	// routeWait is how long each move waits to be seen, in milliseconds.
	routeWait = 250
)

// moveTo moves the mouse to (x, y), the point of el. For an element of an
// out-of-process frame it then waits until the element's document has
// seen the move, moving again (at most routeAttempts times) if it has not.
// The browser routes input to such a frame by the hit-test regions the
// renderers submit with their compositor frames; until they have drawn
// since the frame loaded, was scrolled or its tab came to the front, an
// event at the right point goes to the parent's <iframe> element instead,
// and a click would be lost. After the last attempt the action goes on:
// the page may be swallowing mouse moves itself.
func (p *Page) moveTo(ctx context.Context, el *Element, x, y float64) error {
	if !el.Frame.outOfProcess() {
		return p.mouse(ctx, input.MouseMoved, x, y, input.None, 0)
	}
	ctx, release := withObjects(ctx)
	defer release()
	s := el.Frame.sess
	obj, err := el.object(ctx)
	if err != nil {
		return err
	}
	for range routeAttempts {
		var armed evalResult
		err := s.call(ctx, "Runtime.callFunctionOn", map[string]any{
			"functionDeclaration": jsNextMouseMove,
			"objectId":            obj,
			"arguments":           []map[string]any{{"value": routeWait}},
			"objectGroup":         objectGroupFor(ctx, s),
		}, &armed)
		if err == nil {
			err = jsError(armed.ExceptionDetails)
		}
		if err != nil {
			return fmt.Errorf("watch for the mouse in the frame: %w", err)
		}
		if err := p.mouse(ctx, input.MouseMoved, x, y, input.None, 0); err != nil {
			return err
		}
		var seen evalResult
		if err := s.call(ctx, "Runtime.awaitPromise", map[string]any{"promiseObjectId": armed.Result.ObjectID, "returnByValue": true}, &seen); err != nil {
			return fmt.Errorf("watch for the mouse in the frame: %w", err)
		}
		if string(seen.Result.Value) == "true" {
			return nil
		}
		if err := p.drawn(ctx, s); err != nil {
			return fmt.Errorf("wait for the frame to draw: %w", err)
		}
	}
	return nil
}

// jsNextMouseMove returns a promise of whether this node's window sees a
// mousemove within ms milliseconds.
const jsNextMouseMove = `function(ms) {
  const w = (this.ownerDocument || this).defaultView;
  return new Promise(resolve => {
    const done = seen => { w.removeEventListener('mousemove', on, true); clearTimeout(t); resolve(seen); };
    const on = () => done(true);
    const t = setTimeout(() => done(false), ms);
    w.addEventListener('mousemove', on, true);
  });
}`

// jsLocate scrolls this element into view the way DOM.scrollIntoViewIfNeeded
// does (centred, and only the scrollers that need it), and returns the
// centre of its first box of at least one square pixel in the viewport, as
// DOM.getContentQuads would, and whether the document is visible, that is,
// whether its tab is in front.
const jsLocate = `function() {
  this.scrollIntoViewIfNeeded(true);
  const visible = this.ownerDocument.visibilityState === 'visible';
  for (const r of this.getClientRects())
    if (r.width * r.height >= 1) return {box: true, x: r.left + r.width / 2, y: r.top + r.height / 2, visible};
  return {box: false, visible};
}`

// pointInMainFrame is point for an element of the main frame, whose client
// rectangles are in the tab's viewport already: one Runtime.callFunctionOn
// scrolls, measures and checks the tab's visibility, where DOM commands take
// three round trips (scroll, quads, bringToFront).
func (p *Page) pointInMainFrame(ctx context.Context, el *Element) (float64, float64, error) {
	s := el.Frame.sess
	var (
		res *remoteObject
		err error
	)
	if obj := el.held.object(); obj != "" && el.held.sess == s {
		res, err = s.callOn(ctx, obj, jsLocate, true)
	}
	if res == nil {
		// No object kept from a Query, or it has been released (the
		// error is then "Could not find object with given id"):
		// resolve the node afresh.
		obj, rerr := s.resolveNode(ctx, el.BackendNodeID)
		if rerr != nil {
			if err != nil {
				rerr = err
			}
			return 0, 0, fmt.Errorf("locate: %w", rerr)
		}
		if res, err = s.callOn(ctx, obj, jsLocate, true); err != nil {
			return 0, 0, fmt.Errorf("locate: %w", err)
		}
	}
	var box struct {
		Box     bool    `json:"box"`
		X       float64 `json:"x"`
		Y       float64 `json:"y"`
		Visible bool    `json:"visible"`
	}
	if err := unmarshalValue(res.Value, &box); err != nil {
		return 0, 0, fmt.Errorf("locate: %w", err)
	}
	if !box.Box {
		return 0, 0, errors.New("element has no visible box")
	}
	return box.X, box.Y, p.toFront(ctx, box.Visible)
}

// drawn waits for two animation frames of the tab's main document and of
// the document of s, concurrently.
func (p *Page) drawn(ctx context.Context, s *session) error {
	errc := make(chan error, 1)
	go func() { errc <- p.main.twoFrames(ctx) }()
	err := s.twoFrames(ctx)
	return errors.Join(err, <-errc)
}

// quadArea is the area of a quad given as four x,y corners (shoelace).
func quadArea(q []float64) float64 {
	var a float64
	for i := 0; i < 4; i++ {
		j := (i + 1) % 4
		a += q[2*i]*q[2*j+1] - q[2*j]*q[2*i+1]
	}
	return math.Abs(a) / 2
}

// mouse dispatches one mouse event to the tab.
func (p *Page) mouse(ctx context.Context, typ input.MouseType, x, y float64, button input.MouseButton, clicks int64) error {
	return p.main.do(ctx, mouseEvent(typ, x, y, button, clicks))
}

// mouseEvent is the Input.dispatchMouseEvent of one mouse event.
func mouseEvent(typ input.MouseType, x, y float64, button input.MouseButton, clicks int64) *input.DispatchMouseEventParams {
	e := input.DispatchMouseEvent(typ, x, y).WithButton(button).WithPointerType(input.Mouse)
	if clicks > 0 {
		e = e.WithClickCount(clicks)
	}
	if button == input.Left && typ != input.MouseReleased {
		e = e.WithButtons(1)
	}
	return e
}

// clickEvents are the events of a click of count clicks at (x, y): the
// move there, then a press and a release per click.
func clickEvents(x, y float64, count int64) []cdpconn.Command {
	cmds := []cdpconn.Command{{Method: input.CommandDispatchMouseEvent, Params: mouseEvent(input.MouseMoved, x, y, input.None, 0)}}
	for n := int64(1); n <= count; n++ {
		cmds = append(cmds,
			cdpconn.Command{Method: input.CommandDispatchMouseEvent, Params: mouseEvent(input.MousePressed, x, y, input.Left, n)},
			cdpconn.Command{Method: input.CommandDispatchMouseEvent, Params: mouseEvent(input.MouseReleased, x, y, input.Left, n)})
	}
	return cmds
}

func (p *Page) click(ctx context.Context, el *Element, count int64) error {
	x, y, err := p.point(ctx, el)
	if err != nil {
		return err
	}
	if !el.Frame.outOfProcess() {
		if l := p.inputLane(ctx); l != nil {
			return l.run(ctx, clickEvents(x, y, count)...)
		}
	}
	// The move is answered with the renderer's next frame; sending the
	// press before that answer could reach the renderer first (chromedp
	// sends each command from the caller's goroutine), and a page would
	// see mousedown before mousemove.
	if err := p.moveTo(ctx, el, x, y); err != nil {
		return err
	}
	for n := int64(1); n <= count; n++ {
		if err := p.mouse(ctx, input.MousePressed, x, y, input.Left, n); err != nil {
			return err
		}
		if err := p.mouse(ctx, input.MouseReleased, x, y, input.Left, n); err != nil {
			return err
		}
	}
	return nil
}

// focus gives the element keyboard focus. DOM.focus counts as a user
// gesture, which lets it focus inside cross-origin frames where a script's
// element.focus() is ignored.
func (p *Page) focus(ctx context.Context, el *Element) error {
	obj, err := el.object(ctx)
	if err != nil {
		return err
	}
	return el.Frame.sess.call(ctx, "DOM.focus", map[string]any{"objectId": obj}, nil)
}

// fill replaces a field's content with text.
func (p *Page) fill(ctx context.Context, el *Element, text string) error {
	s := el.Frame.sess
	obj, err := el.object(ctx)
	if err != nil {
		return err
	}
	// Find the field: the element itself, the control a <label> names, or
	// the one field inside a wrapper the model picked.
	field, err := s.callOn(ctx, obj, jsFillTarget, false)
	if err != nil {
		return err
	}
	kind, err := s.callOn(ctx, field.ObjectID, jsFillKind, true)
	if err != nil {
		return err
	}
	var k string
	if err := unmarshalValue(kind.Value, &k); err != nil {
		return err
	}
	switch k {
	case "select":
		return p.selectOptionOn(ctx, s, field.ObjectID, []string{text})
	case "direct":
		// Date, time, colour and range inputs have no text to type into.
		_, err := s.callOn(ctx, field.ObjectID, jsSetValue, false, text)
		return err
	}
	if err := s.call(ctx, "DOM.focus", map[string]any{"objectId": field.ObjectID}, nil); err != nil {
		return fmt.Errorf("focus: %w", err)
	}
	if _, err := s.callOn(ctx, field.ObjectID, jsSelectAll, false); err != nil {
		return err
	}
	if text == "" {
		// Delete the selection the way a user would, so that the page
		// sees the input event.
		kp, _ := parseKey("Delete")
		for _, e := range kp.events() {
			if err := p.main.do(ctx, e); err != nil {
				return err
			}
		}
		return nil
	}
	return p.main.do(ctx, input.InsertText(text))
}

// typeText types text key by key into the focused element.
func (p *Page) typeText(ctx context.Context, text string) error {
	for _, r := range text {
		for _, e := range kb.Encode(r) {
			if err := p.main.do(ctx, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func parsePercent(s string) (float64, error) {
	var v float64
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if _, err := fmt.Sscanf(t, "%g", &v); err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("scroll position %q: want a percentage such as 50%%", s)
	}
	return math.Max(0, math.Min(100, v)), nil
}

// scroll moves el's scroll container, or the page when el is nil: "to" a
// percentage of the scrollable height, or "by" a number of viewports.
func (p *Page) scroll(ctx context.Context, el *Element, mode string, amount float64) error {
	var (
		s   = p.main
		obj string
		err error
	)
	if el != nil {
		s = el.Frame.sess
		obj, err = el.object(ctx)
	} else {
		var o *remoteObject
		o, err = p.main.evaluate(ctx, "document", false)
		if o != nil {
			obj = o.ObjectID
		}
	}
	if err != nil {
		return err
	}
	_, err = s.callOn(ctx, obj, jsScroll, true, mode, amount)
	return err
}

func (p *Page) selectOption(ctx context.Context, el *Element, options []string) error {
	obj, err := el.object(ctx)
	if err != nil {
		return err
	}
	return p.selectOptionOn(ctx, el.Frame.sess, obj, options)
}

func (p *Page) selectOptionOn(ctx context.Context, s *session, obj string, options []string) error {
	args := make([]any, len(options))
	for i, o := range options {
		args[i] = o
	}
	_, err := s.callOn(ctx, obj, jsSelectOption, true, args...)
	return err
}

// dragAndDrop drags el onto the element named by to.
func (p *Page) dragAndDrop(ctx context.Context, el *Element, to string) error {
	dst, err := p.dropTarget(ctx, el, to)
	if err != nil {
		return fmt.Errorf("drop target %s: %w", to, err)
	}
	defer p.unhold(dst.held)
	// Locate the target first and the source last, so that the source is
	// in view when the button goes down; the target is located again after
	// the drag starts in case scrolling moved it.
	if _, _, err := p.point(ctx, dst); err != nil {
		return fmt.Errorf("drop target %s: %w", to, err)
	}
	sx, sy, err := p.point(ctx, el)
	if err != nil {
		return err
	}
	obj, err := el.object(ctx)
	if err != nil {
		return err
	}
	d, err := el.Frame.sess.callOn(ctx, obj, jsDraggable, true)
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

	if err := p.moveTo(ctx, el, sx, sy); err != nil {
		return err
	}
	if err := p.mouse(ctx, input.MousePressed, sx, sy, input.Left, 1); err != nil {
		return err
	}
	tx, ty, err := p.point(ctx, dst)
	if err != nil {
		return fmt.Errorf("drop target %s: %w", to, err)
	}
	// Move in steps: pages start a drag only past a threshold, and some
	// track the pointer between the two ends.
	const steps = 5
	for i := 1; i <= steps; i++ {
		f := float64(i) / steps
		if err := p.mouse(ctx, input.MouseMoved, sx+(tx-sx)*f, sy+(ty-sy)*f, input.Left, 0); err != nil {
			return err
		}
	}
	if html5 {
		select {
		case data := <-intercepted:
			for _, typ := range []input.DispatchDragEventType{input.DragEnter, input.DragOver, input.Drop} {
				if err := p.main.do(ctx, input.DispatchDragEvent(typ, tx, ty, data)); err != nil {
					return err
				}
			}
		case <-time.After(dragInterceptWait):
			// The page cancelled the drag (dragstart's preventDefault);
			// finish with the mouse as a user would.
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return p.mouse(ctx, input.MouseReleased, tx, ty, input.Left, 1)
}

// dragInterceptWait bounds the wait for Chrome to report an HTML5 drag.
const dragInterceptWait = time.Second

// dropTarget resolves the second element of dragAndDrop: a snapshot id or a
// selector in the source's frame.
func (p *Page) dropTarget(ctx context.Context, el *Element, to string) (*Element, error) {
	if _, _, err := parseID(to); err == nil && el.snap != nil {
		return el.snap.Resolve(ctx, to)
	}
	return el.Frame.Query(ctx, to)
}

// interceptDrags makes the browser report HTML5 drags rather than start
// them: Chrome cannot hand an HTML5 drag to the operating system in a
// headless browser. With drags intercepted it reports the drag's data on
// the channel instead, and the drop is replayed with
// Input.dispatchDragEvent. stop ends the interception.
func (p *Page) interceptDrags(ctx context.Context) (<-chan *input.DragData, func(), error) {
	intercepted := make(chan *input.DragData, 1)
	lctx, cancel := context.WithCancel(p.ctx)
	chromedp.ListenTarget(lctx, func(ev any) {
		if e, ok := ev.(*input.EventDragIntercepted); ok {
			select {
			case intercepted <- e.Data:
			default:
			}
		}
	})
	if err := p.main.do(ctx, input.SetInterceptDrags(true)); err != nil {
		cancel()
		return nil, nil, err
	}
	return intercepted, func() {
		defer cancel()
		ctx, cancelStop := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancelStop()
		_ = p.main.do(ctx, input.SetInterceptDrags(false))
	}, nil
}
