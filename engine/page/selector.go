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
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ErrTextSelector is the error of a Playwright "text=" selector, which this
// package cannot resolve: it finds elements by their rendered text, not by
// the document's structure.
var ErrTextSelector = errors.New("text= locators are not supported for snapshot scoping; use a CSS selector or xpath=")

// ErrBadSelector is the error of a selector CheckSelector refuses for its
// form: an nth suffix that is not a whole number from 0, or nothing to
// select with.
var ErrBadSelector = errors.New("malformed selector")

// nthSuffix is Playwright's " >> nth=<i>" at the end of a selector.
var nthSuffix = regexp.MustCompile(`\s*>>\s*nth=([^\s>]*)\s*$`)

// maxNth bounds an nth index: past it no page has that many matches, and
// the index travels to the page as a JavaScript number.
const maxNth = 1 << 20

// selector is a parsed selector: CSS or XPath, and the one match of all
// it matches that it picks (nth, from 0), or -1 for the first in document
// order.
type selector struct {
	kind, expr string
	nth        int
}

// parseSelector reads a selector: CSS ("css=" prefix optional) or XPath
// ("xpath=" prefix, or any selector starting with "/", "(", "./" or ".."),
// optionally ending in " >> nth=<i>", which picks the i-th of its matches
// (from 0) as Playwright's does. A "text=" selector is an error wrapping
// ErrTextSelector.
func parseSelector(sel string) (selector, error) {
	s := selector{nth: -1}
	sel = strings.TrimSpace(sel)
	if m := nthSuffix.FindStringSubmatchIndex(sel); m != nil {
		n, err := strconv.Atoi(sel[m[2]:m[3]])
		if err != nil || n < 0 || n > maxNth {
			return s, fmt.Errorf("%w: nth=%s: want a whole number from 0 to %d", ErrBadSelector, sel[m[2]:m[3]], maxNth)
		}
		s.nth = n
		sel = strings.TrimSpace(sel[:m[0]])
	}
	switch {
	case strings.HasPrefix(sel, "text="):
		return s, ErrTextSelector
	case strings.HasPrefix(sel, xpathPrefix):
		s.kind, s.expr = "xpath", strings.TrimSpace(sel[len(xpathPrefix):])
	case strings.HasPrefix(sel, "css="):
		s.kind, s.expr = "css", strings.TrimSpace(sel[len("css="):])
	case strings.HasPrefix(sel, "/"), strings.HasPrefix(sel, "("), strings.HasPrefix(sel, "./"), strings.HasPrefix(sel, ".."):
		s.kind, s.expr = "xpath", sel
	default:
		s.kind, s.expr = "css", sel
	}
	if s.expr == "" {
		return s, fmt.Errorf("%w: empty", ErrBadSelector)
	}
	return s, nil
}

// CheckSelector reports whether this package can resolve sel (see
// Frame.Query for the forms it takes), without a page: the error wraps
// ErrTextSelector for a "text=" selector and ErrBadSelector for a
// malformed one. Whether the CSS or XPath itself is valid only the page
// can tell.
func CheckSelector(sel string) error {
	_, err := parseSelector(sel)
	return err
}
