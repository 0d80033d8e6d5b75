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
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// secretRef is one reference of a session or task to a Secret of its
// namespace.
type secretRef struct {
	// field locates the reference in the object, for messages.
	field string
	// name is the Secret's name.
	name string
	// key is the referenced key; empty for a whole Secret.
	key string
	// file is the runner's file for the key (runner/rpc); empty for a
	// whole Secret, which gets a volume of its own, and for references no
	// runner reads.
	file string
}

// sessionSecretRefs lists every Secret a session references, in spec
// order.
func sessionSecretRefs(spec *v1alpha1.BrowserSessionSpec) []secretRef {
	var refs []secretRef
	key := func(field, file string, r *v1alpha1.SecretKeyReference) {
		if r != nil {
			refs = append(refs, secretRef{field: field, name: r.Name, key: r.Key, file: file})
		}
	}
	whole := func(field string, r *v1alpha1.SecretReference) {
		if r != nil {
			refs = append(refs, secretRef{field: field, name: r.Name})
		}
	}
	m := &spec.Model
	key("spec.model.apiKeySecretRef", rpc.FileModelAPIKey, m.APIKeySecretRef)
	whole("spec.model.headersSecretRef", m.HeadersSecretRef)
	if m.Auth != nil {
		key("spec.model.auth.credentialsSecretRef", rpc.FileModelCredentials, m.Auth.CredentialsSecretRef)
	}
	if b := spec.Browser; b != nil {
		key("spec.browser.cdpUrlSecretRef", rpc.FileCDPURL, b.CDPURLSecretRef)
		if lo := b.LaunchOptions; lo != nil {
			key("spec.browser.launchOptions.cdpHeadersSecretRef", rpc.FileCDPHeaders, lo.CDPHeadersSecretRef)
			if lo.Proxy != nil {
				key("spec.browser.launchOptions.proxy.passwordSecretRef", rpc.FileLaunchProxyPassword, lo.Proxy.PasswordSecretRef)
			}
		}
	}
	if c := spec.CloudSessionCreateParams; c != nil {
		for i, p := range c.Proxies {
			key(fmt.Sprintf("spec.cloudSessionCreateParams.proxies[%d].passwordSecretRef", i),
				fmt.Sprintf(rpc.FileCloudProxyPasswordFormat, i), p.PasswordSecretRef)
		}
	}
	return refs
}

// taskSecretRefs lists every Secret an AgentTask references, in spec
// order. They opt in as a session's do; the dispatcher reads their values
// (agentrequest.go) and sends them to the runner with the task.
func taskSecretRefs(spec *v1alpha1.AgentTaskSpec) []secretRef {
	var refs []secretRef
	model := func(field string, m *v1alpha1.ModelSpec) {
		if m == nil {
			return
		}
		if r := m.APIKeySecretRef; r != nil {
			refs = append(refs, secretRef{field: field + ".apiKeySecretRef", name: r.Name, key: r.Key})
		}
		if r := m.HeadersSecretRef; r != nil {
			refs = append(refs, secretRef{field: field + ".headersSecretRef", name: r.Name})
		}
		if a := m.Auth; a != nil && a.CredentialsSecretRef != nil {
			refs = append(refs, secretRef{field: field + ".auth.credentialsSecretRef", name: a.CredentialsSecretRef.Name, key: a.CredentialsSecretRef.Key})
		}
	}
	model("spec.agentConfig.model", spec.AgentConfig.Model)
	model("spec.agentConfig.executionModel", spec.AgentConfig.ExecutionModel)
	if r := spec.ExecuteOptions.VariablesSecretRef; r != nil {
		refs = append(refs, secretRef{field: "spec.executeOptions.variablesSecretRef", name: r.Name})
	}
	return refs
}

// secretNames are the distinct Secret names of refs, for the field indexes
// that bring a Secret's changes to the objects that reference it.
func secretNames(refs []secretRef) []string {
	var names []string
	for _, r := range refs {
		if !slices.Contains(names, r.name) {
			names = append(names, r.name)
		}
	}
	return names
}

// secretMetadata is how the controllers read a Secret: its metadata only,
// from the cache that holds the Secrets carrying
// v1alpha1.LabelSessionSecret (CacheOptions). The only Secret data the
// manager reads is the dispatcher's, past the cache, when it sends a task
// to its runner: the task's own Secrets and the session's runner token.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// refusedSecretRefs returns one message per reference of obj (a session or
// a task, whose references are refs) to a Secret that has not opted in to
// it, naming the field, in refs' order. A Secret opts in with
// v1alpha1.LabelSessionSecret set to v1alpha1.SessionSecretAny or to the
// object's name; with the name, it must not be owned by another object (an
// earlier session or task of that name). A missing Secret and an unlabelled
// one are refused alike, in the same words: the cache sees neither, and an
// author learns nothing about Secrets they may not use.
func refusedSecretRefs(ctx context.Context, reader client.Reader, obj client.Object, refs []secretRef) ([]string, error) {
	var out []string
	usable := map[string]bool{}
	for _, ref := range refs {
		ok, seen := usable[ref.name]
		if !seen {
			m := secretMetadata()
			err := reader.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.name}, m)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return nil, fmt.Errorf("reading the metadata of Secret %s: %w", ref.name, err)
			default:
				ok = secretOptsIn(m, obj)
			}
			usable[ref.name] = ok
		}
		if !ok {
			out = append(out, fmt.Sprintf("%s: Secret %q does not exist or is not labelled %s=%s (or =%s)",
				ref.field, ref.name, v1alpha1.LabelSessionSecret, v1alpha1.SessionSecretAny, obj.GetName()))
		}
	}
	return out, nil
}

// secretOptsIn says whether the Secret of metadata m lets obj use it.
func secretOptsIn(m *metav1.PartialObjectMetadata, obj client.Object) bool {
	switch m.Labels[v1alpha1.LabelSessionSecret] {
	case v1alpha1.SessionSecretAny:
		return true
	case obj.GetName():
		for _, o := range m.OwnerReferences {
			if o.UID != obj.GetUID() {
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
