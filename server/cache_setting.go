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
	"time"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

// ManagedCacheOptions are the server-side cache's settings of the
// operator (the API's --cache-enabled, --cache-threshold, --cache-ttl):
// the default of every project, which a session's spec.cache and a call's
// options.cache override.
type ManagedCacheOptions struct {
	// Enabled turns the cache on for calls that do not say.
	Enabled bool
	// Threshold is the default threshold, 1 to cache.MaxThreshold; 0 is
	// cache.DefaultThreshold.
	Threshold int64
	// TTL is an entry's life after its last write; 0 is
	// cache.DefaultEntryTTL.
	TTL time.Duration
}

// cacheSetting resolves the server-side cache setting of a call, the one
// rule for act, observe, extract and agentExecute (call nil: it has no
// options.cache). The first that says decides:
//
//  1. the header x-cache-bypass: "true" is off; "false" says nothing;
//     anything else is a refused request (the issue names the header);
//  2. the call's options.cache;
//  3. the session's spec.cache (an unset enabled or threshold is the
//     project's);
//  4. the project default, Options.ManagedCache.
//
// Without a store every call is off: there is nowhere to look. A nil
// setting is off: the runner makes no lookup and no write (DISABLED). A
// boolean true takes its threshold from the session, else the project.
func (s *server) cacheSetting(r *http.Request, call *serverv1.CacheOption, bs *v1alpha1.BrowserSession) (*cache.Setting, *serverv1.Issue) {
	var session *v1alpha1.CacheSpec
	if bs != nil {
		session = bs.Spec.Cache
	}
	return resolveCache(r.Header.Values(cache.HeaderBypass), call, session, s.opts.ManagedCache, s.opts.Store != nil)
}

// resolveCache is cacheSetting's rule on its inputs: the bypass header's
// values, the call's option, the session's spec.cache, the project
// default, and whether there is a store.
func resolveCache(bypass []string, call *serverv1.CacheOption, session *v1alpha1.CacheSpec, project ManagedCacheOptions, haveStore bool) (*cache.Setting, *serverv1.Issue) {
	if skip, issue := parseBypass(bypass); skip || issue != nil {
		return nil, issue
	}
	if !haveStore {
		return nil, nil
	}
	threshold := project.Threshold
	if threshold <= 0 {
		threshold = cache.DefaultThreshold
	}
	enabled := project.Enabled
	if session != nil {
		if session.Enabled != nil {
			enabled = *session.Enabled
		}
		if session.Threshold > 0 {
			threshold = int64(session.Threshold)
		}
	}
	if call != nil {
		enabled = call.Enabled
		if call.Threshold > 0 {
			threshold = call.Threshold
		}
	}
	if !enabled {
		return nil, nil
	}
	return &cache.Setting{Threshold: threshold}, nil
}

// bypassIssue is what is wrong with a request's x-cache-bypass header, or
// nil; decoding reports it with the body's issues.
func bypassIssue(r *http.Request) *serverv1.Issue {
	_, issue := parseBypass(r.Header.Values(cache.HeaderBypass))
	return issue
}

// parseBypass reads the values of x-cache-bypass: skip for "true" (any
// case), nothing for "false" or no header.
func parseBypass(values []string) (skip bool, issue *serverv1.Issue) {
	switch {
	case len(values) == 0:
		return false, nil
	case len(values) > 1:
		return false, &serverv1.Issue{Path: cache.HeaderBypass, Message: `header must be given once, "true" or "false"`}
	}
	switch strings.ToLower(strings.TrimSpace(values[0])) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &serverv1.Issue{Path: cache.HeaderBypass, Message: `header must be "true" or "false"`}
}
