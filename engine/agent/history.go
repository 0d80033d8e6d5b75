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

import "github.com/browserfleet/browserfleet/engine/llm"

// History compression: a page outline is tens of kilobytes and a
// screenshot a thousand tokens or more, and every model call resends the
// whole conversation. Only the latest outline and the two latest
// screenshots describe the page as it is; older ones are replaced by a
// short placeholder, which keeps the record of what was done.
const (
	// KeptAriaTrees is how many ariaTree results stay verbatim.
	KeptAriaTrees = 1
	// KeptScreenshots is how many screenshots stay in the conversation.
	KeptScreenshots = 2

	ariaTreePlaceholder   = "[an earlier page outline, left out: only the latest is kept. Call ariaTree again to read the page as it is now.]"
	screenshotPlaceholder = " [screenshot left out: only the two latest are kept]"
)

// compress replaces, in place, all but the latest KeptAriaTrees ariaTree
// results and all but the latest KeptScreenshots screenshots.
func compress(msgs []llm.Message) {
	var trees, shots []*llm.ToolResult
	for i := range msgs {
		for j := range msgs[i].Parts {
			r := msgs[i].Parts[j].ToolResult
			if r == nil {
				continue
			}
			if r.Name == toolAriaTree && !r.IsError && r.Text != ariaTreePlaceholder {
				trees = append(trees, r)
			}
			if len(r.Image) > 0 {
				shots = append(shots, r)
			}
		}
	}
	for _, r := range drop(trees, KeptAriaTrees) {
		r.Text = ariaTreePlaceholder
	}
	for _, r := range drop(shots, KeptScreenshots) {
		r.Image = nil
		r.Text += screenshotPlaceholder
	}
}

// drop returns all but the last keep elements of s.
func drop[T any](s []T, keep int) []T {
	if len(s) <= keep {
		return nil
	}
	return s[:len(s)-keep]
}
