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

package rpcserver

import (
	"net/http"

	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// requireToken lets a request through only with "Authorization: Bearer
// <token>", compared with rpc.SameToken. A refusal says only whether the
// token was missing or wrong.
func requireToken(token config.Secret, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := rpc.BearerToken(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", rpc.AuthorizationScheme)
			writeError(w, rpc.Errorf(rpc.CodeUnauthorized, "missing runner token"))
			return
		}
		if !rpc.SameToken(got, token.Reveal()) {
			w.Header().Set("WWW-Authenticate", rpc.AuthorizationScheme+` error="invalid_token"`)
			writeError(w, rpc.Errorf(rpc.CodeUnauthorized, "invalid runner token"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
