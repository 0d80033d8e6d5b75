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

package cache

import "context"

// Lookup asks c for the entry of req.Key, within StoreTimeout, as where the
// engine runs does before a call: it returns the entry to serve, one of
// method, or nil, and the report so far, a MISS saying why nothing is
// served. A store that fails is MISS store_unavailable and its error,
// for the caller's log: the call runs live and never fails on it. An entry
// of another method is MISS invalid_entry: a key is never read as another
// method's.
func Lookup(ctx context.Context, c Store, req GetRequest, method string) (*Entry, Report, error) {
	rep := Report{Status: StatusMiss, Threshold: req.Threshold}
	sctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	resp, err := c.Get(sctx, req)
	if err != nil {
		rep.MissReason = MissStoreUnavailable
		return nil, rep, err
	}
	rep.Count, rep.Threshold, rep.MissReason = resp.Count, resp.Threshold, resp.MissReason
	switch {
	case !resp.Hit || resp.Entry == nil:
		if rep.MissReason == "" {
			rep.MissReason = MissNotCached
		}
		return nil, rep, nil
	case resp.Entry.Method != method:
		rep.MissReason = MissInvalidEntry
		return nil, rep, nil
	}
	return resp.Entry, rep, nil
}

// Served is rep turned into the HIT of serving entry: no reason, and the
// tokens the call that made the entry spent.
func Served(rep Report, entry *Entry) Report {
	rep.Status, rep.MissReason = StatusHit, ""
	rep.TokensSaved = entry.Usage.Saved()
	return rep
}

// Put stores entry under key within StoreTimeout.
func Put(ctx context.Context, c Store, key string, entry Entry) error {
	sctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	return c.Set(sctx, SetRequest{Key: key, Entry: entry})
}
