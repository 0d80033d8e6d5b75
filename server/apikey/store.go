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
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// How a key's Secret looks. docs/api-keys.md documents these for operators
// who make keys by hand; they are an interface, not an implementation detail.
const (
	// SecretNamePrefix starts the name of every key's Secret; the rest is
	// the key's id.
	SecretNamePrefix = "bf-apikey-"
	// LabelAPIKey marks a Secret as an API key; its value is LabelAPIKeyValue.
	LabelAPIKey = "browserfleet.io/api-key"
	// LabelAPIKeyValue is LabelAPIKey's value.
	LabelAPIKeyValue = "true"
	// SecretType is the type of a key's Secret.
	SecretType corev1.SecretType = "browserfleet.io/api-key"
	// DataHash is the Secret's data field that holds Hash(key).
	DataHash = "sha256"
	// AnnotationDescription is what the key is for, free text.
	AnnotationDescription = "browserfleet.io/description"
	// AnnotationCreatedAt is when the key was made, RFC 3339.
	AnnotationCreatedAt = "browserfleet.io/created-at"
	// AnnotationExpiresAt is when the key stops working, RFC 3339. Without
	// it the key works until it is revoked.
	AnnotationExpiresAt = "browserfleet.io/expires-at"
	// LabelProject, "true", marks the RoleBinding that gives the API its
	// rights in a project namespace (the chart puts it there for each of
	// projects.namespaces): where it is absent, the API does not serve and
	// a key would not work.
	LabelProject = "browserfleet.io/project"
)

// ErrNotAProject is returned by CheckProject for a namespace the API does
// not serve.
var ErrNotAProject = errors.New("not a project namespace")

// CheckProject returns ErrNotAProject (wrapped) unless namespace holds a
// RoleBinding labelled LabelProject=true: a key made elsewhere would not
// work, since the API reads keys only in its project namespaces.
func CheckProject(ctx context.Context, c client.Reader, namespace string) error {
	var bindings rbacv1.RoleBindingList
	if err := c.List(ctx, &bindings, client.InNamespace(namespace), client.MatchingLabels{LabelProject: "true"}); err != nil {
		return fmt.Errorf("checking that namespace %s is a project: %w", namespace, err)
	}
	if len(bindings.Items) == 0 {
		return fmt.Errorf("namespace %s: %w: it holds no RoleBinding labelled %s=true, which the chart makes in each of its projects.namespaces; add the namespace there first", namespace, ErrNotAProject, LabelProject)
	}
	return nil
}

// ErrNotFound is returned by Revoke for an id with no key.
var ErrNotFound = errors.New("no API key with that id")

// Info is what may be shown of a key: never its value or its hash.
type Info struct {
	// ID names the key.
	ID string
	// Namespace is the key's project.
	Namespace string
	// Description is what the key is for.
	Description string
	// CreatedAt is when the key was made.
	CreatedAt time.Time
	// ExpiresAt is when the key stops working; nil if it does not expire.
	ExpiresAt *time.Time
}

// Selector selects the Secrets that are API keys. A cache that holds only
// these (cache.ByObject{Label: Selector()}) is all an Authenticator needs.
func Selector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelAPIKey: LabelAPIKeyValue})
}

// SecretName is the name of the Secret of the key with this id.
func SecretName(id string) string {
	return SecretNamePrefix + id
}

// Create makes a key for the project namespace and returns it and its id.
// The key is returned only here: what is stored is its hash. expires, if not
// nil, is when the key stops working.
func Create(ctx context.Context, c client.Client, namespace, description string, expires *time.Time) (key, id string, err error) {
	if namespace == "" {
		return "", "", errors.New("creating API key: namespace is empty")
	}
	now := time.Now().UTC()
	if expires != nil && !expires.After(now) {
		return "", "", fmt.Errorf("creating API key: expiry %s is not in the future", expires.UTC().Format(time.RFC3339))
	}
	key, err = newKey()
	if err != nil {
		return "", "", fmt.Errorf("creating API key: %w", err)
	}
	id, err = newID()
	if err != nil {
		return "", "", fmt.Errorf("creating API key: %w", err)
	}
	annotations := map[string]string{AnnotationCreatedAt: now.Format(time.RFC3339)}
	if description != "" {
		annotations[AnnotationDescription] = description
	}
	if expires != nil {
		annotations[AnnotationExpiresAt] = expires.UTC().Format(time.RFC3339)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        SecretName(id),
			Namespace:   namespace,
			Labels:      map[string]string{LabelAPIKey: LabelAPIKeyValue, v1alpha1.LabelManagedBy: v1alpha1.ManagedBy},
			Annotations: annotations,
		},
		Type: SecretType,
		// Immutable: a key's hash never changes; a new key is a new Secret.
		Immutable: new(true),
		Data:      map[string][]byte{DataHash: []byte(Hash(key))},
	}
	if err := c.Create(ctx, secret); err != nil {
		// The error names the Secret (by id), never the key.
		return "", "", fmt.Errorf("creating API key %s in namespace %s: %w", id, namespace, err)
	}
	return key, id, nil
}

// Revoke deletes the key with this id from the project namespace. It returns
// ErrNotFound (wrapped) if there is no such key. Authenticators refuse the
// key as soon as their cache sees the deletion.
func Revoke(ctx context.Context, c client.Client, namespace, id string) error {
	if !validID(id) {
		return fmt.Errorf("revoking API key %q in namespace %s: %w", id, namespace, ErrNotFound)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: SecretName(id)}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("revoking API key %s in namespace %s: %w", id, namespace, ErrNotFound)
		}
		return fmt.Errorf("revoking API key %s in namespace %s: %w", id, namespace, err)
	}
	// Only delete what is a key: a Secret of that name without the label
	// is someone else's.
	if secret.Labels[LabelAPIKey] != LabelAPIKeyValue {
		return fmt.Errorf("revoking API key %s in namespace %s: %w", id, namespace, ErrNotFound)
	}
	// The precondition makes sure that what is deleted is the Secret just
	// checked, not one made again under the same name in between.
	err := c.Delete(ctx, secret, client.Preconditions{UID: &secret.UID})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("revoking API key %s in namespace %s: %w", id, namespace, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("revoking API key %s in namespace %s: %w", id, namespace, err)
	}
	return nil
}

// List returns the keys of the project namespace, oldest first. It never
// returns values or hashes.
func List(ctx context.Context, c client.Reader, namespace string) ([]Info, error) {
	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: Selector()}); err != nil {
		return nil, fmt.Errorf("listing API keys in namespace %s: %w", namespace, err)
	}
	infos := make([]Info, 0, len(secrets.Items))
	for i := range secrets.Items {
		s := &secrets.Items[i]
		id, ok := idOf(s)
		if !ok {
			continue
		}
		info := Info{
			ID:          id,
			Namespace:   s.Namespace,
			Description: s.Annotations[AnnotationDescription],
			CreatedAt:   s.CreationTimestamp.UTC(),
		}
		if t, err := time.Parse(time.RFC3339, s.Annotations[AnnotationCreatedAt]); err == nil {
			info.CreatedAt = t.UTC()
		}
		if v, ok := s.Annotations[AnnotationExpiresAt]; ok {
			// A malformed expiry shows as already expired, as Authenticate
			// treats it.
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				t = time.Time{}
			}
			t = t.UTC()
			info.ExpiresAt = &t
		}
		infos = append(infos, info)
	}
	sort.SliceStable(infos, func(i, j int) bool {
		if !infos[i].CreatedAt.Equal(infos[j].CreatedAt) {
			return infos[i].CreatedAt.Before(infos[j].CreatedAt)
		}
		return infos[i].ID < infos[j].ID
	})
	return infos, nil
}

// idOf returns the id of a key's Secret, and whether the Secret is a key at
// all: labelled as one and named bf-apikey-<id>.
func idOf(s *corev1.Secret) (string, bool) {
	if s.Labels[LabelAPIKey] != LabelAPIKeyValue {
		return "", false
	}
	id, ok := strings.CutPrefix(s.Name, SecretNamePrefix)
	if !ok || id == "" {
		return "", false
	}
	return id, true
}
