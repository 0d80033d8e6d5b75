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
	"context"
	"fmt"

	"github.com/browserfleet/browserfleet/engine"
)

// runCUA runs the cua mode: the provider's own computer-use loop. Its
// options have been checked and defaulted as the other modes' are.
func runCUA(_ context.Context, _ *engine.Engine, _ Options) (*Result, error) {
	return nil, fmt.Errorf("%w: mode cua is not available in this build yet; use dom or hybrid", ErrInvalidArgument)
}
