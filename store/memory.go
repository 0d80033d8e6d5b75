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

package store

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Bounds of the embedded store, by default.
const (
	// DefaultMemoryMaxItems bounds the values and counters held.
	DefaultMemoryMaxItems = 10000
	// DefaultMemoryMaxBytes bounds the bytes of the values held.
	DefaultMemoryMaxBytes = 256 << 20
)

// Memory is the embedded store: in this process only, bounded in items and
// bytes, the least recently used item evicted first. It serves an API that
// runs one replica (and `make dev`); it is not Shared.
type Memory struct {
	maxItems int
	maxBytes int
	now      func() time.Time

	mu    sync.Mutex
	lru   *list.List // of *memItem, most recent first
	items map[string]*list.Element
	bytes int
}

type memItem struct {
	key     string
	value   []byte
	count   int64
	expires time.Time
}

// MemoryOptions bound a Memory store; zero fields take the defaults.
type MemoryOptions struct {
	MaxItems int
	MaxBytes int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// NewMemory returns an empty embedded store.
func NewMemory(opts MemoryOptions) *Memory {
	m := &Memory{maxItems: opts.MaxItems, maxBytes: opts.MaxBytes, now: opts.Now,
		lru: list.New(), items: map[string]*list.Element{}}
	if m.maxItems <= 0 {
		m.maxItems = DefaultMemoryMaxItems
	}
	if m.maxBytes <= 0 {
		m.maxBytes = DefaultMemoryMaxBytes
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m
}

var _ Store = (*Memory)(nil)

// Shared is false: only this process sees a Memory store.
func (m *Memory) Shared() bool { return false }

// Close does nothing.
func (m *Memory) Close() error { return nil }

// Lookup is Store's Lookup.
func (m *Memory) Lookup(_ context.Context, project, name string, countTTL time.Duration) (int64, []byte, error) {
	if err := check(project, name, nil); err != nil {
		return 0, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counter(countKey(project, name), 1, countTTL)
	var value []byte
	if it := m.get(valueKey(project, name)); it != nil {
		value = append([]byte(nil), it.value...)
	}
	return c, value, nil
}

// Put is Store's Put.
func (m *Memory) Put(_ context.Context, project, name string, value []byte, ttl time.Duration) error {
	if err := check(project, name, value); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := valueKey(project, name)
	m.remove(k)
	m.insert(&memItem{key: k, value: append([]byte(nil), value...), expires: m.now().Add(ttl)})
	return nil
}

// Add is Store's Add.
func (m *Memory) Add(_ context.Context, project, name string, n int64, ttl time.Duration) (int64, error) {
	if err := check(project, name, nil); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counter(addKey(project, name), n, ttl), nil
}

// The key spaces of a project: cache counts and values, and Add's counters.
func countKey(project, name string) string { return project + "\x00c\x00" + name }
func valueKey(project, name string) string { return project + "\x00v\x00" + name }
func addKey(project, name string) string   { return project + "\x00n\x00" + name }

// counter adds n to the counter at k, made with ttl when absent or
// expired, and returns its value.
func (m *Memory) counter(k string, n int64, ttl time.Duration) int64 {
	if it := m.get(k); it != nil {
		it.count += n
		return it.count
	}
	m.insert(&memItem{key: k, count: n, expires: m.now().Add(ttl)})
	return n
}

// get returns the live item at k, made most recent, or nil.
func (m *Memory) get(k string) *memItem {
	el, ok := m.items[k]
	if !ok {
		return nil
	}
	it := el.Value.(*memItem)
	if !m.now().Before(it.expires) {
		m.remove(k)
		return nil
	}
	m.lru.MoveToFront(el)
	return it
}

func (m *Memory) insert(it *memItem) {
	m.items[it.key] = m.lru.PushFront(it)
	m.bytes += len(it.value)
	for m.lru.Len() > m.maxItems || m.bytes > m.maxBytes {
		oldest := m.lru.Back()
		m.remove(oldest.Value.(*memItem).key)
	}
}

func (m *Memory) remove(k string) {
	el, ok := m.items[k]
	if !ok {
		return
	}
	m.bytes -= len(el.Value.(*memItem).value)
	m.lru.Remove(el)
	delete(m.items, k)
}
