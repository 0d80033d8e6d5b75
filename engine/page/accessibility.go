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
	"context"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/cdp"
)

// axInfo is what Chrome's accessibility tree says about one DOM node.
type axInfo struct {
	role    string
	name    string
	ignored bool
}

// axTree is the part of an Accessibility.getFullAXTree reply this package
// reads. Decoding only these fields is also what keeps a role or property
// newer than cdproto from failing the reply.
type axTree struct {
	Nodes []struct {
		Ignored bool `json:"ignored"`
		Role    struct {
			Value string `json:"value"`
		} `json:"role"`
		Name struct {
			Value string `json:"value"`
		} `json:"name"`
		BackendDOMNodeID cdp.BackendNodeID `json:"backendDOMNodeId"`
	} `json:"nodes"`
}

// loadAccessibility fetches Chrome's accessibility tree for every document
// of the snapshot, one call per frame.
func (b *builder) loadAccessibility(ctx context.Context, root *capture) error {
	b.ax = make(map[*session]map[cdp.BackendNodeID]axInfo)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	var each func(c *capture)
	each = func(c *capture) {
		m := make(map[cdp.BackendNodeID]axInfo)
		b.ax[c.sess] = m
		for _, x := range c.docs {
			frameID := x.str(x.d.FrameID)
			wg.Go(func() {
				var t axTree
				err := c.sess.call(ctx, "Accessibility.getFullAXTree", map[string]any{"frameId": frameID}, &t)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("accessibility tree of frame %s: %w", frameID, err))
					return
				}
				for _, n := range t.Nodes {
					if n.BackendDOMNodeID != 0 {
						m[n.BackendDOMNodeID] = axInfo{role: n.Role.Value, name: collapse(n.Name.Value), ignored: n.Ignored}
					}
				}
			})
		}
		for _, oc := range c.oopifs {
			each(oc)
		}
	}
	each(root)
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// chromeRole overrides a computed role and name with Chrome's, when the
// snapshot was asked for them and Chrome knows the node.
func (b *builder) chromeRole(x *docIndex, i int32, role, name string) (string, string) {
	if b.ax == nil {
		return role, name
	}
	info, ok := b.ax[x.sess][x.backend(i)]
	if !ok {
		return role, name
	}
	if info.ignored {
		// Chrome leaves the node out of its tree; the outline shows its
		// content in its place.
		return roleNone, ""
	}
	switch info.role {
	case "", "generic", "none":
		return roleGeneric, info.name
	}
	return info.role, info.name
}
