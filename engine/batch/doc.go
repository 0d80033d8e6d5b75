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

// Package batch runs the scripts of ExperimentalBatch: a trusted,
// self-contained JavaScript function, called with a batch context and an
// input, whose act, observe and extract calls run next to the engine
// without a round trip each. The client library runs it in-process for a
// local handle, the runner for a session of the service; each gives Run a
// Host that performs the operations its own way.
//
// The JavaScript engine is goja (ECMAScript 5.1 with most of ES2015+:
// arrow and async functions, promises, classes, destructuring). A script
// gets nothing but the language and its batch context: no require, no
// Node.js or browser APIs (console, timers, fetch), no file system or
// network. Every member of the context returns a Promise; the operations
// run one after another, in the order they were called, on a goroutine of
// their own, and settle their promises on the script's goroutine.
package batch
