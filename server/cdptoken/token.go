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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MinKeyLen is the shortest key a Signer takes: HMAC-SHA256 is as strong as
// its 32-byte output only with a key at least that long.
const MinKeyLen = 32

// version is the token format's first segment; a new format gets a new one.
const version = "v2"

// macLen is the length of an HMAC-SHA256.
const macLen = sha256.Size

// maxTokenLen bounds what Verify parses: a valid token is version, a
// decimal int64 and 43 base64 characters, well under it.
const maxTokenLen = 128

// label separates this package's MACs from any other use of the same key.
const label = "browserfleet.io/cdptoken"

var (
	// ErrMalformed means the token is not a token of a known format.
	ErrMalformed = errors.New("malformed CDP token")
	// ErrExpired means a genuine token whose expiry has passed.
	ErrExpired = errors.New("expired CDP token")
	// ErrInvalid means the token's MAC does not match under any key: it
	// was forged or altered, or it is another session's token.
	ErrInvalid = errors.New("invalid CDP token")
)

// Signer signs tokens with its current key and verifies them with any of its
// keys. Make one with NewSigner; it is safe for concurrent use.
type Signer struct {
	// The keys sit behind a pointer: fmt prints a nested pointer as an
	// address, so a Signer printed by mistake, or a struct holding one,
	// shows no key material.
	ring *keyring
}

// keyring holds a Signer's keys; keys[0] signs, all verify.
type keyring struct {
	keys [][]byte
}

// NewSigner returns a Signer that signs with current and verifies with
// current and every previous key. Each key must be at least MinKeyLen bytes.
// The keys are copied.
func NewSigner(current []byte, previous ...[]byte) (*Signer, error) {
	all := append([][]byte{current}, previous...)
	ring := &keyring{keys: make([][]byte, 0, len(all))}
	for i, k := range all {
		if len(k) < MinKeyLen {
			// The length is not secret; the key is never mentioned.
			return nil, fmt.Errorf("cdptoken: key %d is %d bytes, need at least %d", i, len(k), MinKeyLen)
		}
		ring.keys = append(ring.keys, append([]byte(nil), k...))
	}
	return &Signer{ring: ring}, nil
}

// Sign returns the token for the session namespace/session of UID
// sessionUID, asked for by the API key of id keyID, valid until expires
// (rounded down to the second).
func (s *Signer) Sign(namespace, session, sessionUID, keyID string, expires time.Time) string {
	exp := expires.Unix()
	mac := compute(s.ring.keys[0], namespace, session, sessionUID, keyID, exp)
	return version + "." + strconv.FormatInt(exp, 10) + "." + base64.RawURLEncoding.EncodeToString(mac)
}

// Verify checks that token is a token this Signer (under any of its keys)
// issued for namespace/session of UID sessionUID to the key keyID, and that
// it has not expired at now. The error is nil, or wraps exactly one of ErrMalformed,
// ErrExpired and ErrInvalid; it never contains the token.
func (s *Signer) Verify(token, namespace, session, sessionUID, keyID string, now time.Time) error {
	exp, mac, err := parse(token)
	if err != nil {
		return err
	}
	if namespace == "" || session == "" || sessionUID == "" || keyID == "" {
		// Sign never refuses, but an unidentified session is never
		// authorized: a caller that lost the UID must not match tokens
		// signed with an empty one.
		return fmt.Errorf("%w: no session namespace, name or UID, or no key id, to check it against", ErrInvalid)
	}
	ok := false
	for _, k := range s.ring.keys {
		// Every key is tried, so the time taken does not say which one
		// matched.
		if hmac.Equal(mac, compute(k, namespace, session, sessionUID, keyID, exp)) {
			ok = true
		}
	}
	if !ok {
		return fmt.Errorf("%w: signature does not match session %s/%s", ErrInvalid, namespace, session)
	}
	if now.Unix() >= exp {
		return fmt.Errorf("%w: expired at %s", ErrExpired, time.Unix(exp, 0).UTC().Format(time.RFC3339))
	}
	return nil
}

// parse splits token into its expiry and MAC.
func parse(token string) (int64, []byte, error) {
	if len(token) == 0 {
		return 0, nil, fmt.Errorf("%w: empty", ErrMalformed)
	}
	if len(token) > maxTokenLen {
		return 0, nil, fmt.Errorf("%w: %d bytes long, at most %d", ErrMalformed, len(token), maxTokenLen)
	}
	ver, rest, ok := strings.Cut(token, ".")
	if !ok {
		return 0, nil, fmt.Errorf("%w: no version", ErrMalformed)
	}
	if ver != version {
		return 0, nil, fmt.Errorf("%w: unknown version", ErrMalformed)
	}
	expText, macText, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, nil, fmt.Errorf("%w: no expiry", ErrMalformed)
	}
	exp, err := strconv.ParseInt(expText, 10, 64)
	// The round trip refuses "+5", "05" and the like: one spelling each.
	if err != nil || strconv.FormatInt(exp, 10) != expText {
		return 0, nil, fmt.Errorf("%w: expiry is not a canonical integer", ErrMalformed)
	}
	mac, err := base64.RawURLEncoding.DecodeString(macText)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: signature is not unpadded base64url", ErrMalformed)
	}
	if len(mac) != macLen {
		return 0, nil, fmt.Errorf("%w: signature is %d bytes, want %d", ErrMalformed, len(mac), macLen)
	}
	// The decoder skips CR and LF and ignores non-zero trailing bits; the
	// round trip refuses those spellings. (A further "." left in macText by
	// Cut already failed decoding.)
	if base64.RawURLEncoding.EncodeToString(mac) != macText {
		return 0, nil, fmt.Errorf("%w: signature is not canonical base64url", ErrMalformed)
	}
	return exp, mac, nil
}

// compute is the MAC of the canonical message of one token.
func compute(key []byte, namespace, session, uid, keyID string, exp int64) []byte {
	h := hmac.New(sha256.New, key)
	var buf [binary.MaxVarintLen64]byte
	for _, f := range []string{label, version, namespace, session, uid, keyID} {
		// Length-prefixed fields: unambiguous whatever bytes they hold.
		h.Write(buf[:binary.PutUvarint(buf[:], uint64(len(f)))])
		h.Write([]byte(f))
	}
	h.Write(binary.BigEndian.AppendUint64(buf[:0], uint64(exp)))
	return h.Sum(nil)
}
