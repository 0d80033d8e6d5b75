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

// Package framework starts a real kube-apiserver and etcd (envtest) with the
// browserfleet CRDs installed, and runs controllers against them. Test suites
// of every package that needs a control plane share it.
package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/browserfleet/browserfleet/internal/localkubelet"
	"github.com/browserfleet/browserfleet/runner/config"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// K8sVersion is the version of the envtest control plane that hack/envtest.sh
// builds.
const K8sVersion = "1.37.1"

// Framework is one envtest control plane and what runs against it.
type Framework struct {
	env        *envtest.Environment
	kubeconfig string
	cancel     context.CancelFunc
	done       chan struct{}
}

// RepoRoot is the repository's root directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// BuildRunner builds the runner (cmd/runner) for a suite and returns its
// path: in a directory every user can search, removed after the suite. A
// local kubelet that runs as root (internal/localkubelet) runs runner pods as
// their user, 65532, which must reach the binary; a test's own temporary
// directories are private to the user running the tests.
func BuildRunner() string {
	GinkgoHelper()
	dir, err := os.MkdirTemp("", "browserfleet-runner-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	Expect(os.Chmod(dir, 0o755)).To(Succeed())
	bin := filepath.Join(dir, "runner")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/runner")
	build.Dir = RepoRoot()
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "building the runner: %s", out)
	return bin
}

// Scheme knows the built-in kinds and browserfleet's.
func Scheme() *kruntime.Scheme {
	s := kruntime.NewScheme()
	utilruntimeMust(clientgoscheme.AddToScheme(s))
	utilruntimeMust(v1alpha1.AddToScheme(s))
	return s
}

func utilruntimeMust(err error) {
	if err != nil {
		panic(err)
	}
}

// AssetsDir is where the control-plane binaries are: $KUBEBUILDER_ASSETS, or
// what `make envtest` built.
func AssetsDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "bin", "k8s", fmt.Sprintf("%s-%s-%s", K8sVersion, runtime.GOOS, runtime.GOARCH))
}

// Start starts the control plane with the CRDs installed and returns its
// config. Missing binaries fail with the command that builds them.
func (f *Framework) Start() *rest.Config {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	assets := AssetsDir()
	_, err := os.Stat(filepath.Join(assets, "kube-apiserver"))
	Expect(err).NotTo(HaveOccurred(), "envtest binaries missing in %s: run `make envtest`", assets)

	f.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	cfg, err := f.env.Start()
	Expect(err).NotTo(HaveOccurred(), "starting envtest")
	return cfg
}

// AdminKubeconfig returns the path of a self-contained kubeconfig of a
// cluster admin, the one Kubectl uses, for a binary or a script a suite runs.
func (f *Framework) AdminKubeconfig() (string, error) {
	if f.kubeconfig != "" {
		return f.kubeconfig, nil
	}
	user, err := f.env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("adding kubectl user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	dir, err := os.MkdirTemp("", "browserfleet-kubectl-")
	if err != nil {
		return "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	f.kubeconfig = path
	return path, nil
}

// Kubectl runs the control plane's kubectl (the one `make envtest` built) as
// a cluster admin and returns what it printed.
func (f *Framework) Kubectl(args ...string) (stdout, stderr string, err error) {
	kubeconfig, err := f.AdminKubeconfig()
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(AssetsDir(), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// StartManager runs a manager against the control plane, set up by setup,
// until Stop. Its metrics and probe endpoints are off.
func (f *Framework) StartManager(cfg *rest.Config, opts ctrl.Options, setup func(context.Context, ctrl.Manager) error) {
	opts.Scheme = Scheme()
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	mgr, err := ctrl.NewManager(cfg, opts)
	Expect(err).NotTo(HaveOccurred(), "creating manager")
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	Expect(setup(ctx, mgr)).To(Succeed(), "setting up manager")
	f.done = make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(f.done)
		Expect(mgr.Start(ctx)).To(Succeed(), "running manager")
	}()
}

// Client returns a client that refuses unknown fields, as kubectl does.
func Client(cfg *rest.Config) client.Client {
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	Expect(err).NotTo(HaveOccurred(), "creating client")
	return client.WithFieldValidation(c, "Strict")
}

// Stop stops the manager and the control plane.
func (f *Framework) Stop() {
	if f.cancel != nil {
		f.cancel()
		<-f.done
	}
	if f.kubeconfig != "" {
		Expect(os.RemoveAll(filepath.Dir(f.kubeconfig))).To(Succeed())
	}
	if f.env != nil {
		Expect(f.env.Stop()).To(Succeed(), "stopping envtest")
	}
}

// StartRunnerKubelet plays the kubelet for a suite's runner pods: the local
// kubelet (internal/localkubelet), with state in stateDir, runs each pod of
// image as a runner process built from this tree, with Debian's Chromium.
// stop ends it, and every runner process and its Chromium with it.
func StartRunnerKubelet(cfg *rest.Config, stateDir, image string) (kl *localkubelet.Kubelet, stop func()) {
	GinkgoHelper()
	runnerBin := BuildRunner()
	chromiumPath, err := config.FindChromium()
	Expect(err).NotTo(HaveOccurred())
	kl, err = localkubelet.New(localkubelet.Options{
		Config:    cfg,
		StateDir:  stateDir,
		Images:    map[string]localkubelet.Image{image: {Entrypoint: []string{runnerBin, "--log-format=text", "--chromium=" + chromiumPath, "--crash-exit-delay=1s"}}},
		LogOutput: GinkgoWriter,
		Logger:    ctrl.Log.WithName("kubelet"),
	})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(kl.Run(ctx)).To(Succeed())
	}()
	return kl, func() {
		cancel()
		<-done
	}
}
