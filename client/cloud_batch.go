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

package client

import (
	"context"
	"encoding/json"
	"errors"
)

// batch runs a batch in the session's runner through POST
// /v1/sessions/{id}/batch, which the batch piece of issue 13 adds; until
// it lands, a cloud handle's batch is unsupported.
func (r *cloudRuntime) batch(context.Context, batchCall) (json.RawMessage, map[opGroup]Usage, error) {
	return nil, nil, errors.New("ExperimentalBatch on a cloud handle: not supported yet")
}
