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

package agentsite

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSignInListAndItem(t *testing.T) {
	s := New(t, Options{Password: "correct horse"})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := c.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Request.URL.Path, string(b)
	}
	post := func(user, pw string) (int, string, string) {
		t.Helper()
		resp, err := c.PostForm(s.URL+"/login", url.Values{"username": {user}, "password": {pw}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Request.URL.Path, string(b)
	}

	if _, path, _ := get("/items/2"); path != "/login" {
		t.Errorf("before sign-in /items/2 ended at %s, want /login", path)
	}
	if status, _, body := post("ada", "wrong"); status != http.StatusUnauthorized || !strings.Contains(body, "Wrong username or password.") {
		t.Errorf("a wrong password: %d %s", status, body)
	}
	status, path, body := post("ada", "correct horse")
	if status != http.StatusOK || path != "/items" || !strings.Contains(body, `<a href="/items/2">Green Lamp</a>`) {
		t.Errorf("signing in: %d at %s: %s", status, path, body)
	}
	if _, _, body := get("/items/2"); !strings.Contains(body, "Price: 42.50") {
		t.Errorf("/items/2: %s", body)
	}
	if status, _, _ := get("/items/9"); status != http.StatusNotFound {
		t.Errorf("/items/9: status %d", status)
	}
	if _, path, _ := get("/logout"); path != "/" {
		t.Errorf("sign-out ended at %s", path)
	}
	if _, path, _ := get("/items"); path != "/login" {
		t.Errorf("after sign-out /items ended at %s", path)
	}
	if diff := cmp.Diff([]bool{false, true}, s.Logins()); diff != "" {
		t.Errorf("logins (-want +got):\n%s", diff)
	}
	if v := s.Visited(); len(v) == 0 || v[0] != "GET /items/2" {
		t.Errorf("visited %v", v)
	}
	if _, _, body := get("/board"); !strings.Contains(body, "Reveal code") {
		t.Errorf("/board: %s", body)
	}
}

func TestAPasswordIsRequired(t *testing.T) {
	if _, err := StartOn("127.0.0.1:0", Options{}); err == nil {
		t.Error("a site without a password started")
	}
}
