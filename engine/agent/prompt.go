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
	"time"

	"github.com/browserfleet/browserfleet/engine"
	"github.com/browserfleet/browserfleet/engine/llm"
)

// systemPrompt is the agent's own system prompt, with the caller's added at
// the end. It names the variables and describes them, never their values.
func systemPrompt(mode Mode, tools []llm.Tool, vars map[string]engine.Variable, maxSteps int, startURL, extra string, now time.Time) string {
	var b strings.Builder
	b.WriteString("You are a browser automation agent. You control one browser tab through the tools below and carry out the user's task step by step, " +
		"looking at the page, acting on it, and checking the outcome, until the task is done.\n\n")

	fmt.Fprintf(&b, "Today is %s (%s UTC); trust this date over what you remember.\n", now.UTC().Format("Monday 2 January 2006"), now.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "The tab starts at %s.\n", startURL)
	fmt.Fprintf(&b, "You may make at most %d tool calls; the run stops there.\n\n", maxSteps)

	b.WriteString("Tools:\n")
	for _, t := range tools {
		first, _, _ := strings.Cut(t.Description, ". ")
		fmt.Fprintf(&b, "- %s: %s\n", t.Name, strings.TrimSuffix(first, "."))
	}
	b.WriteString("\nHow to work:\n")
	if mode == ModeHybrid {
		b.WriteString("- You see the page through screenshots and act on it with coordinates. Take a screenshot first and after each page change; " +
			"click, type, dragAndDrop and clickAndHold take points in the pixels of the latest screenshot.\n" +
			"- Prefer click and type for elements visible in the screenshot; use ariaTree for the full content of the page and act for an element that is listed there but not visible.\n")
	} else {
		b.WriteString("- Start with ariaTree: it lists the whole page, including what is out of view, so you rarely need to scroll.\n" +
			"- Use act for every click and every input on an element of the page, one action at a time, naming the element as ariaTree shows it. Use fillForm for several fields at once.\n" +
			"- Use screenshot only to check something visually.\n")
	}
	b.WriteString("- Use extract only when the task asks for structured data; to read the page, use ariaTree.\n" +
		"- Go straight to a URL with goto when you are sure of it.\n" +
		"- After each action, check that it did what you meant before going on. If an action fails, do not repeat it unchanged: describe the element differently, or use another tool.\n" +
		"- Do exactly what the task asks, no more; once it is done, do not keep looking.\n" +
		"- Finish by calling done: reasoning holds the answer with everything relevant you found, taskComplete says whether the task was completed, " +
		"and output holds the data when the task asks for data. Never stop without calling done.\n")

	if len(vars) > 0 {
		names := make([]string, 0, len(vars))
		for n := range vars {
			names = append(names, n)
		}
		sort.Strings(names)
		b.WriteString("\nVariables: these values are filled in for you when input is typed; you never see them. " +
			"Write %name% exactly where the value goes (in act, fillForm, keys with method type")
		if mode == ModeHybrid {
			b.WriteString(", type, fillFormVision")
		}
		b.WriteString("), for instance \"type %password% into the Password field\". Use them for passwords and other secrets rather than asking for the value.\n")
		for _, n := range names {
			if d := strings.TrimSpace(vars[n].Description); d != "" {
				fmt.Fprintf(&b, "- %%%s%%: %s\n", n, d)
			} else {
				fmt.Fprintf(&b, "- %%%s%%\n", n)
			}
		}
	}
	if extra = strings.TrimSpace(extra); extra != "" {
		b.WriteString("\nAdditional instructions:\n")
		b.WriteString(extra)
		b.WriteString("\n")
	}
	return b.String()
}

// doneReminder is sent once when the model stops calling tools without
// having called done.
const doneReminder = "You stopped without calling the done tool. If the task is finished, or cannot be finished, call done now " +
	"with your reasoning, taskComplete, and the output the task asks for. Otherwise go on with the next tool call."
