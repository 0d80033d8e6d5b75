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

package localkubelet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/localkubelet"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
)

// The fake container's image, and the in-container path of its binary that
// commands name.
const (
	fakeImage   = "registry.test/fakecontainer:v1"
	fakeCommand = "/usr/local/bin/fakecontainer"
)

// leakedEnv is set in the test process; no container may see it.
const leakedEnv = "LOCALKUBELET_TEST_LEAKED"

var (
	fw        = &framework.Framework{}
	cfg       *rest.Config
	k8sClient client.Client
	// kubelet runs the pods of most specs; its state is in stateDir.
	kubelet     *localkubelet.Kubelet
	stopKubelet func() error
	stateDir    string
	// fakeBin is the built fake container.
	fakeBin string
	// podHTTP reaches pods directly, never through a proxy of the
	// environment.
	podHTTP = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: 5 * time.Second}
)

func TestLocalKubelet(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	RunSpecs(t, "Local Kubelet Suite")
}

var _ = BeforeSuite(func() {
	tmp, err := os.MkdirTemp("", "localkubelet-test-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, tmp)
	// Pods that run as their own user (a Kubelet run as root runs them so)
	// must reach the fake container.
	Expect(os.Chmod(tmp, 0o755)).To(Succeed())
	fakeBin = filepath.Join(tmp, "fakecontainer")
	build := exec.Command("go", "build", "-o", fakeBin, "./testdata/fakecontainer")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "building the fake container: %s", out)
	Expect(os.Setenv(leakedEnv, "the kubelet's environment")).To(Succeed())

	cfg = fw.Start()
	k8sClient = framework.Client(cfg)
	stateDir = filepath.Join(tmp, "state")
	kubelet, stopKubelet = startKubelet(localkubelet.Options{NodeName: "localkubelet-test", StateDir: stateDir})
})

var _ = AfterSuite(func() {
	if stopKubelet != nil {
		Expect(stopKubelet()).To(Succeed())
	}
	fw.Stop()
})

// startKubelet runs a Kubelet with the fake container's image until stop;
// it returns once the Kubelet is ready.
func startKubelet(opts localkubelet.Options) (k *localkubelet.Kubelet, stop func() error) {
	opts.Config = cfg
	opts.Images = map[string]localkubelet.Image{fakeImage: {Entrypoint: []string{fakeBin}, Args: []string{"--image-default"}}}
	opts.Paths = map[string]string{fakeCommand: fakeBin}
	opts.LogOutput = GinkgoWriter
	opts.Logger = ctrl.Log.WithName(opts.NodeName)
	k, err := localkubelet.New(opts)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	var result error
	stopped := false
	stop = func() error {
		if !stopped {
			cancel()
			result, stopped = <-done, true
		}
		return result
	}
	readyCtx, readyCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer readyCancel()
	ExpectWithOffset(1, k.WaitReady(readyCtx)).To(Succeed())
	return k, stop
}

// newNamespace creates a namespace for one spec.
func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lk-"}}
	ExpectWithOffset(1, k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// fakePod is a pod of the fake container: labelled for the suite's kubelet,
// listening on its pod IP, with a readiness probe on a named port.
func fakePod(ns, name string, env ...corev1.EnvVar) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels: map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedBy},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](10),
			Containers: []corev1.Container{{
				Name:  "main",
				Image: fakeImage,
				Env: append([]corev1.EnvVar{{
					Name:      "POD_IP",
					ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}},
				}}, env...),
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
					PeriodSeconds:    1,
					FailureThreshold: 3,
				},
			}},
		},
	}
}

func env(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

func getPod(ctx context.Context, key types.NamespacedName) *corev1.Pod {
	pod := &corev1.Pod{}
	ExpectWithOffset(1, k8sClient.Get(ctx, key, pod)).To(Succeed())
	return pod
}

// condition returns a pod's condition of a type.
func condition(pod *corev1.Pod, typ corev1.PodConditionType) corev1.PodCondition {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.PodCondition{}
}

// waitReady waits until the pod is Running and Ready, and returns it.
func waitReady(ctx context.Context, key types.NamespacedName) *corev1.Pod {
	pod := &corev1.Pod{}
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, key, pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
		g.Expect(condition(pod, corev1.PodReady).Status).To(Equal(corev1.ConditionTrue))
	}).Should(Succeed())
	return pod
}

// waitGone waits until the pod is gone from the API server.
func waitGone(ctx context.Context, key types.NamespacedName) {
	EventuallyWithOffset(1, func() error {
		return k8sClient.Get(ctx, key, &corev1.Pod{})
	}).Should(MatchError(ContainSubstring("not found")))
}

// getJSON fetches a pod's endpoint and decodes its JSON reply.
func getJSON(url string, into any) error {
	resp, err := podHTTP.Get(url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	return json.Unmarshal(body, into)
}

// podURL is the URL of a path on the fake container of a pod.
func podURL(pod *corev1.Pod, path string) string {
	return "http://" + net.JoinHostPort(pod.Status.PodIP, "8080") + path
}

// processGone reports whether neither the process nor anything of its
// process group is left.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) && errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
}

// runningPID waits until the pod's process runs and returns it.
func runningPID(k *localkubelet.Kubelet, key types.NamespacedName) int {
	var pid int
	EventuallyWithOffset(1, func() bool {
		var ok bool
		pid, ok = k.PID(key)
		return ok
	}).Should(BeTrue())
	return pid
}

// procStatus reads the fields of /proc/<pid>/status.
func procStatus(pid int) map[string][]string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := map[string][]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.Fields(v)
		}
	}
	return out
}

// logOf reads a container's log file.
func logOf(k *localkubelet.Kubelet, key types.NamespacedName, container string) string {
	b, err := os.ReadFile(k.LogPath(key, container))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return string(b)
}
