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

package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// secretRef is one reference of a session to a Secret of its namespace.
type secretRef struct {
	// field locates the reference in the session, for messages.
	field string
	// name is the Secret's name.
	name string
}

// sessionSecretRefs lists every Secret a session references, in a fixed
// order.
func sessionSecretRefs(spec *v1alpha1.BrowserSessionSpec) []secretRef {
	var refs []secretRef
	add := func(field, name string) { refs = append(refs, secretRef{field: field, name: name}) }
	m := &spec.Model
	if r := m.APIKeySecretRef; r != nil {
		add("spec.model.apiKeySecretRef", r.Name)
	}
	if r := m.HeadersSecretRef; r != nil {
		add("spec.model.headersSecretRef", r.Name)
	}
	if m.Auth != nil && m.Auth.CredentialsSecretRef != nil {
		add("spec.model.auth.credentialsSecretRef", m.Auth.CredentialsSecretRef.Name)
	}
	if b := spec.Browser; b != nil {
		if r := b.CDPURLSecretRef; r != nil {
			add("spec.browser.cdpUrlSecretRef", r.Name)
		}
		if lo := b.LaunchOptions; lo != nil {
			if r := lo.CDPHeadersSecretRef; r != nil {
				add("spec.browser.launchOptions.cdpHeadersSecretRef", r.Name)
			}
			if lo.Proxy != nil && lo.Proxy.PasswordSecretRef != nil {
				add("spec.browser.launchOptions.proxy.passwordSecretRef", lo.Proxy.PasswordSecretRef.Name)
			}
		}
	}
	if c := spec.CloudSessionCreateParams; c != nil {
		for i, p := range c.Proxies {
			if p.PasswordSecretRef != nil {
				add(fmt.Sprintf("spec.cloudSessionCreateParams.proxies[%d].passwordSecretRef", i), p.PasswordSecretRef.Name)
			}
		}
	}
	return refs
}

// sessionSecretNames are the distinct Secret names a session references,
// for IndexBrowserSessionSecret.
func sessionSecretNames(spec *v1alpha1.BrowserSessionSpec) []string {
	var names []string
	for _, r := range sessionSecretRefs(spec) {
		if !slices.Contains(names, r.name) {
			names = append(names, r.name)
		}
	}
	return names
}

// secretMetadata is how the manager reads a Secret: its metadata only, from
// the cache that holds the Secrets carrying v1alpha1.LabelSessionSecret
// (CacheOptions). It never reads a Secret's data.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// refusedSecretRefs returns one message per reference of s to a Secret that
// has not opted in to it, naming the field, in spec order. A Secret opts in
// with v1alpha1.LabelSessionSecret set to v1alpha1.SessionSecretAny or to
// the session's name; with the name, it must not be owned by another object
// (an earlier session of that name). A missing Secret and an unlabelled one
// are refused alike, in the same words: the cache sees neither, and a
// session's author learns nothing about Secrets it may not use.
func refusedSecretRefs(ctx context.Context, reader client.Reader, s *v1alpha1.BrowserSession) ([]string, error) {
	var out []string
	usable := map[string]bool{}
	for _, ref := range sessionSecretRefs(&s.Spec) {
		ok, seen := usable[ref.name]
		if !seen {
			m := secretMetadata()
			err := reader.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: ref.name}, m)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return nil, fmt.Errorf("reading the metadata of Secret %s: %w", ref.name, err)
			default:
				ok = secretOptsIn(m, s)
			}
			usable[ref.name] = ok
		}
		if !ok {
			out = append(out, fmt.Sprintf("%s: Secret %q does not exist or is not labelled %s=%s (or =%s)",
				ref.field, ref.name, v1alpha1.LabelSessionSecret, v1alpha1.SessionSecretAny, s.Name))
		}
	}
	return out, nil
}

// secretOptsIn says whether the Secret of metadata m lets session s use it.
func secretOptsIn(m *metav1.PartialObjectMetadata, s *v1alpha1.BrowserSession) bool {
	switch m.Labels[v1alpha1.LabelSessionSecret] {
	case v1alpha1.SessionSecretAny:
		return true
	case s.Name:
		for _, o := range m.OwnerReferences {
			if o.UID != s.UID {
				return false
			}
		}
		return true
	}
	return false
}

// maxRefusals bounds how many refused references a message lists, so that
// it fits in a condition's message.
const maxRefusals = 3

// refusalMessage joins refusals into one message.
func refusalMessage(refusals []string) string {
	if len(refusals) <= maxRefusals {
		return strings.Join(refusals, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(refusals[:maxRefusals], "; "), len(refusals)-maxRefusals)
}
