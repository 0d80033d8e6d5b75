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
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/controllers"
	"github.com/browserfleet/browserfleet/internal/testing/framework"
	. "github.com/browserfleet/browserfleet/internal/testing/matchers"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
	"github.com/browserfleet/browserfleet/runner/replay"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// session returns a function that reads the session, for Eventually.
func session(ctx context.Context, key types.NamespacedName) func(Gomega) *v1alpha1.BrowserSession {
	return read[v1alpha1.BrowserSession](ctx, key)
}

func phase(ctx context.Context, key types.NamespacedName) func(Gomega) v1alpha1.BrowserSessionPhase {
	return func(g Gomega) v1alpha1.BrowserSessionPhase { return session(ctx, key)(g).Status.Phase }
}

func conditions(ctx context.Context, key types.NamespacedName) func(Gomega) []metav1.Condition {
	return func(g Gomega) []metav1.Condition { return session(ctx, key)(g).Status.Conditions }
}

func podKey(key types.NamespacedName) types.NamespacedName {
	return types.NamespacedName{Namespace: key.Namespace, Name: v1alpha1.RunnerPodName(key.Name)}
}

// eventReasons lists the reasons of the events recorded about an object, oldest first.
func eventReasons(ctx context.Context, ns, name string) func(Gomega) []string {
	return func(g Gomega) []string {
		var list eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}
}

// startSession creates a session and plays the kubelet until it is Ready.
func startSession(ctx context.Context, s *v1alpha1.BrowserSession) types.NamespacedName {
	Expect(k8sClient.Create(ctx, s)).To(Succeed())
	key := client.ObjectKeyFromObject(s)
	Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionStarting))
	Expect(kubelet.Run(ctx, podKey(key), true)).To(Succeed())
	Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionReady))
	return key
}

// endSession sets spec.ended with a merge patch, as the API's end does; it
// does not conflict with the controller's status writes.
func endSession(ctx context.Context, key types.NamespacedName) {
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"ended":true}}`))
	Expect(k8sClient.Patch(ctx, &v1alpha1.BrowserSession{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}, patch)).To(Succeed())
}

// podVolume is the pod's volume of that name.
func podVolume(pod *corev1.Pod, name string) corev1.Volume {
	GinkgoHelper()
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	Fail(fmt.Sprintf("pod %s has no volume %s", pod.Name, name))
	return corev1.Volume{}
}

// projectedFiles maps each file of a projected volume to the Secret and key
// it comes from, as secret/key.
func projectedFiles(v corev1.Volume) map[string]string {
	GinkgoHelper()
	Expect(v.Projected).NotTo(BeNil(), "volume %s is projected", v.Name)
	files := map[string]string{}
	for _, src := range v.Projected.Sources {
		Expect(src.Secret).NotTo(BeNil(), "volume %s projects Secrets only", v.Name)
		for _, item := range src.Secret.Items {
			files[item.Path] = src.Secret.Name + "/" + item.Key
		}
	}
	return files
}

func podGone(ctx context.Context, key types.NamespacedName) func() bool {
	return func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, podKey(key), &corev1.Pod{}))
	}
}

var _ = Describe("BrowserSession", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	It("runs a hardened runner pod with a random token, owned by the session", func(ctx SpecContext) {
		sessionSecret(ctx, ns, "model-keys", v1alpha1.SessionSecretAny)
		s := wrappers.MakeBrowserSession("hardened", ns).ModelAPIKey("model-keys", "openai").
			UserMetadata(map[string]apiextensionsv1.JSON{"note": {Raw: []byte(`"a note for the client"`)}}).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionStarting))
		s = session(ctx, key)(Default)
		Expect(s.Finalizers).To(ContainElement(controllers.StopBrowserFinalizer))
		Expect(s.Status.PodName).To(Equal("hardened-runner"))

		By("owning the pod and the token secret")
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, podKey(key), pod)).To(Succeed())
		Expect(metav1.IsControlledBy(pod, s)).To(BeTrue(), "the session controls its pod")
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: v1alpha1.RunnerTokenSecretName(s.Name)}, secret)).To(Succeed())
		Expect(metav1.IsControlledBy(secret, s)).To(BeTrue(), "the session controls its token secret")
		Expect(secret.Data[rpc.TokenSecretKey]).To(HaveLen(43), "256 random bits, base64url")
		Expect(secret.Immutable).To(HaveValue(BeTrue()))

		By("giving the pod no credentials and no privileges")
		Expect(pod.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()))
		Expect(pod.Spec.EnableServiceLinks).To(HaveValue(BeFalse()))
		Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
		Expect(pod.Spec.RuntimeClassName).To(HaveValue(Equal("gvisor")))
		Expect(pod.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
		Expect(pod.Spec.SecurityContext.RunAsUser).To(HaveValue(BeNumerically(">", 0)))
		Expect(pod.Spec.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
		Expect(pod.Spec.Containers).To(HaveLen(1))
		c := pod.Spec.Containers[0]
		Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
		Expect(c.SecurityContext.Privileged).To(HaveValue(BeFalse()))
		Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
		Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
		Expect(c.SecurityContext.Capabilities.Add).To(BeEmpty())

		By("giving Chromium a memory-backed /dev/shm and a writable /tmp")
		Expect(c.VolumeMounts).To(ContainElements(
			corev1.VolumeMount{Name: "dshm", MountPath: "/dev/shm"},
			corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"},
		))
		shm := pod.Spec.Volumes[0]
		Expect(shm.Name).To(Equal("dshm"))
		Expect(shm.EmptyDir.Medium).To(Equal(corev1.StorageMediumMemory))
		Expect(shm.EmptyDir.SizeLimit.String()).To(Equal("1Gi"))

		By("leaving the runner a small writable volume for the summary of its history, its termination message")
		Expect(c.TerminationMessagePath).To(Equal(rpc.TerminationMessagePath))
		Expect(c.TerminationMessagePolicy).To(Equal(corev1.TerminationMessageFallbackToLogsOnError))
		Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "status", MountPath: rpc.StatusDir}))
		Expect(podVolume(pod, "status").EmptyDir.Medium).To(Equal(corev1.StorageMediumMemory))
		Expect(pod.Finalizers).To(ConsistOf(controllers.RunnerSummaryFinalizer))

		By("taking image, command, resources and probe from the manager's configuration")
		Expect(c.Image).To(Equal("registry.test/browserfleet/runner:test"))
		Expect(c.Command).To(Equal([]string{"/runner"}))
		// The manager's own flags come first, so that no arg of the
		// configuration can hide them from the runner's flag parsing.
		Expect(c.Args).To(Equal([]string{"--allowed-executable=" + allowedExecutable, "--log-level=debug"}))
		Expect(c.Resources.Requests.Cpu().Equal(resource.MustParse("250m"))).To(BeTrue())
		Expect(c.Resources.Limits.Memory().Equal(resource.MustParse("2Gi"))).To(BeTrue())
		Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal(rpc.HealthPath))
		Expect(c.ReadinessProbe.HTTPGet.Port.StrVal).To(Equal(rpc.PortName))
		Expect(c.Ports).To(ConsistOf(corev1.ContainerPort{Name: rpc.PortName, ContainerPort: rpc.Port, Protocol: corev1.ProtocolTCP}))

		By("handing the runner its token and the model key as files, mode 0400, on a read-only Secret volume")
		Expect(pod.Spec.SecurityContext.FSGroup).To(Equal(pod.Spec.SecurityContext.RunAsUser), "secret files are group-readable by the runner's own group only")
		vol := podVolume(pod, "secrets")
		Expect(vol.Projected).NotTo(BeNil())
		Expect(vol.Projected.DefaultMode).To(HaveValue(Equal(int32(0o400))))
		Expect(projectedFiles(vol)).To(Equal(map[string]string{
			rpc.FileToken:       secret.Name + "/" + rpc.TokenSecretKey,
			rpc.FileModelAPIKey: "model-keys/openai",
		}))
		Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "secrets", MountPath: rpc.SecretsDir, ReadOnly: true}))

		By("putting no secret in its environment, which tini keeps readable for the pod's life")
		Expect(c.EnvFrom).To(BeEmpty())
		env := map[string]corev1.EnvVar{}
		for _, e := range c.Env {
			env[e.Name] = e
			if e.ValueFrom != nil {
				Expect(e.ValueFrom.SecretKeyRef).To(BeNil(), "variable %s comes from a Secret", e.Name)
			}
			Expect(e.Value).NotTo(ContainSubstring(string(secret.Data[rpc.TokenSecretKey])))
			Expect(e.Value).NotTo(ContainSubstring("sk-test"))
		}
		Expect(env[rpc.EnvSecretsDir].Value).To(Equal(rpc.SecretsDir))

		By("giving the runner the session's spec without its userMetadata")
		var spec v1alpha1.BrowserSessionSpec
		Expect(json.Unmarshal([]byte(env[rpc.EnvSession].Value), &spec)).To(Succeed())
		Expect(s.Spec.CloudSessionCreateParams.UserMetadata).To(HaveKey("note"))
		want := s.Spec.DeepCopy()
		want.CloudSessionCreateParams.UserMetadata = nil
		Expect(cmp.Diff(*want, spec)).To(BeEmpty(), "the runner gets the session's spec")
		Expect(env[rpc.EnvSession].Value).NotTo(ContainSubstring("a note for the client"))
	})

	It("fails, before creating anything, when its executablePath is not one the operator allows", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("exec", ns).Local(&v1alpha1.LaunchOptions{ExecutablePath: "/bin/sh"}).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionFailed))
		Expect(conditions(ctx, key)(Default)).To(HaveCondition(v1alpha1.BrowserSessionConditionFailed, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonExecutableNotAllowed))
		Expect(session(ctx, key)(Default).Status.Message).To(ContainSubstring(`spec.browser.launchOptions.executablePath "/bin/sh" is not a browser this installation allows`))
		Eventually(eventReasons(ctx, ns, s.Name)).Should(ContainElement(string(v1alpha1.BrowserSessionFailed)))
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, podKey(key), &corev1.Pod{})) &&
				apierrors.IsNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: v1alpha1.RunnerTokenSecretName(s.Name)}, &corev1.Secret{}))
		}).Should(BeTrue(), "no pod and no token secret for a refused session")
	})

	It("says which of its settings this installation does not honour: a condition naming each, and a Warning event", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("unsupported", ns).Cloud(&v1alpha1.CloudSessionCreateParams{
			BrowserSettings: &v1alpha1.BrowserSettings{RecordSession: ptr.To(true), Verified: ptr.To(true)},
		}).Obj()
		key := startSession(ctx, s)
		Expect(conditions(ctx, key)(Default)).To(HaveCondition(v1alpha1.BrowserSessionConditionUnsupportedSetting, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonSettingsIgnored))
		c := meta.FindStatusCondition(session(ctx, key)(Default).Status.Conditions, v1alpha1.BrowserSessionConditionUnsupportedSetting)
		Expect(c.Message).To(And(
			ContainSubstring("cloudSessionCreateParams.browserSettings.recordSession: "),
			ContainSubstring("cloudSessionCreateParams.browserSettings.verified: ")))
		Eventually(eventReasons(ctx, ns, s.Name)).Should(ContainElement(v1alpha1.BrowserSessionConditionUnsupportedSetting))
	})

	It("has no UnsupportedSetting condition when it asks for nothing this installation ignores", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("all-honoured", ns).Cloud(&v1alpha1.CloudSessionCreateParams{
			BrowserSettings: &v1alpha1.BrowserSettings{BlockAds: ptr.To(true)},
		}).Obj()
		key := startSession(ctx, s)
		Expect(meta.FindStatusCondition(session(ctx, key)(Default).Status.Conditions, v1alpha1.BrowserSessionConditionUnsupportedSetting)).To(BeNil())
		Expect(eventReasons(ctx, ns, s.Name)(Default)).NotTo(ContainElement(v1alpha1.BrowserSessionConditionUnsupportedSetting))
	})

	It("runs a session whose executablePath the operator allows", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("exec-ok", ns).Local(&v1alpha1.LaunchOptions{ExecutablePath: allowedExecutable}).Obj()
		key := startSession(ctx, s)
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, podKey(key), pod)).To(Succeed())
		Expect(pod.Spec.Containers[0].Args).To(ContainElement("--allowed-executable=" + allowedExecutable))
	})

	It("follows its pod from Pending through Starting to Ready", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("lifecycle", ns).Timeout(1800).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)

		By("Starting, with the pod pending, once the pod exists")
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionStarting))
		Expect(conditions(ctx, key)(Default)).To(HaveCondition(v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonPodPending))
		s = session(ctx, key)(Default)
		Expect(s.Status.ExpiresAt.Time).To(BeTemporally("~", s.CreationTimestamp.Add(30*time.Minute), time.Second))
		Expect(s.Status.ObservedGeneration).To(Equal(s.Generation))

		By("saying why the container waits")
		Expect(kubelet.Wait(ctx, podKey(key), "CreateContainerConfigError", `secret "model-keys" not found`)).To(Succeed())
		Eventually(func(g Gomega) string { return session(ctx, key)(g).Status.Message }).Should(
			ContainSubstring(`waiting: CreateContainerConfigError: secret "model-keys" not found`))

		By("still Starting while the runner runs but is not ready")
		Expect(kubelet.Run(ctx, podKey(key), false)).To(Succeed())
		Eventually(conditions(ctx, key)).Should(HaveCondition(v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonRunnerNotReady))
		Expect(phase(ctx, key)(Default)).To(Equal(v1alpha1.BrowserSessionStarting))

		By("Ready, with the runner's endpoint, once the pod is ready")
		Expect(kubelet.Run(ctx, podKey(key), true)).To(Succeed())
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionReady))
		s = session(ctx, key)(Default)
		Expect(s.Status.Conditions).To(HaveCondition(v1alpha1.BrowserSessionConditionReady, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonRunnerReady))
		Expect(s.Status.Endpoint).To(Equal(fmt.Sprintf("http://%s:%d", framework.PodIP, rpc.Port)))
		Expect(s.Status.CDPURL).To(Equal(fmt.Sprintf("ws://%s:%d%s", framework.PodIP, rpc.Port, rpc.CDPPath)))
		Expect(s.Status.StartedAt).NotTo(BeNil())
		Expect(s.Status.EndedAt).To(BeNil())

		By("recording an event on each transition")
		Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElements("Starting", "Ready"))
	})

	DescribeTable("fails with the reason when its runner stops",
		func(ctx SpecContext, stop func(context.Context, types.NamespacedName) error, reason, message string) {
			key := startSession(ctx, wrappers.MakeBrowserSession("failing", ns).Obj())
			Expect(stop(ctx, podKey(key))).To(Succeed())
			Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionFailed))
			s := session(ctx, key)(Default)
			Expect(s.Status.Conditions).To(HaveCondition(v1alpha1.BrowserSessionConditionFailed, metav1.ConditionTrue, reason))
			Expect(s.Status.Conditions).To(HaveCondition(v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonSessionOver))
			Expect(s.Status.Message).To(ContainSubstring(message))
			Expect(s.Status.EndedAt).NotTo(BeNil())
			Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElement("Failed"))

			By("staying Failed: a failed session is never restarted")
			Consistently(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionFailed))
		},
		Entry("the runner is killed", func(ctx context.Context, pod types.NamespacedName) error {
			return kubelet.Exit(ctx, pod, 137, "OOMKilled", "")
		}, v1alpha1.BrowserSessionReasonPodFailed, "container runner exited with code 137 (OOMKilled)"),
		Entry("the node evicts the pod", func(ctx context.Context, pod types.NamespacedName) error {
			return kubelet.Evict(ctx, pod, "The node was low on resource: memory.")
		}, v1alpha1.BrowserSessionReasonPodFailed, "Evicted: The node was low on resource: memory."),
		Entry("the runner exits cleanly before the session ends", func(ctx context.Context, pod types.NamespacedName) error {
			return kubelet.Exit(ctx, pod, 0, "Completed", "")
		}, v1alpha1.BrowserSessionReasonRunnerExited, "runner exited before the session ended"),
		Entry("the pod is deleted", func(ctx context.Context, pod types.NamespacedName) error {
			return k8sClient.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}})
		}, v1alpha1.BrowserSessionReasonPodDeleted, "failing-runner"),
	)

	It("ends when asked: Ending while the browser stops, then Ended", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("ending", ns).Obj())
		Expect(kubelet.Hold(ctx, podKey(key))).To(Succeed())

		endSession(ctx, key)

		By("Ending, with the pod terminating")
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnding))
		Expect(conditions(ctx, key)(Default)).To(HaveCondition(v1alpha1.BrowserSessionConditionEnding, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonEndRequested))
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, podKey(key), pod)).To(Succeed())
		Expect(pod.DeletionTimestamp).NotTo(BeNil())

		By("Ended once the pod is gone")
		Expect(kubelet.Release(ctx, podKey(key))).To(Succeed())
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnded))
		s := session(ctx, key)(Default)
		Expect(s.Status.Conditions).To(HaveCondition(v1alpha1.BrowserSessionConditionEnded, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonBrowserStopped))
		Expect(s.Status.Conditions).To(HaveCondition(v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonSessionOver))
		Expect(s.Status.EndedAt).NotTo(BeNil())
		Expect(s.Status.Endpoint).To(BeEmpty())
		Expect(podGone(ctx, key)()).To(BeTrue())
		Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElements("Ending", "Ended"))

		By("refusing to undo the end")
		base := s.DeepCopy()
		s.Spec.Ended = false
		Expect(k8sClient.Patch(ctx, s, client.MergeFrom(base))).To(BeInvalidError("spec.ended", "ended cannot be unset"))
	})

	It("keeps the summary its runner left of its history, then lets the pod go", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("summary", ns).Obj())
		Expect(kubelet.Bind(ctx, podKey(key))).To(Succeed())
		endSession(ctx, key)
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnding))

		By("keeping the pod while its runner stops")
		Consistently(podGone(ctx, key), 2*time.Second).Should(BeFalse())
		Expect(phase(ctx, key)(Default)).To(Equal(v1alpha1.BrowserSessionEnding))

		By("taking the summary from the runner's termination message, however soon the kubelet deletes the pod after it")
		sum := replay.Summary{Calls: 5, Failed: 1, ByMethod: map[string]int64{"navigate": 1, "act": 3, "extract": 1},
			TokenUsage:  replay.TokenUsage{InputTokens: 2100, OutputTokens: 38, TimeMs: 950},
			FirstCallAt: 1767225600000, LastCallAt: 1767225660000}
		Expect(kubelet.Exit(ctx, podKey(key), 0, "Completed", string(sum.TerminationMessage()))).To(Succeed())
		Expect(kubelet.DeleteFinally(ctx, podKey(key))).To(Succeed())
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnded))
		Expect(podGone(ctx, key)()).To(BeTrue())
		s := session(ctx, key)(Default)
		Expect(s.Status.History).To(Equal(&v1alpha1.BrowserSessionHistory{
			Calls: 5, Failed: 1,
			ByMethod:    []v1alpha1.MethodCalls{{Method: "act", Calls: 3}, {Method: "extract", Calls: 1}, {Method: "navigate", Calls: 1}},
			Usage:       &v1alpha1.Usage{InputTokens: 2100, OutputTokens: 38, InferenceTimeMs: 950},
			FirstCallAt: &metav1.Time{Time: time.UnixMilli(1767225600000)},
			LastCallAt:  &metav1.Time{Time: time.UnixMilli(1767225660000)},
		}))
	})

	It("ends without a summary when its runner left none", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("no-summary", ns).Obj())
		Expect(kubelet.Bind(ctx, podKey(key))).To(Succeed())
		endSession(ctx, key)
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnding))
		Expect(kubelet.Exit(ctx, podKey(key), 137, "Error", "panic: the end of a log")).To(Succeed())
		Expect(kubelet.DeleteFinally(ctx, podKey(key))).To(Succeed())
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnded))
		Expect(session(ctx, key)(Default).Status.History).To(BeNil())
	})

	It("force-deletes a runner pod its dead node never lets go, and ends", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("dead-node", ns).Obj())
		Expect(kubelet.Bind(ctx, podKey(key))).To(Succeed())
		endSession(ctx, key)
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnding))
		pod := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, podKey(key), pod)).To(Succeed())
		Expect(pod.DeletionTimestamp).NotTo(BeNil())

		By("no kubelet ever confirms: after its grace period and forceDeleteAfter the manager deletes it with no grace")
		grace := time.Until(pod.DeletionTimestamp.Time)
		Eventually(podGone(ctx, key), grace+forceDeleteAfter+15*time.Second).Should(BeTrue())
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnded))
		Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElement("RunnerPodForceDeleted"))
	})

	It("ends a session that never became ready", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("never-ready", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionStarting))
		endSession(ctx, key)
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnded))
		Expect(podGone(ctx, key)()).To(BeTrue())
	})

	It("ends at its timeout", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("timeout", ns).Timeout(3).Obj())
		s := session(ctx, key)(Default)
		Expect(s.Status.ExpiresAt.Time).To(BeTemporally("~", s.CreationTimestamp.Add(3*time.Second), time.Second))

		Eventually(phase(ctx, key), 10*time.Second).Should(Equal(v1alpha1.BrowserSessionEnded))
		s = session(ctx, key)(Default)
		Expect(s.Status.Conditions).To(HaveCondition(v1alpha1.BrowserSessionConditionEnding, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonTimedOut))
		Expect(s.Status.EndedAt.Time).To(BeTemporally(">=", s.Status.ExpiresAt.Truncate(time.Second)))
		Expect(podGone(ctx, key)()).To(BeTrue())
	})

	It("caps its timeout at the manager's maximum", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("capped", ns).Timeout(int32((3 * time.Hour).Seconds())).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		Eventually(func(g Gomega) *metav1.Time { return session(ctx, key)(g).Status.ExpiresAt }).ShouldNot(BeNil())
		s = session(ctx, key)(Default)
		Expect(s.Status.ExpiresAt.Time).To(BeTemporally("~", s.CreationTimestamp.Add(maxTimeout), time.Second))
		Eventually(eventReasons(ctx, ns, key.Name)).Should(ContainElement("TimeoutCapped"))
	})

	It("uses the manager's default timeout when the spec has none", func(ctx SpecContext) {
		s := wrappers.MakeBrowserSession("default-timeout", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		Eventually(func(g Gomega) *metav1.Time { return session(ctx, key)(g).Status.ExpiresAt }).ShouldNot(BeNil())
		s = session(ctx, key)(Default)
		Expect(s.Status.ExpiresAt.Time).To(BeTemporally("~", s.CreationTimestamp.Add(defaultTimeout), time.Second))
	})

	It("is deleted once its TTL after ending runs out", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("ttl", ns).TTLAfterEnded(1).Obj())
		endSession(ctx, key)
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key, &v1alpha1.BrowserSession{}))
		}, 10*time.Second).Should(BeTrue())
	})

	It("is kept after ending until its TTL runs out", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("kept", ns).Obj())
		endSession(ctx, key)
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnded))
		Consistently(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnded))
	})

	It("deletes a failed session after its TTL too", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("failed-ttl", ns).TTLAfterEnded(1).Obj())
		Expect(kubelet.Exit(ctx, podKey(key), 1, "Error", "")).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key, &v1alpha1.BrowserSession{}))
		}, 10*time.Second).Should(BeTrue())
	})

	It("stops its browser before it goes when deleted", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("deleted", ns).Obj())
		Expect(kubelet.Hold(ctx, podKey(key))).To(Succeed())
		Expect(k8sClient.Delete(ctx, session(ctx, key)(Default))).To(Succeed())

		By("staying, Ending, while its pod terminates")
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnding))
		s := session(ctx, key)(Default)
		Expect(s.DeletionTimestamp).NotTo(BeNil())
		Expect(s.Status.Conditions).To(HaveCondition(v1alpha1.BrowserSessionConditionEnding, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonDeleted))
		Consistently(func() error { return k8sClient.Get(ctx, key, &v1alpha1.BrowserSession{}) }).Should(Succeed())

		By("going once the pod is gone")
		Expect(kubelet.Release(ctx, podKey(key))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key, &v1alpha1.BrowserSession{}))
		}).Should(BeTrue())
		Expect(podGone(ctx, key)()).To(BeTrue())
	})

	It("hands every referenced secret to the runner as a file, and the model's header Secret as a directory", func(ctx SpecContext) {
		sessionSecret(ctx, ns, "model-keys", v1alpha1.SessionSecretAny)
		sessionSecret(ctx, ns, "model-headers", "secrets")
		sessionSecret(ctx, ns, "proxy", "secrets")
		sessionSecret(ctx, ns, "attach", "secrets")
		s := wrappers.MakeBrowserSession("secrets", ns).
			ModelAPIKey("model-keys", "anthropic").
			ModelHeadersSecret("model-headers").
			Browser(&v1alpha1.BrowserConfig{
				Type:            v1alpha1.BrowserTypeLocal,
				CDPURLSecretRef: &v1alpha1.SecretKeyReference{Name: "attach", Key: "url"},
				LaunchOptions: &v1alpha1.LaunchOptions{
					CDPHeadersSecretRef: &v1alpha1.SecretKeyReference{Name: "attach", Key: "headers"},
					Proxy: &v1alpha1.LaunchProxy{
						Server: "http://proxy:3128", Username: "u",
						PasswordSecretRef: &v1alpha1.SecretKeyReference{Name: "proxy", Key: "password"},
					},
				},
			}).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		pod := &corev1.Pod{}
		Eventually(func() error { return k8sClient.Get(ctx, podKey(client.ObjectKeyFromObject(s)), pod) }).Should(Succeed())
		c := pod.Spec.Containers[0]
		Expect(projectedFiles(podVolume(pod, "secrets"))).To(Equal(map[string]string{
			rpc.FileToken:               "secrets-runner-token/token",
			rpc.FileModelAPIKey:         "model-keys/anthropic",
			rpc.FileCDPURL:              "attach/url",
			rpc.FileCDPHeaders:          "attach/headers",
			rpc.FileLaunchProxyPassword: "proxy/password",
		}))
		headers := podVolume(pod, "model-headers")
		Expect(headers.Secret).NotTo(BeNil())
		Expect(headers.Secret.SecretName).To(Equal("model-headers"))
		Expect(headers.Secret.DefaultMode).To(HaveValue(Equal(int32(0o400))))
		Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "model-headers", MountPath: rpc.ModelHeadersDir, ReadOnly: true}))
		env := map[string]string{}
		for _, e := range c.Env {
			Expect(e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil).To(BeTrue(), "variable %s comes from a Secret", e.Name)
			env[e.Name] = e.Value
		}
		Expect(c.EnvFrom).To(BeEmpty())
		Expect(env).To(HaveKeyWithValue(rpc.EnvModelHeadersDir, rpc.ModelHeadersDir))
	})

	It("starts only once an older session's token Secret of the same name is gone", func(ctx SpecContext) {
		stale := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerTokenSecretName("reborn-token"), Namespace: ns,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "browserfleet.io/v1alpha1", Kind: "BrowserSession", Name: "reborn-token",
					UID: "0e7f9a0c-0000-4000-8000-000000000001", Controller: ptr.To(true)}}},
			StringData: map[string]string{"token": "the old session's"},
		}
		Expect(k8sClient.Create(ctx, stale)).To(Succeed())
		s := wrappers.MakeBrowserSession("reborn-token", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		Consistently(podGone(ctx, key), 2*time.Second).Should(BeTrue(), "no pod with the old session's token")

		By("the garbage collector takes the old Secret")
		Expect(k8sClient.Delete(ctx, stale)).To(Succeed())
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionStarting))
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: v1alpha1.RunnerTokenSecretName("reborn-token")}, secret)).To(Succeed())
		current := session(ctx, key)(Default)
		Expect(metav1.IsControlledBy(secret, current)).To(BeTrue())
		Expect(string(secret.Data["token"])).NotTo(Equal("the old session's"))
	})

	It("refuses to change a running session's browser or model", func(ctx SpecContext) {
		key := startSession(ctx, wrappers.MakeBrowserSession("immutable", ns).Obj())
		s := session(ctx, key)(Default)
		base := s.DeepCopy()
		s.Spec.Model.Name = "openai/gpt-5"
		Expect(k8sClient.Patch(ctx, s, client.MergeFrom(base))).To(BeInvalidError("spec.model", "model is immutable"))
		s = base.DeepCopy()
		s.Spec.Browser = &v1alpha1.BrowserConfig{Type: v1alpha1.BrowserTypeLocal, LaunchOptions: &v1alpha1.LaunchOptions{Headless: ptr.To(false)}}
		Expect(k8sClient.Patch(ctx, s, client.MergeFrom(base))).To(BeInvalidError("spec.browser", "browser is immutable"))
	})
})

var _ = Describe("BrowserSession secret references", func() {
	var ns string
	BeforeEach(func(ctx SpecContext) { ns = newNamespace(ctx) })

	// failedFor: the session fails SecretNotAllowed naming field and
	// secret, without ever getting a pod.
	failedFor := func(ctx context.Context, s *v1alpha1.BrowserSession, field, secret string) {
		GinkgoHelper()
		key := client.ObjectKeyFromObject(s)
		// It waits (Pending, Ready=False SecretNotAllowed) for secretWait,
		// then fails.
		Eventually(phase(ctx, key), 4*secretWait).Should(Equal(v1alpha1.BrowserSessionFailed))
		Expect(conditions(ctx, key)(Default)).To(HaveCondition(v1alpha1.BrowserSessionConditionFailed, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonSecretNotAllowed))
		msg := session(ctx, key)(Default).Status.Message
		Expect(msg).To(ContainSubstring(field + `: Secret "` + secret + `" does not exist or is not labelled browserfleet.io/session-secret=true`))
		Expect(msg).To(ContainSubstring("no runner pod was created"))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, podKey(key), &corev1.Pod{}))).To(BeTrue(), "no pod for a refused session")
	}

	It("refuses a Secret that has not opted in, naming the reference, and never reads it", func(ctx SpecContext) {
		// The namespace's most precious Secret: an unlabelled one.
		sessionSecret(ctx, ns, "signing-key", "")
		s := wrappers.MakeBrowserSession("thief", ns).ModelAPIKey("signing-key", "openai").Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		failedFor(ctx, s, "spec.model.apiKeySecretRef", "signing-key")
	})

	It("refuses a Secret labelled for another session, and one that does not exist, alike", func(ctx SpecContext) {
		sessionSecret(ctx, ns, "for-alice", "alice")
		s := wrappers.MakeBrowserSession("mallory", ns).ModelAPIKey("model-keys", "openai").
			Cloud(&v1alpha1.CloudSessionCreateParams{Proxies: []v1alpha1.Proxy{{
				Type: v1alpha1.ProxyTypeExternal, Server: "http://proxy:3128", Username: "u",
				PasswordSecretRef: &v1alpha1.SecretKeyReference{Name: "for-alice", Key: "password"},
			}}}).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		failedFor(ctx, s, "spec.cloudSessionCreateParams.proxies[0].passwordSecretRef", "for-alice")
		Expect(session(ctx, client.ObjectKeyFromObject(s))(Default).Status.Message).To(
			ContainSubstring(`spec.model.apiKeySecretRef: Secret "model-keys" does not exist`))
	})

	It("refuses a Secret labelled with its name but owned by another object", func(ctx SpecContext) {
		owned := sessionSecret(ctx, ns, "old-keys", "reborn")
		owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "browserfleet.io/v1alpha1", Kind: "BrowserSession", Name: "reborn", UID: "0e7f9a0c-0000-4000-8000-000000000000"}}
		Expect(k8sClient.Update(ctx, owned)).To(Succeed())
		s := wrappers.MakeBrowserSession("reborn", ns).ModelAPIKey("old-keys", "openai").Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		failedFor(ctx, s, "spec.model.apiKeySecretRef", "old-keys")
	})

	It("refuses an unlabelled Secret for the browser to attach to, and for its headers", func(ctx SpecContext) {
		sessionSecret(ctx, ns, "cdp", "")
		s := wrappers.MakeBrowserSession("attacher", ns).Attach("cdp", "url", "headers").Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		failedFor(ctx, s, "spec.browser.cdpUrlSecretRef", "cdp")
		Expect(session(ctx, client.ObjectKeyFromObject(s))(Default).Status.Message).To(
			ContainSubstring(`spec.browser.launchOptions.cdpHeadersSecretRef: Secret "cdp" does not exist`))
	})

	It("starts once a Secret it waits for opts in", func(ctx SpecContext) {
		secret := sessionSecret(ctx, ns, "late-keys", "")
		s := wrappers.MakeBrowserSession("patient", ns).ModelAPIKey("late-keys", "openai").Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		Eventually(conditions(ctx, key)).Should(HaveCondition(v1alpha1.BrowserSessionConditionReady, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonSecretNotAllowed))
		secret.Labels = map[string]string{v1alpha1.LabelSessionSecret: "patient"}
		Expect(k8sClient.Update(ctx, secret)).To(Succeed())
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionStarting))
		Expect(k8sClient.Get(ctx, podKey(key), &corev1.Pod{})).To(Succeed())
	})
})

var _ = Describe("BrowserSession quota", func() {
	It("holds a project's sessions beyond its browsers back in creation order, and fails those beyond its live sessions", func(ctx SpecContext) {
		// The pool specs may have made it.
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: quotaProject}}))).To(Succeed())
		keys := make([]types.NamespacedName, 4)
		for i := range keys {
			s := wrappers.MakeBrowserSession(fmt.Sprintf("q%d", i), quotaProject).Obj()
			Expect(k8sClient.Create(ctx, s)).To(Succeed())
			keys[i] = client.ObjectKeyFromObject(s)
			if i == 1 {
				// Two browsers: the first two start.
				Eventually(phase(ctx, keys[0])).Should(Equal(v1alpha1.BrowserSessionStarting))
				Eventually(phase(ctx, keys[1])).Should(Equal(v1alpha1.BrowserSessionStarting))
			}
			if i == 2 {
				Eventually(conditions(ctx, keys[2])).Should(HaveCondition(v1alpha1.BrowserSessionConditionQuotaExceeded, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonQuotaExceeded))
			}
		}

		By("the third waits, Pending, without a pod")
		Expect(phase(ctx, keys[2])(Default)).To(Equal(v1alpha1.BrowserSessionPending))
		Expect(session(ctx, keys[2])(Default).Status.Message).To(Equal(
			"waiting for a browser: the project has 2 sessions running and 0 waiting ahead of this one, its limit is 2 (concurrentSessions)"))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, podKey(keys[2]), &corev1.Pod{}))).To(BeTrue())

		By("the fourth fails: three live sessions are the project's limit")
		Eventually(phase(ctx, keys[3])).Should(Equal(v1alpha1.BrowserSessionFailed))
		Expect(conditions(ctx, keys[3])(Default)).To(HaveCondition(v1alpha1.BrowserSessionConditionFailed, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonQuotaExceeded))
		Expect(session(ctx, keys[3])(Default).Status.Message).To(ContainSubstring("3 live sessions created before this one, its limit is 3 (liveSessions)"))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, podKey(keys[3]), &corev1.Pod{}))).To(BeTrue())

		By("ending the first gives the third its browser")
		Consistently(phase(ctx, keys[2]), time.Second).Should(Equal(v1alpha1.BrowserSessionPending))
		endSession(ctx, keys[0])
		Eventually(phase(ctx, keys[0])).Should(Equal(v1alpha1.BrowserSessionEnded))
		Eventually(phase(ctx, keys[2])).Should(Equal(v1alpha1.BrowserSessionStarting))
		Expect(conditions(ctx, keys[2])(Default)).To(HaveCondition(v1alpha1.BrowserSessionConditionQuotaExceeded, metav1.ConditionFalse, v1alpha1.BrowserSessionReasonQuotaAdmitted))
		Expect(k8sClient.Get(ctx, podKey(keys[2]), &corev1.Pod{})).To(Succeed())
	})
})

var _ = Describe("BrowserSession startup deadline", func() {
	It("fails a session whose pod is not ready in time with the pod's own words, and deletes the pod", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		s := wrappers.MakeBrowserSession("stuck", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionStarting))
		Expect(kubelet.Wait(ctx, podKey(key), "ImagePullBackOff", `Back-off pulling image "registry.test/browserfleet/runner:test"`)).To(Succeed())

		Eventually(phase(ctx, key), 2*startupTimeout).Should(Equal(v1alpha1.BrowserSessionFailed))
		Expect(conditions(ctx, key)(Default)).To(HaveCondition(v1alpha1.BrowserSessionConditionFailed, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonStartupTimedOut))
		msg := session(ctx, key)(Default).Status.Message
		Expect(msg).To(ContainSubstring("the session was not ready within 20s of its creation"))
		Expect(msg).To(ContainSubstring(`container runner is waiting: ImagePullBackOff: Back-off pulling image "registry.test/browserfleet/runner:test"`))
		Eventually(func() bool {
			pod := &corev1.Pod{}
			err := k8sClient.Get(ctx, podKey(key), pod)
			return apierrors.IsNotFound(err) || (err == nil && pod.DeletionTimestamp != nil)
		}).Should(BeTrue(), "the stuck pod is deleted")
	})
})

var _ = Describe("BrowserSession claim deadline", func() {
	It("ends a session the API created whose client never received it", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		s := wrappers.MakeBrowserSession("unclaimed", ns).Obj()
		s.Annotations = map[string]string{v1alpha1.AnnotationClaimDeadline: time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		Eventually(conditions(ctx, key)).Should(HaveCondition(v1alpha1.BrowserSessionConditionEnding, metav1.ConditionTrue, v1alpha1.BrowserSessionReasonUnclaimed))
		ending := meta.FindStatusCondition(session(ctx, key)(Default).Status.Conditions, v1alpha1.BrowserSessionConditionEnding)
		Expect(ending.Message).To(ContainSubstring("never received its id"))
		Eventually(phase(ctx, key)).Should(Equal(v1alpha1.BrowserSessionEnded))
	})

	It("lets a claimed session run on", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		s := wrappers.MakeBrowserSession("claimed", ns).Obj()
		deadline := time.Now().Add(5 * time.Second)
		s.Annotations = map[string]string{v1alpha1.AnnotationClaimDeadline: deadline.UTC().Format(time.RFC3339)}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		key := client.ObjectKeyFromObject(s)
		// The API's claim: one merge patch removing the annotation.
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+v1alpha1.AnnotationClaimDeadline+`":null}}}`))
		Expect(k8sClient.Patch(ctx, s, patch)).To(Succeed())
		Consistently(phase(ctx, key), time.Until(deadline)+2*time.Second).ShouldNot(BeElementOf(v1alpha1.BrowserSessionEnding, v1alpha1.BrowserSessionEnded))
	})
})
