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
)

// cuaSystemPrompt is what the cua mode adds to the provider's own
// computer-use instructions, the caller's system prompt at the end. It
// names the variables and describes them, never their values.
func cuaSystemPrompt(vars map[string]engine.Variable, maxSteps int, startURL, extra string, now time.Time) string {
	var b strings.Builder
	b.WriteString("You are a browser automation agent. You control one tab of a web browser through the computer tool, " +
		"seeing it in screenshots, and carry out the user's task step by step until it is done. " +
		"The screenshots show the page only: there is no address bar, no other tab and no desktop.\n\n")
	fmt.Fprintf(&b, "Today is %s (%s UTC); trust this date over what you remember.\n", now.UTC().Format("Monday 2 January 2006"), now.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "The tab starts at %s.\n", startURL)
	fmt.Fprintf(&b, "You may take at most %d actions; the run stops there.\n\n", maxSteps)
	b.WriteString("How to work:\n" +
		"- Reach other pages through the page's links, buttons and forms. If you have a navigate function, it opens http and https addresses only.\n" +
		"- After each action, check in the next screenshot that it did what you meant. If an action fails, do not repeat it unchanged: try another way.\n" +
		"- Nobody answers questions during the run: decide on your own, and do exactly what the task asks, no more.\n" +
		"- When the task is done, or cannot be done, answer with text only and no action: the answer, with everything relevant you found, " +
		"or why it could not be done. That answer ends the run.\n")
	if len(vars) > 0 {
		names := make([]string, 0, len(vars))
		for n := range vars {
			names = append(names, n)
		}
		sort.Strings(names)
		b.WriteString("\nVariables: these values are filled in for you when you type; you never see them. " +
			"Type %name% exactly where the value goes, for instance type %password% into the password field. " +
			"Use them for passwords and other secrets rather than asking for the value.\n")
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
