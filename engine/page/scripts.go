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

// In-page functions for actions that have no CDP input event of their own.
// Each runs with this bound to the element (or document) it acts on, via
// Runtime.callFunctionOn, and reports misuse by throwing an Error whose
// message becomes the Go error.

// jsFillTarget returns the field to fill: the element itself, the control a
// <label> names, or the single field inside a wrapper.
const jsFillTarget = `function() {
  const fillable = e => e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement ||
    e instanceof HTMLSelectElement || (e instanceof HTMLElement && e.isContentEditable);
  let el = this.nodeType === 1 ? this : this.parentElement;
  if (fillable(el)) return el;
  if (el instanceof HTMLLabelElement && el.control) return el.control;
  const inner = el.querySelectorAll('input:not([type=hidden]),textarea,select,[contenteditable=""],[contenteditable="true"]');
  if (inner.length === 1) return inner[0];
  throw new Error('element is not a text field' + (inner.length > 1 ? ' (it holds ' + inner.length + ' fields)' : ''));
}`

// jsFillKind says how to fill a field: "text" (type into it), "direct" (set
// its value: date, time, colour, range) or "select".
const jsFillKind = `function() {
  if (this instanceof HTMLSelectElement) return 'select';
  if (this instanceof HTMLInputElement) {
    const t = this.type.toLowerCase();
    if (['checkbox','radio','file','submit','button','reset','image','hidden'].includes(t))
      throw new Error('cannot fill an input of type ' + t);
    if (this.disabled) throw new Error('field is disabled');
    if (this.readOnly) throw new Error('field is read-only');
    if (['date','time','datetime-local','month','week','color','range'].includes(t)) return 'direct';
  }
  if (this instanceof HTMLTextAreaElement) {
    if (this.disabled) throw new Error('field is disabled');
    if (this.readOnly) throw new Error('field is read-only');
  }
  return 'text';
}`

// jsSetValue sets an input's value and fires input and change, as the
// browser does when a user picks a date or a colour.
const jsSetValue = `function(v) {
  this.focus();
  this.value = v;
  if (this.type !== 'range' && this.type !== 'color' && this.value !== v)
    throw new Error('invalid value ' + JSON.stringify(v) + ' for an input of type ' + this.type);
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
}`

// jsSelectAll selects a field's whole content, so that the text inserted
// next replaces it.
const jsSelectAll = `function() {
  if (this instanceof HTMLInputElement || this instanceof HTMLTextAreaElement) { this.select(); return; }
  const doc = this.ownerDocument, r = doc.createRange();
  r.selectNodeContents(this);
  const s = doc.defaultView.getSelection();
  s.removeAllRanges();
  s.addRange(r);
}`

// jsScroll scrolls the nearest scroll container of this (the document's
// scrolling element for a document) "to" a percentage of its scroll range
// or "by" a number of its viewports. It returns the new scroll position.
const jsScroll = `function(mode, amount) {
  const doc = this.nodeType === 9 ? this : this.ownerDocument;
  const root = doc.scrollingElement || doc.documentElement;
  const scrolls = e => {
    if (e === root) return true;
    const o = getComputedStyle(e).overflowY;
    return (o === 'auto' || o === 'scroll' || o === 'overlay') && e.scrollHeight > e.clientHeight;
  };
  let t = this.nodeType === 9 ? root : (this.nodeType === 1 ? this : this.parentElement);
  if (t === doc.body || t === doc.documentElement) t = root;
  while (t && !scrolls(t)) {
    const r = t.getRootNode();
    t = t.parentElement || (r instanceof ShadowRoot ? r.host : null);
  }
  if (!t) t = root;
  const view = t.clientHeight;
  const top = mode === 'to' ? (t.scrollHeight - t.clientHeight) * amount / 100 : t.scrollTop + amount * view;
  t.scrollTo({top, behavior: 'instant'});
  return t.scrollTop;
}`

// jsSelectOption selects options of a native <select> by value, text or
// label, then fires input and change as a user's choice does.
const jsSelectOption = `function(...wanted) {
  let sel = this.nodeType === 1 ? this : this.parentElement;
  if (sel instanceof HTMLOptionElement && sel.parentElement) sel = sel.closest('select') || sel;
  if (!(sel instanceof HTMLSelectElement)) {
    const inner = sel.querySelectorAll('select');
    if (inner.length !== 1)
      throw new Error('element is not a native <select>; click it to open its list, then click the option');
    sel = inner[0];
  }
  if (sel.disabled) throw new Error('the select is disabled');
  const opts = [...sel.options];
  const norm = s => s.replace(/\s+/g, ' ').trim();
  const picked = wanted.map(w => {
    const o = opts.find(o => o.value === w) ||
      opts.find(o => norm(o.text) === norm(w) || o.label === w) ||
      opts.find(o => norm(o.text).toLowerCase() === norm(w).toLowerCase());
    if (!o) throw new Error('no option ' + JSON.stringify(w) + '; the options are ' +
      opts.map(o => JSON.stringify(norm(o.text))).join(', '));
    if (o.disabled) throw new Error('option ' + JSON.stringify(w) + ' is disabled');
    return o;
  });
  if (sel.multiple) { for (const o of opts) o.selected = picked.includes(o); }
  else if (picked.length > 1) throw new Error('the select takes one option');
  else picked[0].selected = true;
  sel.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  sel.dispatchEvent(new Event('change', {bubbles: true}));
  return picked.map(o => norm(o.text));
}`

// jsDraggable reports whether pressing on this starts an HTML5 drag.
const jsDraggable = `function() {
  for (let e = this.nodeType === 1 ? this : this.parentElement; e; e = e.parentElement)
    if (e.draggable) return true;
  return false;
}`
