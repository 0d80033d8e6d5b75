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

package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/internal/testing/wrappers"
	"github.com/browserfleet/browserfleet/quota"
	"github.com/browserfleet/browserfleet/server"
	"github.com/browserfleet/browserfleet/server/apikey"
	serverv1 "github.com/browserfleet/browserfleet/server/v1"
)

const startBody = `{"modelName": "openai/gpt-4.1-mini"}`

// unauthorized is the one body of every refused key.
const unauthorized = `{"success":false,"error":"API key missing or invalid","code":"UNAUTHORIZED"}`

func keysOf(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

func session(ctx context.Context, ns, name string) *v1alpha1.BrowserSession {
	bs := &v1alpha1.BrowserSession{}
	ExpectWithOffset(1, k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, bs)).To(Succeed())
	return bs
}

// sessionsAndRequestSecrets counts what a start creates in a project.
func sessionsAndRequestSecrets(ctx context.Context, ns string) int {
	var sessions v1alpha1.BrowserSessionList
	ExpectWithOffset(1, k8sClient.List(ctx, &sessions, client.InNamespace(ns))).To(Succeed())
	var secrets corev1.SecretList
	ExpectWithOffset(1, k8sClient.List(ctx, &secrets, client.InNamespace(ns), client.HasLabels{"browserfleet.io/session"})).To(Succeed())
	return len(sessions.Items) + len(secrets.Items)
}

var _ = Describe("probes", func() {
	It("answers /healthz and /readyz without a key", func() {
		st, _ := call(api, http.MethodGet, "/healthz", "", "", nil)
		Expect(st).To(Equal(http.StatusOK))
		st, _ = call(api, http.MethodGet, "/readyz", "", "", nil)
		Expect(st).To(Equal(http.StatusOK))
	})

	It("answers unknown paths and methods with the JSON envelope", func() {
		st, m := call(api, http.MethodGet, "/v2/nope", "", "", nil)
		Expect(st).To(Equal(http.StatusNotFound))
		Expect(m).To(HaveKeyWithValue("code", "NOT_FOUND"))
		st, m = call(api, http.MethodDelete, "/v1/sessions/x", "", "", nil)
		Expect(st).To(Equal(http.StatusMethodNotAllowed))
		Expect(m).To(HaveKeyWithValue("code", "METHOD_NOT_ALLOWED"))
	})
})

var _ = Describe("authentication", func() {
	It("counts a key only in a project namespace", func(ctx SpecContext) {
		elsewhere := newProject(ctx)
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: theProject}})).To(Succeed())
		key, _, err := apikey.Create(ctx, k8sClient, theProject, "in the project", nil)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int {
			st, _ := callRaw(apiProjects, http.MethodGet, "/v1/sessions", key, "", nil)
			return st
		}).Should(Equal(http.StatusOK))
		st, raw := callRaw(apiProjects, http.MethodGet, "/v1/sessions", elsewhere.Key, "", nil)
		Expect(st).To(Equal(http.StatusUnauthorized))
		Expect(string(raw)).To(MatchJSON(unauthorized))
	})

	It("gives up on a body that does not arrive, answering 408", func(ctx SpecContext) {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: theProject}})).To(Or(Succeed(), Satisfy(apierrors.IsAlreadyExists)))
		key, _, err := apikey.Create(ctx, k8sClient, theProject, "slow client", nil)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int {
			st, _ := callRaw(apiProjects, http.MethodGet, "/v1/sessions", key, "", nil)
			return st
		}).Should(Equal(http.StatusOK))
		conn, err := net.Dial("tcp", apiProjects.Listener.Addr().String())
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = conn.Close() }()
		// Headers promise 100 bytes; one arrives.
		_, err = fmt.Fprintf(conn, "POST /v1/sessions/start HTTP/1.1\r\nHost: api\r\nx-svc-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", key)
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.SetReadDeadline(time.Now().Add(30 * time.Second))).To(Succeed())
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		Expect(err).NotTo(HaveOccurred(), "the server answered before the client's own deadline")
		defer func() { _ = resp.Body.Close() }()
		raw, _ := io.ReadAll(resp.Body)
		Expect(resp.StatusCode).To(Equal(http.StatusRequestTimeout))
		Expect(string(raw)).To(MatchJSON(`{"success":false,"code":"REQUEST_TIMEOUT","error":"the request body did not arrive within 1s"}`))
	})

	It("refuses a CDP URL for no session without a read past its cache", func(ctx SpecContext) {
		p := newProject(ctx)
		before := apiReads.n.Load()
		for _, path := range []string{
			"/v1/sessions/" + uuid.NewString() + "/devtools/browser/v2.1800000000.AAAA?project=" + p.Namespace + "&key=" + p.KeyID,
			"/v1/sessions/" + uuid.NewString() + "/devtools/browser/v2.1800000000.AAAA?project=default&key=0123456789abcdef",
			"/v1/sessions/x/devtools/browser/t",
		} {
			st, raw := callRaw(apiCDP, http.MethodGet, path, "", "", map[string]string{"Upgrade": "websocket", "Connection": "Upgrade"})
			Expect(st).To(Equal(http.StatusUnauthorized))
			Expect(string(raw)).To(MatchJSON(`{"success":false,"error":"missing or invalid CDP token","code":"UNAUTHORIZED"}`))
		}
		Expect(apiReads.n.Load()).To(Equal(before), "reads that reached the API server")
	})

	It("refuses missing, wrong, malformed and revoked keys alike, and accepts a valid one", func(ctx SpecContext) {
		p := newProject(ctx)
		wrong, _, err := apikey.Create(ctx, k8sClient, p.Namespace, "to be revoked", nil)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int {
			st, _ := callRaw(api, http.MethodGet, "/v1/sessions", wrong, "", nil)
			return st
		}).Should(Equal(http.StatusOK))
		infos, err := apikey.List(ctx, k8sClient, p.Namespace)
		Expect(err).NotTo(HaveOccurred())
		for _, info := range infos {
			if info.ID != p.KeyID {
				Expect(apikey.Revoke(ctx, k8sClient, p.Namespace, info.ID)).To(Succeed())
			}
		}
		Eventually(func() string {
			_, raw := callRaw(api, http.MethodGet, "/v1/sessions", wrong, "", nil)
			return strings.TrimSpace(string(raw))
		}).Should(Equal(unauthorized))

		unknown := "bfk_" + strings.Repeat("A", 43)
		for _, key := range []string{"", "not-a-key", unknown, wrong} {
			for _, route := range [][2]string{
				{http.MethodGet, "/v1/sessions"},
				{http.MethodPost, "/v1/sessions/start"},
				{http.MethodGet, "/v1/sessions/abc"},
				{http.MethodPost, "/v1/sessions/abc/end"},
			} {
				st, raw := callRaw(api, route[0], route[1], key, "", map[string]string{"x-svc-project-id": p.Namespace})
				Expect(st).To(Equal(http.StatusUnauthorized), "%s %s", route[0], route[1])
				Expect(strings.TrimSpace(string(raw))).To(Equal(unauthorized))
			}
		}
		st, _ := call(api, http.MethodGet, "/v1/sessions", p.Key, "", map[string]string{"x-svc-project-id": "ignored"})
		Expect(st).To(Equal(http.StatusOK))
	})
})

var _ = Describe("POST /v1/sessions/start", func() {
	It("answers exactly sessionId, cdpUrl and available once the runner is ready", func(ctx SpecContext) {
		p := newProject(ctx)
		done := startAsync(api, p.Key, startBody, nil)
		pod := runnerPod(ctx, p.Namespace)
		Consistently(done, "300ms").ShouldNot(Receive(), "start must wait for Ready")
		Expect(kubelet.Run(ctx, pod, true)).To(Succeed())
		var r reply
		Eventually(done).Should(Receive(&r))
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(keysOf(r.body)).To(Equal([]string{"data", "success"}))
		Expect(r.body["success"]).To(BeTrue())
		data := r.body["data"].(map[string]any)
		Expect(keysOf(data)).To(Equal([]string{"available", "cdpUrl", "sessionId"}))
		Expect(data["cdpUrl"]).To(BeNil())
		Expect(data["available"]).To(BeTrue())
		id := data["sessionId"].(string)
		Expect(id).To(MatchRegexp(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`))
		bs := session(ctx, p.Namespace, id)
		Expect(bs.Spec.Model.Name).To(Equal("openai/gpt-4.1-mini"))
		Expect(bs.Status.Phase).To(Equal(v1alpha1.BrowserSessionReady))
		// The client has the id: the session is claimed, and runs on.
		Expect(bs.Annotations).NotTo(HaveKey(v1alpha1.AnnotationClaimDeadline))
	})

	It("records a claim deadline on the session until the client has its id", func(ctx SpecContext) {
		p := newProject(ctx)
		done := startAsync(api, p.Key, startBody, nil)
		pod := runnerPod(ctx, p.Namespace)
		var bs v1alpha1.BrowserSessionList
		Expect(k8sClient.List(ctx, &bs, client.InNamespace(p.Namespace))).To(Succeed())
		Expect(bs.Items).To(HaveLen(1))
		deadline, err := time.Parse(time.RFC3339, bs.Items[0].Annotations[v1alpha1.AnnotationClaimDeadline])
		Expect(err).NotTo(HaveOccurred(), "the claim deadline is an RFC 3339 time")
		// The start timeout (60s) plus a margin, from the create.
		Expect(deadline).To(BeTemporally("~", bs.Items[0].CreationTimestamp.Add(90*time.Second), 5*time.Second))
		Expect(kubelet.Run(ctx, pod, true)).To(Succeed())
		var r reply
		Eventually(done).Should(Receive(&r))
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(session(ctx, p.Namespace, bs.Items[0].Name).Annotations).NotTo(HaveKey(v1alpha1.AnnotationClaimDeadline))
	})

	It("puts x-model-api-key into a Secret owned by the session, never into the session", func(ctx SpecContext) {
		p := newProject(ctx)
		id := startReady(ctx, p, startBody, map[string]string{"x-model-api-key": "sk-secret"})
		bs := session(ctx, p.Namespace, id)
		Expect(bs.Spec.Model.APIKeySecretRef).To(Equal(&v1alpha1.SecretKeyReference{
			Name: serverv1.RequestSecretName(id), Key: serverv1.SecretKeyModelAPIKey,
		}))
		raw, err := json.Marshal(bs)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).NotTo(ContainSubstring("sk-secret"))
		secret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: serverv1.RequestSecretName(id)}, secret)).To(Succeed())
		Expect(string(secret.Data[serverv1.SecretKeyModelAPIKey])).To(Equal("sk-secret"))
		Expect(secret.OwnerReferences).To(ConsistOf(HaveField("UID", bs.UID)))
	})

	It("answers SESSION_FAILED with the pod's reason when the runner fails", func(ctx SpecContext) {
		p := newProject(ctx)
		done := startAsync(api, p.Key, startBody, nil)
		Expect(kubelet.Exit(ctx, runnerPod(ctx, p.Namespace), 137, "OOMKilled", "")).To(Succeed())
		var r reply
		Eventually(done).Should(Receive(&r))
		Expect(r.status).To(Equal(http.StatusBadGateway))
		Expect(r.body).To(HaveKeyWithValue("code", "SESSION_FAILED"))
		Expect(r.body).To(HaveKeyWithValue("success", false))
		Expect(r.body["error"]).To(ContainSubstring("OOMKilled"))
	})

	It("answers START_TIMEOUT when the runner never gets ready, and ends the abandoned session", func(ctx SpecContext) {
		p := newProject(ctx)
		st, m := call(apiShort, http.MethodPost, "/v1/sessions/start", p.Key, startBody, nil)
		Expect(st).To(Equal(http.StatusGatewayTimeout))
		Expect(m).To(HaveKeyWithValue("code", "START_TIMEOUT"))
		var sessions v1alpha1.BrowserSessionList
		Expect(k8sClient.List(ctx, &sessions, client.InNamespace(p.Namespace))).To(Succeed())
		Expect(sessions.Items).To(HaveLen(1))
		Expect(sessions.Items[0].Spec.Ended).To(BeTrue())
	})

	It("refuses a bad body with issues naming the fields, creating nothing", func(ctx SpecContext) {
		p := newProject(ctx)
		st, m := call(api, http.MethodPost, "/v1/sessions/start", p.Key,
			`{"modelName": 5, "verbose": 7, "browser": {"type": "spaceship"}}`, map[string]string{"x-model-api-key": "sk-secret"})
		Expect(st).To(Equal(http.StatusBadRequest))
		Expect(m).To(HaveKeyWithValue("code", "INVALID_REQUEST"))
		Expect(m).To(HaveKeyWithValue("success", false))
		var paths []string
		for _, is := range m["issues"].([]any) {
			issue := is.(map[string]any)
			Expect(keysOf(issue)).To(Equal([]string{"message", "path"}))
			paths = append(paths, issue["path"].(string))
		}
		Expect(paths).To(ContainElements("modelName", "verbose", "browser.type"))

		st, m = call(api, http.MethodPost, "/v1/sessions/start", p.Key, `not json`, nil)
		Expect(st).To(Equal(http.StatusBadRequest))
		Expect(m).To(HaveKey("issues"))
		Consistently(func() int { return sessionsAndRequestSecrets(ctx, p.Namespace) }, "500ms").Should(BeZero())
	})

	It("refuses a region the operator does not accept with a 400 naming cloudSessionCreateParams.region, creating nothing", func(ctx SpecContext) {
		p := newProject(ctx)
		apiRegions := httptest.NewServer(newServer(func(o *server.Options) { o.AcceptedRegions = []string{"us-east-1", "eu-central-1"} }))
		DeferCleanup(apiRegions.Close)
		st, m := call(apiRegions, http.MethodPost, "/v1/sessions/start", p.Key,
			`{"modelName": "openai/gpt-4.1-mini", "cloudSessionCreateParams": {"region": "us-west-2"}}`, map[string]string{"x-model-api-key": "sk-secret"})
		Expect(st).To(Equal(http.StatusBadRequest))
		Expect(m).To(HaveKeyWithValue("code", "INVALID_REQUEST"))
		Expect(m["issues"]).To(Equal([]any{map[string]any{
			"path":    "cloudSessionCreateParams.region",
			"message": "is not a region this service runs browsers in; it accepts us-east-1, eu-central-1",
		}}))
		Consistently(func() int { return sessionsAndRequestSecrets(ctx, p.Namespace) }, "500ms").Should(BeZero())
	})

	It("answers SESSION_FAILED naming the region and the node label when no node serves the region", func(ctx SpecContext) {
		p := newProject(ctx)
		st, m := call(api, http.MethodPost, "/v1/sessions/start", p.Key,
			`{"modelName": "openai/gpt-4.1-mini", "cloudSessionCreateParams": {"region": "ap-southeast-1"}}`, nil)
		Expect(st).To(Equal(http.StatusBadGateway))
		Expect(m).To(HaveKeyWithValue("code", "SESSION_FAILED"))
		Expect(m["error"]).To(And(ContainSubstring(`"ap-southeast-1"`), ContainSubstring("topology.kubernetes.io/region in (ap-southeast-1)")))
	})

	It("refuses a start beyond the project's quota with 429 QUOTA_EXCEEDED and Retry-After, creating nothing", func(ctx SpecContext) {
		p := newProject(ctx)
		// The default quota: ten sessions that have not ended.
		for i := range quota.DefaultConcurrentSessions {
			Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession(fmt.Sprintf("s%d", i), p.Namespace).Obj())).To(Succeed())
		}
		sessions := func() int {
			var list v1alpha1.BrowserSessionList
			Expect(k8sClient.List(ctx, &list, client.InNamespace(p.Namespace))).To(Succeed())
			return len(list.Items)
		}
		// The API's cache has them all.
		Eventually(func() []any {
			_, m := call(api, http.MethodGet, "/v1/sessions", p.Key, "", nil)
			return m["data"].(map[string]any)["sessions"].([]any)
		}).Should(HaveLen(quota.DefaultConcurrentSessions))
		var st int
		var raw []byte
		var resp http.Header
		Eventually(func() int {
			st, raw, resp = callFull(api, http.MethodPost, "/v1/sessions/start", p.Key, startBody, nil)
			return st
		}).Should(Equal(http.StatusTooManyRequests))
		Expect(string(raw)).To(MatchJSON(`{"success":false,"code":"QUOTA_EXCEEDED","error":"the project has 10 sessions that have not ended; its limit is 10 (concurrentSessions): end one, or retry later"}`))
		Expect(resp.Get("Retry-After")).To(Equal("10"))
		Consistently(sessions, "500ms").Should(Equal(quota.DefaultConcurrentSessions))

	})

	It("refuses a body over the limit with 413, creating nothing", func(ctx SpecContext) {
		p := newProject(ctx)
		big := `{"modelName": "openai/gpt-4.1-mini", "systemPrompt": "` + strings.Repeat("a", 1<<20) + `"}`
		st, m := call(api, http.MethodPost, "/v1/sessions/start", p.Key, big, map[string]string{"x-model-api-key": "sk-secret"})
		Expect(st).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(m).To(HaveKeyWithValue("code", "PAYLOAD_TOO_LARGE"))
		st, _ = call(api, http.MethodPost, "/v1/sessions/x/end", p.Key, big, nil)
		Expect(st).To(Equal(http.StatusRequestEntityTooLarge))
		Consistently(func() int { return sessionsAndRequestSecrets(ctx, p.Namespace) }, "500ms").Should(BeZero())
	})

	It("resumes a live session by cloudSessionID, and refuses unknown and ended ones", func(ctx SpecContext) {
		p := newProject(ctx)
		id := startReady(ctx, p, startBody, nil)
		st, m := call(api, http.MethodPost, "/v1/sessions/start", p.Key,
			`{"modelName": "openai/gpt-4.1-mini", "cloudSessionID": "`+id+`"}`, nil)
		Expect(st).To(Equal(http.StatusOK))
		Expect(m["data"]).To(HaveKeyWithValue("sessionId", id))

		st, m = call(api, http.MethodPost, "/v1/sessions/start", p.Key,
			`{"modelName": "openai/gpt-4.1-mini", "cloudSessionID": "no-such-session"}`, nil)
		Expect(st).To(Equal(http.StatusNotFound))
		Expect(m).To(HaveKeyWithValue("code", "SESSION_NOT_FOUND"))

		st, _ = call(api, http.MethodPost, "/v1/sessions/"+id+"/end", p.Key, "", nil)
		Expect(st).To(Equal(http.StatusOK))
		st, m = call(api, http.MethodPost, "/v1/sessions/start", p.Key,
			`{"modelName": "openai/gpt-4.1-mini", "cloudSessionID": "`+id+`"}`, nil)
		Expect(st).To(Equal(http.StatusConflict))
		Expect(m).To(HaveKeyWithValue("code", "SESSION_ENDED"))
	})
})

var _ = Describe("POST /v1/sessions/{id}/end", func() {
	It("ends a session idempotently and refuses a non-empty body", func(ctx SpecContext) {
		p := newProject(ctx)
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession("s1", p.Namespace).Obj())).To(Succeed())
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession("s2", p.Namespace).Obj())).To(Succeed())

		st, raw := callRaw(api, http.MethodPost, "/v1/sessions/s1/end", p.Key, `{"force": true}`, nil)
		Expect(st).To(Equal(http.StatusBadRequest), "%s", raw)
		Expect(session(ctx, p.Namespace, "s1").Spec.Ended).To(BeFalse())

		st, raw = callRaw(api, http.MethodPost, "/v1/sessions/s1/end", p.Key, "", nil)
		Expect(st).To(Equal(http.StatusOK))
		Expect(strings.TrimSpace(string(raw))).To(Equal(`{"success":true}`))
		Expect(session(ctx, p.Namespace, "s1").Spec.Ended).To(BeTrue())
		st, raw = callRaw(api, http.MethodPost, "/v1/sessions/s1/end", p.Key, "", nil)
		Expect(st).To(Equal(http.StatusOK))
		Expect(strings.TrimSpace(string(raw))).To(Equal(`{"success":true}`))

		// {} is taken as empty, for clients that always send a JSON body.
		st, _ = callRaw(api, http.MethodPost, "/v1/sessions/s2/end", p.Key, " { } ", nil)
		Expect(st).To(Equal(http.StatusOK))
		Expect(session(ctx, p.Namespace, "s2").Spec.Ended).To(BeTrue())

		st, m := call(api, http.MethodPost, "/v1/sessions/nope/end", p.Key, "", nil)
		Expect(st).To(Equal(http.StatusNotFound))
		Expect(m).To(HaveKeyWithValue("code", "SESSION_NOT_FOUND"))
	})
})

var _ = Describe("projects", func() {
	It("hides one project's sessions from another's key", func(ctx SpecContext) {
		a, b := newProject(ctx), newProject(ctx)
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession("mine", a.Namespace).Obj())).To(Succeed())
		Eventually(func() int {
			st, _ := callRaw(api, http.MethodGet, "/v1/sessions/mine", a.Key, "", nil)
			return st
		}).Should(Equal(http.StatusOK))

		_, missing := callRaw(api, http.MethodGet, "/v1/sessions/missing", b.Key, "", nil)
		st, raw := callRaw(api, http.MethodGet, "/v1/sessions/mine", b.Key, "", nil)
		Expect(st).To(Equal(http.StatusNotFound))
		Expect(raw).To(Equal(missing))
		_, missing = callRaw(api, http.MethodPost, "/v1/sessions/missing/end", b.Key, "", nil)
		st, raw = callRaw(api, http.MethodPost, "/v1/sessions/mine/end", b.Key, "", nil)
		Expect(st).To(Equal(http.StatusNotFound))
		Expect(raw).To(Equal(missing))
		Expect(session(ctx, a.Namespace, "mine").Spec.Ended).To(BeFalse())

		_, m := call(api, http.MethodGet, "/v1/sessions", b.Key, "", nil)
		Expect(m["data"]).To(HaveKeyWithValue("sessions", BeEmpty()))
	})
})

var _ = Describe("GET /v1/sessions", func() {
	It("shows one session and lists the project's, filtered by phase and userMetadata", func(ctx SpecContext) {
		p := newProject(ctx)
		ready := startReady(ctx, p,
			`{"modelName": "openai/gpt-4.1-mini", "cloudSessionCreateParams": {"userMetadata": {"team": "growth", "tier": 3}}}`, nil)
		meta := func(team string) *v1alpha1.CloudSessionCreateParams {
			return &v1alpha1.CloudSessionCreateParams{UserMetadata: map[string]apiextensionsv1.JSON{
				"team": {Raw: []byte(`"` + team + `"`)},
			}}
		}
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession("starting-growth", p.Namespace).Cloud(meta("growth")).Obj())).To(Succeed())
		Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession("starting-other", p.Namespace).Cloud(meta("other")).Obj())).To(Succeed())

		st, m := call(api, http.MethodGet, "/v1/sessions/"+ready, p.Key, "", nil)
		Expect(st).To(Equal(http.StatusOK))
		Expect(keysOf(m)).To(Equal([]string{"data", "success"}))
		data := m["data"].(map[string]any)
		Expect(keysOf(data)).To(Equal([]string{"cdpUrl", "createdAt", "endedAt", "expiresAt", "message", "modelName",
			"phase", "sessionId", "startedAt", "userMetadata"}))
		Expect(data).To(HaveKeyWithValue("sessionId", ready))
		Expect(data).To(HaveKeyWithValue("phase", "Ready"))
		Expect(data).To(HaveKeyWithValue("modelName", "openai/gpt-4.1-mini"))
		Expect(data).To(HaveKeyWithValue("endedAt", BeNil()))
		Expect(data["startedAt"]).NotTo(BeNil())
		Expect(data["expiresAt"]).NotTo(BeNil())
		Expect(data["userMetadata"]).To(Equal(map[string]any{"team": "growth", "tier": float64(3)}))

		ids := func(query string) []string {
			GinkgoHelper()
			st, m := call(api, http.MethodGet, "/v1/sessions"+query, p.Key, "", nil)
			Expect(st).To(Equal(http.StatusOK))
			var out []string
			for _, s := range m["data"].(map[string]any)["sessions"].([]any) {
				out = append(out, s.(map[string]any)["sessionId"].(string))
			}
			return out
		}
		Eventually(func() []string { return ids("") }).Should(ConsistOf(ready, "starting-growth", "starting-other"))
		Expect(ids("?phase=Ready&userMetadata.team=growth")).To(Equal([]string{ready}))
		Expect(ids("?userMetadata.team=growth")).To(ConsistOf(ready, "starting-growth"))
		Expect(ids("?userMetadata.tier=3")).To(Equal([]string{ready}))
		Eventually(func() []string { return ids("?phase=Ready&phase=Starting&userMetadata.team=other") }).
			Should(Equal([]string{"starting-other"}))
		Expect(ids("?userMetadata.team=nobody")).To(BeEmpty())

		st, m = call(api, http.MethodGet, "/v1/sessions?phase=Bogus&colour=red", p.Key, "", nil)
		Expect(st).To(Equal(http.StatusBadRequest))
		Expect(m["issues"]).To(ConsistOf(HaveKeyWithValue("path", "colour"), HaveKeyWithValue("path", "phase")))
	})

	It("pages the list with limit and continue, in the list's order", func(ctx SpecContext) {
		p := newProject(ctx)
		for _, name := range []string{"a", "b", "c", "d", "e"} {
			Expect(k8sClient.Create(ctx, wrappers.MakeBrowserSession(name, p.Namespace).Obj())).To(Succeed())
		}
		page := func(query string) ([]string, string) {
			GinkgoHelper()
			st, m := call(api, http.MethodGet, "/v1/sessions"+query, p.Key, "", nil)
			Expect(st).To(Equal(http.StatusOK), "%v", m)
			data := m["data"].(map[string]any)
			var out []string
			for _, s := range data["sessions"].([]any) {
				out = append(out, s.(map[string]any)["sessionId"].(string))
			}
			next, _ := data["continue"].(string)
			return out, next
		}
		Eventually(func() []string { ids, _ := page(""); return ids }).Should(HaveLen(5))
		all, next := page("")
		Expect(next).To(BeEmpty(), "one page holds them all")

		var paged []string
		query := "?limit=2"
		for range 3 {
			ids, next := page(query)
			Expect(len(ids)).To(BeNumerically("<=", 2))
			paged = append(paged, ids...)
			if next == "" {
				break
			}
			query = "?limit=2&continue=" + url.QueryEscape(next)
		}
		Expect(paged).To(Equal(all))

		for _, bad := range []string{"?limit=0", "?limit=501", "?limit=x", "?continue=nonsense"} {
			st, m := call(api, http.MethodGet, "/v1/sessions"+bad, p.Key, "", nil)
			Expect(st).To(Equal(http.StatusBadRequest), bad)
			Expect(m["issues"]).To(HaveLen(1), bad)
		}
	})
})

var _ = Describe("a start that meets a fault", func() {
	var p project
	BeforeEach(func(ctx SpecContext) {
		p = newProject(ctx)
		DeferCleanup(func() { faults.set(nil) })
	})

	// converges: the project ends up with no session and no request
	// Secret: nothing of the failed start outlives it.
	converges := func(ctx context.Context) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			var sessions v1alpha1.BrowserSessionList
			g.Expect(k8sClient.List(ctx, &sessions, client.InNamespace(p.Namespace))).To(Succeed())
			g.Expect(sessions.Items).To(BeEmpty())
			var secrets corev1.SecretList
			g.Expect(k8sClient.List(ctx, &secrets, client.InNamespace(p.Namespace), client.HasLabels{v1alpha1.LabelSession})).To(Succeed())
			for _, s := range secrets.Items {
				// The garbage collector takes owned Secrets; none
				// may be without an owner.
				g.Expect(s.OwnerReferences).NotTo(BeEmpty(), "request Secret %s has no owner", s.Name)
			}
		}).Should(Succeed())
	}

	It("leaves nothing when the session's create times out after it succeeded", func(ctx SpecContext) {
		faults.set(func(_ context.Context, obj client.Object, create func() error) error {
			err := create()
			if _, ok := obj.(*v1alpha1.BrowserSession); ok && err == nil {
				return apierrors.NewTimeoutError("the create took too long", 1)
			}
			return err
		})
		status, body := call(apiFaulty, http.MethodPost, "/v1/sessions/start", p.Key, `{"modelName":"openai/gpt-4.1-mini"}`,
			map[string]string{"x-model-api-key": "sk-fault"})
		Expect(status).To(Equal(http.StatusInternalServerError), "%v", body)
		converges(ctx)
	})

	It("leaves nothing when the request Secret's create fails", func(ctx SpecContext) {
		faults.set(func(_ context.Context, obj client.Object, create func() error) error {
			if _, ok := obj.(*corev1.Secret); ok {
				return apierrors.NewServiceUnavailable("etcd is full")
			}
			return create()
		})
		status, body := call(apiFaulty, http.MethodPost, "/v1/sessions/start", p.Key, `{"modelName":"openai/gpt-4.1-mini"}`,
			map[string]string{"x-model-api-key": "sk-fault"})
		Expect(status).To(Equal(http.StatusInternalServerError), "%v", body)
		converges(ctx)
	})
})
