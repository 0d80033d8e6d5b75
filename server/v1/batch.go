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

package v1

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/browserfleet/browserfleet/runner/rpc"
)

// Bounds of a batch body beyond its schema's, in bytes: engine/batch's
// MaxSourceBytes and MaxInputBytes (the API does not import the engine,
// which brings the JavaScript runtime). A schema's maxLength counts
// characters, not bytes.
const (
	maxBatchSourceBytes = 256 << 10
	maxBatchInputBytes  = 512 << 10
)

var batchSchema = requestSchema("BatchRequest")

// DecodeBatch decodes and validates a batch body (POST
// /v1/sessions/{id}/batch) into the runner's request; see DecodeAct.
func DecodeBatch(body []byte) (*rpc.BatchRequest, *ValidationError) {
	_, issues, verr := checkBody(body, batchSchema)
	if verr != nil {
		return nil, verr
	}
	if len(issues) > 0 {
		return nil, &ValidationError{Issues: sortIssues(issues)}
	}
	var w batchWire
	if verr := decodeChecked(body, &w); verr != nil {
		return nil, verr
	}
	req := &rpc.BatchRequest{
		Source:       w.Source,
		PageID:       deref(w.PageID),
		ActivePageID: deref(w.ActivePageID),
		Timeout:      w.Timeout,
		Model:        w.Model.config(),
		SelfHeal:     w.SelfHeal,
		CallSettings: w.settings(),
		PageIDs:      w.PageIDs,
		Metrics:      w.Metrics,
	}
	if len(w.Source) > maxBatchSourceBytes {
		issues = append(issues, Issue{Path: "source", Message: fmt.Sprintf("must be at most %d bytes; got %d", maxBatchSourceBytes, len(w.Source))})
	}
	if w.Input != nil {
		// Present, null included (null is null, absent is undefined).
		input := w.Input.Clone()
		if err := input.Compact(); err != nil {
			return nil, &ValidationError{Issues: []Issue{{Path: "input", Message: "does not decode: " + err.Error()}}}
		}
		if len(input) > maxBatchInputBytes {
			issues = append(issues, Issue{Path: "input", Message: fmt.Sprintf("must be at most %d bytes of JSON; got %d", maxBatchInputBytes, len(input))})
		}
		req.Input = []byte(input)
	}
	if len(issues) > 0 {
		return nil, &ValidationError{Issues: sortIssues(issues)}
	}
	return req, nil
}

// batchWire is a batch body's wire form; see actWire.
type batchWire struct {
	Source       string             `json:"source"`
	Input        jsontext.Value     `json:"input"`
	PageID       *string            `json:"pageId"`
	ActivePageID *string            `json:"activePageId"`
	PageIDs      []string           `json:"pageIds"`
	Timeout      *float64           `json:"timeout"`
	Model        *modelWire         `json:"model"`
	Metrics      map[string]float64 `json:"metrics"`
	SelfHeal     *bool              `json:"selfHeal"`
	settingsWire
}
