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

// Package apitest calls the /v1 API from Ginkgo suites: one request, its
// reply decoded, and a project (a namespace with an API key) to call with.
package apitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/server/apikey"
)

// Response is a finished call.
type Response struct {
	Status      int
	ContentType string
	Header      http.Header
	Raw         []byte
}

// JSON decodes the reply into a map.
func (r Response) JSON() map[string]any {
	GinkgoHelper()
	var m map[string]any
	Expect(json.Unmarshal(r.Raw, &m)).To(Succeed(), "reply %s", r.Raw)
	return m
}

// Data is the reply's data object.
func (r Response) Data() map[string]any {
	GinkgoHelper()
	d, ok := r.JSON()["data"].(map[string]any)
	Expect(ok).To(BeTrue(), "reply has no data object: %s", r.Raw)
	return d
}

// Do makes one call to the API at baseURL, with the API key when key is not
// empty, and reads the whole reply.
func Do(ctx context.Context, c *http.Client, baseURL, method, path, key, body string, headers map[string]string) Response {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, method, baseURL+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	if key != "" {
		req.Header.Set("x-svc-api-key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return Response{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Header: resp.Header, Raw: raw}
}

// Project is a namespace with an API key.
type Project struct {
	Namespace, Key, KeyID string
}

// NewProject makes a project and waits until the API at baseURL accepts its
// key (its cache has seen the key's Secret).
func NewProject(ctx context.Context, k8s client.Client, c *http.Client, baseURL string) Project {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bf-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	key, id, err := apikey.Create(ctx, k8s, ns.Name, "test project", nil)
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() int {
		return Do(ctx, c, baseURL, http.MethodGet, "/v1/sessions", key, "", nil).Status
	}).Should(Equal(http.StatusOK))
	return Project{Namespace: ns.Name, Key: key, KeyID: id}
}
