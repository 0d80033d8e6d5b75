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
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"os"
)

// maxKeyFileLen bounds what LoadKey reads: a key is tens of bytes, and a
// mount of the wrong file should fail rather than fill memory.
const maxKeyFileLen = 4096

// GenerateKey returns MinKeyLen random bytes, for a local stack that has no
// Secret to mount. Store it base64-encoded for LoadKey.
func GenerateKey() ([]byte, error) {
	k := make([]byte, MinKeyLen)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("cdptoken: generating key: %w", err)
	}
	return k, nil
}

// LoadKey reads a key from the file at path, typically a key of a mounted
// Secret. Leading and trailing whitespace is dropped (editors and `echo` add
// newlines). If what remains is base64 (standard or URL-safe alphabet,
// padded or not) that decodes to at least MinKeyLen bytes, the decoded bytes
// are the key; otherwise the text itself is. So `openssl rand -base64 32`
// and a long passphrase both work. A raw binary key may lose whitespace
// bytes at its ends: store binary keys base64-encoded. The key must be at
// least MinKeyLen bytes.
//
// Errors name the path and lengths, never the content.
func LoadKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cdptoken: opening key file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFileLen+1))
	if err != nil {
		return nil, fmt.Errorf("cdptoken: reading key file %s: %w", path, err)
	}
	if len(b) > maxKeyFileLen {
		return nil, fmt.Errorf("cdptoken: key file %s is over %d bytes", path, maxKeyFileLen)
	}
	key := decodeKey(bytes.TrimSpace(b))
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("cdptoken: key in %s is %d bytes, need at least %d", path, len(key), MinKeyLen)
	}
	return key, nil
}

// decodeKey returns text base64-decoded if it is base64 in one of the usual
// alphabets and decodes to a long enough key, and text itself otherwise: a
// 32-character passphrase that happens to be base64 (24 bytes decoded) is
// taken as text rather than refused.
func decodeKey(text []byte) []byte {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		dst := make([]byte, enc.DecodedLen(len(text)))
		if n, err := enc.Decode(dst, text); err == nil && n >= MinKeyLen {
			return dst[:n]
		}
	}
	return append([]byte(nil), text...)
}
