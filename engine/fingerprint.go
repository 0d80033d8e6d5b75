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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/browserfleet/browserfleet/engine/page"
)

// FingerprintOptions scope a Fingerprint as the operation's own snapshot
// is scoped.
type FingerprintOptions struct {
	// Selector scopes the snapshot to one element's subtree.
	Selector string
	// IgnoreSelectors leave these elements out of the snapshot.
	IgnoreSelectors []string
}

// Fingerprint is what the page shows a model, for a cache key.
type Fingerprint struct {
	// URL is the main frame's document URL when the snapshot was taken.
	URL string
	// Content is the hex SHA-256 of the snapshot's text with its
	// per-render node ids stripped: a reload of the same content gives
	// the same Content, any change of what the model would read another.
	Content string
}

// Fingerprint settles the page and takes one snapshot, in the engine's
// frame and opts' scope, as act, observe and extract would show it to the
// model.
func (e *Engine) Fingerprint(ctx context.Context, opts FingerprintOptions) (*Fingerprint, error) {
	if err := checkScope(opts.Selector, opts.IgnoreSelectors); err != nil {
		return nil, err
	}
	snap, err := e.snapshot(ctx, page.SnapshotOptions{Selector: opts.Selector, IgnoreSelectors: opts.IgnoreSelectors})
	if err != nil {
		return nil, err
	}
	fp := &Fingerprint{Content: contentSum(snap.Tree)}
	if len(snap.Frames) > 0 {
		fp.URL = snap.Frames[0].URL
	}
	return fp, nil
}

// contentSum hashes a snapshot's tree with each line's leading id
// "[<frame ordinal>-<backend node id>]" cut to "[<frame ordinal>]": backend
// node ids are numbered anew by each render, while frame ordinals follow
// the document's order and so are part of its content.
func contentSum(tree string) string {
	h := sha256.New()
	for line := range strings.Lines(tree) {
		h.Write([]byte(stripID(line)))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// stripID drops the backend node id of a snapshot line's leading id, and
// leaves any other line as it is.
func stripID(line string) string {
	rest := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(rest)]
	if !strings.HasPrefix(rest, "[") {
		return line
	}
	end := strings.Index(rest, "]")
	if end < 0 {
		return line
	}
	ordinal, node, ok := strings.Cut(rest[1:end], "-")
	if !ok || !digits(ordinal) || !digits(node) {
		return line
	}
	return indent + "[" + ordinal + rest[end:]
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
