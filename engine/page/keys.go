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
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp/kb"
)

// keyNames maps DOM key names ("Enter", "ArrowDown", "a") to the rune
// chromedp's kb tables encode them under.
var keyNames = func() map[string]rune {
	m := make(map[string]rune, len(kb.Keys))
	// Iterate in a fixed order so that a key reachable from two runes
	// ("Enter" from '\r' and '\n') always maps to the same one.
	runes := make([]rune, 0, len(kb.Keys))
	for r := range kb.Keys {
		runes = append(runes, r)
	}
	sort.Slice(runes, func(i, j int) bool { return runes[i] < runes[j] })
	for _, r := range runes {
		k := kb.Keys[r]
		if _, ok := m[strings.ToLower(k.Key)]; !ok {
			m[strings.ToLower(k.Key)] = r
		}
	}
	return m
}()

// keyAliases are other names models and people use for keys.
var keyAliases = map[string]string{
	"return": "enter", "esc": "escape", "space": " ", "spacebar": " ",
	"up": "arrowup", "down": "arrowdown", "left": "arrowleft", "right": "arrowright",
	"del": "delete", "pgup": "pageup", "pgdn": "pagedown", "ins": "insert",
}

// modifierKeys maps modifier names to their bit and their key name.
var modifierKeys = map[string]struct {
	bit input.Modifier
	key string
}{
	"alt": {input.ModifierAlt, "alt"}, "option": {input.ModifierAlt, "alt"},
	"control": {input.ModifierCtrl, "control"}, "ctrl": {input.ModifierCtrl, "control"},
	"meta": {input.ModifierMeta, "meta"}, "cmd": {input.ModifierMeta, "meta"},
	"command": {input.ModifierMeta, "meta"}, "shift": {input.ModifierShift, "shift"},
}

// keyPress is a parsed key combination such as "Control+Shift+ArrowLeft".
type keyPress struct {
	modifiers []rune
	mask      input.Modifier
	key       rune
}

// parseKey parses a key combination: modifier names and one key, joined by
// "+". The key is a DOM key name (case-insensitive), an alias such as "Esc"
// or "Space", or a single character.
func parseKey(spec string) (keyPress, error) {
	var kp keyPress
	if spec == "" {
		return kp, fmt.Errorf("empty key")
	}
	parts := strings.Split(spec, "+")
	// "Control++" presses "+"; "+" alone is the plus key.
	if strings.HasSuffix(spec, "++") || spec == "+" {
		parts = append(strings.Split(strings.TrimSuffix(spec, "++"), "+"), "+")
		if spec == "+" {
			parts = []string{"+"}
		}
	}
	for _, m := range parts[:len(parts)-1] {
		mk, ok := modifierKeys[strings.ToLower(strings.TrimSpace(m))]
		if !ok {
			return kp, fmt.Errorf("key %q: unknown modifier %q", spec, m)
		}
		kp.mask |= mk.bit
		kp.modifiers = append(kp.modifiers, keyNames[mk.key])
	}
	name := parts[len(parts)-1]
	if utf8.RuneCountInString(name) == 1 {
		r, _ := utf8.DecodeRuneInString(name)
		if len(kp.modifiers) > 0 && r >= 'A' && r <= 'Z' {
			// "Control+A" names the A key, not Control+Shift+A: the
			// upper-case letter would add Shift.
			r += 'a' - 'A'
		}
		kp.key = r
		return kp, nil
	}
	lower := strings.ToLower(strings.TrimSpace(name))
	if a, ok := keyAliases[lower]; ok {
		lower = a
	}
	if utf8.RuneCountInString(lower) == 1 {
		r, _ := utf8.DecodeRuneInString(lower)
		kp.key = r
		return kp, nil
	}
	r, ok := keyNames[lower]
	if !ok {
		return kp, fmt.Errorf("key %q: unknown key %q", spec, name)
	}
	kp.key = r
	return kp, nil
}

// events returns the key events of the combination: modifiers down, the
// key's down (and char, for text), the key's up, modifiers up.
func (kp keyPress) events() []*input.DispatchKeyEventParams {
	var evs []*input.DispatchKeyEventParams
	var mask input.Modifier
	for _, m := range kp.modifiers {
		down := kb.Encode(m)[0]
		mask |= modifierBit(m)
		down.Modifiers = mask
		down.Type = input.KeyRawDown
		evs = append(evs, down)
	}
	// With Control, Alt or Meta held a key is a shortcut, not text.
	shortcut := kp.mask&(input.ModifierCtrl|input.ModifierAlt|input.ModifierMeta) != 0
	for _, e := range kb.Encode(kp.key) {
		if e.Type == input.KeyChar && shortcut {
			continue
		}
		if shortcut && e.Type == input.KeyDown {
			e.Type = input.KeyRawDown
		}
		e.Modifiers |= kp.mask
		evs = append(evs, e)
	}
	for i := len(kp.modifiers) - 1; i >= 0; i-- {
		m := kp.modifiers[i]
		mask &^= modifierBit(m)
		up := kb.Encode(m)[len(kb.Encode(m))-1]
		up.Modifiers = mask
		evs = append(evs, up)
	}
	return evs
}

func modifierBit(r rune) input.Modifier {
	switch kb.Keys[r].Key {
	case "Alt":
		return input.ModifierAlt
	case "Control":
		return input.ModifierCtrl
	case "Meta":
		return input.ModifierMeta
	case "Shift":
		return input.ModifierShift
	}
	return 0
}
