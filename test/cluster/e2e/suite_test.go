//go:build cluster

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

// Package e2e_test installs the chart on the one-node cluster of `make
// cluster` as the README says (its block "On this machine, without a
// registry"), and drives sessions through the API Service as a user would:
// a page and a scripted model served in the cluster (fixture/), the
// drills of the runner's confinement and of losing pods, and the figures
// of a real kubelet. It starts the cluster and always stops it. Run by
// `make test-cluster`, as root; it fails, never skips, when it cannot run.
package e2e_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const (
	ns        = "browserfleet-system"
	fixtureNS = "bf-fixtures"
	fixture   = "browserfleet.test/fixture:dev"
)

var (
	root     string // the repository
	work     string // the suite's binaries and archives
	env      []string
	key      string
	apiURL   string
	modelURL string
	// ours: this suite started the cluster, so it stops it.
	ours bool
	// netnsBefore are the named network namespaces before the cluster.
	netnsBefore []string
	// forwards are the running port-forwards, by name.
	forwards = map[string]*exec.Cmd{}
)

func TestCluster(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the cluster suite starts a one-node cluster, which needs root")
	}
	for _, tool := range []string{"bash", "ctr", "containerd", "runc", "iptables", "ipset"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the cluster suite needs %s (docs/install.md, A one-node cluster on this machine)", tool)
		}
	}
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	RunSpecs(t, "Cluster Suite")
}

var _ = BeforeSuite(func() {
	var err error
	root, err = filepath.Abs("../../..")
	Expect(err).NotTo(HaveOccurred())
	work = GinkgoT().TempDir()
	assets := os.Getenv("ENVTEST_ASSETS")
	Expect(assets).NotTo(BeEmpty(), "ENVTEST_ASSETS: the directory of kubectl (make test-cluster sets it)")
	// exec looks commands up in the suite's own PATH: helm and kubectl first.
	Expect(os.Setenv("PATH", work+":"+assets+":"+os.Getenv("PATH"))).To(Succeed())
	env = append(os.Environ(), "KUBECONFIG="+filepath.Join(root, ".cluster/kubeconfig"))

	By("building helm and the fixture image")
	step(5*time.Minute, "env", "GOBIN="+work, "go", "install", "helm.sh/helm/v4/cmd/helm@v4.3.1")
	step(5*time.Minute, "env", "CGO_ENABLED=0", "go", "build", "-o", filepath.Join(work, "fixture"), "./test/cluster/e2e/fixture")
	step(time.Minute, "bin/cluster/cluster", "image", "-o", filepath.Join(work, "fixture.oci.tar"), "-name", fixture,
		"-file", "fixture="+filepath.Join(work, "fixture"), "-entrypoint", "/fixture")
	images := os.Getenv("IMAGES_DIR")
	Expect(images).NotTo(BeEmpty(), "IMAGES_DIR (make test-cluster sets it)")
	if _, err := os.Stat(filepath.Join(images, "runner.oci.tar")); err != nil {
		By("building the images: make images")
		step(90*time.Minute, "make", "images")
	}

	By("checking that no cluster runs here")
	out, _ := run(time.Minute, "bin/cluster/cluster", "status", "-dir", ".cluster")
	Expect(out).NotTo(MatchRegexp(`: running`), "a cluster is up already (make cluster-status); the suite starts its own: make cluster-down first\n%s", out)
	ours = true
	netnsBefore = netns()

	By("running the README's block")
	block := readmeBlock()
	// The key goes to a file, not to the suite's log.
	keyFile := filepath.Join(work, "key")
	step(20*time.Minute, "bash", "-c", "set -euo pipefail\n"+block+"\nprintf %s \"$KEY\" >"+keyFile+"\n")
	raw, err := os.ReadFile(keyFile)
	Expect(err).NotTo(HaveOccurred())
	key = strings.TrimSpace(string(raw))
	Expect(key).NotTo(BeEmpty(), "the README's block read no key")

	By("adding the fixtures: a page, the scripted model, a metadata stand-in")
	step(5*time.Minute, "make", "cluster-load", "IMAGES="+filepath.Join(work, "fixture.oci.tar"))
	kubectl("apply", "-f", "test/cluster/e2e/testdata/fixtures.yaml")
	kubectl("-n", fixtureNS, "wait", "--for=condition=Ready", "pod", "--all", "--timeout=2m")
	step(5*time.Minute, "helm", "upgrade", "browserfleet", "charts/browserfleet", "-n", ns, "--reuse-values",
		"-f", "test/cluster/e2e/testdata/values.yaml")
	kubectl("-n", ns, "rollout", "status", "deploy/browserfleet-api", "deploy/browserfleet-manager", "--timeout=5m")

	apiURL = "http://" + forward("api", ns, "svc/browserfleet-api", 80)
	modelURL = "http://" + forward("model", fixtureNS, "svc/model", 8081)
	Eventually(func() int { return call("GET", "/v1/sessions", "").Status }).Should(Equal(200))
})

var _ = AfterSuite(func() {
	for name := range forwards {
		stopForward(name)
	}
	if ours {
		By("stopping the cluster: make cluster-down")
		step(5*time.Minute, "make", "cluster-down")
		var left []string
		for _, n := range netns() {
			if !slices.Contains(netnsBefore, n) {
				left = append(left, n)
			}
		}
		Expect(left).To(BeEmpty(), "make cluster-down left network namespaces in /run/netns")
	}
})

// netns lists /run/netns.
func netns() []string {
	entries, _ := os.ReadDir("/run/netns")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// run runs a command in the repository with the suite's environment.
func run(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = root
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: timed out after %s", name, strings.Join(args, " "), timeout)
	}
	return string(out), err
}

// step runs a command that must succeed, and logs its output.
func step(timeout time.Duration, name string, args ...string) string {
	GinkgoHelper()
	start := time.Now()
	out, err := run(timeout, name, args...)
	GinkgoWriter.Printf("$ %s %s (%s)\n%s\n", name, strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond), out)
	Expect(err).NotTo(HaveOccurred(), "%s %s:\n%s", name, strings.Join(args, " "), out)
	return out
}

func kubectl(args ...string) string {
	GinkgoHelper()
	return strings.TrimSpace(step(3*time.Minute, "kubectl", args...))
}

// readmeBlock is the README's block marked for this suite.
func readmeBlock() string {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	Expect(err).NotTo(HaveOccurred())
	_, after, ok := strings.Cut(string(raw), "<!-- test/cluster/e2e runs this block -->\n```sh\n")
	Expect(ok).To(BeTrue(), "README.md has no block marked for test/cluster/e2e")
	block, _, ok := strings.Cut(after, "```")
	Expect(ok).To(BeTrue(), "the README's block does not end")
	return block
}

// forward starts kubectl port-forward to target's port on a free local
// port and returns the local address; a second forward of the same name
// replaces the first.
func forward(name, namespace, target string, port int) string {
	GinkgoHelper()
	stopForward(name)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	local := l.Addr().(*net.TCPAddr).Port
	Expect(l.Close()).To(Succeed())
	cmd := exec.Command("kubectl", "-n", namespace, "port-forward", "--address", "127.0.0.1", target, fmt.Sprintf("%d:%d", local, port))
	cmd.Dir = root
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	cmd.Stderr = GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	forwards[name] = cmd
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			GinkgoWriter.Println("port-forward " + name + ": " + sc.Text())
			if strings.HasPrefix(sc.Text(), "Forwarding from") {
				select {
				case ready <- true:
				default:
				}
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		Expect(ok).To(BeTrue(), "kubectl port-forward %s ended before forwarding", target)
	case <-time.After(30 * time.Second):
		Fail("kubectl port-forward " + target + ": not forwarding after 30s")
	}
	return fmt.Sprintf("127.0.0.1:%d", local)
}

func stopForward(name string) {
	if cmd := forwards[name]; cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		delete(forwards, name)
	}
}
