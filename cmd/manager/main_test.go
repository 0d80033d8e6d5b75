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
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/browserfleet/browserfleet/internal/testing/framework"
)

var (
	fw         = &framework.Framework{}
	manager    string
	kubeconfig string
)

func TestManager(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	RunSpecs(t, "manager Suite")
}

var _ = BeforeSuite(func() {
	fw.Start()
	var err error
	manager, err = gexec.Build("github.com/browserfleet/browserfleet/cmd/manager")
	Expect(err).NotTo(HaveOccurred(), "building the manager")
	DeferCleanup(gexec.CleanupBuildArtifacts)

	kubeconfig, err = fw.AdminKubeconfig()
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	fw.Stop()
})

// start runs the manager against envtest with args, metrics off.
func start(args ...string) *gexec.Session {
	GinkgoHelper()
	cmd := exec.Command(manager, append([]string{"--kubeconfig=" + kubeconfig, "--metrics-bind-address=0"}, args...)...)
	s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { s.Kill().Wait() })
	return s
}

// configFile writes a Configuration file and returns its path.
func configFile(content string) string {
	GinkgoHelper()
	path := filepath.Join(GinkgoT().TempDir(), "config.yaml")
	Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
	return path
}

func freeAddress() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

var _ = Describe("the manager", func() {
	It("starts with the configuration of --config, and stops on SIGTERM", func() {
		probes := freeAddress()
		s := start("--health-probe-bind-address="+probes, "--config="+configFile(`
apiVersion: config.browserfleet.io/v1alpha1
kind: Configuration
runner:
  image: registry.example.com/runner:v2
`))
		Eventually(func() (int, error) {
			resp, err := http.Get("http://" + probes + "/readyz")
			if err != nil {
				return 0, err
			}
			resp.Body.Close()
			return resp.StatusCode, nil
		}).Should(Equal(http.StatusOK))
		// The log line and the probe race through different pipes: wait
		// for the line rather than expect it already copied.
		Eventually(s.Err).Should(gbytes.Say(`starting manager.*"runnerImage":"registry\.example\.com/runner:v2"`))
		s.Signal(syscall.SIGTERM)
		Eventually(s).Should(gexec.Exit(0))
	})

	DescribeTable("refuses to start on a bad file, naming it and the field",
		func(content, want string) {
			path := configFile(content)
			s := start("--health-probe-bind-address=0", "--config="+path)
			Eventually(s).Should(gexec.Exit(1))
			Expect(string(s.Err.Contents())).To(Equal(fmt.Sprintf("manager: configuration %s: %s\n", path, want)))
		},
		Entry("an unknown field", "apiVersion: config.browserfleet.io/v1alpha1\nkind: Configuration\nrunner:\n  imagePullPolicies: Always\n",
			`strict decoding error: unknown field "runner.imagePullPolicies"`),
		Entry("a bad value", "apiVersion: config.browserfleet.io/v1alpha1\nkind: Configuration\nrunner:\n  egress:\n    allowCIDRs: [10.1.2.3/8]\n",
			`runner.egress.allowCIDRs[0]: Invalid value: "10.1.2.3/8": "10.1.2.3/8" has bits set beyond its prefix length; did you mean 10.0.0.0/8?`),
		Entry("no apiVersion", "kind: Configuration\n",
			`apiVersion: Required value: must be config.browserfleet.io/v1alpha1`),
	)

	It("refuses a file that is not there", func() {
		path := filepath.Join(GinkgoT().TempDir(), "missing.yaml")
		s := start("--health-probe-bind-address=0", "--config="+path)
		Eventually(s).Should(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(HavePrefix("manager: reading the configuration: open " + path + ": no such file or directory"))
	})

	It("refuses the flags the file replaced, and says where they went", func() {
		s := start("--runner-image=registry.example.com/runner:v2")
		Eventually(s).Should(gexec.Exit(2))
		Expect(s.Err).To(gbytes.Say("flag provided but not defined: -runner-image"))
		Expect(string(s.Err.Contents())).To(ContainSubstring("configured in the file of --config (docs/configuration.md)"))
		Expect(strings.Count(string(s.Err.Contents()), "-config string")).To(Equal(1))
	})
})
