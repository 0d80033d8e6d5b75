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

package v1

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// cacheIssueCases are the refused forms of a cache option; body makes the
// request around it, and path is where it sits.
func cacheIssueCases(body func(option string) string, path string) []issueCase {
	return []issueCase{
		{"cache as a string", body(`"yes"`), []Issue{{path, "must be a boolean or an object; got a string"}}},
		{"cache null", body(`null`), []Issue{{path, "must be a boolean or an object; got null"}}},
		{"cache as a number", body(`3`), []Issue{{path, "must be a boolean or an object; got a number"}}},
		{"cache object without threshold", body(`{}`), []Issue{{path + ".threshold", "is required"}}},
		{"cache threshold zero", body(`{"threshold":0}`), []Issue{{path + ".threshold", "must be at least 1"}}},
		{"cache threshold over the bound", body(`{"threshold":1001}`), []Issue{{path + ".threshold", "must be at most 1000"}}},
		{"cache threshold fractional", body(`{"threshold":1.5}`), []Issue{{path + ".threshold", "must be a whole number"}}},
		{"cache threshold as a string", body(`{"threshold":"3"}`), []Issue{{path + ".threshold", "must be an integer; got a string"}}},
		{"cache unknown key", body(`{"threshold":2,"enabled":true}`), []Issue{{path + ".enabled", "unknown field"}}},
		{"cache key is case-sensitive", body(`{"Threshold":2}`),
			[]Issue{{path + ".Threshold", "unknown field"}, {path + ".threshold", "is required"}}},
	}
}

func TestDecodeCacheOptionIssues(t *testing.T) {
	in := func(pre string) func(string) string {
		return func(option string) string { return pre + `"options":{"cache":` + option + `}}` }
	}
	t.Run("act", func(t *testing.T) {
		runIssueCases(t, DecodeAct, cacheIssueCases(in(`{"input":"x",`), "options.cache"))
	})
	t.Run("observe", func(t *testing.T) {
		runIssueCases(t, DecodeObserve, cacheIssueCases(in(`{`), "options.cache"))
	})
	t.Run("extract", func(t *testing.T) {
		runIssueCases(t, DecodeExtract, cacheIssueCases(in(`{"instruction":"x",`), "options.cache"))
	})
	t.Run("start", func(t *testing.T) {
		runIssueCases(t, DecodeStart, cacheIssueCases(func(option string) string {
			return `{"modelName":"openai/gpt-4o","cache":` + option + `}`
		}, "cache"))
	})
}

func TestDecodeCacheOption(t *testing.T) {
	tests := []struct {
		name   string
		option string // "": absent
		want   *CacheOption
	}{
		{"absent", "", nil},
		{"true", `true`, &CacheOption{Enabled: true}},
		{"false", `false`, &CacheOption{}},
		{"threshold", `{"threshold":3}`, &CacheOption{Enabled: true, Threshold: 3}},
		{"threshold as a whole float", `{"threshold":1000.0}`, &CacheOption{Enabled: true, Threshold: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := ""
			if tt.option != "" {
				opt = `"cache":` + tt.option
			}
			act, verr := DecodeAct([]byte(`{"input":"x","options":{` + opt + `}}`))
			if verr != nil {
				t.Fatalf("act refused: %v", verr)
			}
			observe, verr := DecodeObserve([]byte(`{"options":{` + opt + `}}`))
			if verr != nil {
				t.Fatalf("observe refused: %v", verr)
			}
			extract, verr := DecodeExtract([]byte(`{"instruction":"x","options":{` + opt + `}}`))
			if verr != nil {
				t.Fatalf("extract refused: %v", verr)
			}
			start, verr := DecodeStart([]byte(`{"modelName":"openai/gpt-4o"` + strings.TrimSuffix(","+opt, ",") + `}`))
			if verr != nil {
				t.Fatalf("start refused: %v", verr)
			}
			for name, got := range map[string]*CacheOption{"act": act.Cache, "observe": observe.Cache, "extract": extract.Cache, "start": start.Cache} {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: option (-want +got):\n%s", name, diff)
				}
			}
			// The runner's setting is the server's to resolve: decoding
			// never sets it.
			if act.Request.Options.Cache != nil || observe.Request.Options.Cache != nil || extract.Request.Options.Cache != nil {
				t.Errorf("decoding set the runner's cache setting")
			}
		})
	}
}

// TestCacheOptionSpec: the start's cache becomes spec.cache; the boolean
// forms leave the threshold to the project.
func TestCacheOptionSpec(t *testing.T) {
	tests := []struct {
		body string
		want *v1alpha1.CacheSpec
	}{
		{`{"modelName":"openai/gpt-4o"}`, nil},
		{`{"modelName":"openai/gpt-4o","cache":true}`, &v1alpha1.CacheSpec{Enabled: ptr(true)}},
		{`{"modelName":"openai/gpt-4o","cache":false}`, &v1alpha1.CacheSpec{Enabled: ptr(false)}},
		{`{"modelName":"openai/gpt-4o","cache":{"threshold":3}}`, &v1alpha1.CacheSpec{Enabled: ptr(true), Threshold: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			req, verr := DecodeStart([]byte(tt.body))
			if verr != nil {
				t.Fatalf("refused: %v", verr)
			}
			bs, _, err := req.ToSession(sessionName, "p")
			if err != nil {
				t.Fatalf("ToSession: %v", err)
			}
			if diff := cmp.Diff(tt.want, bs.Spec.Cache); diff != "" {
				t.Errorf("spec.cache (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCacheOptionRoundTrip(t *testing.T) {
	for _, in := range []string{`true`, `false`, `{"threshold":3}`} {
		var c CacheOption
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if diff := cmp.Diff(in, string(out)); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

// TestMetadata: the report's optional fields appear only when set, and no
// report is DISABLED, as before the cache existed.
func TestMetadata(t *testing.T) {
	usage := rpc.Usage{InputTokens: 10, OutputTokens: 2}
	const usageJSON = `"usage":{"inputTokens":10,"outputTokens":2,"reasoningTokens":0,"cachedInputTokens":0,"inferenceTimeMs":0}`
	tests := []struct {
		name   string
		report *cache.Report
		want   string
	}{
		{"no report", nil, `{"cache":{"status":"DISABLED"},` + usageJSON + `}`},
		{"miss", &cache.Report{Status: cache.StatusMiss, Count: 1, Threshold: 1, MissReason: cache.MissNotCached},
			`{"cache":{"status":"MISS","count":1,"threshold":1,"missReason":"not_cached"},` + usageJSON + `}`},
		{"hit", &cache.Report{Status: cache.StatusHit, Count: 2, Threshold: 1, TokensSaved: cache.Usage{InputTokens: 7, OutputTokens: 3}.Saved()},
			`{"cache":{"status":"HIT","count":2,"threshold":1,"tokensSaved":{"inputTokens":7,"outputTokens":3,"totalTokens":10}},` + usageJSON + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(NewMetadata(tt.report, usage))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(NewMetadata(nil, usage), ComputedMetadata(usage)); diff != "" {
		t.Errorf("ComputedMetadata (-want +got):\n%s", diff)
	}
}
