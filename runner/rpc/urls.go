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

package rpc

import (
	"net/url"
	"strings"
)

// NavigateURLProblem says what is wrong with a URL a caller asks the browser
// to load, "" when nothing is; the message reads after the field's name
// ("url has no host"). The runner's navigate, the API's validation and the
// CDP proxy share this one rule: http and https URLs with a host, data:
// URLs, and about:blank. Everything else is refused: file: would read the
// runner's files; chrome:, chrome-extension:, devtools:, view-source: and
// the about: pages other than about:blank (Chromium maps them to chrome:)
// are the browser's own pages; javascript: runs script in whatever page is
// loaded.
func NavigateURLProblem(raw string) string {
	if raw == "" {
		return "is required"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "is not a URL"
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "http", "https":
		if u.Host == "" {
			return "has no host"
		}
		return ""
	case "data":
		return ""
	case "about":
		if u.Opaque == "blank" {
			return ""
		}
		return "may be about:blank only: the other about: pages are the browser's own"
	case "file":
		return "must not be a file: URL: it would read the runner's files"
	case "chrome", "chrome-extension", "chrome-untrusted", "chrome-search", "devtools", "view-source":
		return "must not be a " + scheme + ": URL: it opens the browser's own pages"
	}
	return "must be an http, https or data URL, or about:blank"
}
