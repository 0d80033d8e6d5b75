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
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/server/apikey"
	"github.com/browserfleet/browserfleet/server/metrics"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
	"github.com/browserfleet/browserfleet/store"
)

// CodeCacheUnavailable (503): the server-side cache is not configured, or
// its store did not answer; the caller runs live.
const CodeCacheUnavailable = "CACHE_UNAVAILABLE"

// cacheMethods are the methods an entry may be of (cache.Entry.Method).
var cacheMethods = []string{"act", "observe", "extract", "agent"}

// registerCache registers the /v1 cache endpoints, which take the project
// key. (The runner listener's pair is RunnerHandler's.)
func (s *server) registerCache() {
	s.handle("POST "+cache.PathGet, s.authed(s.cacheGet))
	s.handle("POST "+cache.PathSet, s.authed(s.cacheSet))
}

// cacheGet serves POST cache.PathGet: the client library's local handles
// ask their project's cache with the project key.
func (s *server) cacheGet(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	s.serveCacheGet(w, r, project.Namespace)
}

// cacheSet serves POST cache.PathSet for the key's project.
func (s *server) cacheSet(w http.ResponseWriter, r *http.Request, project apikey.Project) {
	s.serveCacheSet(w, r, project.Namespace)
}

// runnerCacheGet serves POST cache.RunnerPathGet on the runner listener:
// the project is the namespace of the session forRunners authenticated.
func (s *server) runnerCacheGet(w http.ResponseWriter, r *http.Request) {
	s.serveCacheGet(w, r, runnerSessionOf(r.Context()).Namespace)
}

// runnerCacheSet serves POST cache.RunnerPathSet on the runner listener.
func (s *server) runnerCacheSet(w http.ResponseWriter, r *http.Request) {
	s.serveCacheSet(w, r, runnerSessionOf(r.Context()).Namespace)
}

// serveCacheGet counts the key and answers by the one rule (cache.Local,
// cache.Respond).
func (s *server) serveCacheGet(w http.ResponseWriter, r *http.Request, project string) {
	local, ok := s.cacheOf(w, project, metrics.CacheGet)
	if !ok {
		return
	}
	var req cache.GetRequest
	if !s.decodeCache(w, r, &req, metrics.CacheGet) {
		return
	}
	var issues []serverv1.Issue
	if err := cache.CheckKey(req.Key); err != nil {
		issues = append(issues, serverv1.Issue{Path: "key", Message: err.Error()})
	}
	if err := cache.CheckThreshold(req.Threshold); err != nil {
		issues = append(issues, serverv1.Issue{Path: "threshold", Message: err.Error()})
	}
	if len(issues) > 0 {
		s.opts.Metrics.ObserveCache(metrics.CacheGet, metrics.CacheRefused)
		writeIssues(w, "invalid cache get", issues)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), cache.StoreTimeout)
	defer cancel()
	resp, err := local.Get(ctx, req)
	if err != nil {
		s.cacheStoreFailed(w, err, metrics.CacheGet, project)
		return
	}
	outcome := metrics.CacheMiss
	if resp.Hit {
		outcome = metrics.CacheHit
	}
	s.opts.Metrics.ObserveCache(metrics.CacheGet, outcome)
	writeJSON(w, http.StatusOK, resp)
}

// serveCacheSet stores an entry under its key, replacing any earlier one.
func (s *server) serveCacheSet(w http.ResponseWriter, r *http.Request, project string) {
	local, ok := s.cacheOf(w, project, metrics.CacheSet)
	if !ok {
		return
	}
	var req cache.SetRequest
	if !s.decodeCache(w, r, &req, metrics.CacheSet) {
		return
	}
	if issues := setIssues(req); len(issues) > 0 {
		s.opts.Metrics.ObserveCache(metrics.CacheSet, metrics.CacheRefused)
		writeIssues(w, "invalid cache set", issues)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), cache.StoreTimeout)
	defer cancel()
	err := local.Set(ctx, req)
	if errors.Is(err, store.ErrTooLarge) {
		s.opts.Metrics.ObserveCache(metrics.CacheSet, metrics.CacheRefused)
		writeError(w, http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
			fmt.Sprintf("the entry is larger than %d bytes of JSON", cache.MaxEntryBytes))
		return
	}
	if err != nil {
		s.cacheStoreFailed(w, err, metrics.CacheSet, project)
		return
	}
	s.opts.Metrics.ObserveCache(metrics.CacheSet, metrics.CacheStored)
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}

// setIssues says what is wrong with a set's key and entry.
func setIssues(req cache.SetRequest) []serverv1.Issue {
	var issues []serverv1.Issue
	if err := cache.CheckKey(req.Key); err != nil {
		issues = append(issues, serverv1.Issue{Path: "key", Message: err.Error()})
	}
	e := req.Entry
	known := false
	for _, m := range cacheMethods {
		known = known || e.Method == m
	}
	if !known {
		issues = append(issues, serverv1.Issue{Path: "entry.method", Message: "must be one of " + strings.Join(cacheMethods, ", ")})
	}
	if v := bytes.TrimSpace(e.Value); len(v) == 0 || bytes.Equal(v, []byte("null")) {
		issues = append(issues, serverv1.Issue{Path: "entry.value", Message: "is required: the value the entry serves"})
	}
	if e.Usage.InputTokens < 0 {
		issues = append(issues, serverv1.Issue{Path: "entry.usage.inputTokens", Message: "must not be negative"})
	}
	if e.Usage.OutputTokens < 0 {
		issues = append(issues, serverv1.Issue{Path: "entry.usage.outputTokens", Message: "must not be negative"})
	}
	return issues
}

// cacheOf is the cache of project on the server's store. Without a store
// it answers 503 itself and returns ok=false.
func (s *server) cacheOf(w http.ResponseWriter, project, op string) (cache.Local, bool) {
	if s.opts.Store == nil {
		s.opts.Metrics.ObserveCache(op, metrics.CacheError)
		writeError(w, http.StatusServiceUnavailable, CodeCacheUnavailable, "the server-side cache is not configured")
		return cache.Local{}, false
	}
	return cache.Local{Store: s.opts.Store, Project: project, TTL: s.opts.ManagedCache.TTL}, true
}

// cacheStoreFailed answers a store that failed: the caller runs live.
func (s *server) cacheStoreFailed(w http.ResponseWriter, err error, op, project string) {
	s.opts.Metrics.ObserveCache(op, metrics.CacheError)
	s.log.Error(err, "cache store failed", "operation", op, "project", project)
	writeError(w, http.StatusServiceUnavailable, CodeCacheUnavailable, "the cache's store did not answer; run live and retry later")
}

// decodeCache reads a cache request within cache.MaxBodyBytes and decodes
// it strictly: unknown fields, duplicate names and wrong types are a 400
// naming the field. It answers the failure itself and returns false.
func (s *server) decodeCache(w http.ResponseWriter, r *http.Request, v any, op string) bool {
	body, ok := s.readBodyLimit(w, r, cache.MaxBodyBytes)
	if !ok {
		s.opts.Metrics.ObserveCache(op, metrics.CacheRefused)
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		s.opts.Metrics.ObserveCache(op, metrics.CacheRefused)
		writeIssues(w, "invalid request body", []serverv1.Issue{{Path: "", Message: "request body is empty; want a JSON object"}})
		return false
	}
	if err := jsonv2.Unmarshal(body, v, jsonv2.RejectUnknownMembers(true)); err != nil {
		s.opts.Metrics.ObserveCache(op, metrics.CacheRefused)
		writeIssues(w, "invalid request body", []serverv1.Issue{decodeIssue(err)})
		return false
	}
	return true
}

// decodeIssue is the issue of a body the strict decoder refused: the field
// it names, and what is wrong there.
func decodeIssue(err error) serverv1.Issue {
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) {
		return serverv1.Issue{Path: "", Message: "request body is not acceptable JSON: " + strings.TrimPrefix(err.Error(), "jsontext: ")}
	}
	path := strings.ReplaceAll(strings.TrimPrefix(string(se.JSONPointer), "/"), "/", ".")
	if strings.Contains(se.Error(), "unknown object member") {
		return serverv1.Issue{Path: path, Message: "unknown field"}
	}
	return serverv1.Issue{Path: path, Message: "must be " + kindOf(se.GoType)}
}

// kindOf names what a Go type holds in JSON terms.
func kindOf(t reflect.Type) string {
	if t == nil {
		return "of another type"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "of another type"
}
