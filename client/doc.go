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

// Package client is the Go client library of browserfleet: natural-language
// act, observe and extract, and experimental batches, on a browser handle
// the caller owns. A local handle runs the engine in this process over the
// DevTools protocol; a cloud handle is a session of the service, whose
// engine runs next to its browser.
package client
