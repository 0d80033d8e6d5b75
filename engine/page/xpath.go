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
	"strconv"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// xpathPrefix marks a selector as XPath, as in "xpath=/html[1]/body[1]".
const xpathPrefix = "xpath="

// The XPaths of this package are absolute, give every step an index, and
// name HTML elements in lower case and other elements (SVG, MathML) by
// local-name(), so that document.evaluate finds exactly one node:
//
//	/html[1]/body[1]/div[2]/svg:... -> /html[1]/body[1]/div[2]/*[local-name()='svg'][1]
//
// XPath cannot enter a shadow root. Where a path crosses into an open or
// closed shadow root, the host's step is followed by "//" and the first step
// inside the shadow root: "/html[1]/body[1]/my-card[1]//button[1]". Frame.Query
// walks such paths itself; document.evaluate would read "//" as "any
// descendant".

// stepName is the XPath name test for an element with the given nodeName.
// HTML element names are upper case in nodeName; anything else keeps its
// case and needs local-name(), because unprefixed name tests only match HTML
// elements in an HTML document.
func stepName(nodeName string) string {
	if nodeName == strings.ToUpper(nodeName) {
		return strings.ToLower(nodeName)
	}
	return "*[local-name()='" + nodeName + "']"
}

// xpath returns the node's XPath within its document.
func (x *docIndex) xpath(i int32) string {
	if p, ok := x.xpaths[i]; ok {
		return p
	}
	var path string
	if x.has(i, flagInHost) {
		if p, ok := x.hostPaths[x.backend(i)]; ok {
			path = p
		}
	}
	if path == "" {
		path = x.flatXPath(i)
	}
	x.xpaths[i] = path
	return path
}

// flatXPath derives the XPath from the flat tree, which is exact outside
// shadow hosts.
func (x *docIndex) flatXPath(i int32) string {
	p := x.d.Nodes.ParentIndex[i]
	if p < 0 {
		return ""
	}
	return x.xpath(p) + "/" + x.step(p, i)
}

// step is the XPath step for child i of p: its name test and its position
// among the siblings that test matches.
func (x *docIndex) step(p, i int32) string {
	typ, name := x.nodeType(i), x.d.Nodes.NodeName[i]
	k := 0
	for c := x.firstChild[p]; c >= 0; c = x.nextSibling[c] {
		if x.has(c, flagPseudo) || x.nodeType(c) != typ {
			continue
		}
		if typ == elementNode && x.d.Nodes.NodeName[c] != name {
			continue
		}
		k++
		if c == i {
			break
		}
	}
	switch typ {
	case textNode:
		return "text()[" + strconv.Itoa(k) + "]"
	case commentNode:
		return "comment()[" + strconv.Itoa(k) + "]"
	default:
		return stepName(x.str(name)) + "[" + strconv.Itoa(k) + "]"
	}
}

// shadowXPaths computes exact XPaths for everything below the document's
// shadow hosts. The flat tree puts slotted nodes under their slot and omits
// unassigned ones, so it cannot tell a light child's position among its real
// siblings; DOM.describeNode with pierce returns the real tree of one host,
// light children and shadow roots both.
func (x *docIndex) shadowXPaths(ctx context.Context) error {
	type host struct {
		i    int32
		base string
	}
	var hosts []host
	for i := range x.flags {
		if x.flags[i]&flagHost != 0 {
			hosts = append(hosts, host{int32(i), x.xpath(int32(i))})
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		paths = make(map[cdp.BackendNodeID]string)
		errs  []error
	)
	for _, h := range hosts {
		wg.Go(func() {
			n, err := x.sess.describe(ctx, map[string]any{"backendNodeId": x.backend(h.i), "depth": -1, "pierce": true})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("describe shadow host %s: %w", h.base, err))
				return
			}
			walkDescribed(n, h.base, paths)
		})
	}
	wg.Wait()
	x.hostPaths = paths
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// walkDescribed records the XPaths of n's light children and of the children
// of its author shadow roots, recursively.
func walkDescribed(n *describedNode, path string, out map[cdp.BackendNodeID]string) {
	assignSteps(n.Children, path+"/", out)
	for _, r := range n.ShadowRoots {
		// User-agent shadow roots (inside <input>, <select>...) never
		// show in the snapshot.
		if r.ShadowRootType == "user-agent" {
			continue
		}
		assignSteps(r.Children, path+"//", out)
	}
}

func assignSteps(children []*describedNode, prefix string, out map[cdp.BackendNodeID]string) {
	counts := make(map[string]int, len(children))
	for _, c := range children {
		var test string
		switch c.NodeType {
		case elementNode:
			test = stepName(c.NodeName)
		case textNode:
			test = "text()"
		case commentNode:
			test = "comment()"
		default:
			continue
		}
		counts[test]++
		p := prefix + test + "[" + strconv.Itoa(counts[test]) + "]"
		out[c.BackendNodeID] = p
		if c.NodeType == elementNode {
			walkDescribed(c, p, out)
		}
	}
}

// unmarshalValue decodes a by-value JavaScript result.
func unmarshalValue(v jsontext.Value, into any) error {
	if len(v) == 0 {
		return fmt.Errorf("no value returned")
	}
	return jsonv2.Unmarshal(v, into)
}

// jsXPathRuntime resolves selectors in a document. It is shared by jsQuery
// and the element actions that take a second element by selector.
const jsXPathRuntime = `
const XHTML = 'http://www.w3.org/1999/xhtml';
const STEP = /^(?:([A-Za-z_][\w.\-]*)|\*\[local-name\(\)='([^']+)'\]|(text)\(\)|(comment)\(\))\[(\d+)\]$/;
// walk follows an absolute, fully indexed path, entering a shadow root
// wherever the path has "//". It returns null when the path is not of that
// form or leads nowhere.
function walk(doc, xp) {
  if (!xp.startsWith('/') || xp.startsWith('//')) return null;
  let node = doc, hop = false;
  for (const part of xp.slice(1).split('/')) {
    if (part === '') { if (hop) return null; hop = true; continue; }
    const m = STEP.exec(part);
    if (!m) return null;
    let parent = node;
    if (hop) { parent = node.shadowRoot; hop = false; if (!parent) return null; }
    const want = +m[5];
    let k = 0, found = null;
    for (let c = parent.firstChild; c; c = c.nextSibling) {
      let ok;
      if (m[3]) ok = c.nodeType === 3;
      else if (m[4]) ok = c.nodeType === 8;
      else if (c.nodeType !== 1) ok = false;
      else if (m[2]) ok = c.localName === m[2];
      else ok = c.namespaceURI === XHTML ? c.localName === m[1].toLowerCase() : c.localName === m[1];
      if (ok && ++k === want) { found = c; break; }
    }
    if (!found) return null;
    node = found;
  }
  return hop || node === doc ? null : node;
}
// all returns every node a selector matches, in document order.
function all(doc, kind, expr) {
  if (kind === 'css') return [...doc.querySelectorAll(expr)];
  const own = walk(doc, expr);
  if (own) return [own];
  const r = doc.evaluate(expr, doc, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
  const out = [];
  for (let k = 0; k < r.snapshotLength; k++) out.push(r.snapshotItem(k));
  return out;
}
// resolve returns the first node a selector matches, or with nth >= 0 its
// nth match (Playwright's " >> nth=<i>"); null when there is none.
function resolve(doc, kind, expr, nth) {
  if (nth >= 0) return all(doc, kind, expr)[nth] || null;
  if (kind === 'css') return doc.querySelector(expr);
  const own = walk(doc, expr);
  if (own) return own;
  return doc.evaluate(expr, doc, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
}
`

// jsQuery finds the node a selector picks (see resolve); this is the
// document.
const jsQuery = `function(kind, expr, nth) {` + jsXPathRuntime + `
  return resolve(this, kind, expr, nth);
}`

// jsXPathOf computes this node's XPath in the format described above.
const jsXPathOf = `function() {
  const XHTML = 'http://www.w3.org/1999/xhtml';
  const steps = [];
  let n = this;
  while (n && n.nodeType !== 9) {
    if (n.nodeType === 11) { steps.push(''); n = n.host; continue; }
    const p = n.parentNode;
    if (!p) break;
    let test, same;
    if (n.nodeType === 1) {
      const html = n.namespaceURI === XHTML;
      test = html ? n.localName : "*[local-name()='" + n.localName + "']";
      same = c => c.nodeType === 1 && c.localName === n.localName && (c.namespaceURI === XHTML) === html;
    } else if (n.nodeType === 3) {
      test = 'text()'; same = c => c.nodeType === 3;
    } else if (n.nodeType === 8) {
      test = 'comment()'; same = c => c.nodeType === 8;
    } else break;
    let k = 0;
    for (let c = p.firstChild; c; c = c.nextSibling) { if (same(c)) k++; if (c === n) break; }
    steps.push(test + '[' + k + ']');
    n = p;
  }
  let out = '';
  for (const s of steps.reverse()) out += s === '' ? '/' : '/' + s;
  return out;
}`
