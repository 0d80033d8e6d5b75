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
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	apiapp "github.com/browserfleet/browserfleet/cmd/api/app"
	managerapp "github.com/browserfleet/browserfleet/cmd/manager/app"
	"github.com/browserfleet/browserfleet/controllers"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/runner/egress"
	"github.com/browserfleet/browserfleet/search"
	"github.com/browserfleet/browserfleet/server/cdptoken"
)

// quantities compares resource quantities by value (2 equals 2000m), and
// network prefixes by value.
var quantities = cmp.Options{
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
	cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
}

// parseFlags parses args with a binary's flag set plus controller-runtime's
// zap flags, which both mains add. Any arg the binary does not know fails.
func parseFlags(name string, add func(*flag.FlagSet), args []string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	add(fs)
	(&zap.Options{}).BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s %v: %w", name, args, err)
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%s: stray arguments %v", name, fs.Args())
	}
	return nil
}

// managerOptions renders the chart and reads the manager's options as
// cmd/manager does (managerOptionsOf).
func managerOptions(vals map[string]any) managerapp.Options {
	GinkgoHelper()
	r, err := Render("bf", "bf-system", vals)
	Expect(err).NotTo(HaveOccurred())
	return managerOptionsOf(r.Objects, "bf-browserfleet-manager")
}

// managerOptionsOf reads the options of the manager Deployment of objs as
// cmd/manager does: its args with cmd/manager's flags, then the
// Configuration file they name, taken from the ConfigMap mounted there,
// with the manager's own loader.
func managerOptionsOf(objs []*unstructured.Unstructured, deployment string) managerapp.Options {
	GinkgoHelper()
	deploy := Find(objs, "Deployment", deployment)
	args, err := ContainerArgs(deploy, "manager")
	Expect(err).NotTo(HaveOccurred())
	opts := managerapp.DefaultOptions()
	Expect(parseFlags("manager", opts.AddFlags, args)).To(Succeed())
	Expect(opts.ConfigFile).NotTo(BeEmpty(), "the manager gets no --config")
	content := mountedConfigMapFile(objs, deploy, "manager", opts.ConfigFile)
	opts.ConfigFile = filepath.Join(GinkgoT().TempDir(), "config.yaml")
	Expect(os.WriteFile(opts.ConfigFile, []byte(content), 0o600)).To(Succeed())
	Expect(opts.LoadConfig()).To(Succeed())
	return opts
}

// apiOptions renders the chart and parses the API's args with cmd/api's
// flags.
func apiOptions(vals map[string]any) (apiapp.Options, *Rendered) {
	GinkgoHelper()
	r, err := Render("bf", "bf-system", vals)
	Expect(err).NotTo(HaveOccurred())
	args, err := ContainerArgs(Find(r.Objects, "Deployment", "bf-browserfleet-api"), "api")
	Expect(err).NotTo(HaveOccurred())
	opts := apiapp.DefaultOptions()
	Expect(parseFlags("api", opts.AddFlags, args)).To(Succeed())
	return opts, r
}

// runnerValuesOptions is what testdata/values-runner.yaml says, as the
// controllers' options.
func runnerValuesOptions() controllers.Options {
	want := controllers.DefaultOptions()
	want.Runner.Image = "registry.example.com/browserfleet/runner:v9.9.9"
	want.Runner.ImagePullPolicy = corev1.PullAlways
	want.Runner.Command = []string{"/usr/bin/tini", "--", "/usr/local/bin/runner"}
	want.Runner.Args = []string{"--log-format=text", "--crash-exit-delay=5s"}
	want.Runner.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("3Gi")},
	}
	want.Runner.ShmSize = resource.MustParse("512Mi")
	want.Runner.TmpSize = resource.MustParse("4Gi")
	want.Runner.RunAsUser = 1001
	want.Runner.TerminationGracePeriodSeconds = 20
	want.Runner.NodeSelector = map[string]string{"browserfleet.io/pool": "browsers", "kubernetes.io/arch": "amd64"}
	want.Runner.Tolerations = []corev1.Toleration{
		{Key: "browserfleet.io/browsers", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "chromium", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
	want.Runner.RuntimeClassName = "gvisor"
	want.Runner.Regions = controllers.RegionConfig{
		NodeLabel: "example.com/region",
		Accepted:  []v1alpha1.Region{v1alpha1.RegionUSWest2, v1alpha1.RegionEUCentral1},
		Mappings:  map[v1alpha1.Region]controllers.RegionMapping{v1alpha1.RegionUSWest2: {NodeLabel: "example.com/zone-group", Value: "west"}},
	}
	want.Runner.ModelBaseURLs = map[string]string{"openai": "http://vllm.models:8000/v1"}
	want.Runner.AllowedExecutables = []string{"/usr/bin/chromium", "/opt/google/chrome/chrome"}
	want.Runner.EgressAllowCIDRs = []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16"), netip.MustParsePrefix("127.0.0.0/8")}
	want.Runner.EgressClusterCIDRs = []netip.Prefix{netip.MustParsePrefix("34.118.0.0/16"), netip.MustParsePrefix("2600:1900:4000::/44")}
	want.Runner.ServicesURL = "http://bf-browserfleet-api-runners.bf-system.svc:8001"
	want.Sessions = controllers.SessionConfig{DefaultTimeout: 15 * time.Minute, MaxTimeout: 2 * time.Hour, DefaultTTLAfterEnded: 10 * time.Minute, SecretWait: 45 * time.Second, StartupTimeout: 7 * time.Minute, ForceDeleteAfter: 90 * time.Second}
	want.TaskSessionWait = 45 * time.Second
	want.Quota = quota.Config{Default: quota.Limits{ConcurrentSessions: 3, LiveSessions: 5}, Projects: map[string]quota.Limits{
		"team-a": {ConcurrentSessions: 20, LiveSessions: 100},
		"team-b": {LiveSessions: 7},
	}}
	return want
}

var _ = Describe("the manager's flags and Configuration", func() {
	It("default to the controllers' own defaults", func() {
		opts := managerOptions(nil)
		want := controllers.DefaultOptions()
		// The API's runner listener, which has no default.
		want.Runner.ServicesURL = "http://bf-browserfleet-api-runners.bf-system.svc:8001"
		Expect(cmp.Diff(want, opts.Controllers, quantities)).To(BeEmpty(), "the chart's runner and session defaults differ from the manager's (-manager +chart)")
		Expect(opts.LeaderElection).To(BeTrue())
		Expect(opts.MetricsSecure).To(BeTrue())
		Expect(opts.MetricsAddress).To(Equal(":8443"))
		Expect(opts.ProbeAddress).To(Equal(":8081"))
	})

	It("carry the runner pod template of the values", func() {
		vals, err := ValuesFile("values-runner.yaml")
		Expect(err).NotTo(HaveOccurred())
		opts := managerOptions(vals)
		Expect(cmp.Diff(runnerValuesOptions(), opts.Controllers, quantities)).To(BeEmpty(), "(-values +configuration)")
	})

	It("give the API the manager's quota", func() {
		vals, err := ValuesFile("values-runner.yaml")
		Expect(err).NotTo(HaveOccurred())
		api, _ := apiOptions(vals)
		Expect(cmp.Diff(managerOptions(vals).Controllers.Quota, api.Quota)).To(BeEmpty(), "(-manager +api)")
	})

	It("give the API the manager's accepted regions", func() {
		vals, err := ValuesFile("values-runner.yaml")
		Expect(err).NotTo(HaveOccurred())
		api, _ := apiOptions(vals)
		Expect(api.AcceptedRegions).To(Equal([]string{"us-west-2", "eu-central-1"}))
	})

	It("roll the manager when the Configuration changes, and only then", func() {
		checksum := func(vals map[string]any) string {
			GinkgoHelper()
			r, err := Render("bf", "bf-system", vals)
			Expect(err).NotTo(HaveOccurred())
			d := toTyped[appsv1.Deployment](Find(r.Objects, "Deployment", "bf-browserfleet-manager"))
			Expect(d.Spec.Template.Annotations).To(HaveKey("checksum/config"))
			return d.Spec.Template.Annotations["checksum/config"]
		}
		defaults := checksum(nil)
		Expect(checksum(nil)).To(Equal(defaults))
		Expect(checksum(map[string]any{"manager": map[string]any{"logLevel": "debug", "podAnnotations": map[string]any{"example.com/team": "browsers"}}})).To(Equal(defaults))
		Expect(checksum(map[string]any{"runner": map[string]any{"image": map[string]any{"tag": "v0.2.0"}}})).NotTo(Equal(defaults))
		Expect(checksum(map[string]any{"sessions": map[string]any{"maxTimeout": "2h"}})).NotTo(Equal(defaults))
		Expect(checksum(map[string]any{"projects": map[string]any{"quota": map[string]any{"liveSessions": 60}}})).NotTo(Equal(defaults))

		vals, err := ValuesFile("values-all.yaml")
		Expect(err).NotTo(HaveOccurred())
		r, err := Render("bf", "bf-system", vals)
		Expect(err).NotTo(HaveOccurred())
		d := toTyped[appsv1.Deployment](Find(r.Objects, "Deployment", "bf-browserfleet-manager"))
		Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue("example.com/team", "browsers"))
		Expect(d.Spec.Template.Annotations).To(HaveKey("checksum/config"))
	})

	It("turn leader election and metrics off when the values do", func() {
		vals, err := ValuesFile("values-minimal.yaml")
		Expect(err).NotTo(HaveOccurred())
		opts := managerOptions(vals)
		Expect(opts.LeaderElection).To(BeFalse())
		Expect(opts.MetricsAddress).To(Equal("0"))
	})

	It("build the runner pod of the values", func(ctx SpecContext) {
		vals, err := ValuesFile("values-runner.yaml")
		Expect(err).NotTo(HaveOccurred())
		opts := managerOptions(vals)
		// Admission refuses pods whose RuntimeClass does not exist.
		err = k8sClient.Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"})
		if !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		startControllers(opts.Controllers)

		ns := newNamespace(ctx, "")
		session := wrappers.MakeBrowserSession("values", ns).Obj()
		Expect(k8sClient.Create(ctx, session)).To(Succeed())
		pod := &corev1.Pod{}
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: v1alpha1.RunnerPodName(session.Name)}, pod)
		}).Should(Succeed())

		want := runnerValuesOptions().Runner
		Expect(pod.Spec.RuntimeClassName).To(Equal(ptr.To(want.RuntimeClassName)))
		Expect(pod.Spec.NodeSelector).To(Equal(want.NodeSelector))
		// Admission adds the not-ready and unreachable tolerations.
		Expect(pod.Spec.Tolerations).To(ContainElements(want.Tolerations))
		Expect(pod.Spec.TerminationGracePeriodSeconds).To(Equal(ptr.To(want.TerminationGracePeriodSeconds)))
		Expect(pod.Spec.SecurityContext.RunAsUser).To(Equal(ptr.To(want.RunAsUser)))
		Expect(pod.Spec.AutomountServiceAccountToken).To(Equal(ptr.To(false)))
		c := pod.Spec.Containers[0]
		Expect(c.Image).To(Equal(want.Image))
		Expect(c.ImagePullPolicy).To(Equal(want.ImagePullPolicy))
		Expect(c.Command).To(Equal(want.Command))
		// The runner's own flags carry the egress ranges and the allowed
		// executables, ahead of the values' args; its flag set reads the
		// ranges back.
		Expect(c.Args).To(HaveLen(len(want.Args) + 7))
		Expect(c.Args[4:7]).To(Equal([]string{"--allowed-executable=/usr/bin/chromium", "--allowed-executable=/opt/google/chrome/chrome", "--services-url=" + want.ServicesURL}))
		Expect(c.Args[7:]).To(Equal(want.Args))
		var gate egress.Config
		fs := flag.NewFlagSet("runner", flag.ContinueOnError)
		gate.AddFlags(fs)
		Expect(fs.Parse(c.Args[:4])).To(Succeed())
		Expect(cmp.Diff(egress.Config{AllowCIDRs: want.EgressAllowCIDRs, ClusterCIDRs: want.EgressClusterCIDRs}, gate, quantities)).To(BeEmpty())
		Expect(cmp.Diff(want.Resources, c.Resources, quantities)).To(BeEmpty())
		sizes := map[string]resource.Quantity{}
		for _, v := range pod.Spec.Volumes {
			if v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
				sizes[v.Name] = *v.EmptyDir.SizeLimit
			}
		}
		// The status volume of the runner's termination message has a
		// fixed size.
		Expect(cmp.Diff(map[string]resource.Quantity{"dshm": want.ShmSize, "tmp": want.TmpSize, "status": resource.MustParse("1Mi")}, sizes, quantities)).To(BeEmpty())

		// The session's lifetime is the values' default timeout.
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(session), session)).To(Succeed())
			g.Expect(session.Status.ExpiresAt).NotTo(BeNil())
			g.Expect(session.Status.ExpiresAt.Sub(session.CreationTimestamp.Time)).To(Equal(15 * time.Minute))
		}).Should(Succeed())
	})
})

// startControllers runs the manager's controllers with opts against envtest
// until the spec ends.
func startControllers(opts controllers.Options) {
	GinkgoHelper()
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 framework.Scheme(),
		Cache:                  controllers.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	Expect(controllers.SetupWithManager(ctx, mgr, opts)).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	DeferCleanup(func() {
		cancel()
		Expect(<-done).To(Succeed())
	})
}

var _ = Describe("the API's flags", func() {
	It("parse, and name the mounted signing key, which loads", func() {
		opts, r := apiOptions(nil)
		Expect(opts.ListenAddress).To(Equal(":8000"))
		Expect(opts.MetricsAddress).To(Equal(":8443"))
		Expect(opts.MetricsSecure).To(BeTrue())
		Expect(opts.CDPKeyFile).To(Equal("/etc/browserfleet/cdp-signing-key/key"))
		Expect(opts.CDPKeyPreviousFile).To(BeEmpty())
		defaults := apiapp.DefaultOptions()
		Expect(opts.StartTimeout).To(Equal(defaults.StartTimeout))
		Expect(opts.MaxBodyBytes).To(Equal(defaults.MaxBodyBytes))
		Expect(opts.ShutdownGrace).To(Equal(defaults.ShutdownGrace))
		Expect(opts.CDPURLTTL).To(Equal(defaults.CDPURLTTL))
		Expect(opts.AllowedExecutables).To(BeEmpty())

		deploy := Find(r.Objects, "Deployment", "bf-browserfleet-api")
		Expect(mountedFile(deploy, "api", opts.CDPKeyFile)).To(Equal("bf-browserfleet-cdp-signing-key/key"))
		secret := toTyped[corev1.Secret](Find(r.Objects, "Secret", "bf-browserfleet-cdp-signing-key"))
		path := filepath.Join(GinkgoT().TempDir(), "key")
		Expect(os.WriteFile(path, secret.Data["key"], 0o600)).To(Succeed())
		key, err := cdptoken.LoadKey(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(key).To(HaveLen(32))
		_, err = cdptoken.NewSigner(key)
		Expect(err).NotTo(HaveOccurred())
	})

	It("allow the executables the manager's runners allow", func() {
		vals, err := ValuesFile("values-runner.yaml")
		Expect(err).NotTo(HaveOccurred())
		opts, _ := apiOptions(vals)
		Expect(opts.AllowedExecutables).To(Equal(runnerValuesOptions().Runner.AllowedExecutables))
	})

	It("take an existing signing key, the previous one and the public URL", func() {
		vals, err := ValuesFile("values-all.yaml")
		Expect(err).NotTo(HaveOccurred())
		opts, r := apiOptions(vals)
		Expect(opts.PublicURL).To(Equal("https://browserfleet.example.com"))
		deploy := Find(r.Objects, "Deployment", "bf-browserfleet-api")
		Expect(mountedFile(deploy, "api", opts.CDPKeyFile)).To(Equal("cdp-key-2/key"))
		Expect(mountedFile(deploy, "api", opts.CDPKeyPreviousFile)).To(Equal("cdp-key-1/key"))
		Expect(Find(r.Objects, "Secret", "bf-browserfleet-cdp-signing-key")).To(BeNil())
	})

	It("have no search by default; the runner port serves all the same (the cache)", func() {
		opts, r := apiOptions(nil)
		Expect(opts.Search.Provider).To(BeEmpty())
		Expect(opts.RunnerListenAddress).To(Equal(":8001"))
		Expect(Find(r.Objects, "Service", "bf-browserfleet-api-runners")).NotTo(BeNil())
		runner := managerOptionsOf(r.Objects, "bf-browserfleet-manager").Controllers.Runner
		Expect(runner.SearchURL).To(BeEmpty())
		Expect(runner.ServicesURL).To(Equal("http://bf-browserfleet-api-runners.bf-system.svc:8001"))
	})

	It("give agents the search of the values: the API calls the provider, runners its relay, which only they may reach", func() {
		vals, err := ValuesFile("values-all.yaml")
		Expect(err).NotTo(HaveOccurred())
		opts, r := apiOptions(vals)
		Expect(opts.Search.Provider).To(Equal("brave"))
		Expect(opts.Search.Results).To(Equal(8))
		Expect(opts.SearchMaxInFlight).To(Equal(12))
		Expect(opts.RunnerListenAddress).To(Equal(":8011"))
		deploy := Find(r.Objects, "Deployment", "bf-browserfleet-api")
		Expect(mountedFile(deploy, "api", opts.SearchAPIKeyFile)).To(Equal("brave-search/token"))

		svc := toTyped[corev1.Service](Find(r.Objects, "Service", "bf-browserfleet-api-runners"))
		Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
		Expect(svc.Spec.Ports).To(HaveLen(1))
		Expect(svc.Spec.Ports[0].Port).To(BeEquivalentTo(8011))
		Expect(managerOptionsOf(r.Objects, "bf-browserfleet-manager").Controllers.Runner.SearchURL).To(
			Equal("http://bf-browserfleet-api-runners.bf-system.svc:8011" + search.RelayPath))

		np := toTyped[networkingv1.NetworkPolicy](Find(r.Objects, "NetworkPolicy", "bf-browserfleet-runner"))
		Expect(np.Spec.Egress).To(ContainElement(SatisfyAll(
			HaveField("Ports", ConsistOf(HaveField("Port.IntVal", BeEquivalentTo(8011)))),
			HaveField("To", ConsistOf(HaveField("PodSelector.MatchLabels", HaveKeyWithValue("app.kubernetes.io/component", "api")))),
		)), "runners may reach the relay")
	})
})

// volumeAt returns the volume the container mounts at path, and path's
// name inside it.
func volumeAt(deploy *unstructured.Unstructured, container, path string) (corev1.Volume, string) {
	GinkgoHelper()
	d := toTyped[appsv1.Deployment](deploy)
	volumes := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, m := range c.VolumeMounts {
			rel, err := filepath.Rel(m.MountPath, path)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			return volumes[m.Name], rel
		}
	}
	Fail(fmt.Sprintf("no volume mounted at %s in %s", path, container))
	return corev1.Volume{}, ""
}

// mountedFile says which Secret and key the container sees at path, as
// "secret/key".
func mountedFile(deploy *unstructured.Unstructured, container, path string) string {
	GinkgoHelper()
	v, rel := volumeAt(deploy, container, path)
	Expect(v.Secret).NotTo(BeNil(), "volume %s is no Secret", v.Name)
	for _, item := range v.Secret.Items {
		if item.Path == rel {
			return v.Secret.SecretName + "/" + item.Key
		}
	}
	return v.Secret.SecretName + "/" + rel
}

// mountedConfigMapFile returns the content of the file the container sees
// at path, which a ConfigMap of objs must hold.
func mountedConfigMapFile(objs []*unstructured.Unstructured, deploy *unstructured.Unstructured, container, path string) string {
	GinkgoHelper()
	v, rel := volumeAt(deploy, container, path)
	Expect(v.ConfigMap).NotTo(BeNil(), "volume %s is no ConfigMap", v.Name)
	key := rel
	for _, item := range v.ConfigMap.Items {
		if item.Path == rel {
			key = item.Key
		}
	}
	cm := Find(objs, "ConfigMap", v.ConfigMap.Name)
	Expect(cm).NotTo(BeNil(), "no ConfigMap %s", v.ConfigMap.Name)
	data := toTyped[corev1.ConfigMap](cm).Data
	Expect(data).To(HaveKey(key), "ConfigMap %s", v.ConfigMap.Name)
	return data[key]
}

// toTyped converts a rendered object into its Go type.
func toTyped[T any](u *unstructured.Unstructured) *T {
	GinkgoHelper()
	Expect(u).NotTo(BeNil())
	out := new(T)
	Expect(runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true)).To(Succeed())
	return out
}
