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

// Package action names the actions the engine performs on an element
// (engine/page's Perform): one list for the engine, the model's answer
// schema and the API's validation of an act's Action. It imports nothing,
// so that the API pod links no browser code.
package action

import "strings"

// The methods. Names compare case-insensitively; "dblclick" and
// "selectOption" are aliases.
const (
	Click          = "click"
	DoubleClick    = "doubleClick"
	Hover          = "hover"
	Fill           = "fill"
	Type           = "type"
	Press          = "press"
	ScrollTo       = "scrollTo"
	ScrollIntoView = "scrollIntoView"
	NextChunk      = "nextChunk"
	PrevChunk      = "prevChunk"
	SelectOption   = "selectOptionFromDropdown"
	DragAndDrop    = "dragAndDrop"
)

// Methods lists the methods, without aliases, in the order the act prompt
// gives them.
var Methods = []string{
	Click, DoubleClick, Hover, Fill, Type, Press, ScrollTo, ScrollIntoView,
	NextChunk, PrevChunk, SelectOption, DragAndDrop,
}

// aliases are the other names Canonical accepts, by lower-case name.
var aliases = map[string]string{"dblclick": DoubleClick, "selectoption": SelectOption}

// Canonical returns the method that name means, compared case-insensitively
// and with its aliases, and false for a name that is none.
func Canonical(name string) (string, bool) {
	lower := strings.ToLower(name)
	for _, m := range Methods {
		if strings.ToLower(m) == lower {
			return m, true
		}
	}
	m, ok := aliases[lower]
	return m, ok
}
