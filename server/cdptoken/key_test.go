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

package cdptoken

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadKey(t *testing.T) {
	raw32 := []byte("0123456789abcdef0123456789abcdef")
	bin := make([]byte, 32)
	for i := range bin {
		bin[i] = byte(0xf0 + i%16) // No whitespace bytes, and not base64.
	}
	passphrase := "correct horse battery staple, twice over"

	for _, tc := range []struct {
		name    string
		content []byte // nil: no file at all.
		want    []byte
		wantErr string
	}{
		{name: "standard base64 with newline", content: []byte(base64.StdEncoding.EncodeToString(raw32) + "\n"), want: raw32},
		{name: "unpadded base64", content: []byte(base64.RawStdEncoding.EncodeToString(raw32)), want: raw32},
		{name: "url-safe base64 of binary", content: []byte(base64.URLEncoding.EncodeToString(bin)), want: bin},
		{name: "unpadded url-safe base64", content: []byte(base64.RawURLEncoding.EncodeToString(bin)), want: bin},
		{name: "base64 with surrounding whitespace", content: []byte("  \t" + base64.StdEncoding.EncodeToString(bin) + "\r\n\n"), want: bin},
		{name: "passphrase", content: []byte(passphrase + "\n"), want: []byte(passphrase)},
		// 32 characters of the base64 alphabet decode to only 24 bytes, so
		// they are taken as text.
		{name: "32-character text that is also base64", content: raw32, want: raw32},
		{name: "raw binary", content: bin, want: bin},
		{name: "short text", content: []byte("too-short-a-key\n"), wantErr: "15 bytes, need at least 32"},
		{name: "short base64", content: []byte(base64.StdEncoding.EncodeToString(raw32[:16])), wantErr: "24 bytes, need at least 32"},
		{name: "empty", content: []byte{}, wantErr: "0 bytes"},
		{name: "whitespace only", content: []byte(" \n\t\n"), wantErr: "0 bytes"},
		{name: "too large", content: bytes.Repeat([]byte("k"), maxKeyFileLen+1), wantErr: "over 4096 bytes"},
		{name: "missing file", wantErr: "opening key file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			if tc.content != nil {
				if err := os.WriteFile(path, tc.content, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LoadKey(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadKey error = %v, want one containing %q", err, tc.wantErr)
				}
				if trimmed := bytes.TrimSpace(tc.content); len(trimmed) >= 8 && strings.Contains(err.Error(), string(trimmed[:8])) {
					t.Errorf("LoadKey error %q contains the file's content", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadKey: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LoadKey (-want +got):\n%s", diff)
			}
			if _, err := NewSigner(got); err != nil {
				t.Errorf("NewSigner(LoadKey()): %v", err)
			}
		})
	}
}

func TestGenerateKey(t *testing.T) {
	a, err := GenerateKey()
	if err != nil {
		t.Fatalf("GenerateKey: %v", err)
	}
	b, err := GenerateKey()
	if err != nil {
		t.Fatalf("GenerateKey: %v", err)
	}
	if diff := cmp.Diff(MinKeyLen, len(a)); diff != "" {
		t.Errorf("key length (-want +got):\n%s", diff)
	}
	if bytes.Equal(a, b) {
		t.Error("two generated keys are equal")
	}
	// A generated key, stored base64-encoded as the doc says, loads back.
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(a)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadKey(path)
	if err != nil {
		t.Fatalf("LoadKey: %v", err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("LoadKey of a generated key (-want +got):\n%s", diff)
	}
}
