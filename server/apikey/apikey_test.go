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

package apikey_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/server/apikey"
)

// authenticated waits until the cache has seen key and returns its project.
func authenticated(ctx context.Context, key string) apikey.Project {
	GinkgoHelper()
	var p apikey.Project
	Eventually(func() error {
		var err error
		p, err = auth.Authenticate(ctx, key)
		return err
	}).Should(Succeed())
	return p
}

// refused asserts that key is refused with ErrInvalidKey and its message,
// and that the error does not contain the key.
func refused(ctx context.Context, key string) {
	GinkgoHelper()
	_, err := auth.Authenticate(ctx, key)
	Expect(err).To(MatchError(apikey.ErrInvalidKey))
	Expect(err.Error()).To(Equal("API key missing or invalid"))
	if key != "" {
		Expect(err.Error()).NotTo(ContainSubstring(key))
	}
}

var _ = Describe("API keys", func() {
	var (
		ctx context.Context
		ns  string
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("authenticates a new key as its project", func() {
		key, id, err := apikey.Create(ctx, k8sClient, ns, "ci", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(apikey.ParseKey(key)).To(Succeed())
		Expect(authenticated(ctx, key)).To(Equal(apikey.Project{Namespace: ns, KeyID: id}))
	})

	It("maps each project's keys to their own namespace", func() {
		other := newNamespace(ctx)
		keyA, idA, err := apikey.Create(ctx, k8sClient, ns, "a", nil)
		Expect(err).NotTo(HaveOccurred())
		keyB, idB, err := apikey.Create(ctx, k8sClient, other, "b", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(authenticated(ctx, keyA)).To(Equal(apikey.Project{Namespace: ns, KeyID: idA}))
		Expect(authenticated(ctx, keyB)).To(Equal(apikey.Project{Namespace: other, KeyID: idB}))
	})

	It("refuses wrong, empty, unknown and expired keys alike", func() {
		key, _, err := apikey.Create(ctx, k8sClient, ns, "", nil)
		Expect(err).NotTo(HaveOccurred())
		authenticated(ctx, key)

		// An expired key, made by hand as docs/api-keys.md describes, since
		// Create refuses an expiry in the past.
		expired := "bfk_" + base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("e", 32)))
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: apikey.SecretName("expired"), Namespace: ns,
				Labels:      map[string]string{apikey.LabelAPIKey: "true"},
				Annotations: map[string]string{apikey.AnnotationExpiresAt: time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)},
			},
			Data: map[string][]byte{apikey.DataHash: []byte(apikey.Hash(expired))},
		})).To(Succeed())
		// A twin that does not expire shows the cache has the Secrets.
		live := "bfk_" + base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("l", 32)))
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: apikey.SecretName("live"), Namespace: ns,
				Labels: map[string]string{apikey.LabelAPIKey: "true"},
			},
			Data: map[string][]byte{apikey.DataHash: []byte(apikey.Hash(live))},
		})).To(Succeed())
		Expect(authenticated(ctx, live)).To(Equal(apikey.Project{Namespace: ns, KeyID: "live"}))

		wrong := key[:len(key)-2] + "AA"
		if wrong == key {
			wrong = key[:len(key)-2] + "BA"
		}
		unknown := "bfk_" + base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("u", 32)))
		for _, k := range []string{wrong, "", unknown, expired, "Bearer " + key, key[4:], key + "\n"} {
			refused(ctx, k)
		}
	})

	It("stops authenticating a revoked key", func() {
		key, id, err := apikey.Create(ctx, k8sClient, ns, "", nil)
		Expect(err).NotTo(HaveOccurred())
		authenticated(ctx, key)
		Expect(apikey.Revoke(ctx, k8sClient, ns, id)).To(Succeed())
		Eventually(func() error {
			_, err := auth.Authenticate(ctx, key)
			return err
		}).Should(MatchError(apikey.ErrInvalidKey))
		Expect(apikey.Revoke(ctx, k8sClient, ns, id)).To(MatchError(apikey.ErrNotFound))
	})

	It("refuses a key whose Secret is not labelled as a key", func() {
		key := "bfk_" + base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("n", 32)))
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: apikey.SecretName("nolabel"), Namespace: ns},
			Data:       map[string][]byte{apikey.DataHash: []byte(apikey.Hash(key))},
		})).To(Succeed())
		Consistently(func() error {
			_, err := auth.Authenticate(ctx, key)
			return err
		}).Should(MatchError(apikey.ErrInvalidKey))
		Expect(apikey.Revoke(ctx, k8sClient, ns, "nolabel")).To(MatchError(apikey.ErrNotFound))
	})

	It("stores only the key's hash", func() {
		expires := time.Now().Add(time.Hour)
		key, id, err := apikey.Create(ctx, k8sClient, ns, "nightly", &expires)
		Expect(err).NotTo(HaveOccurred())
		var secret corev1.Secret
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bf-apikey-" + id}, &secret)).To(Succeed())
		Expect(secret.Labels).To(HaveKeyWithValue("browserfleet.io/api-key", "true"))
		Expect(secret.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "browserfleet"))
		Expect(secret.Data).To(Equal(map[string][]byte{"sha256": []byte(apikey.Hash(key))}))

		// The key's value, its random part, and those bytes decoded, appear
		// nowhere in the Secret as the API server returns it.
		raw, err := json.Marshal(&secret)
		Expect(err).NotTo(HaveOccurred())
		random := key[len(apikey.KeyPrefix):]
		decoded, err := base64.RawURLEncoding.DecodeString(random)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).NotTo(ContainSubstring(key))
		Expect(string(raw)).NotTo(ContainSubstring(random))
		Expect(string(raw)).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString(decoded)))
		Expect(raw).NotTo(ContainSubstring(string(decoded)))
		for _, v := range secret.Data {
			Expect(string(v)).NotTo(ContainSubstring(random))
			Expect(v).NotTo(ContainSubstring(string(decoded)))
		}
	})

	It("lists ids and descriptions, never values", func() {
		expires := time.Now().Add(time.Hour).Truncate(time.Second)
		keyA, idA, err := apikey.Create(ctx, k8sClient, ns, "first", nil)
		Expect(err).NotTo(HaveOccurred())
		keyB, idB, err := apikey.Create(ctx, k8sClient, ns, "second", &expires)
		Expect(err).NotTo(HaveOccurred())
		// Another project's keys and unlabelled Secrets are not listed.
		_, _, err = apikey.Create(ctx, k8sClient, newNamespace(ctx), "elsewhere", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: ns},
			StringData: map[string]string{"x": "y"},
		})).To(Succeed())

		infos, err := apikey.List(ctx, k8sClient, ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(infos).To(ConsistOf(
			And(HaveField("ID", idA), HaveField("Namespace", ns), HaveField("Description", "first"), HaveField("ExpiresAt", BeNil())),
			And(HaveField("ID", idB), HaveField("Namespace", ns), HaveField("Description", "second"), HaveField("ExpiresAt", HaveValue(BeTemporally("==", expires)))),
		))
		for _, info := range infos {
			Expect(info.CreatedAt).To(BeTemporally("~", time.Now(), time.Minute))
		}
		dump, err := json.Marshal(infos)
		Expect(err).NotTo(HaveOccurred())
		for _, k := range []string{keyA, keyB} {
			Expect(string(dump)).NotTo(ContainSubstring(k[len(apikey.KeyPrefix):]))
			Expect(string(dump)).NotTo(ContainSubstring(apikey.Hash(k)))
		}
	})

	It("authenticates a key made with the kubectl steps of docs/api-keys.md", func() {
		// The doc's commands, with kubectl the framework's as an admin.
		path, err := fw.AdminKubeconfig()
		Expect(err).NotTo(HaveOccurred())
		script := `set -euo pipefail
ID=$(openssl rand -hex 8)
KEY="bfk_$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
HASH=$(printf %s "$KEY" | sha256sum | cut -d' ' -f1)
kubectl create -f - <<YAML >&2
apiVersion: v1
kind: Secret
metadata:
  name: bf-apikey-$ID
  namespace: $NS
  labels:
    browserfleet.io/api-key: "true"
    app.kubernetes.io/managed-by: browserfleet
  annotations:
    browserfleet.io/description: "nightly crawler"
    browserfleet.io/created-at: "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
type: browserfleet.io/api-key
immutable: true
stringData:
  sha256: "$HASH"
YAML
printf '%s %s\n' "$ID" "$KEY"
`
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(os.Environ(), "NS="+ns, "KUBECONFIG="+path,
			"PATH="+framework.AssetsDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
		cmd.Stderr = GinkgoWriter
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred())
		id, key, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
		Expect(ok).To(BeTrue())
		Expect(apikey.ParseKey(key)).To(Succeed())
		Expect(authenticated(ctx, key)).To(Equal(apikey.Project{Namespace: ns, KeyID: id}))
		Expect(apikey.List(ctx, k8sClient, ns)).To(ConsistOf(
			And(HaveField("ID", id), HaveField("Description", "nightly crawler"), HaveField("ExpiresAt", BeNil()))))
		Expect(apikey.Revoke(ctx, k8sClient, ns, id)).To(Succeed())
	})

	It("refuses an expiry in the past", func() {
		past := time.Now().Add(-time.Second)
		_, _, err := apikey.Create(ctx, k8sClient, ns, "", &past)
		Expect(err).To(HaveOccurred())
		Expect(apikey.List(ctx, k8sClient, ns)).To(BeEmpty())
	})
})
