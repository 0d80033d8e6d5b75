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

package app

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
)

func TestCacheFlags(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "password")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		args       []string
		wantErr    string
		wantShared bool
	}{
		{name: "defaults: the embedded store"},
		{name: "a Redis", args: []string{"--cache-redis-address=127.0.0.1:6379"}, wantShared: true},
		{name: "a Redis with a password", args: []string{"--cache-redis-address=redis.bf-system.svc:6379", "--cache-redis-password-file=" + pw}, wantShared: true},
		{name: "threshold and TTL at their bounds", args: []string{"--cache-enabled", "--cache-threshold=1000", "--cache-ttl=720h"}},
		{name: "threshold 0", args: []string{"--cache-threshold=0"}, wantErr: "--cache-threshold: threshold must be from 1 to 1000, not 0"},
		{name: "threshold over the bound", args: []string{"--cache-threshold=1001"}, wantErr: "--cache-threshold"},
		{name: "a TTL too short", args: []string{"--cache-ttl=30s"}, wantErr: "--cache-ttl must be from 1m0s to 720h0m0s, not 30s"},
		{name: "a TTL too long", args: []string{"--cache-ttl=721h"}, wantErr: "--cache-ttl must be"},
		{name: "an address without a port", args: []string{"--cache-redis-address=redis"}, wantErr: "--cache-redis-address: store: redis address \"redis\" must be host:port"},
		{name: "a password without an address", args: []string{"--cache-redis-password-file=" + pw}, wantErr: "--cache-redis-password-file needs --cache-redis-address"},
		{name: "a missing password file", args: []string{"--cache-redis-address=redis:6379", "--cache-redis-password-file=" + filepath.Join(dir, "none")}, wantErr: "reading --cache-redis-password-file"},
		{name: "an empty password file", args: []string{"--cache-redis-address=redis:6379", "--cache-redis-password-file=" + empty}, wantErr: "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			fs := flag.NewFlagSet("api", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			opts.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			opts.Logger = logr.Discard()
			err := validateCache(opts)
			if err == nil {
				st, serr := newStore(opts, logr.Discard())
				if serr == nil {
					if got := st.Shared(); got != tc.wantShared {
						t.Errorf("Shared() = %v, want %v", got, tc.wantShared)
					}
					_ = st.Close()
				}
				err = serr
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("error %q, want one saying %q", got, tc.wantErr)
			}
			if err != nil && strings.Contains(got, "s3cret") {
				t.Errorf("the error %q shows the password", got)
			}
		})
	}
}

func TestCacheFlagDefaults(t *testing.T) {
	opts := DefaultOptions()
	got := []any{opts.CacheRedisAddress, opts.CacheEnabled, opts.CacheThreshold, opts.CacheTTL}
	want := []any{"", false, int64(1), 168 * time.Hour}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}
