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
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var (
	keyA = []byte("0123456789abcdef0123456789abcdef")                 // 32 bytes
	keyB = []byte("fedcba9876543210fedcba9876543210fedcba9876543210") // 48 bytes
	keyC = []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef")

	// expiry is a whole second; tokens below are valid until then.
	expiry = time.Unix(1_800_000_000, 0)
	before = expiry.Add(-time.Minute)
)

const (
	ns  = "team-a"
	sid = "bs-123"
	uid = "6f1c1c2e-6d2b-4c59-9d59-0d3a2b7a9f10"
	kid = "0a1b2c3d4e5f6a7b"
)

func mustSigner(t testing.TB, current []byte, previous ...[]byte) *Signer {
	t.Helper()
	s, err := NewSigner(current, previous...)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	return s
}

func TestNewSigner(t *testing.T) {
	for _, tc := range []struct {
		name     string
		current  []byte
		previous [][]byte
		wantErr  bool
	}{
		{name: "32 bytes", current: keyA},
		{name: "48 bytes", current: keyB},
		{name: "with previous keys", current: keyA, previous: [][]byte{keyB, keyC}},
		{name: "nil", current: nil, wantErr: true},
		{name: "31 bytes", current: keyA[:31], wantErr: true},
		{name: "short previous key", current: keyA, previous: [][]byte{keyB, keyC[:16]}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewSigner(tc.current, tc.previous...)
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Errorf("NewSigner error = %v (-want +got):\n%s", err, diff)
			}
		})
	}
}

func TestNewSignerCopiesKeys(t *testing.T) {
	key := append([]byte(nil), keyA...)
	s := mustSigner(t, key)
	tok := s.Sign(ns, sid, uid, kid, expiry)
	for i := range key {
		key[i] = 0 // The caller wipes its buffer.
	}
	if err := s.Verify(tok, ns, sid, uid, kid, before); err != nil {
		t.Errorf("Verify after the caller changed its key buffer: %v", err)
	}
}

func TestSignFormat(t *testing.T) {
	s := mustSigner(t, keyA)
	tok := s.Sign(ns, sid, uid, kid, expiry)
	if !regexp.MustCompile(`^v2\.1800000000\.[A-Za-z0-9_-]{43}$`).MatchString(tok) {
		t.Errorf("token %q does not have the form v2.<expiry>.<43 base64url characters>", tok)
	}
	if diff := cmp.Diff(tok, url.QueryEscape(tok)); diff != "" {
		t.Errorf("token is not URL-safe (-raw +escaped):\n%s", diff)
	}
	if diff := cmp.Diff(tok, s.Sign(ns, sid, uid, kid, expiry)); diff != "" {
		t.Errorf("Sign is not deterministic (-first +second):\n%s", diff)
	}
}

// TestSignUnambiguous checks that field boundaries are part of the MAC:
// moving characters from one field to the next makes another token.
func TestSignUnambiguous(t *testing.T) {
	s := mustSigner(t, keyA)
	for _, tc := range []struct {
		name string
		a, b [3]string
	}{
		{name: "namespace/name boundary", a: [3]string{"ab", "c", uid}, b: [3]string{"a", "bc", uid}},
		{name: "name/uid boundary", a: [3]string{ns, "ab", "c"}, b: [3]string{ns, "a", "bc"}},
		{name: "empty field", a: [3]string{"", "ab", "c"}, b: [3]string{"ab", "", "c"}},
		{name: "separator in a field", a: [3]string{"a.b", "c", uid}, b: [3]string{"a", "b.c", uid}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ta := s.Sign(tc.a[0], tc.a[1], tc.a[2], kid, expiry)
			tb := s.Sign(tc.b[0], tc.b[1], tc.b[2], kid, expiry)
			if ta == tb {
				t.Errorf("Sign%q and Sign%q made the same token %q", tc.a, tc.b, ta)
			}
		})
	}
}

// tamper returns tok with part i (0 version, 1 expiry, 2 MAC) replaced by f
// of it.
func tamper(tok string, i int, f func(string) string) string {
	parts := strings.Split(tok, ".")
	parts[i] = f(parts[i])
	return strings.Join(parts, ".")
}

// flipFirst changes the first character of a base64url string to another
// character of the alphabet; all six of its bits are significant, so the
// result is still canonical base64 of different bytes.
func flipFirst(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

func TestVerify(t *testing.T) {
	s := mustSigner(t, keyA)
	other := mustSigner(t, keyB)
	valid := s.Sign(ns, sid, uid, kid, expiry)
	mac := strings.Split(valid, ".")[2]

	for _, tc := range []struct {
		name               string
		token              string
		namespace, session string
		sessionUID         string
		now                time.Time
		want               error
	}{
		{name: "round trip", token: valid, now: before},
		{name: "long before expiry", token: valid, now: time.Unix(0, 0)},

		// Expiry boundary: valid up to the second before, expired from it on.
		{name: "1ns before expiry", token: valid, now: expiry.Add(-time.Nanosecond)},
		{name: "at expiry", token: valid, now: expiry, want: ErrExpired},
		{name: "1s after expiry", token: valid, now: expiry.Add(time.Second), want: ErrExpired},
		{name: "expiry rounds down", token: s.Sign(ns, sid, uid, kid, expiry.Add(999*time.Millisecond)), now: expiry, want: ErrExpired},
		{name: "expiry in the distant past", token: s.Sign(ns, sid, uid, kid, time.Time{}), now: before, want: ErrExpired},

		// Another session's token.
		{name: "other namespace", token: valid, namespace: "team-b", now: before, want: ErrInvalid},
		{name: "other session", token: valid, session: "bs-124", now: before, want: ErrInvalid},
		{name: "recreated session (other uid)", token: valid, sessionUID: "0b8a1d1e-0000-4000-8000-000000000000", now: before, want: ErrInvalid},
		{name: "other API key", token: s.Sign(ns, sid, uid, "ffffffffffffffff", expiry), now: before, want: ErrInvalid},
		{name: "other key", token: other.Sign(ns, sid, uid, kid, expiry), now: before, want: ErrInvalid},
		{name: "no namespace to check", token: s.Sign("", sid, uid, kid, expiry), namespace: "-", now: before, want: ErrInvalid},
		{name: "no uid to check", token: s.Sign(ns, sid, "", kid, expiry), sessionUID: "-", now: before, want: ErrInvalid},

		// Tampering, part by part.
		{name: "version changed", token: tamper(valid, 0, func(string) string { return "v3" }), now: before, want: ErrMalformed},
		{name: "expiry extended", token: tamper(valid, 1, func(e string) string { return "1800000001" }), now: before, want: ErrInvalid},
		{name: "expired token extended", token: tamper(s.Sign(ns, sid, uid, kid, before), 1, func(string) string { return "1800000000" }), now: before.Add(time.Second), want: ErrInvalid},
		{name: "mac changed", token: tamper(valid, 2, flipFirst), now: before, want: ErrInvalid},
		{name: "mac of another session", token: tamper(valid, 2, func(string) string { return strings.Split(s.Sign(ns, "bs-124", uid, kid, expiry), ".")[2] }), now: before, want: ErrInvalid},
		{name: "mac zeroed", token: tamper(valid, 2, func(string) string { return base64.RawURLEncoding.EncodeToString(make([]byte, 32)) }), now: before, want: ErrInvalid},

		// Malformed.
		{name: "empty", token: "", now: before, want: ErrMalformed},
		{name: "version only", token: "v2", now: before, want: ErrMalformed},
		{name: "no mac", token: "v2.1800000000", now: before, want: ErrMalformed},
		{name: "empty mac", token: "v2.1800000000.", now: before, want: ErrMalformed},
		{name: "empty expiry", token: "v2.." + mac, now: before, want: ErrMalformed},
		{name: "unknown version", token: "v0.1800000000." + mac, now: before, want: ErrMalformed},
		{name: "upper-case version", token: "V2.1800000000." + mac, now: before, want: ErrMalformed},
		{name: "expiry not a number", token: "v2.soon." + mac, now: before, want: ErrMalformed},
		{name: "expiry with plus sign", token: "v2.+1800000000." + mac, now: before, want: ErrMalformed},
		{name: "expiry with leading zero", token: "v2.01800000000." + mac, now: before, want: ErrMalformed},
		{name: "expiry overflows int64", token: "v2.99999999999999999999." + mac, now: before, want: ErrMalformed},
		{name: "extra segment", token: valid + ".x", now: before, want: ErrMalformed},
		{name: "padded mac", token: valid + "=", now: before, want: ErrMalformed},
		{name: "standard base64 alphabet", token: "v2.1800000000." + strings.Repeat("+", 43), now: before, want: ErrMalformed},
		{name: "mac not base64", token: "v2.1800000000." + strings.Repeat("!", 43), now: before, want: ErrMalformed},
		{name: "mac too short", token: "v2.1800000000." + mac[:42], now: before, want: ErrMalformed},
		{name: "mac too long", token: "v2.1800000000." + mac + "AAAA", now: before, want: ErrMalformed},
		{name: "mac with non-zero trailing bits", token: "v2.1800000000." + mac[:42] + nonCanonicalLast(mac[42]), now: before, want: ErrMalformed},
		{name: "line break inside mac", token: "v2.1800000000." + mac[:20] + "\n" + mac[20:], now: before, want: ErrMalformed},
		{name: "carriage return inside mac", token: "v2.1800000000." + mac[:20] + "\r" + mac[20:], now: before, want: ErrMalformed},
		{name: "huge", token: "v2.1800000000." + strings.Repeat("A", 1<<20), now: before, want: ErrMalformed},
		{name: "whitespace around", token: " " + valid + "\n", now: before, want: ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			namespace, session, sessionUID := ns, sid, uid
			if tc.namespace != "" {
				namespace = tc.namespace
			}
			if tc.session != "" {
				session = tc.session
			}
			if tc.sessionUID != "" {
				sessionUID = tc.sessionUID
			}
			if namespace == "-" {
				namespace = ""
			}
			if sessionUID == "-" {
				sessionUID = ""
			}
			err := s.Verify(tc.token, namespace, session, sessionUID, kid, tc.now)
			if diff := cmp.Diff(tc.want, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("Verify error = %v (-want +got):\n%s", err, diff)
			}
			if err != nil && len(tc.token) > 0 && strings.Contains(err.Error(), tc.token) {
				t.Errorf("Verify error %q contains the token", err)
			}
		})
	}
}

// nonCanonicalLast returns a base64url character that has the same top four
// bits as c but a non-zero lowest bit: the last character of a 43-character
// encoding of 32 bytes carries four bits and two zero padding bits.
func nonCanonicalLast(c byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, c)
	return string(alphabet[i|1])
}

func TestVerifyRotation(t *testing.T) {
	old := mustSigner(t, keyA)
	rotated := mustSigner(t, keyB, keyA)
	twice := mustSigner(t, keyC, keyB, keyA)
	fresh := mustSigner(t, keyB)

	oldTok := old.Sign(ns, sid, uid, kid, expiry)
	newTok := rotated.Sign(ns, sid, uid, kid, expiry)

	for _, tc := range []struct {
		name  string
		s     *Signer
		token string
		want  error
	}{
		{name: "rotated signer verifies the old key's token", s: rotated, token: oldTok},
		{name: "rotated signer verifies its own token", s: rotated, token: newTok},
		{name: "twice-rotated signer verifies the oldest key's token", s: twice, token: oldTok},
		{name: "rotated signer signs with the current key", s: fresh, token: newTok},
		{name: "old signer refuses the new key's token", s: old, token: newTok, want: ErrInvalid},
		{name: "signer without the old key refuses its token", s: fresh, token: oldTok, want: ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Verify(tc.token, ns, sid, uid, kid, before)
			if diff := cmp.Diff(tc.want, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("Verify error = %v (-want +got):\n%s", err, diff)
			}
		})
	}
}

// TestSecretsStayOut checks that neither a printed Signer nor an error
// carries key material.
func TestSecretsStayOut(t *testing.T) {
	s := mustSigner(t, keyA, keyB)
	var out []string
	out = append(out, fmt.Sprint(s), fmt.Sprintf("%v %+v %#v", s, s, s), fmt.Sprintf("%v %+v %#v", *s, *s, *s), fmt.Sprintf("%+v", struct{ S *Signer }{s}))
	for _, tok := range []string{"", "v2.x.y", s.Sign(ns, sid, uid, kid, before), s.Sign("a", "b", "c", kid, expiry)} {
		if err := s.Verify(tok, ns, sid, uid, kid, expiry); err != nil {
			out = append(out, err.Error())
		}
	}
	if _, err := NewSigner(keyA, keyB[:20]); err != nil {
		out = append(out, err.Error())
	}
	for _, text := range out {
		for _, k := range [][]byte{keyA, keyB, keyB[:20]} {
			//nolint:staticcheck // fmt.Sprint(k) is the byte list, "[12 34 ...]": one of the forms looked for
			for _, secret := range []string{string(k), base64.StdEncoding.EncodeToString(k), fmt.Sprint(k), fmt.Sprintf("%x", k)} {
				if strings.Contains(text, secret) {
					t.Errorf("output %q contains a key", text)
				}
			}
		}
	}
}

func TestVerifyErrorsAreDistinct(t *testing.T) {
	sentinels := []error{ErrMalformed, ErrExpired, ErrInvalid}
	for i, a := range sentinels {
		for j, b := range sentinels {
			if got := errors.Is(a, b); got != (i == j) {
				t.Errorf("errors.Is(%v, %v) = %v", a, b, got)
			}
		}
	}
}

// FuzzVerify checks that Verify never panics, only ever returns one of its
// sentinels, and accepts a token only if it is exactly the token Sign makes
// for the same session and expiry (so no other spelling of it passes).
func FuzzVerify(f *testing.F) {
	s := mustSigner(f, keyA, keyB)
	valid := s.Sign(ns, sid, uid, kid, expiry)
	for _, seed := range []string{
		valid, "", "v2", "v2..", "v2.1.", "v2." + valid[3:], valid + "=", valid + ".", "v2.-1.AAAA",
		"v2.+5." + strings.Split(valid, ".")[2], strings.Repeat("v2.", 50),
	} {
		f.Add(seed, ns, sid, uid, before.Unix())
	}
	f.Add(valid, "", "", "", int64(0))
	f.Add(valid, ns, sid, uid, int64(-1<<63))
	f.Add(valid, ns, sid, uid, int64(1<<63-1))
	f.Fuzz(func(t *testing.T, token, namespace, session, sessionUID string, now int64) {
		err := s.Verify(token, namespace, session, sessionUID, kid, time.Unix(now, 0))
		n := 0
		for _, sentinel := range []error{ErrMalformed, ErrExpired, ErrInvalid} {
			if errors.Is(err, sentinel) {
				n++
			}
		}
		if err != nil && n != 1 {
			t.Fatalf("Verify error %v wraps %d sentinels, want 1", err, n)
		}
		if err != nil {
			return
		}
		parts := strings.Split(token, ".")
		exp, perr := strconv.ParseInt(parts[1], 10, 64)
		if perr != nil {
			t.Fatalf("Verify accepted %q with unparseable expiry", token)
		}
		if now >= exp {
			t.Fatalf("Verify accepted %q at %d, at or after its expiry", token, now)
		}
		// The fuzzer cannot forge a MAC, so acceptance means it kept a
		// seed's valid token; make sure it was the one canonical spelling.
		signers := []*Signer{mustSigner(t, keyA), mustSigner(t, keyB)}
		ok := false
		for _, k := range signers {
			if k.Sign(namespace, session, sessionUID, kid, time.Unix(exp, 0)) == token {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("Verify accepted %q, which Sign does not make", token)
		}
	})
}
