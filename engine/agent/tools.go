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

package agent

import (
	"fmt"
	"sort"
	"strings"

	"github.com/browserfleet/browserfleet/engine/llm"
	"github.com/browserfleet/browserfleet/search"
)

// Tool names. They and their parameters are the reference agent's
// (Stagehand v3), so that prompts and habits written for it carry over.
const (
	toolAct            = "act"
	toolAriaTree       = "ariaTree"
	toolExtract        = "extract"
	toolFillForm       = "fillForm"
	toolGoto           = "goto"
	toolKeys           = "keys"
	toolNavBack        = "navback"
	toolScroll         = "scroll"
	toolWait           = "wait"
	toolThink          = "think"
	toolScreenshot     = "screenshot"
	toolClick          = "click"
	toolType           = "type"
	toolDragAndDrop    = "dragAndDrop"
	toolClickAndHold   = "clickAndHold"
	toolFillFormVision = "fillFormVision"
	toolSearch         = "search"
	toolDone           = "done"
)

// Bounds of the tools' arguments, told to the model in the tools'
// descriptions and enforced when they run.
const (
	// MaxWait bounds the wait tool.
	MaxWait = 30_000 // milliseconds
	// MaxKeyRepeat bounds the keys tool's repeat.
	MaxKeyRepeat = 50
	// DefaultScrollPercentage is the scroll tool's distance when the model
	// gives none, in percent of the viewport's height.
	DefaultScrollPercentage = 80
)

// str, num, ... build the JSON Schemas of the tools' parameters.
func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func num(desc string) map[string]any { return map[string]any{"type": "number", "description": desc} }

func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func coordinates(desc string) map[string]any {
	return map[string]any{
		"type":        "array",
		"items":       map[string]any{"type": "number"},
		"minItems":    2,
		"maxItems":    2,
		"description": desc + " as [x, y], in the pixels of the latest screenshot (origin top left)",
	}
}

// variableHint tells the model, in a parameter's description, which
// variables it may write.
func variableHint(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " Write %name% where a variable's value goes; it is filled in when the input is typed. Variables: " +
		strings.Join(names, ", ") + "."
}

// toolSet returns the tools of a mode, sorted by name; withSearch adds
// the search tool.
func toolSet(mode Mode, vars []string, withSearch bool) []llm.Tool {
	hint := variableHint(vars)
	tools := []llm.Tool{
		{
			Name:        toolAct,
			Description: "Perform one action on the page (click, type, select, press a key on an element...). Give a short, specific phrase that names the element and its type. Prefer it for elements listed by ariaTree.",
			Parameters: object(map[string]any{
				"action": str(`What to do, e.g. "click the Sign in button" or "type ada into the Username field".` + hint),
			}, "action"),
		},
		{
			Name:        toolAriaTree,
			Description: "Read the page: an outline of its accessibility tree, one line per element ([id] role: name), the whole page including what is scrolled out of view. Use it to understand the page before acting and to read text off it.",
		},
		{
			Name:        toolExtract,
			Description: "Extract structured data from the page with a JSON Schema. Use it only when the task asks for structured output; to read the page, use ariaTree.",
			Parameters: object(map[string]any{
				"instruction": str("What to extract, e.g. \"the price of the item\"."),
				"schema": map[string]any{
					"type":        "object",
					"description": `Optional JSON Schema of the result, kept minimal, e.g. {"type":"object","properties":{"price":{"type":"number"}}}.`,
				},
			}, "instruction"),
		},
		{
			Name:        toolFillForm,
			Description: "Fill several form fields at once. Each field is one action that names the exact value and the field.",
			Parameters: object(map[string]any{
				"fields": map[string]any{
					"type":     "array",
					"minItems": 1,
					"items": object(map[string]any{
						"action": str(`"type <value> into the <field name> <field type>", e.g. "type ada into the Username input".` + hint),
					}, "action"),
				},
			}, "fields"),
		},
		{
			Name:        toolGoto,
			Description: "Navigate the tab to a URL (http or https) and wait for it to load.",
			Parameters:  object(map[string]any{"url": str("The absolute URL to open.")}, "url"),
		},
		{
			Name: toolKeys,
			Description: "Send keyboard input to whatever has focus, without targeting an element. " +
				`method "type" types text (e.g. into a field that is already focused); method "press" presses a key or a combination such as Enter, Tab, Escape, Backspace, ArrowDown, Control+A or Shift+Tab.`,
			Parameters: object(map[string]any{
				"method": map[string]any{"type": "string", "enum": []string{"press", "type"}},
				"value":  str("The text to type, or the key or combination to press." + hint),
				"repeat": map[string]any{"type": "integer", "description": "How many times to do it (default 1, at most 50)."},
			}, "method", "value"),
		},
		{
			Name:        toolNavBack,
			Description: "Go back to the previous page, as the browser's back button does.",
			Parameters:  object(map[string]any{"reasoningText": str("Why you are going back.")}, "reasoningText"),
		},
		{
			Name:        toolWait,
			Description: "Wait for a while, for the page to finish something (at most 30000 ms).",
			Parameters:  object(map[string]any{"timeMs": num("How long to wait, in milliseconds.")}, "timeMs"),
		},
		{
			Name:        toolThink,
			Description: "Think through a problem or plan the next steps. It does nothing on the page; use it when unsure what to do next.",
			Parameters:  object(map[string]any{"reasoning": str("Your reasoning or plan.")}, "reasoning"),
		},
		{
			Name:        toolScreenshot,
			Description: "Take a screenshot (PNG) of the visible part of the page, to check its state visually.",
		},
		{
			Name:        toolDone,
			Description: "Finish the task. Call it once you have completed the task, or once you are sure it cannot be completed. Put what you found in reasoning (and in output when the task asks for data).",
			Parameters: object(map[string]any{
				"reasoning":    str("A summary of what was done and found; the answer to the task."),
				"taskComplete": map[string]any{"type": "boolean", "description": "Whether the task was fully completed."},
				"output":       map[string]any{"type": "object", "description": "Optional: the data the task asked for, as a JSON object."},
			}, "reasoning", "taskComplete"),
		},
	}
	direction := map[string]any{"type": "string", "enum": []string{"up", "down"}}
	percentage := map[string]any{"type": "number", "minimum": 1, "maximum": 200,
		"description": "How far to scroll, in percent of the viewport's height (default 80)."}
	if mode == ModeHybrid {
		tools = append(tools,
			llm.Tool{
				Name:        toolScroll,
				Description: "Scroll up or down. Without coordinates it scrolls the page; give coordinates only to scroll inside a nested scrollable element (a list, a dialog) under that point.",
				Parameters: object(map[string]any{
					"direction":   direction,
					"percentage":  percentage,
					"coordinates": coordinates("Optional: a point inside the element to scroll,"),
				}, "direction"),
			},
			llm.Tool{
				Name:        toolClick,
				Description: "Click at a point of the latest screenshot. The most reliable way to click an element that is visible in the screenshot.",
				Parameters: object(map[string]any{
					"describe":    str("The element clicked, in a short phrase that names its type and look."),
					"coordinates": coordinates("The point to click,"),
				}, "describe", "coordinates"),
			},
			llm.Tool{
				Name:        toolType,
				Description: "Click a field at a point of the latest screenshot, then type text into it.",
				Parameters: object(map[string]any{
					"describe":    str("The field, in a short phrase that names its type and look."),
					"text":        str("The text to type." + hint),
					"coordinates": coordinates("The point of the field,"),
				}, "describe", "text", "coordinates"),
			},
			llm.Tool{
				Name:        toolDragAndDrop,
				Description: "Drag from one point of the latest screenshot to another with the left button down.",
				Parameters: object(map[string]any{
					"describe":         str("What is dragged where."),
					"startCoordinates": coordinates("Where the drag starts,"),
					"endCoordinates":   coordinates("Where it ends,"),
				}, "describe", "startCoordinates", "endCoordinates"),
			},
			llm.Tool{
				Name:        toolClickAndHold,
				Description: "Press and hold the left button at a point of the latest screenshot (at most 10000 ms).",
				Parameters: object(map[string]any{
					"describe":    str("The element held, in a short phrase."),
					"duration":    num("How long to hold, in milliseconds."),
					"coordinates": coordinates("The point to hold,"),
				}, "describe", "duration", "coordinates"),
			},
			llm.Tool{
				Name:        toolFillFormVision,
				Description: "Fill several visible form fields at once: each is clicked at its point, its content replaced by the value.",
				Parameters: object(map[string]any{
					"fields": map[string]any{
						"type":     "array",
						"minItems": 1,
						"items": object(map[string]any{
							"action": str("What is typed where, e.g. \"type the email into the Email field\"."),
							"value":  str("The text to type." + hint),
							"coordinates": object(map[string]any{
								"x": num("In the pixels of the latest screenshot."),
								"y": num("In the pixels of the latest screenshot."),
							}, "x", "y"),
						}, "action", "value", "coordinates"),
					},
				}, "fields"),
			},
		)
	} else {
		tools = append(tools,
			llm.Tool{
				Name:        toolScroll,
				Description: "Scroll the page up or down by a share of the viewport's height.",
				Parameters:  object(map[string]any{"direction": direction, "percentage": percentage}, "direction"),
			},
		)
	}
	if withSearch {
		tools = append(tools, llm.Tool{
			Name:        toolSearch,
			Description: "Search the web and get the top results (title, URL, snippet). Use it when you need information from the web or do not know the URL to open; then open a result with goto.",
			Parameters: object(map[string]any{
				"query": str(fmt.Sprintf("What to search for, at most %d characters.", search.MaxQueryRunes)),
			}, "query"),
		})
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools
}

// timeless are the tools ToolTimeout does not bound: think does no work
// and wait has its own bound.
var timeless = map[string]bool{toolThink: true, toolWait: true, toolDone: true}

// visionTools answer with a screenshot of the page after they acted, in
// hybrid mode.
var visionTools = map[string]bool{
	toolClick: true, toolType: true, toolDragAndDrop: true, toolClickAndHold: true,
	toolFillFormVision: true, toolScroll: true, toolWait: true,
}
