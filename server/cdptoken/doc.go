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

// Package cdptoken signs and verifies the short-lived tokens that authorize
// one thing: opening the Chrome DevTools Protocol WebSocket of one session
// through the API pod. The API hands out
//
//	ws(s)://<public host>/v1/sessions/<id>/devtools/browser/<token>?project=<namespace>&key=<key id>
//
// as a session's cdpUrl; the CDP handler verifies the token against the
// session named by the path before it proxies anything. This package only
// makes and checks tokens; it builds no URLs.
//
// # Token format
//
//	v2.<expiry>.<mac>
//
// where expiry is the Unix second at which the token stops working, in
// decimal, and mac is the unpadded URL-safe base64 (RFC 4648 §5) of
// HMAC-SHA256(key, message). Every character is URL-safe, so the token goes
// into a query parameter as is. The message is a domain-separation label
// followed by the version, the namespace, the session name, the session UID,
// the id of the API key that asked for the URL (each length-prefixed) and the
// expiry (8 bytes, big-endian): no two different tuples encode to the same
// bytes, whatever characters the fields hold. The namespace, name, UID and
// key id are not in the token; the verifier takes them from the request's
// path and query and the session object. (v1 tokens carried no key id; they
// no longer verify.)
//
// # Decisions
//
//   - HMAC rather than signatures or JWTs: the API pods that mint tokens are
//     the only ones that check them, so a shared secret is enough; HMAC-SHA256
//     is in the standard library, fast and small, and there is no algorithm
//     field to negotiate (or to downgrade to "none").
//   - Stateless: nothing is stored, so any API replica verifies any other
//     replica's token. A token is revoked with the key that asked for it:
//     the key id is bound into the MAC, and the CDP handler refuses a token
//     whose key is revoked or expired (and closes the connections it opened).
//   - UID binding: a session's name is its id and can be reused once the
//     session is deleted; binding the UID means a token of a deleted session
//     does not open the browser of a new session that took its name.
//   - Verification order: shape, then MAC, then expiry. ErrExpired therefore
//     means a token this service really issued that ran out, and anything
//     forged or meant for another session is ErrInvalid, whatever its expiry.
//   - Expiry has a resolution of one second and is rounded down when signing,
//     so a token never outlives the time it was asked for; it is expired from
//     that second on.
//   - Canonical: one (session, expiry) has exactly one valid token; the
//     expiry and the MAC must read back exactly as they were parsed, which
//     refuses re-spellings of a valid token ("+5", "05", line breaks inside
//     the base64, non-zero padding bits).
//   - Rotation: NewSigner(current, previous...) signs with current and
//     verifies with any of them. Roll out a new key as current with the old
//     one as previous, and drop the old one once the tokens it signed have
//     expired.
//   - Secrets: errors never carry a key or a token (tokens are bearer
//     credentials), and a printed Signer shows no
//     key material.
package cdptoken
