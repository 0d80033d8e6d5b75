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

package chart_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/browserfleet/browserfleet/server/apikey"
)

// secretOf returns the rendered Secret of that name, typed.
func secretOf(objs []*unstructured.Unstructured, name string) *corev1.Secret {
	GinkgoHelper()
	u := Find(objs, "Secret", name)
	Expect(u).NotTo(BeNil(), "no Secret %s in %v", name, Kinds(objs))
	return toTyped[corev1.Secret](u)
}

// create makes the rendered objects for real.
func create(ctx context.Context, objs ...*unstructured.Unstructured) {
	GinkgoHelper()
	for _, o := range objs {
		Expect(k8sClient.Create(ctx, o.DeepCopy())).To(Succeed(), "%s %s", o.GetKind(), o.GetName())
	}
}

var _ = Describe("the bootstrap API key", func() {
	const (
		hashSecret  = "bf-apikey-bf-browserfleet-bootstrap"
		valueSecret = "bf-browserfleet-bootstrap-api-key"
	)

	It("is generated in server/apikey's format and authenticates", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		r, err := Render("bf", ns, nil)
		Expect(err).NotTo(HaveOccurred())
		key := string(secretOf(r.Objects, valueSecret).Data["key"])
		Expect(apikey.ParseKey(key)).To(Succeed(), "the generated key is not shaped like a key")
		stored := secretOf(r.Objects, hashSecret)
		Expect(stored.Type).To(Equal(apikey.SecretType))
		Expect(stored.Labels).To(HaveKeyWithValue(apikey.LabelAPIKey, apikey.LabelAPIKeyValue))
		Expect(stored.Name).To(Equal(apikey.SecretName("bf-browserfleet-bootstrap")))
		Expect(stored.Data).To(Equal(map[string][]byte{apikey.DataHash: []byte(apikey.Hash(key))}))

		// Two renders make two keys.
		again, err := Render("bf", ns, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(secretOf(again.Objects, valueSecret).Data["key"])).NotTo(Equal(key))

		_, err = auth.Authenticate(ctx, key)
		Expect(err).To(MatchError(apikey.ErrInvalidKey))
		create(ctx, Find(r.Objects, "Secret", hashSecret))
		Eventually(func() (apikey.Project, error) { return auth.Authenticate(ctx, key) }).
			Should(Equal(apikey.Project{Namespace: ns, KeyID: "bf-browserfleet-bootstrap"}))
		// bfkeys lists it with its description.
		infos, err := apikey.List(ctx, k8sClient, ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(infos).To(HaveLen(1))
		Expect(infos[0].ID).To(Equal("bf-browserfleet-bootstrap"))
		Expect(infos[0].Description).To(Equal("bootstrap key of the Helm chart"))
	})

	It("is stored as the hash of a key given in the values, which is not kept", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		const key = "bfk_5WQ1wQV7-STiSdgQmpVFki15wcL_-8ohZkYXQYMWERY"
		Expect(apikey.ParseKey(key)).To(Succeed())
		r, err := Render("bf", ns, map[string]any{"apiKeys": map[string]any{"bootstrap": map[string]any{
			"key": key, "namespace": ns, "expiresAt": "2099-01-01T00:00:00Z",
		}}})
		Expect(err).NotTo(HaveOccurred())
		Expect(Find(r.Objects, "Secret", valueSecret)).To(BeNil())
		Expect(r.Manifest).NotTo(ContainSubstring(key))
		stored := secretOf(r.Objects, hashSecret)
		Expect(string(stored.Data[apikey.DataHash])).To(Equal(apikey.Hash(key)))
		Expect(stored.Annotations).To(HaveKeyWithValue(apikey.AnnotationExpiresAt, "2099-01-01T00:00:00Z"))
		create(ctx, Find(r.Objects, "Secret", hashSecret))
		Eventually(func() (apikey.Project, error) { return auth.Authenticate(ctx, key) }).
			Should(Equal(apikey.Project{Namespace: ns, KeyID: "bf-browserfleet-bootstrap"}))
	})

	It("is stored as a given hash, the key never reaching the cluster", func(ctx SpecContext) {
		const key = "bfk_3x7Qh0Ygq2Jt3kq8b5aJ1v0bYvZc6mHq0n5b5n4ZkUs"
		Expect(apikey.ParseKey(key)).To(Succeed())
		r, err := Render("bf", "bf-system", map[string]any{"apiKeys": map[string]any{"bootstrap": map[string]any{
			"sha256": apikey.Hash(key),
		}}})
		Expect(err).NotTo(HaveOccurred())
		Expect(Find(r.Objects, "Secret", valueSecret)).To(BeNil())
		Expect(string(secretOf(r.Objects, hashSecret).Data[apikey.DataHash])).To(Equal(apikey.Hash(key)))
	})
})

var _ = Describe("helm upgrade", func() {
	It("keeps the generated keys", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		installed, err := Render("bf", ns, nil)
		Expect(err).NotTo(HaveOccurred())
		var secrets []*unstructured.Unstructured
		for _, o := range installed.Objects {
			if o.GetKind() == "Secret" {
				secrets = append(secrets, o)
			}
		}
		Expect(secrets).To(HaveLen(3))
		create(ctx, secrets...)

		upgraded, err := RenderUpgrade(restConfig, "bf", ns, nil)
		Expect(err).NotTo(HaveOccurred())
		for _, name := range []string{"bf-browserfleet-cdp-signing-key", "bf-apikey-bf-browserfleet-bootstrap", "bf-browserfleet-bootstrap-api-key"} {
			Expect(secretOf(upgraded, name).Data).To(Equal(secretOf(installed.Objects, name).Data), name)
		}

		// Once the key has been read and its Secret deleted, the hash stays.
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: objectMeta(ns, "bf-browserfleet-bootstrap-api-key")})).To(Succeed())
		upgraded, err = RenderUpgrade(restConfig, "bf", ns, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(Find(upgraded, "Secret", "bf-browserfleet-bootstrap-api-key")).To(BeNil())
		Expect(secretOf(upgraded, "bf-apikey-bf-browserfleet-bootstrap").Data).
			To(Equal(secretOf(installed.Objects, "bf-apikey-bf-browserfleet-bootstrap").Data))
	})
})

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}
