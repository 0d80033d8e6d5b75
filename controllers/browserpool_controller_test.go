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
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
	"github.com/browserfleet/browserfleet/runner/rpc"
	"github.com/browserfleet/browserfleet/startlatency"
)

// claimEndpoint plays the one call a pooled runner answers before its
// claim (rpc.ClaimPath) at ip:rpc.Port, on loopback: this suite runs no
// runner (the e2e suite's warm starts run real ones). It records each
// claim and answers as answer says.
type claimEndpoint struct {
	ip     string
	srv    *http.Server
	mu     sync.Mutex
	claims []claimSeen
	// answer, when set, is the error every claim gets.
	answer atomic.Pointer[rpc.Error]
}

type claimSeen struct {
	auth string
	req  rpc.ClaimRequest
}

// nextClaimIP hands each endpoint an address of its own, apart from the
// suite's unreachableIP and from the local kubelet's 127.2+.
var nextClaimIP atomic.Int32

func startClaimEndpoint() *claimEndpoint {
	GinkgoHelper()
	e := &claimEndpoint{ip: "127.1.1." + strconv.Itoa(int(nextClaimIP.Add(1)))}
	ln, err := net.Listen("tcp", net.JoinHostPort(e.ip, strconv.Itoa(int(rpc.Port))))
	Expect(err).NotTo(HaveOccurred())
	e.srv = &http.Server{Handler: http.HandlerFunc(e.serve), ReadHeaderTimeout: 5e9}
	go func() { _ = e.srv.Serve(ln) }()
	DeferCleanup(func() { _ = e.srv.Close() })
	return e
}

func (e *claimEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	var req rpc.ClaimRequest
	if r.URL.Path != rpc.ClaimPath || json.NewDecoder(r.Body).Decode(&req) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	e.claims = append(e.claims, claimSeen{auth: r.Header.Get("Authorization"), req: req})
	e.mu.Unlock()
	if a := e.answer.Load(); a != nil {
		w.Header().Set("Content-Type", rpc.ContentTypeJSON)
		w.WriteHeader(rpc.HTTPStatus(a.Code))
		_ = json.NewEncoder(w).Encode(a)
		return
	}
	_ = json.NewEncoder(w).Encode(rpc.ClaimResult{Session: req.Session})
}

func (e *claimEndpoint) seen() []claimSeen {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]claimSeen(nil), e.claims...)
}

func pool(ctx context.Context, key types.NamespacedName) func(Gomega) *v1alpha1.BrowserPool {
	return read[v1alpha1.BrowserPool](ctx, key)
}

// poolPods are the runner pods the pool started, claimed or not, by name.
func poolPods(ctx context.Context, key types.NamespacedName) func(Gomega) map[string]*corev1.Pod {
	return func(g Gomega) map[string]*corev1.Pod {
		var pods corev1.PodList
		g.Expect(k8sClient.List(ctx, &pods, client.InNamespace(key.Namespace), client.MatchingLabels{v1alpha1.LabelPool: key.Name})).To(Succeed())
		out := map[string]*corev1.Pod{}
		for i := range pods.Items {
			if pods.Items[i].DeletionTimestamp == nil {
				out[pods.Items[i].Name] = &pods.Items[i]
			}
		}
		return out
	}
}

// idlePods are the pool's unclaimed runner pods.
func idlePods(ctx context.Context, key types.NamespacedName) func(Gomega) []*corev1.Pod {
	return func(g Gomega) []*corev1.Pod {
		var out []*corev1.Pod
		for _, p := range poolPods(ctx, key)(g) {
			if _, claimed := p.Labels[v1alpha1.LabelSession]; !claimed {
				out = append(out, p)
			}
		}
		return out
	}
}

// warmPool creates a pool of n runners and plays the kubelet until each is
// ready, each at an endpoint of its own.
func warmPool(ctx context.Context, p *v1alpha1.BrowserPool) (types.NamespacedName, map[string]*claimEndpoint) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, p)).To(Succeed())
	key := client.ObjectKeyFromObject(p)
	n := int(ptr.Deref(p.Spec.Replicas, 1))
	Eventually(idlePods(ctx, key)).Should(HaveLen(n))
	endpoints := map[string]*claimEndpoint{}
	for _, pod := range idlePods(ctx, key)(Default) {
		e := startClaimEndpoint()
		runAt(ctx, client.ObjectKeyFromObject(pod), e.ip)
		endpoints[pod.Name] = e
	}
	Eventually(func(g Gomega) int32 { return ptr.Deref(pool(ctx, key)(g).Status.ReadyReplicas, 0) }).Should(BeEquivalentTo(n))
	return key, endpoints
}

func startCount(phase, start string) uint64 {
	GinkgoHelper()
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != startlatency.Name {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelsOf(m)["phase"] == phase && labelsOf(m)["start"] == start {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

var _ = Describe("BrowserPool", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("keeps replicas runners started with its template, each with the pool's token and none of a session's", func() {
		key := client.ObjectKeyFromObject(wrappers.MakeBrowserPool("warm", ns, 3).Obj())
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserPool("warm", ns, 3).Obj())).To(Succeed())
		Eventually(idlePods(ctx, key)).Should(HaveLen(3))
		for _, pod := range idlePods(ctx, key)(Default) {
			Expect(metav1.GetControllerOf(pod)).To(HaveField("Kind", "BrowserPool"))
			Expect(pod.Labels).To(HaveKeyWithValue(v1alpha1.LabelLaunchHash, pool(ctx, key)(Default).Status.LaunchHash))
			env := map[string]string{}
			for _, e := range pod.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
			Expect(env).To(HaveKeyWithValue(rpc.EnvPool, "warm"))
			Expect(env).To(HaveKeyWithValue(rpc.EnvSessionName, ""))
			Expect(pod.Finalizers).To(BeEmpty(), "an unclaimed runner has no session to leave a summary to")
			var projected []string
			for _, v := range pod.Spec.Volumes {
				if v.Projected != nil {
					for _, s := range v.Projected.Sources {
						projected = append(projected, s.Secret.Name)
					}
				}
			}
			Expect(projected).To(ConsistOf(v1alpha1.PoolTokenSecretName("warm")))
		}
		Expect(pool(ctx, key)(Default).Status).To(And(
			HaveField("Replicas", HaveValue(BeEquivalentTo(3))),
			HaveField("ReadyReplicas", HaveValue(BeEquivalentTo(0))),
			HaveField("Selector", "browserfleet.io/pool=warm,!browserfleet.io/session"),
		))
		token := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: v1alpha1.PoolTokenSecretName("warm")}, token)).To(Succeed())
		Expect(metav1.GetControllerOf(token)).To(HaveField("Kind", "BrowserPool"))

		for _, pod := range idlePods(ctx, key)(Default) {
			runAt(ctx, client.ObjectKeyFromObject(pod), unreachableIP)
		}
		Eventually(func(g Gomega) []metav1.Condition { return pool(ctx, key)(g).Status.Conditions }).Should(
			ContainElement(And(HaveField("Type", v1alpha1.BrowserPoolConditionReady), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", v1alpha1.BrowserPoolReasonReplicasReady))))

		By("replacing a runner that failed")
		failed := idlePods(ctx, key)(Default)[0]
		Expect(kubelet.Exit(ctx, client.ObjectKeyFromObject(failed), 1, "Error", "chromium crashed")).To(Succeed())
		Eventually(poolPods(ctx, key)).ShouldNot(HaveKey(failed.Name))
		Eventually(idlePods(ctx, key)).Should(HaveLen(3))
	})

	It("hands a ready runner to a session whose launch matches, with the session's token and model key, and refills", func() {
		sessionSecret(ctx, ns, "llm", v1alpha1.SessionSecretAny)
		key, endpoints := warmPool(ctx, wrappers.MakeBrowserPool("warm", ns, 2).Obj())
		warmBefore := startCount(startlatency.PhaseBrowserReady, startlatency.Warm)

		s := wrappers.MakeBrowserSession("s1", ns).ModelAPIKey("llm", "openai").Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		skey := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionReady))
		got := session(ctx, skey)(Default)
		Expect(got.Status.Pool).To(Equal("warm"))
		Expect(endpoints).To(HaveKey(got.Status.PodName), "the session runs on one of the pool's runners")
		Expect(got.Status.Endpoint).To(Equal("http://" + net.JoinHostPort(endpoints[got.Status.PodName].ip, strconv.Itoa(int(rpc.Port)))))

		claimed := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: got.Status.PodName}, claimed)).To(Succeed())
		Expect(metav1.GetControllerOf(claimed)).To(And(HaveField("Kind", "BrowserSession"), HaveField("Name", "s1")))
		Expect(claimed.OwnerReferences).To(HaveLen(1), "the pool no longer owns it")
		Expect(claimed.Labels).To(HaveKeyWithValue(v1alpha1.LabelSession, "s1"))
		Expect(claimed.Finalizers).To(ContainElement("browserfleet.io/runner-summary"))

		seen := endpoints[got.Status.PodName].seen()
		Expect(seen).To(HaveLen(1))
		poolToken, sessionToken := &corev1.Secret{}, &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: v1alpha1.PoolTokenSecretName("warm")}, poolToken)).To(Succeed())
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: v1alpha1.RunnerTokenSecretName("s1")}, sessionToken)).To(Succeed())
		Expect(seen[0].auth).To(Equal("Bearer " + string(poolToken.Data[rpc.TokenSecretKey])))
		Expect(seen[0].req).To(And(
			HaveField("Session", "s1"), HaveField("Namespace", ns),
			HaveField("Token", string(sessionToken.Data[rpc.TokenSecretKey])),
			HaveField("Secrets.ModelAPIKey", "sk-test"),
			HaveField("Spec.Model.Name", wrappers.DefaultModel),
		))

		By("starting another runner in its place")
		Eventually(idlePods(ctx, key)).Should(HaveLen(2))
		Eventually(func(g Gomega) *int32 { return pool(ctx, key)(g).Status.ClaimedReplicas }).Should(HaveValue(BeEquivalentTo(1)))
		Expect(startCount(startlatency.PhaseBrowserReady, startlatency.Warm)).To(Equal(warmBefore + 1))

		By("ending the session, which deletes the runner: it never goes back to the pool")
		Expect(k8sClient.Patch(ctx, &v1alpha1.BrowserSession{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: ns}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"ended":true}}`)))).To(Succeed())
		Eventually(func(g Gomega) bool {
			p := &corev1.Pod{}
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: got.Status.PodName}, p)
			return apierrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil)
		}).Should(BeTrue())
		Expect(idlePods(ctx, key)(Default)).NotTo(ContainElement(HaveField("Name", got.Status.PodName)))
	})

	It("lets each ready runner go to one session only when sessions start at once; the others start cold", func() {
		// The runners the pool starts in their place never turn ready
		// here: the race is for these three.
		_, endpoints := warmPool(ctx, wrappers.MakeBrowserPool("warm", ns, 3).Obj())
		const n = 8
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession(fmt.Sprintf("race-%d", i), ns).Obj())).To(Succeed())
			}()
		}
		wg.Wait()
		owners := map[string]string{}
		Eventually(func(g Gomega) int {
			warm := 0
			for i := range n {
				s := session(ctx, types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("race-%d", i)})(g)
				g.Expect(s.Status.PodName).NotTo(BeEmpty())
				if s.Status.Pool != "" {
					warm++
					owners[s.Status.PodName] = s.Name
				}
			}
			return warm
		}).Should(BeNumerically(">=", 1))
		// Every session got exactly one pod; a pool runner has at most one
		// session.
		pods := map[string]string{}
		for i := range n {
			name := fmt.Sprintf("race-%d", i)
			s := session(ctx, types.NamespacedName{Namespace: ns, Name: name})(Default)
			Expect(pods).NotTo(HaveKey(s.Status.PodName), "two sessions hold runner %s", s.Status.PodName)
			pods[s.Status.PodName] = name
			if s.Status.Pool == "" {
				Expect(s.Status.PodName).To(Equal(v1alpha1.RunnerPodName(name)))
				continue
			}
			Expect(endpoints).To(HaveKey(s.Status.PodName))
			p := &corev1.Pod{}
			Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: s.Status.PodName}, p)).To(Succeed())
			Expect(metav1.IsControlledBy(p, s)).To(BeTrue())
		}
		var claims int
		for _, e := range endpoints {
			sessions := map[string]bool{}
			for _, c := range e.seen() {
				sessions[c.req.Session] = true
			}
			Expect(len(sessions)).To(BeNumerically("<=", 1), "one runner was handed two sessions")
			claims += len(sessions)
		}
		Expect(claims).To(BeNumerically("<=", 3))
		Eventually(func(g Gomega) int {
			ready := 0
			for i := range n {
				if session(ctx, types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("race-%d", i)})(g).Status.Pool != "" {
					g.Expect(phase(ctx, types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("race-%d", i)})(g)).To(Equal(v1alpha1.BrowserSessionReady))
					ready++
				}
			}
			return ready
		}).Should(Equal(claims))
	})

	It("starts a session whose launch differs from every template cold", func() {
		warmPool(ctx, wrappers.MakeBrowserPool("warm", ns, 1).Obj())
		s := wrappers.MakeBrowserSession("wide", ns).Cloud(&v1alpha1.CloudSessionCreateParams{
			BrowserSettings: &v1alpha1.BrowserSettings{Viewport: &v1alpha1.Viewport{Width: 1920, Height: 1080}},
		}).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		skey := client.ObjectKeyFromObject(s)
		Eventually(func(g Gomega) string { return session(ctx, skey)(g).Status.PodName }).Should(Equal(v1alpha1.RunnerPodName("wide")))
		Expect(session(ctx, skey)(Default).Status.Pool).To(BeEmpty())

		By("while a session with the same launch but its own model and timeout claims one")
		t := wrappers.MakeBrowserSession("same", ns).Model("anthropic/claude-sonnet-4-5").Timeout(600).Obj()
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		Eventually(func(g Gomega) string { return session(ctx, client.ObjectKeyFromObject(t))(g).Status.Pool }).Should(Equal("warm"))
	})

	It("scales through the scale subresource, which reports the unclaimed runners and their selector", func() {
		key, _ := warmPool(ctx, wrappers.MakeBrowserPool("warm", ns, 1).Obj())
		scale := &autoscalingv1.Scale{}
		Expect(k8sClient.SubResource("scale").Get(ctx, pool(ctx, key)(Default), scale)).To(Succeed())
		Expect(scale.Spec.Replicas).To(BeEquivalentTo(1))
		Expect(scale.Status.Replicas).To(BeEquivalentTo(1))
		Expect(scale.Status.Selector).To(Equal("browserfleet.io/pool=warm,!browserfleet.io/session"))

		scaleTo := func(n int32) {
			GinkgoHelper()
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				p, sc := pool(ctx, key)(Default), &autoscalingv1.Scale{}
				if err := k8sClient.SubResource("scale").Get(ctx, p, sc); err != nil {
					return err
				}
				sc.Spec.Replicas = n
				return k8sClient.SubResource("scale").Update(ctx, p, client.WithSubResourceBody(sc))
			})).To(Succeed())
		}
		scaleTo(4)
		Eventually(idlePods(ctx, key)).Should(HaveLen(4))
		Expect(pool(ctx, key)(Default).Spec.Replicas).To(HaveValue(BeEquivalentTo(4)))
		scaleTo(2)
		Eventually(idlePods(ctx, key)).Should(HaveLen(2))
		Eventually(func(g Gomega) int32 {
			sc := &autoscalingv1.Scale{}
			g.Expect(k8sClient.SubResource("scale").Get(ctx, pool(ctx, key)(g), sc)).To(Succeed())
			return sc.Status.Replicas
		}).Should(BeEquivalentTo(2))
		By("keeping the ready runner: the ones still starting go first")
		Expect(idlePods(ctx, key)(Default)).To(ContainElement(HaveField("Status.PodIP", Not(BeEmpty()))))
	})

	It("keeps no more warm runners than the project may yet start sessions, and refills as they end", func() {
		// The suite's default quota: 10 concurrent sessions a project.
		for i := range 3 {
			Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession(fmt.Sprintf("live-%d", i), ns).Obj())).To(Succeed())
		}
		Eventually(func(g Gomega) int {
			var list v1alpha1.BrowserSessionList
			g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			return len(list.Items)
		}).Should(Equal(3))
		key := types.NamespacedName{Namespace: ns, Name: "big"}
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserPool("big", ns, 12).Obj())).To(Succeed())
		Eventually(idlePods(ctx, key)).Should(HaveLen(7))
		Consistently(idlePods(ctx, key)).Should(HaveLen(7))
		c := meta.FindStatusCondition(pool(ctx, key)(Default).Status.Conditions, v1alpha1.BrowserPoolConditionReady)
		Expect(c).To(And(HaveField("Reason", v1alpha1.BrowserPoolReasonQuotaLimited), HaveField("Message", ContainSubstring("room for 7 of the 12"))))

		By("starting runners again when a session ends")
		Expect(k8sClient.Patch(ctx, &v1alpha1.BrowserSession{ObjectMeta: metav1.ObjectMeta{Name: "live-0", Namespace: ns}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"ended":true}}`)))).To(Succeed())
		Eventually(idlePods(ctx, key)).Should(HaveLen(8))
	})

	It("fails a session whose claimed runner refuses it, naming why, and deletes the runner", func() {
		_, endpoints := warmPool(ctx, wrappers.MakeBrowserPool("warm", ns, 1).Obj())
		for _, e := range endpoints {
			e.answer.Store(rpc.Errorf(rpc.CodeLaunchMismatch, "the session's viewport is not the runner's"))
		}
		s := wrappers.MakeBrowserSession("refused", ns).Obj()
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		skey := client.ObjectKeyFromObject(s)
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionFailed))
		got := session(ctx, skey)(Default)
		Expect(meta.FindStatusCondition(got.Status.Conditions, v1alpha1.BrowserSessionConditionFailed)).To(And(
			HaveField("Reason", v1alpha1.BrowserSessionReasonClaimFailed),
			HaveField("Message", ContainSubstring("the session's viewport is not the runner's"))))
		Eventually(func(g Gomega) error {
			p := &corev1.Pod{}
			err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: got.Status.PodName}, p)
			if err == nil && p.DeletionTimestamp == nil {
				return errors.New("the claimed runner is still there")
			}
			return nil
		}).Should(Succeed())
	})

	It("leaves claimed runners to their sessions when the pool is deleted, and deletes the unclaimed ones before it goes", func() {
		key, _ := warmPool(ctx, wrappers.MakeBrowserPool("warm", ns, 2).Obj())
		skey := types.NamespacedName{Namespace: ns, Name: "kept"}
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession("kept", ns).Obj())).To(Succeed())
		Eventually(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionReady))
		Eventually(idlePods(ctx, key)).Should(HaveLen(2))
		Expect(k8sClient.Delete(ctx, pool(ctx, key)(Default))).To(Succeed())
		// envtest runs no garbage collector: the pool itself deletes its
		// runners, and then goes.
		Eventually(idlePods(ctx, key)).Should(BeEmpty())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key, &v1alpha1.BrowserPool{}))
		}).Should(BeTrue())
		Consistently(phase(ctx, skey)).Should(Equal(v1alpha1.BrowserSessionReady))

		By("a pool of the same name starts again with the token its predecessor left")
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserPool("warm", ns, 1).Obj())).To(Succeed())
		Eventually(idlePods(ctx, key)).Should(HaveLen(1))
		claimed := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: session(ctx, skey)(Default).Status.PodName}, claimed)).To(Succeed())
		Expect(metav1.GetControllerOf(claimed)).To(HaveField("Kind", "BrowserSession"))
	})
})
