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
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/internal/localkubelet"
)

var _ = Describe("Kubelet", func() {
	It("registers a Ready node that kubectl lists", func(ctx SpecContext) {
		node := &corev1.Node{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: kubelet.NodeName()}, node)).To(Succeed())
		Expect(node.Status.Conditions).To(ContainElement(And(
			HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))
		Expect(node.Status.Addresses).To(ContainElement(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}))

		out, stderr, err := fw.Kubectl("get", "nodes", "--no-headers")
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(out).To(MatchRegexp(`(?m)^%s\s+Ready\s`, kubelet.NodeName()))
	})

	It("binds a pod and runs it with the address and environment it asks for", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns},
			Data:       map[string][]byte{"token": []byte("s3cret")},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns},
			Data:       map[string]string{"mode": "fast", "level": "3"},
		})).To(Succeed())
		pod := fakePod(ns, "envy",
			env("GREETING", "hello"),
			env("MESSAGE", "$(GREETING), $(CFG_mode) world $$(GREETING) $(UNDEFINED)"),
			env("HOME", "/tmp"),
			corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token",
			}}},
			corev1.EnvVar{Name: "OPTIONAL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "x", Optional: ptr.To(true),
			}}},
			corev1.EnvVar{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "level",
			}}},
			fieldEnv("POD_NAME", "metadata.name"),
			fieldEnv("POD_NAMESPACE", "metadata.namespace"),
			fieldEnv("POD_UID", "metadata.uid"),
			fieldEnv("NODE_NAME", "spec.nodeName"),
			fieldEnv("HOST_IP", "status.hostIP"),
			fieldEnv("MANAGED_BY", "metadata.labels['app.kubernetes.io/managed-by']"),
			corev1.EnvVar{Name: "MEMORY_LIMIT_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
				Resource: "limits.memory", Divisor: resource.MustParse("1Mi"),
			}}},
		)
		c := &pod.Spec.Containers[0]
		c.EnvFrom = []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"},
		}}}
		c.Args = []string{"--from-pod", "$(POD_NAME)"}
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)

		pod = waitReady(ctx, key)
		Expect(pod.Spec.NodeName).To(Equal(kubelet.NodeName()))
		_, cidr, err := net.ParseCIDR(kubelet.PodCIDR())
		Expect(err).NotTo(HaveOccurred())
		Expect(cidr.Contains(net.ParseIP(pod.Status.PodIP))).To(BeTrue(), "pod IP %s in %s", pod.Status.PodIP, cidr)
		Expect(pod.Status.PodIPs).To(Equal([]corev1.PodIP{{IP: pod.Status.PodIP}}))
		Expect(pod.Status.HostIP).To(Equal("127.0.0.1"))
		Expect(pod.Status.StartTime).NotTo(BeNil())
		for _, typ := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			cond := condition(pod, typ)
			Expect(cond.Status).To(Equal(corev1.ConditionTrue), "condition %s", typ)
			Expect(cond.LastTransitionTime.IsZero()).To(BeFalse(), "condition %s", typ)
		}
		pid := runningPID(kubelet, key)
		Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
		st := pod.Status.ContainerStatuses[0]
		Expect(st.Name).To(Equal("main"))
		Expect(st.Ready).To(BeTrue())
		Expect(st.Started).To(Equal(ptr.To(true)))
		Expect(st.RestartCount).To(BeZero())
		Expect(st.Image).To(Equal(fakeImage))
		Expect(st.ImageID).NotTo(BeEmpty())
		Expect(st.ContainerID).To(Equal(fmt.Sprintf("local://%d", pid)))
		Expect(st.State.Running).NotTo(BeNil())
		Expect(st.State.Running.StartedAt.IsZero()).To(BeFalse())

		var got map[string]string
		Expect(getJSON(podURL(pod, "/env"), &got)).To(Succeed())
		// The pod's directory, linked from the state directory.
		podDir, err := os.Readlink(fmt.Sprintf("%s/pods/%s_%s_%s", stateDir, ns, pod.Name, pod.UID))
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(map[string]string{
			"PATH":            got["PATH"],
			"HOSTNAME":        "envy",
			"HOME":            podDir + "/home",
			"TMPDIR":          podDir + "/tmp",
			"POD_IP":          pod.Status.PodIP,
			"GREETING":        "hello",
			"MESSAGE":         "hello, fast world $(GREETING) $(UNDEFINED)",
			"TOKEN":           "s3cret",
			"LEVEL":           "3",
			"CFG_mode":        "fast",
			"CFG_level":       "3",
			"POD_NAME":        "envy",
			"POD_NAMESPACE":   ns,
			"POD_UID":         string(pod.UID),
			"NODE_NAME":       kubelet.NodeName(),
			"HOST_IP":         "127.0.0.1",
			"MANAGED_BY":      "browserfleet",
			"MEMORY_LIMIT_MI": "256",
		}))
		Expect(got["PATH"]).NotTo(BeEmpty())
		// TMPDIR is short enough for Unix sockets.
		Expect(len(got["TMPDIR"])).To(BeNumerically("<", 40))
		Expect(got["TMPDIR"]).To(BeADirectory())
		var args []string
		Expect(getJSON(podURL(pod, "/args"), &args)).To(Succeed())
		Expect(args).To(Equal([]string{"--from-pod", "envy"}))
	})

	It("runs a pod's processes as its runAsUser and runAsGroup, in a directory of that user's only", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "unprivileged")
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532),
			FSGroup: ptr.To[int64](65532), SupplementalGroups: []int64{65531},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		pod = waitReady(ctx, key)
		pid := runningPID(kubelet, key)

		// Only a Kubelet that runs as root can change users; otherwise
		// the processes are its own.
		uid, gid, groups := "65532", "65532", "65531"
		if os.Geteuid() != 0 {
			uid, gid, groups = strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid()), ""
		}
		status := procStatus(pid)
		Expect(status["Uid"]).To(Equal([]string{uid, uid, uid, uid}), "real, effective, saved and file system uid")
		Expect(status["Gid"]).To(Equal([]string{gid, gid, gid, gid}))
		if groups != "" {
			Expect(status["Groups"]).To(Equal([]string{groups}))
		}

		var got map[string]string
		Expect(getJSON(podURL(pod, "/env"), &got)).To(Succeed())
		podDir, err := os.Readlink(fmt.Sprintf("%s/pods/%s_%s_%s", stateDir, ns, pod.Name, pod.UID))
		Expect(err).NotTo(HaveOccurred())
		Expect(got["HOME"]).To(Equal(podDir + "/home"))
		Expect(got["TMPDIR"]).To(Equal(podDir + "/tmp"))
		for _, dir := range []string{podDir, got["HOME"], got["TMPDIR"]} {
			fi, err := os.Stat(dir)
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)), dir)
			Expect(strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid))).To(Equal(uid), dir)
		}
	})

	It("refuses to run a pod that insists on a non-root user as root", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "nonroot")
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		if os.Geteuid() != 0 {
			// A Kubelet that is not root runs it as itself: not root.
			waitReady(ctx, client.ObjectKeyFromObject(pod))
			return
		}
		Eventually(func(g Gomega) {
			st := getPod(ctx, client.ObjectKeyFromObject(pod)).Status.ContainerStatuses
			g.Expect(st).To(HaveLen(1))
			g.Expect(st[0].State.Waiting).NotTo(BeNil())
			g.Expect(st[0].State.Waiting.Reason).To(Equal("CreateContainerConfigError"))
			g.Expect(st[0].State.Waiting.Message).To(ContainSubstring("container has runAsNonRoot and image will run as root"))
		}).Should(Succeed())
	})

	It("fails to start, naming the directory, an executable the pod's user cannot reach", func(ctx SpecContext) {
		private := GinkgoT().TempDir() // 0700, the Kubelet's user's
		bin := filepath.Join(private, "fake")
		raw, err := os.ReadFile(fakeBin)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(bin, raw, 0o755)).To(Succeed())
		ns := newNamespace(ctx)
		pod := fakePod(ns, "unreachable")
		pod.Spec.Containers[0].Command = []string{bin}
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](65532)}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		if os.Geteuid() != 0 {
			// A Kubelet that is not root runs it as itself, who can.
			waitReady(ctx, client.ObjectKeyFromObject(pod))
			return
		}
		Eventually(func(g Gomega) {
			st := getPod(ctx, client.ObjectKeyFromObject(pod)).Status.ContainerStatuses
			g.Expect(st).To(HaveLen(1))
			g.Expect(st[0].State.Terminated).NotTo(BeNil())
			g.Expect(st[0].State.Terminated.Reason).To(Equal("StartError"))
			g.Expect(st[0].State.Terminated.Message).To(ContainSubstring("directory " + private + " is not searchable by uid 65532"))
		}).Should(Succeed())
	})

	It("runs the image's entrypoint and args unless the container replaces them, each pod on its own address", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		byImage := fakePod(ns, "by-image")
		byCommand := fakePod(ns, "by-command")
		byCommand.Spec.Containers[0].Command = []string{fakeCommand}
		byCommand.Spec.Containers[0].Args = []string{"--own"}
		Expect(k8sClient.Create(ctx, byImage)).To(Succeed())
		Expect(k8sClient.Create(ctx, byCommand)).To(Succeed())
		byImage = waitReady(ctx, client.ObjectKeyFromObject(byImage))
		byCommand = waitReady(ctx, client.ObjectKeyFromObject(byCommand))

		Expect(byImage.Status.PodIP).NotTo(Equal(byCommand.Status.PodIP))
		_, cidr, err := net.ParseCIDR(kubelet.PodCIDR())
		Expect(err).NotTo(HaveOccurred())
		Expect(cidr.String()).To(MatchRegexp(`^127\.\d+\.\d+\.0/24$`))
		for _, pod := range []*corev1.Pod{byImage, byCommand} {
			Expect(cidr.Contains(net.ParseIP(pod.Status.PodIP))).To(BeTrue(), "pod IP %s in %s", pod.Status.PodIP, cidr)
		}
		var args []string
		Expect(getJSON(podURL(byImage, "/args"), &args)).To(Succeed())
		Expect(args).To(Equal([]string{"--image-default"}))
		Expect(getJSON(podURL(byCommand, "/args"), &args)).To(Succeed())
		Expect(args).To(Equal([]string{"--own"}))
	})

	It("waits with CreateContainerConfigError for a missing Secret and starts once it exists", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "patient", corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "later"}, Key: "token",
		}}})
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		waitsForSecret(ctx, key, "CreateContainerConfigError", `secret "later" not found`)
		pod = waitReady(ctx, key)
		var got map[string]string
		Expect(getJSON(podURL(pod, "/env"), &got)).To(Succeed())
		Expect(got).To(HaveKeyWithValue("TOKEN", "at last"))
	})

	It("materialises Secret and projected volumes in the pod directory, with the pod's modes and its user, and rewrites paths under them", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: ns},
			Data:       map[string][]byte{"api": []byte("sk-file"), "other": []byte("unused")},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "headers", Namespace: ns},
			Data:       map[string][]byte{"X-One": []byte("1"), "X-Two": []byte("2")},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns},
			Data:       map[string]string{"mode": "fast"},
		})).To(Succeed())
		pod := fakePod(ns, "mounted",
			env("SECRETS_DIR", "/var/run/secrets/app"),
			env("API_KEY_FILE", "/var/run/secrets/app/api-key"),
			env("HEADERS_DIR", "/etc/headers"),
			env("ELSEWHERE", "/var/run/secrets/application"))
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532)}
		pod.Spec.Volumes = []corev1.Volume{
			{Name: "app", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To[int32](0o400),
				Sources: []corev1.VolumeProjection{
					{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "keys"},
						Items: []corev1.KeyToPath{{Key: "api", Path: "api-key"}}}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"},
						Items: []corev1.KeyToPath{{Key: "mode", Path: "conf/mode", Mode: ptr.To[int32](0o440)}}}},
				},
			}}},
			{Name: "headers", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "headers"}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}
		c := &pod.Spec.Containers[0]
		c.VolumeMounts = []corev1.VolumeMount{
			{Name: "app", MountPath: "/var/run/secrets/app", ReadOnly: true},
			{Name: "headers", MountPath: "/etc/headers", ReadOnly: true},
			{Name: "scratch", MountPath: "/scratch"},
		}
		c.Args = []string{"/var/run/secrets/app/conf/mode", "--key-file=/var/run/secrets/app/api-key", "/scratch/x"}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		pod = waitReady(ctx, client.ObjectKeyFromObject(pod))
		podDir, err := os.Readlink(fmt.Sprintf("%s/pods/%s_%s_%s", stateDir, ns, pod.Name, pod.UID))
		Expect(err).NotTo(HaveOccurred())
		app, headers := podDir+"/volumes/app", podDir+"/volumes/headers"

		By("rewriting the in-container paths under a mount, and only those, in the environment and the arguments")
		var got map[string]string
		Expect(getJSON(podURL(pod, "/env"), &got)).To(Succeed())
		Expect(got).To(HaveKeyWithValue("SECRETS_DIR", app))
		Expect(got).To(HaveKeyWithValue("API_KEY_FILE", app+"/api-key"))
		Expect(got).To(HaveKeyWithValue("HEADERS_DIR", headers))
		Expect(got).To(HaveKeyWithValue("ELSEWHERE", "/var/run/secrets/application"))
		var args []string
		Expect(getJSON(podURL(pod, "/args"), &args)).To(Succeed())
		Expect(args).To(Equal([]string{app + "/conf/mode", "--key-file=" + app + "/api-key", "/scratch/x"}), "emptyDir is not materialised")

		By("writing the items asked for with their modes, and every key of a whole Secret with the default 0644")
		uid := "65532"
		if os.Geteuid() != 0 {
			uid = strconv.Itoa(os.Getuid())
		}
		for path, mode := range map[string]os.FileMode{
			app + "/api-key": 0o400, app + "/conf/mode": 0o440, headers + "/X-One": 0o644, headers + "/X-Two": 0o644,
		} {
			fi, err := os.Stat(path)
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(mode), path)
			Expect(strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid))).To(Equal(uid), path)
		}
		entries, err := os.ReadDir(app)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(2), "api-key and conf, not the Secret's other key")

		By("letting the pod's user read its 0400 file")
		resp, err := podHTTP.Get(podURL(pod, "/file?path="+app+"/api-key"))
		Expect(err).NotTo(HaveOccurred())
		body, err := io.ReadAll(resp.Body)
		Expect(resp.Body.Close()).To(Succeed())
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
		Expect(string(body)).To(Equal("sk-file"))
	})

	It("waits ContainerCreating for a volume's missing Secret and starts once it exists", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "mount-later", env("TOKEN_FILE", "/secrets/token"))
		pod.Spec.Volumes = []corev1.Volume{{Name: "secrets", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "later", Items: []corev1.KeyToPath{{Key: "token", Path: "token"}}}}}}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "secrets", MountPath: "/secrets"}}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		waitsForSecret(ctx, key, "ContainerCreating", `MountVolume.SetUp failed for volume "secrets" : secret "later" not found`)
		pod = waitReady(ctx, key)
		var got map[string]string
		Expect(getJSON(podURL(pod, "/env"), &got)).To(Succeed())
		content, err := os.ReadFile(got["TOKEN_FILE"])
		Expect(err).NotTo(HaveOccurred())
		Expect(string(content)).To(Equal("at last"))
	})

	It("reports the pod Ready only once its readiness probe passes", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "slow", env("READY_AFTER", "1500ms"))
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		Eventually(func(g Gomega) {
			pod := getPod(ctx, key)
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
			g.Expect(pod.Status.ContainerStatuses[0].State.Running).NotTo(BeNil())
			g.Expect(pod.Status.ContainerStatuses[0].Ready).To(BeFalse())
			g.Expect(condition(pod, corev1.ContainersReady).Status).To(Equal(corev1.ConditionFalse))
			g.Expect(condition(pod, corev1.PodReady)).To(And(
				HaveField("Status", corev1.ConditionFalse),
				HaveField("Reason", "ContainersNotReady"),
				HaveField("Message", "containers with unready status: [main]")))
		}).Should(Succeed())
		notReadySince := condition(getPod(ctx, key), corev1.PodReady).LastTransitionTime

		pod = waitReady(ctx, key)
		Expect(pod.Status.ContainerStatuses[0].Ready).To(BeTrue())
		readySince := condition(pod, corev1.PodReady).LastTransitionTime
		Expect(readySince.Before(&notReadySince)).To(BeFalse())
		resp, err := podHTTP.Get(podURL(pod, "/healthz"))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Body.Close()).To(Succeed())
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
	})

	It("reports a failed container's exit code and the end of its log, and the pod Failed", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "failing", env("EXIT_CODE", "3"))
		pod.Spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		Eventually(func(g Gomega) {
			g.Expect(getPod(ctx, key).Status.Phase).To(Equal(corev1.PodFailed))
		}).Should(Succeed())
		pod = getPod(ctx, key)
		term := pod.Status.ContainerStatuses[0].State.Terminated
		Expect(term).NotTo(BeNil())
		Expect(term.ExitCode).To(BeEquivalentTo(3))
		Expect(term.Reason).To(Equal("Error"))
		Expect(term.Message).To(HaveSuffix("fatal: giving up with code 3"))
		Expect(term.Message).To(ContainSubstring("working, step 20\n"))
		Expect(term.Message).NotTo(ContainSubstring("step 1\n"), "only the last lines")
		Expect(len(term.Message)).To(BeNumerically("<=", 512))
		Expect(term.FinishedAt.IsZero()).To(BeFalse())
		Expect(pod.Status.ContainerStatuses[0].Ready).To(BeFalse())
		Expect(condition(pod, corev1.PodReady).Status).To(Equal(corev1.ConditionFalse))
		_, running := kubelet.PID(key)
		Expect(running).To(BeFalse())
		Expect(logOf(kubelet, key, "main")).To(ContainSubstring("working, step 1\n"))
	})

	DescribeTable("reports what a container left at its terminationMessagePath, at most 4096 bytes",
		func(ctx SpecContext, path string, policy corev1.TerminationMessagePolicy, code, message string, repeat int, want gomegatypes.GomegaMatcher) {
			ns := newNamespace(ctx)
			pod := fakePod(ns, "message", env("EXIT_CODE", code), env("TERMINATION_MESSAGE", message),
				env("TERMINATION_MESSAGE_REPEAT", fmt.Sprint(repeat)), env("TERMINATION_MESSAGE_PATH", path))
			pod.Spec.Containers[0].TerminationMessagePath = path
			pod.Spec.Containers[0].TerminationMessagePolicy = policy
			Expect(k8sClient.Create(ctx, pod)).To(Succeed())
			key := client.ObjectKeyFromObject(pod)
			var term *corev1.ContainerStateTerminated
			Eventually(func(g Gomega) {
				st := getPod(ctx, key).Status.ContainerStatuses
				g.Expect(st).To(HaveLen(1))
				term = st[0].State.Terminated
				g.Expect(term).NotTo(BeNil())
			}).Should(Succeed())
			Expect(term.Message).To(want)
		},
		Entry("the default path, on success", "/dev/termination-log", corev1.TerminationMessageReadFile, "0", "all done", 1, Equal("all done")),
		Entry("a path of the pod's choosing, on failure, before its log", "/var/run/status/message", corev1.TerminationMessageFallbackToLogsOnError, "3", "summary", 1, Equal("summary")),
		Entry("a long message, cut", "/dev/termination-log", corev1.TerminationMessageReadFile, "0", "0123456789", 1000, Equal(strings.Repeat("0123456789", 410)[:4096])),
		Entry("nothing, on failure, without falling back to the log", "/dev/termination-log", corev1.TerminationMessageReadFile, "3", "", 1, BeEmpty()),
		Entry("nothing, on failure, falling back to the log", "/dev/termination-log", corev1.TerminationMessageFallbackToLogsOnError, "3", "", 1, HaveSuffix("fatal: giving up with code 3")),
	)

	It("reports a container that exits 0 Completed, and the pod Succeeded", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "done")
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		pod = waitReady(ctx, key)
		pid := runningPID(kubelet, key)
		resp, err := podHTTP.Get(podURL(pod, "/exit?code=0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Body.Close()).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getPod(ctx, key).Status.Phase).To(Equal(corev1.PodSucceeded))
		}).Should(Succeed())
		term := getPod(ctx, key).Status.ContainerStatuses[0].State.Terminated
		Expect(term).To(HaveField("ExitCode", BeZero()))
		Expect(term).To(HaveField("Reason", "Completed"))
		Expect(term).To(HaveField("Message", BeEmpty()))
		Expect(processGone(pid)).To(BeTrue())
	})

	It("restarts a failing container with back-off under restart policy OnFailure", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "crashing", env("EXIT_CODE", "1"))
		pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		Eventually(func(g Gomega) {
			pod := getPod(ctx, key)
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
			st := pod.Status.ContainerStatuses[0]
			g.Expect(st.RestartCount).To(BeNumerically(">=", 1))
			g.Expect(st.LastTerminationState.Terminated).To(HaveField("ExitCode", BeEquivalentTo(1)))
			g.Expect(st.State.Waiting).To(HaveField("Reason", "CrashLoopBackOff"))
		}).Should(Succeed())
		Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
		waitGone(ctx, key)
	})

	It("stops a deleted pod with SIGTERM, then deletes it for good", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "polite", env("TERM_DELAY", "300ms"))
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		waitReady(ctx, key)
		pid := runningPID(kubelet, key)

		Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
		waitGone(ctx, key)
		Expect(processGone(pid)).To(BeTrue())
		log := logOf(kubelet, key, "main")
		Expect(log).To(ContainSubstring("got SIGTERM\n"))
		Expect(log).To(ContainSubstring("exiting after SIGTERM\n"))
	})

	It("kills a container that ignores SIGTERM once the grace period is over", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "stubborn", env("TERM_DELAY", "never"))
		pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		waitReady(ctx, key)
		pid := runningPID(kubelet, key)

		deleted := time.Now()
		Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
		Expect(getPod(ctx, key).DeletionTimestamp).NotTo(BeNil(), "Terminating while its process runs")
		waitGone(ctx, key)
		Expect(time.Since(deleted)).To(BeNumerically(">=", time.Second))
		Expect(processGone(pid)).To(BeTrue())
		log := logOf(kubelet, key, "main")
		Expect(log).To(ContainSubstring("got SIGTERM\n"))
		Expect(log).NotTo(ContainSubstring("exiting after SIGTERM"))
	})

	It("kills the processes of a pod deleted outright", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "forced")
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		waitReady(ctx, key)
		pid := runningPID(kubelet, key)

		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		waitGone(ctx, key)
		Eventually(func() bool { return processGone(pid) }).Should(BeTrue())
		Eventually(func() bool {
			_, ok := kubelet.PID(key)
			return ok
		}).Should(BeFalse())
	})

	It("reports ErrImagePull for an image it has no mapping for", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		pod := fakePod(ns, "unknown")
		pod.Spec.Containers[0].Image = "registry.test/unknown:v9"
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		key := client.ObjectKeyFromObject(pod)
		Eventually(func(g Gomega) {
			pod := getPod(ctx, key)
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodPending))
			g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
			g.Expect(pod.Status.ContainerStatuses[0].State.Waiting).To(And(
				HaveField("Reason", "ErrImagePull"),
				HaveField("Message", And(ContainSubstring(`"registry.test/unknown:v9"`), ContainSubstring("localkubelet.Options.Images")))))
		}).Should(Succeed())
	})
})

var _ = Describe("Kubelet's Run", func() {
	It("kills every process when its context ends, and a new run fails or restarts the pods the old one ran", func(ctx SpecContext) {
		// A Kubelet of this spec's own, on pods the suite's one does not
		// select.
		instance := "restart-" + rand.String(5)
		opts := localkubelet.Options{
			NodeName:    "localkubelet-" + instance,
			Selector:    labels.SelectorFromSet(labels.Set{"localkubelet.test/instance": instance}),
			StateDir:    GinkgoT().TempDir(),
			StopTimeout: time.Second,
		}
		first, stopFirst := startKubelet(opts)
		DeferCleanup(stopFirst)
		ns := newNamespace(ctx)
		newPod := func(name string, policy corev1.RestartPolicy) types.NamespacedName {
			pod := fakePod(ns, name, env("TERM_DELAY", "never"))
			pod.Labels = map[string]string{"localkubelet.test/instance": instance}
			pod.Spec.RestartPolicy = policy
			pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
			ExpectWithOffset(1, k8sClient.Create(ctx, pod)).To(Succeed())
			return client.ObjectKeyFromObject(pod)
		}
		never, always := newPod("never", corev1.RestartPolicyNever), newPod("always", corev1.RestartPolicyAlways)
		waitReady(ctx, never)
		waitReady(ctx, always)
		Expect(getPod(ctx, never).Spec.NodeName).To(Equal(opts.NodeName))
		pids := []int{runningPID(first, never), runningPID(first, always)}
		_, suiteRuns := kubelet.PID(never)
		Expect(suiteRuns).To(BeFalse())

		// They ignore SIGTERM: StopTimeout, not their 30s grace, bounds
		// the stop.
		stopping := time.Now()
		Expect(stopFirst()).To(Succeed())
		Expect(time.Since(stopping)).To(BeNumerically("<", 5*time.Second))
		for _, pid := range pids {
			Expect(processGone(pid)).To(BeTrue(), "process %d", pid)
		}
		node := &corev1.Node{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: opts.NodeName}, node)).To(Succeed())
		Expect(node.Status.Conditions).To(ContainElement(And(
			HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionUnknown))))

		second, stopSecond := startKubelet(opts)
		DeferCleanup(stopSecond)
		Eventually(func(g Gomega) {
			pod := getPod(ctx, never)
			g.Expect(pod.Status.Phase).To(Equal(corev1.PodFailed))
			g.Expect(pod.Status.Reason).To(Equal("NodeRestarted"))
			g.Expect(pod.Status.Message).To(Equal("the local kubelet restarted; the container's process is gone"))
			g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
			g.Expect(pod.Status.ContainerStatuses[0].State.Terminated).To(HaveField("Reason", "NodeRestarted"))
		}).Should(Succeed())
		// The old run's status said Ready already: wait for the restart.
		Eventually(func(g Gomega) {
			pod := getPod(ctx, always)
			g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
			g.Expect(pod.Status.ContainerStatuses[0].RestartCount).To(BeEquivalentTo(1))
			g.Expect(pod.Status.ContainerStatuses[0].LastTerminationState.Terminated).To(HaveField("Reason", "NodeRestarted"))
		}).Should(Succeed())
		pod := waitReady(ctx, always)
		restarted := runningPID(second, always)
		Expect(pod.Status.ContainerStatuses[0].ContainerID).To(Equal(fmt.Sprintf("local://%d", restarted)))
		Expect(restarted).NotTo(BeElementOf(pids))
		Expect(getJSON(podURL(pod, "/env"), &map[string]string{})).To(Succeed())

		Expect(stopSecond()).To(Succeed())
		Expect(processGone(restarted)).To(BeTrue())
	})
})

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

// waitsForSecret: the pod of key waits Pending, its container not started,
// with reason and message, for the Secret "later" of its namespace; then
// that Secret is made, holding token "at last".
func waitsForSecret(ctx context.Context, key types.NamespacedName, reason, message string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		pod := getPod(ctx, key)
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodPending))
		g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
		g.Expect(pod.Status.ContainerStatuses[0].State.Waiting).To(Equal(&corev1.ContainerStateWaiting{Reason: reason, Message: message}))
	}).Should(Succeed())
	_, running := kubelet.PID(key)
	Expect(running).To(BeFalse())
	Expect(k8sClient.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: key.Namespace},
		Data:       map[string][]byte{"token": []byte("at last")},
	})).To(Succeed())
}
