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
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/redis/go-redis/v9"
)

// Defaults of RedisOptions.
const (
	// DefaultRedisDialTimeout bounds connecting to Redis.
	DefaultRedisDialTimeout = 2 * time.Second
	// DefaultRedisReadTimeout bounds waiting for one reply, and one write.
	DefaultRedisReadTimeout = time.Second
	// MaxRedisDB bounds DB: Redis's default configuration has 16.
	MaxRedisDB = 15
)

// RedisOptions configure a Redis store.
type RedisOptions struct {
	// Address is Redis's host:port. Required.
	Address string
	// Password is Redis's requirepass (the default user's password);
	// empty for none. The caller reads it from a file: it never travels
	// in a flag or an environment variable.
	Password string
	// DB is the database number, 0 to MaxRedisDB.
	DB int
	// DialTimeout bounds connecting; zero is DefaultRedisDialTimeout.
	DialTimeout time.Duration
	// ReadTimeout bounds a reply and a write; zero is
	// DefaultRedisReadTimeout.
	ReadTimeout time.Duration
}

// Validate says what is wrong with the options, naming the field.
func (o RedisOptions) Validate() error {
	host, port, err := net.SplitHostPort(o.Address)
	if err != nil || host == "" {
		return fmt.Errorf("store: redis address %q must be host:port", o.Address)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("store: redis address %q must have a port from 1 to 65535", o.Address)
	}
	if o.DB < 0 || o.DB > MaxRedisDB {
		return fmt.Errorf("store: redis DB must be from 0 to %d, not %d", MaxRedisDB, o.DB)
	}
	if o.DialTimeout < 0 || o.ReadTimeout < 0 {
		return errors.New("store: redis timeouts must not be negative")
	}
	return nil
}

// Redis is the shared store: every API replica given the same Redis (or
// Valkey) sees the same entries, counts and budgets. A project's keys are
// bf:{<project>}:<space>:<name>; the hash tag keeps a project in one slot
// of a Redis Cluster. It connects lazily: an API that starts before its
// Redis serves, and each call fails with an error (a cache miss to its
// callers) until Redis answers.
type Redis struct {
	c *redis.Client
}

var _ Store = (*Redis)(nil)

// NewRedis returns a store on the Redis at opts.Address. It does not
// connect: the first call does.
func NewRedis(opts RedisOptions) (*Redis, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = DefaultRedisDialTimeout
	}
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = DefaultRedisReadTimeout
	}
	c := redis.NewClient(&redis.Options{
		Addr:         opts.Address,
		Password:     opts.Password,
		DB:           opts.DB,
		DialTimeout:  opts.DialTimeout,
		ReadTimeout:  opts.ReadTimeout,
		WriteTimeout: opts.ReadTimeout,
		// The caller's deadline (cache.StoreTimeout) bounds a call whole;
		// one retry rides out a connection Redis closed while idle.
		ContextTimeoutEnabled: true,
		MaxRetries:            1,
		DialerRetries:         1,
		// CLIENT SETINFO is noise to an older Redis or a Valkey.
		DisableIdentity: true,
	})
	return &Redis{c: c}, nil
}

// Shared is true: every process on the same Redis sees the same state.
func (r *Redis) Shared() bool { return true }

// Close closes the connections.
func (r *Redis) Close() error { return r.c.Close() }

// redisKey is the Redis key of a project's name in a key space: c (cache
// counts), v (values) or n (Add's counters).
func redisKey(project, space, name string) string {
	return "bf:{" + project + "}:" + space + ":" + name
}

// Lookup is Store's Lookup: INCR, PEXPIRE NX and GET in one MULTI, so the
// count and the value are read at once and a count never lives forever.
func (r *Redis) Lookup(ctx context.Context, project, name string, countTTL time.Duration) (int64, []byte, error) {
	if err := check(project, name, nil); err != nil {
		return 0, nil, err
	}
	ck := redisKey(project, "c", name)
	var incr *redis.IntCmd
	var get *redis.StringCmd
	_, err := r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, ck)
		p.Do(ctx, "pexpire", ck, ttlMillis(countTTL), "nx")
		get = p.Get(ctx, redisKey(project, "v", name))
		return nil
	})
	// A missing value is redis.Nil on GET, which the pipeline returns as
	// its error too: not a failure.
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, nil, fmt.Errorf("store: redis lookup: %w", err)
	}
	count, err := incr.Result()
	if err != nil {
		return 0, nil, fmt.Errorf("store: redis lookup: %w", err)
	}
	value, err := get.Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return count, nil, nil
	case err != nil:
		return 0, nil, fmt.Errorf("store: redis lookup: %w", err)
	}
	return count, value, nil
}

// Put is Store's Put: SET with PX.
func (r *Redis) Put(ctx context.Context, project, name string, value []byte, ttl time.Duration) error {
	if err := check(project, name, value); err != nil {
		return err
	}
	if err := r.c.Set(ctx, redisKey(project, "v", name), value, time.Duration(ttlMillis(ttl))*time.Millisecond).Err(); err != nil {
		return fmt.Errorf("store: redis put: %w", err)
	}
	return nil
}

// Add is Store's Add: INCRBY and PEXPIRE NX in one MULTI.
func (r *Redis) Add(ctx context.Context, project, name string, n int64, ttl time.Duration) (int64, error) {
	if err := check(project, name, nil); err != nil {
		return 0, err
	}
	k := redisKey(project, "n", name)
	var incr *redis.IntCmd
	if _, err := r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.IncrBy(ctx, k, n)
		p.Do(ctx, "pexpire", k, ttlMillis(ttl), "nx")
		return nil
	}); err != nil {
		return 0, fmt.Errorf("store: redis add: %w", err)
	}
	return incr.Val(), nil
}

// ttlMillis is ttl in whole milliseconds, at least one: Redis refuses a
// zero or negative expiry, and a key must never live forever.
func ttlMillis(ttl time.Duration) int64 {
	return max(ttl.Milliseconds(), 1)
}

// SetRedisLogger sends the Redis client's own messages (a failed dial, a
// dropped connection), which it writes to stderr by default, to log at
// verbosity 1: a Redis that is down is already every call's error, and
// the lines would repeat for each. The client's logger is one per process.
func SetRedisLogger(log logr.Logger) { redis.SetLogger(redisLogger{log.V(1)}) }

type redisLogger struct{ log logr.Logger }

func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Info("redis client", "message", fmt.Sprintf(format, v...))
}
