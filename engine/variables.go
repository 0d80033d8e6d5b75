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
	"regexp"
	"sort"
	"strings"
)

// Variable is a value the model may use by name without ever seeing it:
// the model writes %name%, and the engine substitutes the value only when it
// performs the action.
type Variable struct {
	Value       string
	Description string
}

// placeholder matches %name% in a model's arguments.
var placeholder = regexp.MustCompile(`%([A-Za-z0-9_.-]+)%`)

// describeVariables lists the variables for a prompt: names and
// descriptions, never values.
func describeVariables(vars map[string]Variable) string {
	if len(vars) == 0 {
		return ""
	}
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Variables you may use in arguments. Write them exactly as %name%; their values are filled in when the action runs, and you never see them:\n")
	for _, name := range names {
		if d := vars[name].Description; d != "" {
			fmt.Fprintf(&b, "- %%%s%%: %s\n", name, d)
		} else {
			fmt.Fprintf(&b, "- %%%s%%\n", name)
		}
	}
	return b.String()
}

// substitute fills %name% placeholders with their values. Unknown names are
// left as written, so that a literal percent sign survives.
func substitute(args []string, vars map[string]Variable) []string {
	if len(vars) == 0 || len(args) == 0 {
		return args
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = placeholder.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := vars[m[1:len(m)-1]]; ok {
				return v.Value
			}
			return m
		})
	}
	return out
}

// redact replaces every variable value in s by its placeholder, so that a
// value that reached a message (an error from the page, say) never leaves
// the engine.
func redact(s string, vars map[string]Variable) string {
	for name, v := range vars {
		if v.Value != "" {
			s = strings.ReplaceAll(s, v.Value, "%"+name+"%")
		}
	}
	return s
}

// SubstituteVariables fills the %name% placeholders of s with their values,
// for callers that type input themselves (the agent's keys and type tools).
// Unknown names are left as written.
func SubstituteVariables(s string, vars map[string]Variable) string {
	return substitute([]string{s}, vars)[0]
}

// ValidVariableName reports whether name can be written as %name%.
func ValidVariableName(name string) bool {
	p := "%" + name + "%"
	return placeholder.FindString(p) == p
}
