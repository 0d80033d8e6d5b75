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

package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// TestRoutesAreDocumented holds the server's routes and the OpenAPI
// document's operations to each other: a route added to one and not the
// other fails here.
func TestRoutesAreDocumented(t *testing.T) {
	s := &server{mux: http.NewServeMux()}
	s.register()
	var got []serverv1.Route
	for _, pattern := range s.routes {
		method, path, _ := strings.Cut(pattern, " ")
		got = append(got, serverv1.Route{Method: method, Pattern: path})
	}
	less := func(a, b serverv1.Route) bool { return a.Pattern+a.Method < b.Pattern+b.Method }
	if diff := cmp.Diff(serverv1.Routes(), got, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("routes (-documented +served):\n%s", diff)
	}
}
