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

// Package apikey issues, stores and checks the API keys of the /v1 API.
//
// A key belongs to one project, and a project is a namespace: each key is one
// Secret in its project's namespace, named bf-apikey-<id> and labelled
// browserfleet.io/api-key=true, that holds only the SHA-256 hash of the key
// and non-secret metadata. The key's value is shown once, when it is made,
// and is never stored, logged or put in an error.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

const (
	// KeyPrefix starts every key, so that a leaked key is easy to recognize
	// (secret scanners, logs) and a key of another service is refused early.
	KeyPrefix = "bfk_"
	// keyBytes is the key's randomness: 256 bits.
	keyBytes = 32
	// KeyLen is the length of a key: the prefix and 32 bytes in unpadded
	// base64url.
	KeyLen = len(KeyPrefix) + 43
	// idBytes is the randomness of a key's id. The id is not secret; it only
	// has to be unique within a namespace, and 64 bits make a clash unlikely
	// enough that Create simply fails on one.
	idBytes = 8
)

// errMalformedKey says a string is not shaped like a key. It never leaves the
// package: callers of Authenticate only ever see ErrInvalidKey.
var errMalformedKey = errors.New("malformed API key")

// newKey returns a fresh random key.
func newKey() (string, error) {
	b := make([]byte, keyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return KeyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// newID returns a fresh key id: lowercase hex, so that bf-apikey-<id> is a
// valid Secret name.
func newID() (string, error) {
	b := make([]byte, idBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// ParseKey checks that key is shaped like a key: the prefix, then 43
// base64url characters that decode to 32 bytes. It says nothing about
// whether the key exists. The error never contains the key.
func ParseKey(key string) error {
	if len(key) != KeyLen || !strings.HasPrefix(key, KeyPrefix) {
		return errMalformedKey
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(key[len(KeyPrefix):])
	if err != nil || len(b) != keyBytes {
		// The decoder's error quotes the offending byte's offset only, but
		// there is no reason to pass even that on.
		return errMalformedKey
	}
	return nil
}

// Hash is what is stored of a key: the lowercase hex SHA-256 of the whole key
// string, prefix included, as `printf %s "$KEY" | sha256sum` prints it.
//
// A fast, unsalted hash is right here, unlike for passwords: keys carry 256
// random bits, so neither a dictionary nor brute force against a leaked hash
// is feasible, and a slow hash would only cost every API request CPU time.
// Being unsalted also lets the hash itself be the lookup index.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// validID reports whether id is shaped like an id that bf-apikey-<id> can
// name: lowercase letters, digits and dashes, not empty. Ids of keys made by
// hand need not be hex.
func validID(id string) bool {
	if id == "" || len(id) > 253-len(SecretNamePrefix) {
		return false
	}
	for _, r := range id {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return id[0] != '-' && id[len(id)-1] != '-'
}
