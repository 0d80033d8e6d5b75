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

package controllers_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/controllers"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/quota"
)

// The manager's session settings in these specs.
const (
	defaultTimeout = time.Hour
	maxTimeout     = 2 * time.Hour
	defaultTTL     = time.Hour
	// taskSessionWait is how long a task waits for a missing session.
	taskSessionWait = 2 * time.Second
	// secretWait is how long a session waits for its Secrets to opt in.
	secretWait = 6 * time.Second
	// startupTimeout is how long a session may take to become ready: long
	// enough for every spec that gets its pod ready on a busy machine.
	startupTimeout = 20 * time.Second
	// forceDeleteAfter is how long past its grace period a runner pod may
	// stay Terminating before it is force-deleted.
	forceDeleteAfter = 2 * time.Second
	// allowedExecutable is the browser binary, besides the runner's own,
	// that sessions may name.
	allowedExecutable = "/opt/chrome/chrome"
	// unreachableIP is a loopback address where nothing listens: the
	// local kubelet (internal/localkubelet) hands out 127.A.B.x with A of
	// 2 and above, and no runner runs in this suite. A session made ready
	// there has a runner that cannot be reached, and no call leaves the
	// machine.
	unreachableIP = "127.1.0.1"
	// runnerAttempts is how many times the dispatcher tries a runner.
	runnerAttempts = 3
	// defaultTaskDeadline is the manager's tasks.defaultActiveDeadline.
	defaultTaskDeadline = time.Hour
	// quotaProject is the one project with a quota of its own: two
	// sessions with a browser, three live.
	quotaProject = "bf-quota"
)

var (
	fw        = &framework.Framework{}
	k8sClient client.Client
	kubelet   framework.Kubelet
	runnerCfg controllers.RunnerConfig
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	SetDefaultConsistentlyDuration(2 * time.Second)
	RunSpecs(t, "Controllers Suite")
}

var _ = BeforeSuite(func() {
	cfg := fw.Start()
	k8sClient = framework.Client(cfg)
	kubelet = framework.Kubelet{Client: k8sClient}
	// Admission refuses pods whose RuntimeClass does not exist.
	Expect(k8sClient.Create(context.Background(), &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc",
	})).To(Succeed())

	opts := controllers.DefaultOptions()
	opts.Runner.Image = "registry.test/browserfleet/runner:test"
	opts.Runner.Command = []string{"/runner"}
	opts.Runner.Args = []string{"--log-level=debug"}
	opts.Runner.RuntimeClassName = "gvisor"
	opts.Runner.AllowedExecutables = []string{allowedExecutable}
	// region_controller_test.go: ap-southeast-1 is refused, us-west-2 is
	// mapped to a label of its own.
	opts.Runner.Regions = controllers.RegionConfig{
		Accepted: []v1alpha1.Region{v1alpha1.RegionUSWest2, v1alpha1.RegionUSEast1, v1alpha1.RegionEUCentral1},
		Mappings: map[v1alpha1.Region]controllers.RegionMapping{v1alpha1.RegionUSWest2: {NodeLabel: "example.com/zone-group", Value: "west"}},
	}
	opts.Sessions = controllers.SessionConfig{DefaultTimeout: defaultTimeout, MaxTimeout: maxTimeout, DefaultTTLAfterEnded: defaultTTL, SecretWait: secretWait, StartupTimeout: startupTimeout, ForceDeleteAfter: forceDeleteAfter}
	opts.TaskSessionWait = taskSessionWait
	opts.Tasks.DefaultActiveDeadline = defaultTaskDeadline
	opts.Tasks.RunnerAttempts = runnerAttempts
	opts.Tasks.RetryBackoff = 50 * time.Millisecond
	opts.Tasks.MaxRetryBackoff = 200 * time.Millisecond
	opts.Quota.Projects = map[string]quota.Limits{quotaProject: {ConcurrentSessions: 2, LiveSessions: 3}}
	runnerCfg = opts.Runner
	fw.StartManager(cfg, ctrl.Options{Cache: controllers.CacheOptions()}, func(ctx context.Context, mgr ctrl.Manager) error {
		return controllers.SetupWithManager(ctx, mgr, opts)
	})
})

var _ = AfterSuite(func() {
	fw.Stop()
})

// read returns a function that reads an object afresh, for Eventually and
// for one-off reads with Default.
func read[T any, P interface {
	*T
	client.Object
}](ctx context.Context, key types.NamespacedName) func(Gomega) P {
	return func(g Gomega) P {
		obj := P(new(T))
		g.Expect(k8sClient.Get(ctx, key, obj)).To(Succeed())
		return obj
	}
}

// runAt plays the kubelet: the pod's container runs, ready, at ip.
func runAt(ctx context.Context, key types.NamespacedName, ip string) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := k8sClient.Get(ctx, key, pod); err != nil {
			return err
		}
		now := metav1.Now()
		started := true
		pod.Status = corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "runner", Ready: true, Started: &started, Image: "runner", ImageID: "runner",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			}},
		}
		return k8sClient.Status().Update(ctx, pod)
	})).To(Succeed())
}

// startSessionAt creates a session and plays the kubelet until it is
// Ready, its runner at ip.
func startSessionAt(ctx context.Context, s *v1alpha1.BrowserSession, ip string) types.NamespacedName {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, s)).To(Succeed())
	key := client.ObjectKeyFromObject(s)
	Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionStarting))
	runAt(ctx, podKey(key), ip)
	Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionReady))
	return key
}

// sessionSecret makes Secret name of ns with the session-secret label set to
// label ("" for none): what a session of ns may reference.
func sessionSecret(ctx context.Context, ns, name, label string) *corev1.Secret {
	GinkgoHelper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		StringData: map[string]string{"openai": "sk-test", "anthropic": "sk-test", "password": "pw"},
	}
	if label != "" {
		secret.Labels = map[string]string{v1alpha1.LabelSessionSecret: label}
	}
	Expect(k8sClient.Create(ctx, secret)).To(Succeed())
	return secret
}

// newNamespace gives each spec a namespace of its own.
func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bf-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}
