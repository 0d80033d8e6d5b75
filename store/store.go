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

// Package store is the shared state of the API's managed services: the
// server-side cache's entries and counts, and the model gateway's token
// budgets. Redis (or Valkey) holds it when the operator gives one, so that
// every API replica sees the same state; otherwise an embedded in-process
// store, bounded, serves one replica. Every name lives under its project:
// projects never share state.
package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Bounds of what a Store holds.
const (
	// MaxValueBytes bounds one value (a cache entry).
	MaxValueBytes = 1 << 20
	// MaxNameLength bounds a name.
	MaxNameLength = 128
)

// ErrTooLarge is returned by Put for a value over MaxValueBytes.
var ErrTooLarge = errors.New("value too large")

// Store holds values and counters by project and name. Implementations are
// safe for concurrent use. A failure to reach the backing store is an error
// the caller may treat as a miss: the managed services degrade to running
// live, they never fail a call on it.
type Store interface {
	// Lookup adds one to name's counter, which expires countTTL after the
	// first Lookup that made it, and returns the new count with the value
	// stored under name (nil when none), both read at once.
	Lookup(ctx context.Context, project, name string, countTTL time.Duration) (count int64, value []byte, err error)
	// Put stores value under name for ttl, replacing any earlier value.
	Put(ctx context.Context, project, name string, value []byte, ttl time.Duration) error
	// Add adds n to the counter name, which expires ttl after the Add that
	// made it, and returns its new value.
	Add(ctx context.Context, project, name string, n int64, ttl time.Duration) (int64, error)
	// Shared reports whether other processes see the same state.
	Shared() bool
	// Close releases the store's connections.
	Close() error
}

// nameRE is the form of a name and of a project: what a Redis key segment
// and a namespace can both be, with no separator of ours in it.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckName says what is wrong with a project or a name, or nil.
func CheckName(what, s string) error {
	if len(s) == 0 || len(s) > MaxNameLength || !nameRE.MatchString(s) {
		return fmt.Errorf("store: %s %q must be 1 to %d letters, digits, '.', '_' or '-', starting with a letter or digit", what, s, MaxNameLength)
	}
	return nil
}

// check checks a call's project, name and value.
func check(project, name string, value []byte) error {
	if err := CheckName("project", project); err != nil {
		return err
	}
	if err := CheckName("name", name); err != nil {
		return err
	}
	if len(value) > MaxValueBytes {
		return fmt.Errorf("store: %w: %d bytes, at most %d", ErrTooLarge, len(value), MaxValueBytes)
	}
	return nil
}
