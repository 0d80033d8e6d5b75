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

package store_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/browserfleet/browserfleet/internal/testing/redistest"
	"github.com/browserfleet/browserfleet/store"
)

// step is one call to a store and what it must answer.
type step struct {
	op      string // lookup, put, add
	project string
	name    string
	value   []byte
	n       int64
	ttl     time.Duration

	wantCount int64
	wantValue []byte
	// wantErr is a substring of the error; empty wants none.
	wantErr string
	// wantIs, when set, must be in the error's chain.
	wantIs error
}

// result is what a step got, compared whole with cmp.Diff.
type result struct {
	Count int64
	Value []byte
	Err   string
}

var big = bytes.Repeat([]byte("x"), store.MaxValueBytes+1)

// behaviour is what every Store does, Redis or embedded.
var behaviour = []struct {
	name  string
	steps []step
}{
	{name: "a first lookup counts one and finds nothing", steps: []step{
		{op: "lookup", project: "p", name: "k", wantCount: 1},
	}},
	{name: "lookups count", steps: []step{
		{op: "lookup", project: "p", name: "k", wantCount: 1},
		{op: "lookup", project: "p", name: "k", wantCount: 2},
		{op: "lookup", project: "p", name: "k", wantCount: 3},
	}},
	{name: "a lookup finds what was put, and counts on", steps: []step{
		{op: "lookup", project: "p", name: "k", wantCount: 1},
		{op: "put", project: "p", name: "k", value: []byte(`{"a":1}`)},
		{op: "lookup", project: "p", name: "k", wantCount: 2, wantValue: []byte(`{"a":1}`)},
	}},
	{name: "a put replaces", steps: []step{
		{op: "put", project: "p", name: "k", value: []byte("one")},
		{op: "put", project: "p", name: "k", value: []byte("two")},
		{op: "lookup", project: "p", name: "k", wantCount: 1, wantValue: []byte("two")},
	}},
	{name: "projects never share values or counts", steps: []step{
		{op: "put", project: "p1", name: "k", value: []byte("mine")},
		{op: "lookup", project: "p1", name: "k", wantCount: 1, wantValue: []byte("mine")},
		{op: "lookup", project: "p2", name: "k", wantCount: 1},
		{op: "add", project: "p1", name: "k", n: 5, wantCount: 5},
		{op: "add", project: "p2", name: "k", n: 2, wantCount: 2},
	}},
	{name: "a project that is a prefix of another is apart from it", steps: []step{
		{op: "put", project: "p", name: "k", value: []byte("p's")},
		{op: "lookup", project: "p.k", name: "k", wantCount: 1},
		{op: "lookup", project: "p-", name: "k", wantCount: 1},
	}},
	{name: "Add's counters are apart from lookups' counts", steps: []step{
		{op: "lookup", project: "p", name: "k", wantCount: 1},
		{op: "add", project: "p", name: "k", n: 10, wantCount: 10},
		{op: "lookup", project: "p", name: "k", wantCount: 2},
	}},
	{name: "Add adds, negative numbers too", steps: []step{
		{op: "add", project: "p", name: "tokens", n: 100, wantCount: 100},
		{op: "add", project: "p", name: "tokens", n: 23, wantCount: 123},
		{op: "add", project: "p", name: "tokens", n: -3, wantCount: 120},
		{op: "add", project: "p", name: "tokens", n: 0, wantCount: 120},
	}},
	{name: "a value of the bound is stored", steps: []step{
		{op: "put", project: "p", name: "k", value: big[1:]},
		{op: "lookup", project: "p", name: "k", wantCount: 1, wantValue: big[1:]},
	}},
	{name: "a value over the bound is refused and changes nothing", steps: []step{
		{op: "put", project: "p", name: "k", value: []byte("old")},
		{op: "put", project: "p", name: "k", value: big, wantErr: "value too large", wantIs: store.ErrTooLarge},
		{op: "lookup", project: "p", name: "k", wantCount: 1, wantValue: []byte("old")},
	}},
	{name: "bad projects and names are refused, naming which, and change nothing", steps: []step{
		{op: "lookup", project: "", name: "k", wantErr: "project"},
		{op: "lookup", project: "p", name: "a:b", wantErr: "name"},
		{op: "put", project: "p}", name: "k", value: []byte("v"), wantErr: "project"},
		{op: "put", project: "p", name: "{k}", value: []byte("v"), wantErr: "name"},
		{op: "add", project: "p", name: strings.Repeat("n", store.MaxNameLength+1), n: 1, wantErr: "name"},
		{op: "add", project: "p", name: ".k", n: 1, wantErr: "name"},
		{op: "lookup", project: "p", name: "k", wantCount: 1},
	}},
}

func run(ctx context.Context, s store.Store, st step) (result, error) {
	ttl := st.ttl
	if ttl == 0 {
		ttl = time.Hour
	}
	var r result
	var err error
	switch st.op {
	case "lookup":
		r.Count, r.Value, err = s.Lookup(ctx, st.project, st.name, ttl)
	case "put":
		err = s.Put(ctx, st.project, st.name, st.value, ttl)
	case "add":
		r.Count, err = s.Add(ctx, st.project, st.name, st.n, ttl)
	default:
		panic("unknown op " + st.op)
	}
	if err != nil {
		r.Err = err.Error()
	}
	return r, err
}

func checkSteps(t *testing.T, s store.Store, steps []step) {
	t.Helper()
	ctx := context.Background()
	for i, st := range steps {
		got, err := run(ctx, s, st)
		want := result{Count: st.wantCount, Value: st.wantValue}
		if st.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), st.wantErr) {
				t.Fatalf("step %d (%s %s/%s): error %v, want one saying %q", i, st.op, st.project, st.name, err, st.wantErr)
			}
			if st.wantIs != nil && !errors.Is(err, st.wantIs) {
				t.Fatalf("step %d: error %v is not %v", i, err, st.wantIs)
			}
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d (%s %s/%s): (-want +got)\n%s", i, st.op, st.project, st.name, diff)
		}
	}
}

func TestMemoryBehaviour(t *testing.T) {
	for _, tc := range behaviour {
		t.Run(tc.name, func(t *testing.T) {
			checkSteps(t, store.NewMemory(store.MemoryOptions{}), tc.steps)
		})
	}
}

// TestRedisBehaviour runs the same table against a real redis-server.
func TestRedisBehaviour(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	s := newRedis(t, store.RedisOptions{Address: srv.Address})
	admin := adminClient(t, srv)
	if !s.Shared() {
		t.Error("a Redis store must be Shared")
	}
	for _, tc := range behaviour {
		t.Run(tc.name, func(t *testing.T) {
			if err := admin.FlushDB(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			checkSteps(t, s, tc.steps)
		})
	}
}

func newRedis(t *testing.T, opts store.RedisOptions) *store.Redis {
	t.Helper()
	s, err := store.NewRedis(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// adminClient reads Redis behind the store's back.
func adminClient(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Address, Password: srv.Password, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestRedisKeys shows the keys a store writes: the project in a hash tag,
// each with an expiry, the count's set by its first lookup only.
func TestRedisKeys(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	s := newRedis(t, store.RedisOptions{Address: srv.Address})
	admin := adminClient(t, srv)
	ctx := context.Background()

	if _, _, err := s.Lookup(ctx, "team-a", "cache.k", time.Hour); err != nil {
		t.Fatal(err)
	}
	// A later lookup's longer TTL does not extend the count's life.
	if _, _, err := s.Lookup(ctx, "team-a", "cache.k", 100*time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "team-a", "cache.k", []byte("v"), 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, "team-a", "gateway.tokens.0", 7, 3*time.Hour); err != nil {
		t.Fatal(err)
	}
	keys, err := admin.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{
		"bf:{team-a}:c:cache.k":          time.Hour,
		"bf:{team-a}:v:cache.k":          2 * time.Hour,
		"bf:{team-a}:n:gateway.tokens.0": 3 * time.Hour,
	}
	got := map[string]time.Duration{}
	for _, k := range keys {
		ttl, err := admin.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		// What is left of the TTL, rounded up to the TTL set: the test
		// takes far less than a minute between the write and this read.
		got[k] = ttl.Round(time.Minute)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys and TTLs (-want +got):\n%s", diff)
	}
}

// TestRedisDown: calls to a Redis nobody serves fail with an error, in
// time, and the store serves once Redis is back.
func TestRedisDown(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	s := newRedis(t, store.RedisOptions{Address: srv.Address})
	ctx := context.Background()
	if _, _, err := s.Lookup(ctx, "p", "k", time.Hour); err != nil {
		t.Fatalf("lookup with Redis up: %v", err)
	}
	srv.Stop()

	steps := []step{
		{op: "lookup", project: "p", name: "k"},
		{op: "put", project: "p", name: "k", value: []byte("v")},
		{op: "add", project: "p", name: "k", n: 1},
	}
	for _, st := range steps {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := run(cctx, s, st)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "store: redis") {
			t.Errorf("%s with Redis down: error %v, want a store error", st.op, err)
		}
	}

	srv.Restart(t)
	checkSteps(t, s, []step{
		{op: "lookup", project: "p", name: "k", wantCount: 1},
	})
}

// TestRedisNotYetUp: a store made before its Redis exists does not fail to
// be made; it serves when Redis comes.
func TestRedisNotYetUp(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	srv.Stop()
	s := newRedis(t, store.RedisOptions{Address: srv.Address})
	if _, _, err := s.Lookup(context.Background(), "p", "k", time.Hour); err == nil {
		t.Fatal("lookup with no Redis: no error")
	}
	srv.Restart(t)
	checkSteps(t, s, []step{{op: "add", project: "p", name: "k", n: 2, wantCount: 2}})
}

func TestRedisPassword(t *testing.T) {
	const password = "s3cret-Pa55word"
	srv := redistest.Start(t, redistest.Options{Password: password})
	for _, tc := range []struct {
		name     string
		password string
		wantErr  bool
	}{
		{name: "the right password", password: password},
		{name: "no password", wantErr: true},
		{name: "a wrong password", password: "wrong-password", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRedis(t, store.RedisOptions{Address: srv.Address, Password: tc.password})
			_, err := s.Add(context.Background(), "p", "k", 1, time.Hour)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "wrong-password")) {
				t.Errorf("the error %q shows a password", err)
			}
		})
	}
}

func TestRedisOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opts    store.RedisOptions
		wantErr string
	}{
		{opts: store.RedisOptions{Address: "redis:6379"}},
		{opts: store.RedisOptions{Address: "[::1]:6379", DB: store.MaxRedisDB}},
		{opts: store.RedisOptions{}, wantErr: "must be host:port"},
		{opts: store.RedisOptions{Address: "redis"}, wantErr: "must be host:port"},
		{opts: store.RedisOptions{Address: ":6379"}, wantErr: "must be host:port"},
		{opts: store.RedisOptions{Address: "redis:0"}, wantErr: "port from 1 to 65535"},
		{opts: store.RedisOptions{Address: "redis:http"}, wantErr: "port from 1 to 65535"},
		{opts: store.RedisOptions{Address: "redis:6379", DB: -1}, wantErr: "DB must be"},
		{opts: store.RedisOptions{Address: "redis:6379", DB: store.MaxRedisDB + 1}, wantErr: "DB must be"},
		{opts: store.RedisOptions{Address: "redis:6379", DialTimeout: -time.Second}, wantErr: "timeouts"},
	} {
		err := tc.opts.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (tc.wantErr == "") != (got == "") || !strings.Contains(got, tc.wantErr) {
			t.Errorf("%+v: error %q, want one saying %q", tc.opts, got, tc.wantErr)
		}
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestMemoryBounds: the embedded store keeps its items, bytes and TTLs,
// evicting the least recently used first.
func TestMemoryBounds(t *testing.T) {
	ctx := context.Background()
	type op struct {
		step
		advance time.Duration // moves the clock before the step
	}
	for _, tc := range []struct {
		name string
		opts store.MemoryOptions
		ops  []op
	}{
		{name: "items: the least recently used goes first", opts: store.MemoryOptions{MaxItems: 3}, ops: []op{
			{step: step{op: "add", project: "p", name: "a", n: 1, wantCount: 1}},
			{step: step{op: "add", project: "p", name: "b", n: 1, wantCount: 1}},
			{step: step{op: "add", project: "p", name: "a", n: 1, wantCount: 2}}, // a is used
			{step: step{op: "add", project: "p", name: "c", n: 1, wantCount: 1}},
			{step: step{op: "add", project: "p", name: "d", n: 1, wantCount: 1}}, // b goes
			{step: step{op: "add", project: "p", name: "a", n: 1, wantCount: 3}},
			{step: step{op: "add", project: "p", name: "b", n: 1, wantCount: 1}}, // c goes
			{step: step{op: "add", project: "p", name: "d", n: 1, wantCount: 2}},
		}},
		{name: "bytes: values over the bound evict the oldest", opts: store.MemoryOptions{MaxBytes: 10}, ops: []op{
			{step: step{op: "put", project: "p", name: "x", value: []byte("xxxxxx")}},
			{step: step{op: "put", project: "p", name: "y", value: []byte("yyyyyy")}},
			{step: step{op: "lookup", project: "p", name: "x", wantCount: 1}},
			{step: step{op: "lookup", project: "p", name: "y", wantCount: 1, wantValue: []byte("yyyyyy")}},
		}},
		{name: "bytes: a value larger than the whole bound is not kept", opts: store.MemoryOptions{MaxBytes: 10}, ops: []op{
			{step: step{op: "put", project: "p", name: "x", value: []byte("0123456789a")}},
			{step: step{op: "lookup", project: "p", name: "x", wantCount: 1}},
		}},
		{name: "a value expires after its TTL", ops: []op{
			{step: step{op: "put", project: "p", name: "k", value: []byte("v"), ttl: time.Hour}},
			{advance: 59 * time.Minute, step: step{op: "lookup", project: "p", name: "k", wantCount: 1, wantValue: []byte("v")}},
			{advance: time.Minute, step: step{op: "lookup", project: "p", name: "k", wantCount: 2}},
		}},
		{name: "a count lives from its first lookup; later lookups do not extend it", ops: []op{
			{step: step{op: "lookup", project: "p", name: "k", ttl: time.Hour, wantCount: 1}},
			{advance: 30 * time.Minute, step: step{op: "lookup", project: "p", name: "k", ttl: 10 * time.Hour, wantCount: 2}},
			{advance: 30 * time.Minute, step: step{op: "lookup", project: "p", name: "k", ttl: time.Hour, wantCount: 1}},
		}},
		{name: "an Add counter expires after the TTL of the Add that made it", ops: []op{
			{step: step{op: "add", project: "p", name: "n", n: 5, ttl: time.Hour, wantCount: 5}},
			{advance: 59 * time.Minute, step: step{op: "add", project: "p", name: "n", n: 5, ttl: 10 * time.Hour, wantCount: 10}},
			{advance: time.Minute, step: step{op: "add", project: "p", name: "n", n: 5, ttl: time.Hour, wantCount: 5}},
		}},
		{name: "a put renews a value's life", ops: []op{
			{step: step{op: "put", project: "p", name: "k", value: []byte("1"), ttl: time.Hour}},
			{advance: 50 * time.Minute, step: step{op: "put", project: "p", name: "k", value: []byte("2"), ttl: time.Hour}},
			{advance: 50 * time.Minute, step: step{op: "lookup", project: "p", name: "k", wantCount: 1, wantValue: []byte("2")}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			tc.opts.Now = clock.now
			m := store.NewMemory(tc.opts)
			if m.Shared() {
				t.Error("the embedded store must not be Shared")
			}
			for i, o := range tc.ops {
				clock.advance(o.advance)
				got, err := run(ctx, m, o.step)
				if err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
				if diff := cmp.Diff(result{Count: o.wantCount, Value: o.wantValue}, got); diff != "" {
					t.Fatalf("op %d (%s %s): (-want +got)\n%s", i, o.op, o.name, diff)
				}
			}
		})
	}
}
