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
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/browserfleet/browserfleet/internal/testing/redistest"
	"github.com/browserfleet/browserfleet/store"
)

const redisName = "bf-browserfleet-redis"

// deployRedis is the values of a release that runs its cache's Redis.
func deployRedis() map[string]any {
	return map[string]any{"cache": map[string]any{"enabled": true, "threshold": 2, "ttl": "24h",
		"redis": map[string]any{"deploy": true}}}
}

// redisContainer is the Redis Deployment's one container.
func redisContainer(objs []*unstructured.Unstructured) (*appsv1.Deployment, corev1.Container) {
	GinkgoHelper()
	d := toTyped[appsv1.Deployment](Find(objs, "Deployment", redisName))
	Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
	return d, d.Spec.Template.Spec.Containers[0]
}

var _ = Describe("the server-side cache's values", func() {
	It("give the API the embedded store by default, and every runner the API's runner listener", func() {
		opts, r := apiOptions(nil)
		Expect(opts.CacheRedisAddress).To(BeEmpty())
		Expect(opts.CacheRedisPasswordFile).To(BeEmpty())
		Expect(opts.CacheEnabled).To(BeFalse())
		Expect(opts.CacheThreshold).To(BeEquivalentTo(1))
		Expect(opts.CacheTTL).To(Equal(168 * time.Hour))
		Expect(Find(r.Objects, "Deployment", redisName)).To(BeNil())
		Expect(Find(r.Objects, "Secret", redisName)).To(BeNil())

		svc := toTyped[corev1.Service](Find(r.Objects, "Service", "bf-browserfleet-api-runners"))
		Expect(svc.Spec.Ports).To(ConsistOf(HaveField("Port", BeEquivalentTo(8001))))
		Expect(managerOptionsOf(r.Objects, "bf-browserfleet-manager").Controllers.Runner.ServicesURL).
			To(Equal("http://bf-browserfleet-api-runners.bf-system.svc:8001"))
		np := toTyped[networkingv1.NetworkPolicy](Find(r.Objects, "NetworkPolicy", "bf-browserfleet-runner"))
		Expect(np.Spec.Egress).To(ContainElement(SatisfyAll(
			HaveField("Ports", ConsistOf(HaveField("Port.IntVal", BeEquivalentTo(8001)))),
			HaveField("To", ConsistOf(HaveField("PodSelector.MatchLabels", HaveKeyWithValue("app.kubernetes.io/component", "api")))),
		)), "runners may reach the API's runner listener, search or not")
	})

	It("run a Redis of the release whose password reaches the API only as a mounted file", func() {
		opts, r := apiOptions(deployRedis())
		Expect(opts.CacheEnabled).To(BeTrue())
		Expect(opts.CacheThreshold).To(BeEquivalentTo(2))
		Expect(opts.CacheTTL).To(Equal(24 * time.Hour))
		Expect(opts.CacheRedisAddress).To(Equal(redisName + ".bf-system.svc:6379"))
		api := Find(r.Objects, "Deployment", "bf-browserfleet-api")
		Expect(mountedFile(api, "api", opts.CacheRedisPasswordFile)).To(Equal(redisName + "/password"))

		secret := secretOf(r.Objects, redisName)
		password := string(secret.Data["password"])
		Expect(password).To(MatchRegexp(`^[A-Za-z0-9]{48}$`))
		Expect(string(secret.Data["redis.conf"])).To(Equal("requirepass " + password + "\n"))
		// Nowhere else: no argument, no environment variable, no
		// ConfigMap.
		for _, o := range r.Objects {
			if o.GetKind() == "Secret" {
				continue
			}
			raw, err := yaml.Marshal(o.Object)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(raw)).NotTo(ContainSubstring(password), "%s %s", o.GetKind(), o.GetName())
		}

		d, c := redisContainer(r.Objects)
		pod := d.Spec.Template.Spec
		Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
		Expect(*pod.SecurityContext.RunAsUser).To(BeEquivalentTo(999))
		Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
		Expect(*c.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
		Expect(*c.SecurityContext.AllowPrivilegeEscalation).To(BeFalse())
		Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
		Expect(c.Env).To(BeEmpty())
		Expect(c.Image).To(Equal("redis:8.2-alpine"))

		np := toTyped[networkingv1.NetworkPolicy](Find(r.Objects, "NetworkPolicy", redisName))
		Expect(np.Spec.PodSelector.MatchLabels).To(HaveKeyWithValue("app.kubernetes.io/component", "cache"))
		Expect(np.Spec.PolicyTypes).To(ConsistOf(networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress))
		Expect(np.Spec.Egress).To(BeEmpty(), "the Redis reaches nothing")
		Expect(np.Spec.Ingress).To(HaveLen(1))
		Expect(np.Spec.Ingress[0].From).To(ConsistOf(SatisfyAll(
			HaveField("NamespaceSelector", BeNil()),
			HaveField("PodSelector.MatchLabels", HaveKeyWithValue("app.kubernetes.io/component", "api")),
		)), "the API pods of the release only")
		Expect(np.Spec.Ingress[0].Ports).To(ConsistOf(HaveField("Port.StrVal", "redis")))
	})

	It("run a Redis command line that starts the local redis-server with the rendered password", func(ctx SpecContext) {
		r, err := Render("bf", "bf-system", deployRedis())
		Expect(err).NotTo(HaveOccurred())
		_, c := redisContainer(r.Objects)
		Expect(c.Command).To(Equal([]string{"redis-server"}))
		secret := secretOf(r.Objects, redisName)

		// The pod's files, here: the mounted redis.conf and /data. The
		// port and the address are this machine's: a free loopback port,
		// bound on loopback only.
		dir := GinkgoT().TempDir()
		conf := filepath.Join(dir, "redis.conf")
		Expect(os.WriteFile(conf, secret.Data["redis.conf"], 0o600)).To(Succeed())
		port := strconv.Itoa(redistest.FreePort(GinkgoT()))
		var args []string
		for i := 0; i < len(c.Args); i++ {
			a := c.Args[i]
			switch {
			case a == "/etc/redis/redis.conf":
				a = conf
			case a == "--port" || a == "--dir":
				Expect(i + 1).To(BeNumerically("<", len(c.Args)))
				v := port
				if a == "--dir" {
					Expect(c.Args[i+1]).To(Equal("/data"))
					v = dir
				}
				args = append(args, a, v)
				i++
				continue
			}
			args = append(args, a)
		}
		args = append(args, "--bind", "127.0.0.1")
		address := net.JoinHostPort("127.0.0.1", port)
		password := string(secret.Data["password"])
		redistest.StartArgs(GinkgoT(), dir, address, password, args...)

		// Without the password Redis refuses; with it, the API's store
		// works, and Redis evicts as the values say.
		noAuth := redis.NewClient(&redis.Options{Addr: address, DisableIdentity: true, Protocol: 2})
		DeferCleanup(noAuth.Close)
		Expect(noAuth.Ping(ctx).Err()).To(MatchError(ContainSubstring("NOAUTH")))
		admin := redis.NewClient(&redis.Options{Addr: address, Password: password, DisableIdentity: true})
		DeferCleanup(admin.Close)
		Expect(admin.ConfigGet(ctx, "maxmemory-policy").Val()).To(HaveKeyWithValue("maxmemory-policy", "allkeys-lru"))
		Expect(admin.ConfigGet(ctx, "maxmemory").Val()).To(HaveKeyWithValue("maxmemory", strconv.Itoa(200<<20)))
		Expect(admin.ConfigGet(ctx, "save").Val()).To(HaveKeyWithValue("save", ""))

		st, err := store.NewRedis(store.RedisOptions{Address: address, Password: password})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		Expect(st.Add(context.Background(), "team-a", "n", 3, time.Hour)).To(BeEquivalentTo(3))
	})

	It("keep the generated Redis password across upgrades", func(ctx SpecContext) {
		ns := newNamespace(ctx, "")
		installed, err := Render("bf", ns, deployRedis())
		Expect(err).NotTo(HaveOccurred())
		create(ctx, Find(installed.Objects, "Secret", redisName))
		upgraded, err := RenderUpgrade(restConfig, "bf", ns, deployRedis())
		Expect(err).NotTo(HaveOccurred())
		Expect(secretOf(upgraded, redisName).Data).To(Equal(secretOf(installed.Objects, redisName).Data))
		// The Redis pod's checksum is the same: an upgrade does not
		// restart it (and empty the cache) for nothing.
		before := toTyped[appsv1.Deployment](Find(installed.Objects, "Deployment", redisName))
		after := toTyped[appsv1.Deployment](Find(upgraded, "Deployment", redisName))
		Expect(after.Spec.Template.Annotations).To(Equal(before.Spec.Template.Annotations))
	})

	It("point the API at an existing Redis with the password of an existing Secret", func() {
		opts, r := apiOptions(map[string]any{"cache": map[string]any{"redis": map[string]any{
			"address": "redis.data.svc:6380", "existingSecret": "redis-auth", "passwordKey": "pw",
		}}})
		Expect(opts.CacheRedisAddress).To(Equal("redis.data.svc:6380"))
		Expect(mountedFile(Find(r.Objects, "Deployment", "bf-browserfleet-api"), "api", opts.CacheRedisPasswordFile)).To(Equal("redis-auth/pw"))
		Expect(Find(r.Objects, "Deployment", redisName)).To(BeNil())
		Expect(Find(r.Objects, "Secret", redisName)).To(BeNil())

		opts, _ = apiOptions(map[string]any{"cache": map[string]any{"redis": map[string]any{"address": "10.0.0.7:6379"}}})
		Expect(opts.CacheRedisAddress).To(Equal("10.0.0.7:6379"))
		Expect(opts.CacheRedisPasswordFile).To(BeEmpty())
	})

	It("warn in NOTES.txt when several API replicas have no shared cache", func() {
		r, err := Render("bf", "bf-system", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Notes).To(ContainSubstring("each of the\n2 API replicas keeps its own entries"))
		for _, vals := range []map[string]any{
			deployRedis(),
			{"api": map[string]any{"replicas": 1}},
			{"cache": map[string]any{"redis": map[string]any{"address": "redis:6379"}}},
		} {
			r, err := Render("bf", "bf-system", vals)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Notes).NotTo(ContainSubstring("has no Redis"), "%v", vals)
		}
	})

	It("are all read by the API's flags and pass its checks", func() {
		vals, err := ValuesFile("values-all.yaml")
		Expect(err).NotTo(HaveOccurred())
		opts, r := apiOptions(vals)
		Expect(opts.CacheEnabled).To(BeTrue())
		Expect(opts.CacheThreshold).To(BeEquivalentTo(3))
		Expect(opts.CacheTTL).To(Equal(72 * time.Hour))
		Expect(opts.RunnerListenAddress).To(Equal(":8011"))
		Expect(store.RedisOptions{Address: opts.CacheRedisAddress}.Validate()).To(Succeed())
		_, c := redisContainer(r.Objects)
		Expect(c.Image).To(Equal("registry.example.com/mirror/redis:8.2-alpine"))
		Expect(strings.Join(c.Args, " ")).To(ContainSubstring("--maxmemory 100mb"))
	})
})
