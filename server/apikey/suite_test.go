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
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/server/apikey"
)

var (
	fw        = &framework.Framework{}
	k8sClient client.Client
	auth      *apikey.Authenticator
)

func TestAPIKey(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	SetDefaultConsistentlyDuration(time.Second)
	RunSpecs(t, "API Key Suite")
}

var _ = BeforeSuite(func() {
	cfg := fw.Start()
	k8sClient = framework.Client(cfg)
	// The API pod's cache: key Secrets only, of every namespace.
	opts := ctrl.Options{Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Label: apikey.Selector()},
	}}}
	fw.StartManager(cfg, opts, func(ctx context.Context, mgr ctrl.Manager) error {
		var err error
		auth, err = apikey.NewAuthenticator(ctx, mgr.GetFieldIndexer(), mgr.GetClient())
		return err
	})
})

var _ = AfterSuite(func() {
	fw.Stop()
})

// newNamespace gives each spec a project of its own.
func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bf-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}
