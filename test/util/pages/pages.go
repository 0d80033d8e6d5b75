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

// Package pages serves the small pages that API and end-to-end suites drive
// sessions through: a sign-up form with a link, and a short catalogue.
package pages

import (
	"embed"
	"net/http"
	"net/http/httptest"
)

//go:embed *.html
var files embed.FS

// Handler serves the pages: form.html and list.html.
func Handler() http.Handler { return http.FileServerFS(files) }

// Serve serves the pages on 127.0.0.1 until the returned server is closed:
// form.html and list.html.
func Serve() *httptest.Server {
	return httptest.NewServer(Handler())
}
