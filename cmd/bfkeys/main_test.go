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

package main_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/server/apikey"
)

var (
	fw         = &framework.Framework{}
	k8sClient  client.Client
	bfkeys     string
	kubeconfig string
)

func TestBFKeys(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	RunSpecs(t, "bfkeys Suite")
}

var _ = BeforeSuite(func() {
	cfg := fw.Start()
	k8sClient = framework.Client(cfg)

	var err error
	bfkeys, err = gexec.Build("github.com/browserfleet/browserfleet/cmd/bfkeys")
	Expect(err).NotTo(HaveOccurred(), "building bfkeys")
	DeferCleanup(gexec.CleanupBuildArtifacts)

	kubeconfig, err = fw.AdminKubeconfig()
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	fw.Stop()
})

// bf runs bfkeys with args and env (on top of an environment without
// KUBECONFIG), waits for it to exit and returns the session.
func bf(env []string, args ...string) *gexec.Session {
	GinkgoHelper()
	cmd := exec.Command(bfkeys, args...)
	cmd.Env = append(append(withoutKubeconfig(os.Environ()), "HOME="+GinkgoT().TempDir()), env...)
	s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(s).Should(gexec.Exit())
	return s
}

func withoutKubeconfig(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "KUBECONFIG=") {
			out = append(out, e)
		}
	}
	return out
}

var _ = Describe("bfkeys", func() {
	It("creates, lists and revokes a key", func(ctx SpecContext) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bf-"}}
		Expect(k8sClient.Create(ctx, ns)).To(Succeed())

		By("refusing a namespace that is not a project")
		s := bf(nil, "create", "--kubeconfig", kubeconfig, "--namespace", ns.Name)
		Expect(s.ExitCode()).To(Equal(1))
		Expect(s.Err).To(gbytes.Say("namespace " + ns.Name + ": not a project namespace: it holds no RoleBinding labelled browserfleet.io/project=true"))
		var secrets corev1.SecretList
		Expect(k8sClient.List(ctx, &secrets, client.InNamespace(ns.Name))).To(Succeed())
		Expect(secrets.Items).To(BeEmpty())

		// The chart's binding in a project namespace.
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "browserfleet-api", Namespace: ns.Name, Labels: map[string]string{apikey.LabelProject: "true"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "browserfleet-api"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "browserfleet-api", Namespace: "browserfleet-system"}},
		})).To(Succeed())

		// --kubeconfig on the command line.
		s = bf(nil, "create", "--kubeconfig", kubeconfig, "--namespace", ns.Name, "--description", "ci robot", "--expires", "720h")
		Expect(s.ExitCode()).To(Equal(0), string(s.Err.Contents()))
		m := regexp.MustCompile(`^id: ([0-9a-f]{16})\nkey: (bfk_[A-Za-z0-9_-]{43})\n$`).FindStringSubmatch(string(s.Out.Contents()))
		Expect(m).To(HaveLen(3), "create's output: id and key")
		id, key := m[1], m[2]
		Expect(apikey.ParseKey(key)).To(Succeed())
		Expect(s.Err).To(gbytes.Say("cannot be shown again"))

		var secret corev1.Secret
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: apikey.SecretName(id)}, &secret)).To(Succeed())
		Expect(secret.Data[apikey.DataHash]).To(Equal([]byte(apikey.Hash(key))))
		Expect(secret.Annotations).To(HaveKey(apikey.AnnotationExpiresAt))

		// $KUBECONFIG from here on.
		env := []string{"KUBECONFIG=" + kubeconfig}
		s = bf(env, "list", "--namespace", ns.Name)
		Expect(s.ExitCode()).To(Equal(0), string(s.Err.Contents()))
		Expect(s.Out).To(gbytes.Say(`ID\s+DESCRIPTION\s+CREATED\s+EXPIRES\n`))
		Expect(s.Out).To(gbytes.Say(id + `\s+ci robot\s+\S+\s+\d{4}-`))
		Expect(string(s.Out.Contents())).NotTo(ContainSubstring(key[len(apikey.KeyPrefix):]))

		s = bf(env, "revoke", "--namespace", ns.Name, "--id", id)
		Expect(s.ExitCode()).To(Equal(0), string(s.Err.Contents()))
		Expect(s.Out).To(gbytes.Say("revoked API key " + id))

		s = bf(env, "list", "--namespace", ns.Name)
		Expect(s.ExitCode()).To(Equal(0), string(s.Err.Contents()))
		Expect(s.Out.Contents()).To(BeEmpty())
		Expect(s.Err).To(gbytes.Say("No API keys in namespace " + ns.Name))

		s = bf(env, "revoke", "--namespace", ns.Name, "--id", id)
		Expect(s.ExitCode()).To(Equal(1))
		Expect(s.Err).To(gbytes.Say("no API key with that id"))
	})

	It("refuses a bad command line", func() {
		for _, args := range [][]string{
			nil,
			{"frobnicate"},
			{"list"},
			{"revoke", "--namespace", "x"},
			{"create", "--namespace", "x", "--expires", "soon"},
			{"list", "--namespace", "x", "extra"},
		} {
			s := bf(nil, args...)
			Expect(s.ExitCode()).To(Equal(2), "bfkeys %q", args)
		}
	})
})
