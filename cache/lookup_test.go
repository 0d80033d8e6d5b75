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

package cache_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserfleet/browserfleet/cache"
	"github.com/browserfleet/browserfleet/store"
)

// down is a store that does not answer.
type down struct{}

func (down) Get(context.Context, cache.GetRequest) (*cache.GetResponse, error) {
	return nil, errors.New("connection refused")
}
func (down) Set(context.Context, cache.SetRequest) error { return errors.New("connection refused") }

func TestLookup(t *testing.T) {
	key := strings.Repeat("ab", 32)
	act := cache.Entry{Method: "act", Value: []byte(`{"actions":[1]}`), Usage: cache.Usage{InputTokens: 300, OutputTokens: 20}}
	tests := []struct {
		name string
		// put is an entry stored before; gets, the lookups before the one checked.
		put       *cache.Entry
		gets      int
		store     cache.Store
		method    string
		threshold int64
		wantEntry bool
		want      cache.Report
		wantErr   bool
	}{
		{name: "nothing stored", method: "act", threshold: 1,
			want: cache.Report{Status: cache.StatusMiss, Count: 1, Threshold: 1, MissReason: cache.MissNotCached}},
		{name: "stored, the first time seen", put: &act, method: "act", threshold: 1,
			want: cache.Report{Status: cache.StatusMiss, Count: 1, Threshold: 1, MissReason: cache.MissBelowThreshold}},
		{name: "stored, seen threshold times before", put: &act, gets: 1, method: "act", threshold: 1, wantEntry: true,
			want: cache.Report{Status: cache.StatusMiss, Count: 2, Threshold: 1}},
		{name: "another method's entry is never served", put: &act, gets: 1, method: "observe", threshold: 1,
			want: cache.Report{Status: cache.StatusMiss, Count: 2, Threshold: 1, MissReason: cache.MissInvalidEntry}},
		{name: "a store that does not answer", store: down{}, method: "act", threshold: 3, wantErr: true,
			want: cache.Report{Status: cache.StatusMiss, Threshold: 3, MissReason: cache.MissStoreUnavailable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := tt.store
			if c == nil {
				c = cache.Local{Store: store.NewMemory(store.MemoryOptions{}), Project: "p"}
			}
			if tt.put != nil {
				if err := cache.Put(ctx, c, key, *tt.put); err != nil {
					t.Fatal(err)
				}
			}
			req := cache.GetRequest{Key: key, Threshold: tt.threshold}
			for range tt.gets {
				if _, _, err := cache.Lookup(ctx, c, req, tt.method); err != nil {
					t.Fatal(err)
				}
			}
			entry, rep, err := cache.Lookup(ctx, c, req, tt.method)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %t", err, tt.wantErr)
			}
			if (entry != nil) != tt.wantEntry {
				t.Errorf("entry %+v, want one: %t", entry, tt.wantEntry)
			}
			if diff := cmp.Diff(tt.want, rep); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if entry != nil {
				want := cache.Report{Status: cache.StatusHit, Count: 2, Threshold: 1, TokensSaved: &cache.TokensSaved{InputTokens: 300, OutputTokens: 20, TotalTokens: 320}}
				if diff := cmp.Diff(want, cache.Served(rep, entry)); diff != "" {
					t.Errorf("served (-want +got):\n%s", diff)
				}
			}
		})
	}
}
