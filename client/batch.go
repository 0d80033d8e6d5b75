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

import "context"

// ExperimentalBatch runs a JavaScript function next to the engine, so
// that the operations it makes avoid a round trip each. source is the
// function's text, such as
//
//	async (batch, input) => {
//		await batch.act("click the " + input.button + " button");
//		return (await batch.extract("the order total")).data;
//	}
//
// input is marshalled to JSON (nil is undefined); the function's return
// value is decoded into result, a non-nil pointer (undefined decodes as
// null). Experimental: it can change in patch releases.
func (c *Client) ExperimentalBatch(ctx context.Context, source string, input, result any, opts *BatchOptions) error {
	return errUnbuilt
}
