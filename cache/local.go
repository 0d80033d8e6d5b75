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

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/browserfleet/browserfleet/store"
)

// Local is the cache of one project on a store.Store: what the API's cache
// endpoints serve, and what runs in process where there is no API between
// the engine and the store.
type Local struct {
	Store   store.Store
	Project string
	// TTL is an entry's life after its last write; 0 is DefaultEntryTTL.
	TTL time.Duration
}

var _ Store = Local{}

// storeName is the store's name of a key.
func storeName(key string) string { return "cache." + key }

// Get counts the key and answers by Respond.
func (l Local) Get(ctx context.Context, req GetRequest) (*GetResponse, error) {
	if err := CheckKey(req.Key); err != nil {
		return nil, err
	}
	if err := CheckThreshold(req.Threshold); err != nil {
		return nil, err
	}
	count, raw, err := l.Store.Lookup(ctx, l.Project, storeName(req.Key), CountTTL)
	if err != nil {
		return nil, fmt.Errorf("cache: looking up: %w", err)
	}
	return Respond(count, req.Threshold, raw), nil
}

// Set stores the entry under the key, replacing any earlier one.
func (l Local) Set(ctx context.Context, req SetRequest) error {
	if err := CheckKey(req.Key); err != nil {
		return err
	}
	if len(req.Entry.Value) == 0 || req.Entry.Method == "" {
		return fmt.Errorf("entry must have a method and a value")
	}
	raw, err := json.Marshal(req.Entry)
	if err != nil {
		return fmt.Errorf("cache: encoding the entry: %w", err)
	}
	if len(raw) > MaxEntryBytes {
		return fmt.Errorf("entry is %d bytes of JSON; at most %d: %w", len(raw), MaxEntryBytes, store.ErrTooLarge)
	}
	ttl := l.TTL
	if ttl <= 0 {
		ttl = DefaultEntryTTL
	}
	if err := l.Store.Put(ctx, l.Project, storeName(req.Key), raw, ttl); err != nil {
		return fmt.Errorf("cache: storing: %w", err)
	}
	return nil
}
