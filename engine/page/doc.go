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

// Package page is everything the automation engine does to a browser tab
// through the Chrome DevTools Protocol: wait for the page to settle, take a
// text snapshot of it for a language model, resolve the element ids the model
// answers with, and perform real input on those elements.
//
// A Page wraps one chromedp tab context:
//
//	p, err := page.Attach(tabCtx)
//	defer p.Close()
//	err = p.Navigate(ctx, "https://example.com", page.NavigateOptions{WaitUntil: page.WaitLoad})
//	if err := p.Settle(ctx, 10*time.Second); err != nil && !errors.Is(err, page.ErrNotSettled) { ... }
//	snap, err := p.Capture(ctx, page.SnapshotOptions{})
//	// snap.Tree goes to the model, which answers "click 0-123".
//	el, err := snap.Resolve(ctx, "0-123")
//	err = p.Perform(ctx, el, "click", nil)
//
// Actions given as selectors instead of ids resolve with Frame.Query, on
// p.MainFrame(), on p.Frame(ctx, frameID) or on a frame of a snapshot.
//
// # Snapshot
//
// The snapshot is an outline of the page's accessibility semantics merged
// with the DOM, one line per kept node:
//
//	[0-12] RootWebArea: Shop (scrollable)
//	  [0-40] navigation
//	    [0-41] link: Home
//	  [0-57] textbox: Email (value="a@example.com")
//	  [0-60] Iframe: Payment
//	    [1-4] RootWebArea: Checkout
//	      [1-9] button: Pay
//
// An id is "<frame ordinal>-<backend node id>": frame 0 is the main frame,
// frames 1.. are iframes, same-process or not, numbered in document order.
// Every id maps to an absolute "xpath=" selector within its frame's document
// and every link id to its absolute URL. Wrappers without a role or a name
// and with at most one child are pruned; so are a cell, a list item or a
// paragraph without a name or a state around a single element, whose line
// takes their place (a table row keeps one line per column, a list one
// line per item). Text already in an element's name is not repeated.
//
// Roles and names are computed from one DOMSnapshot.captureSnapshot per
// renderer process, following the HTML-AAM role mappings and the common
// part of the accessible-name algorithm. On the 6,096-element catalogue page
// that takes about 65 ms and yields 136 KB (34k tokens at 4 bytes a token).
// Chrome's own accessibility tree (Accessibility.getFullAXTree) costs 300 ms
// or more on that page before any DOM call, most of it serialising a 5.6 MB
// reply; the ChromeAccessibility option merges it in when names must match
// Chrome's exactly.
//
// # Frames
//
// Same-process iframes are part of their parent's DOMSnapshot. Out-of-process
// iframes (cross-site frames under site isolation) are DevTools targets of
// their own: the Page attaches a session to each as Chrome announces it,
// snapshots it separately and runs DOM commands for its elements there.
// Input events always go to the tab, at the element's position translated
// into the tab's viewport, the way a user's mouse reaches a frame.
//
// SnapshotOptions.Frame scopes a snapshot to one iframe's document (and
// the frames inside it), by DevTools frame id: Tree starts at that
// document's root line, Selector and IgnoreSelectors apply in that
// document, and ids keep the ordinals the whole page gives their frames.
package page
