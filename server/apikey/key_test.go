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

package apikey

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewKeyFormat(t *testing.T) {
	shape := regexp.MustCompile(`^bfk_[A-Za-z0-9_-]{43}$`)
	seen := map[string]bool{}
	for range 100 {
		key, err := newKey()
		if err != nil {
			t.Fatalf("newKey: %v", err)
		}
		if !shape.MatchString(key) {
			t.Fatalf("newKey made a key of the wrong shape (length %d)", len(key))
		}
		if len(key) != KeyLen {
			t.Fatalf("len(key) = %d, want KeyLen %d", len(key), KeyLen)
		}
		if err := ParseKey(key); err != nil {
			t.Fatalf("ParseKey(newKey()) = %v, want nil", err)
		}
		if seen[key] {
			t.Fatal("newKey made the same key twice")
		}
		seen[key] = true
	}
}

func TestNewID(t *testing.T) {
	shape := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for range 100 {
		id, err := newID()
		if err != nil {
			t.Fatalf("newID: %v", err)
		}
		if !shape.MatchString(id) || !validID(id) {
			t.Fatalf("newID() = %q, want 16 lowercase hex digits", id)
		}
	}
}

func TestParseKey(t *testing.T) {
	valid := "bfk_" + strings.Repeat("A", 42) + "A"
	tests := []struct {
		name string
		key  string
		ok   bool
	}{
		{"valid", valid, true},
		{"valid with url alphabet", "bfk_" + strings.Repeat("-_", 21) + "A", true},
		{"empty", "", false},
		{"prefix only", "bfk_", false},
		{"wrong prefix", "sk_x" + valid[4:], false},
		{"upper-case prefix", "BFK_" + valid[4:], false},
		{"one char short", valid[:len(valid)-1], false},
		{"one char long", valid + "A", false},
		{"standard base64 alphabet", "bfk_" + strings.Repeat("+/", 21) + "A", false},
		{"padding", "bfk_" + strings.Repeat("A", 42) + "=", false},
		// 43 characters carry 258 bits; the last two must be zero, or the
		// same 32 bytes would have four spellings.
		{"non-canonical trailing bits", "bfk_" + strings.Repeat("A", 42) + "B", false},
		{"whitespace", " " + valid[1:], false},
		{"trailing newline", valid[:len(valid)-1] + "\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ParseKey(tt.key)
			if diff := cmp.Diff(tt.ok, err == nil); diff != "" {
				t.Errorf("ParseKey ok mismatch (-want +got):\n%s (err %v)", diff, err)
			}
			if err != nil && tt.key != "" && strings.Contains(err.Error(), tt.key) {
				t.Errorf("ParseKey's error contains the key")
			}
		})
	}
}

func TestHash(t *testing.T) {
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return hex.EncodeToString(h[:])
	}
	key := "bfk_" + strings.Repeat("A", 43)
	tests := []struct {
		name string
		key  string
		want string
	}{
		// What `printf %s "$KEY" | sha256sum` prints, as docs/api-keys.md
		// tells operators to store.
		{"empty", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"whole key, prefix included", key, sum(key)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Hash(tt.key)); diff != "" {
				t.Errorf("Hash mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if Hash(key) == Hash(key[len(KeyPrefix):]) {
		t.Error("Hash ignores the prefix")
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"0123456789abcdef", true},
		{"ci-robot", true},
		{"", false},
		{"-a", false},
		{"a-", false},
		{"UPPER", false},
		{"a.b", false},
		{"a/b", false},
		{strings.Repeat("a", 253), false},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, validID(tt.id)); diff != "" {
			t.Errorf("validID(%q) mismatch (-want +got):\n%s", tt.id, diff)
		}
	}
}

func TestIndexHash(t *testing.T) {
	// Only labelled Secrets named bf-apikey-<id> with a 64-character hash
	// are indexed, so Authenticate can match no other Secret.
	h := Hash("bfk_" + strings.Repeat("A", 43))
	secret := func(name string, labelled bool, hash string) *corev1.Secret {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Data:       map[string][]byte{},
		}
		if labelled {
			s.Labels = map[string]string{LabelAPIKey: LabelAPIKeyValue}
		}
		if hash != "" {
			s.Data[DataHash] = []byte(hash)
		}
		return s
	}
	tests := []struct {
		name   string
		secret *corev1.Secret
		want   []string
	}{
		{"key", secret("bf-apikey-x", true, h), []string{h}},
		{"no label", secret("bf-apikey-x", false, h), nil},
		{"other name", secret("x", true, h), nil},
		{"prefix only", secret("bf-apikey-", true, h), nil},
		{"short hash", secret("bf-apikey-x", true, h[:63]), nil},
		{"no hash", secret("bf-apikey-x", true, ""), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, indexHash(tt.secret)); diff != "" {
				t.Errorf("indexHash mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
