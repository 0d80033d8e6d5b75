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
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// IndexHash indexes key Secrets by the hash they hold.
const IndexHash = "apikey.sha256"

// ErrInvalidKey is the one error Authenticate returns for any key it refuses:
// missing, malformed, unknown, expired or revoked. Its message says no more,
// so that a caller learns nothing about which keys exist.
var ErrInvalidKey = errors.New("API key missing or invalid")

// Project is who a key authenticates: the project (namespace) it belongs to
// and the key's id, for logs and audit.
type Project struct {
	// Namespace is the project.
	Namespace string
	// KeyID names the key.
	KeyID string
}

// Authenticator checks keys against the key Secrets in a controller-runtime
// cache. Its reads are the cache's: lock-free for callers, never a request to
// the API server, and current as soon as the informer sees a change, so a
// deleted (revoked) key stops working then.
type Authenticator struct {
	reader client.Reader
	clock  clock.PassiveClock
	log    logr.Logger
}

// NewAuthenticator registers the hash index with indexer (a manager's field
// indexer: call it before the manager starts) and returns an Authenticator
// that reads through reader (that manager's client or cache). The cache needs
// to hold the key Secrets of every namespace; cache.ByObject{Label:
// Selector()} for Secrets limits it to them.
func NewAuthenticator(ctx context.Context, indexer client.FieldIndexer, reader client.Reader) (*Authenticator, error) {
	if err := indexer.IndexField(ctx, &corev1.Secret{}, IndexHash, indexHash); err != nil {
		return nil, fmt.Errorf("indexing %s: %w", IndexHash, err)
	}
	return &Authenticator{reader: reader, clock: clock.RealClock{}, log: logf.FromContext(ctx).WithName("apikey")}, nil
}

// indexHash is the index function: a key Secret's hash, or nothing for any
// other Secret, so that only labelled, well-named Secrets can authenticate.
// It runs inside the informer's store update, so the index always agrees with
// the cached object: there is no separate map that could lag behind or race
// a deletion.
func indexHash(o client.Object) []string {
	s, ok := o.(*corev1.Secret)
	if !ok {
		return nil
	}
	if _, ok := idOf(s); !ok {
		return nil
	}
	h := string(s.Data[DataHash])
	if len(h) != 64 {
		return nil
	}
	return []string{h}
}

// Authenticate returns the project of key. Any key it refuses gives
// ErrInvalidKey; other errors (the cache not started or synced, ctx done) are
// the server's fault, not the caller's, and never contain the key.
func (a *Authenticator) Authenticate(ctx context.Context, key string) (Project, error) {
	if key == "" || ParseKey(key) != nil {
		return Project{}, ErrInvalidKey
	}
	sum := Hash(key)
	// The index lookup is by hash, so its timing can tell an attacker at
	// most something about a SHA-256 of a key they do not know; the constant
	// time compare below is defence in depth against a loose index match.
	var secrets corev1.SecretList
	if err := a.reader.List(ctx, &secrets, client.MatchingFields{IndexHash: sum}); err != nil {
		return Project{}, fmt.Errorf("looking up API key: %w", err)
	}
	var found *corev1.Secret
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if subtle.ConstantTimeCompare(s.Data[DataHash], []byte(sum)) != 1 {
			continue
		}
		if found != nil {
			// Two Secrets with one hash: a key copied by hand into a second
			// namespace. Which project it names is unknowable, so refuse.
			a.log.Info("refusing api key held by more than one secret",
				"namespace", s.Namespace, "secret", s.Name, "otherNamespace", found.Namespace, "otherSecret", found.Name)
			return Project{}, ErrInvalidKey
		}
		found = s
	}
	if found == nil {
		return Project{}, ErrInvalidKey
	}
	if !a.usable(found) {
		return Project{}, ErrInvalidKey
	}
	id, _ := idOf(found)
	return Project{Namespace: found.Namespace, KeyID: id}, nil
}

// Valid reports whether the key of p still works: it exists, is not being
// deleted (revoked) and has not expired. Like Authenticate it reads only the
// cache. Errors are the server's, not the key's.
func (a *Authenticator) Valid(ctx context.Context, p Project) (bool, error) {
	if p.Namespace == "" || !validID(p.KeyID) {
		return false, nil
	}
	s := &corev1.Secret{}
	if err := a.reader.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: SecretName(p.KeyID)}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("looking up API key %s: %w", p.KeyID, err)
	}
	if id, ok := idOf(s); !ok || id != p.KeyID || indexHash(s) == nil {
		return false, nil
	}
	return a.usable(s), nil
}

// usable reports whether a key's Secret lets its key work now.
func (a *Authenticator) usable(s *corev1.Secret) bool {
	// A Secret being deleted is a key being revoked.
	if s.DeletionTimestamp != nil {
		return false
	}
	if v, ok := s.Annotations[AnnotationExpiresAt]; ok {
		expires, err := time.Parse(time.RFC3339, v)
		if err != nil {
			// Fail closed: a key whose expiry cannot be read is expired.
			a.log.Info("refusing api key with malformed expiry", "namespace", s.Namespace, "secret", s.Name)
			return false
		}
		if !a.clock.Now().Before(expires) {
			return false
		}
	}
	return true
}
