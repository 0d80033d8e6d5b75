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

package chromium_test

import (
	"net/http"
	"testing"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/config"
	"github.com/browserfleet/browserfleet/runner/internal/browsertest"
	"github.com/browserfleet/browserfleet/runner/internal/runnertest"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

func TestProxyWithCredentials(t *testing.T) {
	backend := runnertest.NewPageServer(t, runnertest.HTMLHandler(`<!doctype html><title>through the proxy</title>`))
	const user, password = "fleet-user", "correct-horse-battery"
	tests := []struct {
		name     string
		password string // what the session's secret holds
		wantCode rpc.ErrorCode
	}{
		{name: "right password", password: password},
		{name: "wrong password", password: "wrong-password", wantCode: rpc.CodeProxyAuthFailed},
		{name: "missing password", password: "", wantCode: rpc.CodeProxyAuthFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy, proxySrv := runnertest.NewAuthProxy(t, user, password, backend.URL)
			cfg := runnertest.Config(runnertest.LaunchOptions(func(lo *v1alpha1.LaunchOptions) {
				lo.Proxy = &v1alpha1.LaunchProxy{
					Server:            proxySrv.URL,
					Username:          user,
					PasswordSecretRef: &v1alpha1.SecretKeyReference{Name: "proxy", Key: "password"},
				}
			}))
			cfg.Secrets.LaunchProxyPassword = config.NewSecret(tt.password)
			b := browsertest.Start(t, cfg)

			// A host only the proxy can reach: the page loads through it
			// or not at all.
			res, err := browsertest.Navigate(t, b, "http://site.test/")
			attempts, refused, served := proxy.Stats()
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("navigate through the proxy: %v", err)
				}
				runnertest.Want(t, "status", res.Status, 200)
				var title string
				browsertest.Evaluate(t, b, "document.title", &title)
				runnertest.Want(t, "title", title, "through the proxy")
				if served == 0 {
					t.Errorf("the proxy served nothing")
				}
				for _, a := range attempts {
					runnertest.Want(t, "credentials the proxy saw", a, user+":"+password)
				}
				if got := backend.Seen(func(r *http.Request) bool { return r.Host == "site.test" }); len(got) == 0 {
					t.Errorf("the backend saw no request for site.test")
				}
				return
			}
			if err == nil {
				t.Fatalf("navigate through the proxy with a %s = %+v, want an error", tt.name, res)
			}
			runnertest.Want(t, "error code", rpc.CodeOf(err), tt.wantCode)
			if served != 0 || refused == 0 {
				t.Errorf("proxy served %d and refused %d requests, want only refusals", served, refused)
			}
			if tt.password != "" && len(attempts) == 0 {
				t.Errorf("the proxy never saw the credentials")
			}
			for _, a := range attempts {
				runnertest.Want(t, "credentials the proxy saw", a, user+":"+tt.password)
			}
			t.Logf("navigate failed as it should: %v", err)
		})
	}
}
