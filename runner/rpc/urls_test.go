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
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNavigateURLProblem(t *testing.T) {
	const (
		own    = "it opens the browser's own pages"
		other  = "must be an http, https or data URL, or about:blank"
		aboutX = "may be about:blank only: the other about: pages are the browser's own"
	)
	tests := []struct {
		url  string
		want string
	}{
		{"http://example.com/", ""},
		{"https://example.com/a?b#c", ""},
		{"HTTPS://EXAMPLE.COM/", ""},
		{"data:text/html,<h1>hi</h1>", ""},
		{"about:blank", ""},
		{"about:blank#top", ""},
		{"", "is required"},
		{"http:///path", "has no host"},
		{"https:example.com", "has no host"},
		{"file:///etc/passwd", "must not be a file: URL: it would read the runner's files"},
		{"FILE:///proc/self/environ", "must not be a file: URL: it would read the runner's files"},
		{"chrome://settings", "must not be a chrome: URL: " + own},
		{"chrome://version", "must not be a chrome: URL: " + own},
		{"chrome-extension://abcdefghijklmnop/page.html", "must not be a chrome-extension: URL: " + own},
		{"chrome-untrusted://terminal/", "must not be a chrome-untrusted: URL: " + own},
		{"devtools://devtools/bundled/inspector.html", "must not be a devtools: URL: " + own},
		{"view-source:https://example.com/", "must not be a view-source: URL: " + own},
		{"about:version", aboutX},
		{"about:settings", aboutX},
		{"about:srcdoc", aboutX},
		{"about:BLANK", aboutX},
		{"about:blank/../version", aboutX},
		{"javascript:alert(1)", other},
		{"blob:https://example.com/uuid", other},
		{"filesystem:https://example.com/temporary/x", other},
		{"ws://example.com/", other},
		{"example.com", other},
		{" chrome://version", "is not a URL"},
		{"chr\tome://version", "is not a URL"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, NavigateURLProblem(tt.url)); diff != "" {
			t.Errorf("NavigateURLProblem(%q) (-want +got):\n%s", tt.url, diff)
		}
	}
}
