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
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// WatchCheckDelay is how long the watcher of WatchSelector waits after a
// change of the document before it looks for the element again, in
// milliseconds: changes in between are looked at together, so a page that
// changes all the time costs at most one lookup per delay.
const WatchCheckDelay = 100

// watchSeq numbers the watches: each has a world and a binding of its own.
var watchSeq atomic.Uint64

// WatchSelector calls notify with nil each time the element selector picks
// in the main frame's document (the one MainFrame().Query would find)
// becomes visible there: when it appears with a box of at least one CSS
// pixel (an image once it has loaded), when it is shown (an attribute
// changes, an image loads), and when
// its src attribute changes (a new image in the same element). A
// document the selector cannot be evaluated in (a CSS syntax error) gets
// notify with the error, once. It watches every document the main frame
// loads from now on, and the current one, until ctx ends.
//
// The watcher is a MutationObserver in an isolated world of each document,
// which the page's own scripts can neither see nor call; it reports
// through a binding of that world. A page that never changes costs
// nothing, one that changes all the time one lookup per WatchCheckDelay.
// notify runs on the tab's event goroutine: it must not block.
func (p *Page) WatchSelector(ctx context.Context, selector string, notify func(error)) error {
	sel, err := parseSelector(selector)
	if err != nil {
		return fmt.Errorf("selector %q: %w", selector, err)
	}
	n := strconv.FormatUint(watchSeq.Add(1), 10)
	binding, world := "__browserfleetWatch"+n, "browserfleet-watch-"+n
	args, err := json.Marshal([]any{binding, sel.kind, sel.expr, sel.nth, WatchCheckDelay})
	if err != nil {
		return fmt.Errorf("selector %q: %w", selector, err)
	}
	script := "(" + jsWatch + ")(..." + string(args) + ")"

	lctx, cancel := context.WithCancel(p.ctx)
	stop := context.AfterFunc(ctx, cancel)
	chromedp.ListenTarget(lctx, func(ev any) {
		e, ok := ev.(*runtime.EventBindingCalled)
		if !ok || e.Name != binding {
			return
		}
		var msg struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(e.Payload), &msg); err != nil {
			return
		}
		if msg.Error != "" {
			notify(fmt.Errorf("selector %q: %w", selector, errors.New(msg.Error)))
			return
		}
		notify(nil)
	})
	fail := func(err error) error {
		stop()
		cancel()
		return fmt.Errorf("watching selector %q: %w", selector, err)
	}
	// The binding first, so that the world has it when the script runs.
	if err := p.main.call(ctx, "Runtime.addBinding", map[string]any{"name": binding, "executionContextName": world}, nil); err != nil {
		return fail(err)
	}
	if err := p.main.call(ctx, "Page.addScriptToEvaluateOnNewDocument", map[string]any{
		"source": script, "worldName": world, "runImmediately": true,
	}, nil); err != nil {
		return fail(err)
	}
	// runImmediately runs the script in the worlds of that name that
	// exist; the current document has none yet.
	var world0 struct {
		ID int64 `json:"executionContextId"`
	}
	if err := p.main.call(ctx, "Page.createIsolatedWorld", map[string]any{"frameId": p.main.target, "worldName": world}, &world0); err != nil {
		return fail(err)
	}
	var r evalResult
	if err := p.main.call(ctx, "Runtime.evaluate", map[string]any{"expression": script, "contextId": world0.ID}, &r); err != nil {
		return fail(err)
	}
	if err := jsError(r.ExceptionDetails); err != nil {
		return fail(err)
	}
	return nil
}

// jsWatch is the watcher of WatchSelector, run in an isolated world of a
// document: it reports through the binding named binding when the element
// the selector picks becomes visible, and once when the selector cannot be
// evaluated. A second run in the same world does nothing.
const jsWatch = `function(binding, kind, expr, nth, delay) {` + jsXPathRuntime + `
  if (window !== window.top || globalThis[binding + 'On']) return;
  globalThis[binding + 'On'] = true;
  const report = globalThis[binding];
  const seen = new WeakMap();
  let pending = false, failed = false;
  const check = () => {
    pending = false;
    let el;
    try { el = resolve(document, kind, expr, nth); } catch (e) {
      if (!failed) { failed = true; report(JSON.stringify({error: String(e && e.message || e)})); }
      return;
    }
    if (!(el instanceof Element)) return;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return;
    if (el.checkVisibility && !el.checkVisibility({visibilityProperty: true})) return;
    // An image is there once it has loaded (the load listener looks again).
    if (el instanceof HTMLImageElement && !(el.complete && el.naturalWidth > 0)) return;
    const version = el.getAttribute('src') || '';
    if (seen.has(el) && seen.get(el) === version) return;
    seen.set(el, version);
    report('{}');
  };
  const schedule = () => { if (!pending) { pending = true; setTimeout(check, delay); } };
  new MutationObserver(schedule).observe(document, {childList: true, subtree: true, attributes: true});
  // An image takes its size when it loads, which changes no attribute.
  document.addEventListener('load', schedule, true);
  window.addEventListener('resize', schedule);
  schedule();
}`
