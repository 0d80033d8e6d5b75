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

package engine

import (
	"fmt"
	"strings"
)

// The prompts are the engine's own. Each names the snapshot format so that
// the model answers with ids that exist on the page.

const snapshotFormat = `The page is given as an outline of its accessibility tree, one element per line:
[<id>] <role>: <name>
Indentation shows nesting; states such as (checked), (disabled) or (expanded) and a (scrollable) mark follow the name. Refer to an element only by an <id> that appears in the outline.`

const actSystem = `You operate a web browser for a user. Given an instruction and the current page, choose the ONE action that best carries out the instruction.
` + snapshotFormat + `
Methods:
- click, doubleClick, hover: no arguments
- fill: replace the element's text with arguments[0]
- type: type arguments[0] into the element without clearing it
- press: press the key in arguments[0] (for example Enter, Tab, ArrowDown, Escape) with the element focused
- scrollTo: scroll the element into view, or with arguments[0] like "50%" scroll the page to that share of its height
- nextChunk, prevChunk: scroll the page (or the scrollable element) by one screen
- selectOptionFromDropdown: choose the option whose text is arguments[0] in a native <select>
- dragAndDrop: drag the element onto the element whose id is arguments[0]
Set twoStep to true when the action only opens something (a custom dropdown, a menu) and a second action on what appears is needed to finish the instruction.
If no element fits the instruction, answer with an empty elementId and explain why in description.`

const observeSystem = `You find the elements of a web page that a user could act on.
` + snapshotFormat + `
For each element that matches the instruction, give its id, a short description of what it is, and the method (click, fill, type, press, selectOptionFromDropdown, hover, scrollTo, ...) and arguments that would use it. Leave out elements that do not match. Order them from the best match down.`

// defaultObserveInstruction is used when observe has no instruction.
const defaultObserveInstruction = "Find every element on this page that a user could interact with: links, buttons, inputs, selects and other controls."

const extractSystem = `You extract information from a web page exactly as it appears there. Do not invent values: leave out or set to null what the page does not show.
` + snapshotFormat + `
Where the schema asks for a link's URL, answer with the id of the link element instead; the engine maps ids to URLs.`

// userPrompt assembles the user message of a call.
func userPrompt(instruction, tree string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Instruction: %s\n\n", instruction)
	for _, e := range extra {
		if e != "" {
			b.WriteString(e)
			b.WriteString("\n")
		}
	}
	b.WriteString("Page:\n")
	b.WriteString(tree)
	return b.String()
}

// systemPrompt joins the engine's prompt with the caller's extra instructions.
func systemPrompt(base, custom string) string {
	if custom == "" {
		return base
	}
	return base + "\n\nAdditional instructions from the user:\n" + custom
}
