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

package operations

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/engine/page"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// A frame the page does not have, before or during a call, is the
// caller's to fix: BAD_REQUEST naming frameId, for operations and agent
// runs alike, whatever context the engine wrapped it in.
func TestNoFrameIsABadRequest(t *testing.T) {
	a := NewAutomation(nil, slog.New(slog.DiscardHandler))
	want := rpc.Errorf(rpc.CodeBadRequest, "frameId: no frame F00D in the page: it is not one of the page's frames, or it has gone (removed, or its page navigated); leave frameId out to work on the whole page")
	tests := []struct {
		name string
		err  error
	}{
		{"as the page returns it", &page.NoFrameError{Frame: "F00D"}},
		{"wrapped by the engine", fmt.Errorf("taking the page snapshot: %w", &page.NoFrameError{Frame: "F00D"})},
	}
	for _, tt := range tests {
		for op, mapped := range map[string]error{"operation": a.callError("act", tt.err), "agent": a.agentError(tt.err)} {
			t.Run(tt.name+", "+op, func(t *testing.T) {
				if diff := cmp.Diff(want.Error(), mapped.Error()); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if rpc.CodeOf(mapped) != rpc.CodeBadRequest {
					t.Errorf("code %q, want BAD_REQUEST", rpc.CodeOf(mapped))
				}
			})
		}
	}
}
