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
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/server"
	"github.com/browserfleet/browserfleet/server/apikey"
)

var (
	fw         = &framework.Framework{}
	restConfig *rest.Config
	k8sClient  client.Client
	warnings   = &warningCollector{}
	// auth is the API pod's authenticator, over a cache of key Secrets as
	// cmd/api sets it up.
	auth *apikey.Authenticator
)

func TestChart(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	RunSpecs(t, "Chart Suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	restConfig = fw.Start()
	cfg := rest.CopyConfig(restConfig)
	cfg.WarningHandler = warnings
	k8sClient = newClient(cfg)

	// The Prometheus Operator's ServiceMonitor, which the chart renders when
	// metrics.serviceMonitor.enabled: a minimal structural stand-in for the
	// real CRD (testdata/servicemonitor-crd.yaml).
	b, err := os.ReadFile(filepath.Join("testdata", "servicemonitor-crd.yaml"))
	Expect(err).NotTo(HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(yaml.UnmarshalStrict(b, crd)).To(Succeed())
	Expect(k8sClient.Create(ctx, crd)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
		established := false
		for _, c := range crd.Status.Conditions {
			established = established || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
		}
		g.Expect(established).To(BeTrue())
	}).Should(Succeed())
	// The REST mapper of a client made before the CRD existed may not know it.
	k8sClient = newClient(cfg)

	fw.StartManager(restConfig, ctrl.Options{Cache: server.CacheOptions(nil)}, func(ctx context.Context, mgr ctrl.Manager) error {
		var err error
		auth, err = apikey.NewAuthenticator(ctx, mgr.GetFieldIndexer(), mgr.GetClient())
		return err
	})
}, NodeTimeout(60*time.Second))

var _ = AfterSuite(func() {
	fw.Stop()
})

// newClient returns a client that knows CRDs beside the built-in and
// browserfleet kinds, and refuses unknown fields as kubectl does.
func newClient(cfg *rest.Config) client.Client {
	scheme := framework.Scheme()
	Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	return client.WithFieldValidation(c, "Strict")
}

// warningCollector keeps the API server's warnings (deprecated APIs,
// unknown or duplicate fields), which a clean apply must not get.
type warningCollector struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningCollector) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warningCollector) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.msgs
	w.msgs = nil
	return m
}

// newNamespace makes a namespace of that name, or of a generated one. It
// enforces the restricted Pod Security Standard, as config/default's does:
// pods that break it are refused, and workloads whose pods would are warned
// about (which dryRunApply fails on).
func newNamespace(ctx context.Context, name string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	}}}
	if name == "" {
		ns.GenerateName = "bf-chart-"
	}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// dryRunApply sends every object to the API server with server-side dry
// run, as a create with strict field validation (unknown and duplicate
// fields fail) when it does not exist yet, and as a server-side apply (what
// Helm v4 and `kubectl apply --server-side` send) in any case. Namespaces
// the objects name must exist; Namespace objects are dry-run and then made,
// so that the objects in them can follow.
func dryRunApply(ctx context.Context, objs []*unstructured.Unstructured) {
	GinkgoHelper()
	warnings.take()
	for _, o := range objs {
		if o.GetKind() != "Namespace" {
			continue
		}
		dryRunOne(ctx, o)
		err := k8sClient.Create(ctx, o.DeepCopy())
		if !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	}
	for _, o := range objs {
		if o.GetKind() != "Namespace" {
			dryRunOne(ctx, o)
		}
	}
	Expect(warnings.take()).To(BeEmpty(), "warnings of the API server")
}

func dryRunOne(ctx context.Context, o *unstructured.Unstructured) {
	GinkgoHelper()
	name := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	namespaced, err := k8sClient.IsObjectNamespaced(o)
	Expect(err).NotTo(HaveOccurred(), name)
	Expect(o.GetNamespace() != "").To(Equal(namespaced), "%s: the namespace must be set exactly on namespaced objects", name)
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(o.GroupVersionKind())
	err = k8sClient.Get(ctx, client.ObjectKeyFromObject(o), existing)
	switch {
	case apierrors.IsNotFound(err):
		Expect(k8sClient.Create(ctx, o.DeepCopy(), client.DryRunAll)).To(Succeed(), "dry-run create of %s", name)
	case err != nil:
		Expect(err).NotTo(HaveOccurred(), name)
	}
	Expect(k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
		client.FieldOwner("browserfleet-chart-test"), client.ForceOwnership, client.DryRunAll)).To(Succeed(), "dry-run apply of %s", name)
}
