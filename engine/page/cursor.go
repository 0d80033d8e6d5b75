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
	"fmt"
)

// CursorID is the id of the element ShowCursor draws.
const CursorID = "__browserfleet_cursor"

// jsShowCursor draws (or moves) a visible cursor: a ring centred on (x, y)
// above everything else. It takes no pointer events, so that input at the
// point still reaches the page under it, and is hidden from assistive
// technology, so that snapshots leave it out.
const jsShowCursor = `function(id, x, y) {
  let c = document.getElementById(id);
  if (!c) {
    c = document.createElement('div');
    c.id = id;
    c.setAttribute('aria-hidden', 'true');
    c.style.cssText = 'position:fixed;left:0;top:0;width:20px;height:20px;margin:-10px 0 0 -10px;' +
      'border:3px solid #e11d48;border-radius:50%;background:rgba(225,29,72,.25);box-sizing:border-box;' +
      'pointer-events:none;z-index:2147483647;';
    document.documentElement.appendChild(c);
  }
  c.style.transform = 'translate(' + x + 'px,' + y + 'px)';
  return true;
}`

// ShowCursor draws a visible cursor at (x, y) in the viewport, or moves the
// one drawn before, so that someone watching the tab (a live view, a
// recording, a screenshot) sees where coordinate actions land. The cursor
// lets input through and is left out of snapshots; a navigation removes it
// with the document, and the next ShowCursor draws it again.
func (p *Page) ShowCursor(ctx context.Context, x, y float64) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	call, err := jsCall(jsShowCursor, "document", CursorID, x, y)
	if err != nil {
		return err
	}
	if _, err := p.main.evaluate(ctx, call, true); err != nil {
		return fmt.Errorf("show cursor at (%g, %g): %w", x, y, err)
	}
	return nil
}
