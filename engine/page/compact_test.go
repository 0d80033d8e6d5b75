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

// The compact fixture has what the outline's size rules fold: lists of
// links, tables whose cells hold one control, selects, paragraphs around a
// link, text that repeats its element's name; and, beside each, what they
// must leave alone.
func init() {
	pages["/compact"] = `<!doctype html><title>Compact</title>` + eventsJS + `
<nav id=menu><ul>
 <li><a id=alpha href="/a">Alpha</a></li>
 <li><a href="/b">Beta</a></li>
 <li><a href="/c">Gamma</a> <span>new</span></li>
 <li aria-label="Delta item"><a href="/d">Delta</a></li>
</ul></nav>
<table id=items>
 <thead><tr><th>Item</th><th>Details</th><th>Buy</th><th>Qty</th><th>Size</th><th>Note</th></tr></thead>
 <tbody>
  <tr><td>Item 0</td><td><a id=details0 href="/item/0" onclick="event.preventDefault()">Details 0</a></td><td><button id=buy0>Buy 0</button></td>
   <td><input id=qty0 aria-label="qty 0" value="1"></td>
   <td><select id=size0 aria-label="size 0"><option>S</option><option selected>M</option></select></td><td></td></tr>
  <tr><td>Item 1</td><td><a href="/item/1">Details 1</a> <a href="/item/1/reviews">Reviews</a></td><td><button disabled>Buy 1</button></td>
   <td><label>Qty <input id=qty1 value="2"></label></td>
   <td><select id=sizes1 multiple aria-label="sizes 1"><option selected>S</option><option selected>M</option><option>L</option></select></td>
   <td id=note1 onclick="window.events.push('note')"><span>Note</span></td></tr>
 </tbody>
</table>
<div role=grid id=grid><div role=row><div role=gridcell><button>Grid button</button></div></div></div>
<div id=paras>
 <p><a id=more href="/more" onclick="event.preventDefault()">More items</a></p>
 <p aria-label="Shipping terms"><a href="/ship">Shipping</a></p>
 <p>Free <a href="/free">returns</a></p>
</div>
<div id=named>
 <div id=hours title="Opens at 9" onclick="window.events.push('hours')">Opens at 9</div>
 <section aria-label="Offers">Offers <b>today</b></section>
</div>`
}
