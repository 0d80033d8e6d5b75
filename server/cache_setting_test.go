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
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
	"github.com/browserfleet/browserfleet/store"
)

// TestResolveCache: the bypass header, then the call's option, then the
// session's spec.cache, then the project's default; no store is off.
func TestResolveCache(t *testing.T) {
	on := ManagedCacheOptions{Enabled: true, Threshold: 4}
	off := ManagedCacheOptions{}
	setting := func(n int64) *cache.Setting { return &cache.Setting{Threshold: n} }
	tests := []struct {
		name    string
		bypass  []string
		call    *serverv1.CacheOption
		session *v1alpha1.CacheSpec
		project ManagedCacheOptions
		noStore bool
		want    *cache.Setting
		issue   *serverv1.Issue
	}{
		{name: "project default off", project: off},
		{name: "project default on", project: on, want: setting(4)},
		{name: "project default on, threshold unset", project: ManagedCacheOptions{Enabled: true}, want: setting(cache.DefaultThreshold)},
		{name: "no store is off whatever the call says", project: on, noStore: true, call: &serverv1.CacheOption{Enabled: true, Threshold: 2}},
		{name: "bypass true wins over the call", bypass: []string{"true"}, project: on, call: &serverv1.CacheOption{Enabled: true, Threshold: 2}},
		{name: "bypass is case-insensitive", bypass: []string{" TRUE "}, project: on},
		{name: "bypass false says nothing", bypass: []string{"false"}, project: on, want: setting(4)},
		{name: "bypass of another value", bypass: []string{"yes"}, project: on,
			issue: &serverv1.Issue{Path: "x-cache-bypass", Message: `header must be "true" or "false"`}},
		{name: "bypass given twice", bypass: []string{"true", "true"}, project: on,
			issue: &serverv1.Issue{Path: "x-cache-bypass", Message: `header must be given once, "true" or "false"`}},
		{name: "a bad bypass is refused even without a store", bypass: []string{"1"}, noStore: true,
			issue: &serverv1.Issue{Path: "x-cache-bypass", Message: `header must be "true" or "false"`}},
		{name: "call false over project on", project: on, call: &serverv1.CacheOption{}},
		{name: "call true over project off takes the project threshold", project: ManagedCacheOptions{Threshold: 7}, call: &serverv1.CacheOption{Enabled: true}, want: setting(7)},
		{name: "call threshold", project: off, call: &serverv1.CacheOption{Enabled: true, Threshold: 3}, want: setting(3)},
		{name: "call true takes the session threshold", project: on, session: &v1alpha1.CacheSpec{Threshold: 9},
			call: &serverv1.CacheOption{Enabled: true}, want: setting(9)},
		{name: "call true over session off", project: on, session: &v1alpha1.CacheSpec{Enabled: ptr.To(false)},
			call: &serverv1.CacheOption{Enabled: true}, want: setting(4)},
		{name: "session on over project off", project: off, session: &v1alpha1.CacheSpec{Enabled: ptr.To(true)}, want: setting(1)},
		{name: "session off over project on", project: on, session: &v1alpha1.CacheSpec{Enabled: ptr.To(false)}},
		{name: "session threshold, enabled unset: the project's", project: on, session: &v1alpha1.CacheSpec{Threshold: 2}, want: setting(2)},
		{name: "session threshold, enabled unset, project off", project: off, session: &v1alpha1.CacheSpec{Threshold: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, issue := resolveCache(tt.bypass, tt.call, tt.session, tt.project, !tt.noStore)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("setting (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.issue, issue); diff != "" {
				t.Errorf("issue (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCacheSetting: the server reads the header, the session and its
// options.
func TestCacheSetting(t *testing.T) {
	s := &server{opts: Options{Store: store.NewMemory(store.MemoryOptions{}), ManagedCache: ManagedCacheOptions{Threshold: 5}}}
	bs := &v1alpha1.BrowserSession{Spec: v1alpha1.BrowserSessionSpec{Cache: &v1alpha1.CacheSpec{Enabled: ptr.To(true)}}}
	r := httptest.NewRequest(http.MethodPost, "/v1/sessions/x/act", nil)
	got, issue := s.cacheSetting(r, nil, bs)
	if diff := cmp.Diff(&cache.Setting{Threshold: 5}, got); diff != "" || issue != nil {
		t.Errorf("setting (-want +got):\n%s (issue %v)", diff, issue)
	}
	r.Header.Set(cache.HeaderBypass, "true")
	if got, issue := s.cacheSetting(r, nil, bs); got != nil || issue != nil {
		t.Errorf("with the bypass header: %v, %v; want off", got, issue)
	}
	s.opts.Store = nil
	r.Header.Del(cache.HeaderBypass)
	if got, issue := s.cacheSetting(r, &serverv1.CacheOption{Enabled: true}, nil); got != nil || issue != nil {
		t.Errorf("without a store: %v, %v; want off", got, issue)
	}
}
