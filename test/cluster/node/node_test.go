// Package node_test checks the one-node cluster of `make cluster`
// (hack/cluster) from outside, as a user does: a pod under the runner pods'
// hardening runs, another pod reaches it by its Service's name, a
// NetworkPolicy cuts it off and lets a chosen pod back in, and kubectl's
// logs, exec and port-forward work from the host.
//
// It needs the running cluster: `make cluster-smoke` sets
// BROWSERFLEET_CLUSTER_KUBECONFIG and fails when the cluster is not up.
// Without that variable (as in `make test`) it skips, saying so.
package node_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

const tinyImage = "browserfleet.local/tiny:v1"

type cluster struct {
	t          *testing.T
	kubeconfig string
	kubectlBin string
	ns         string
}

func setup(t *testing.T) *cluster {
	t.Helper()
	kc := os.Getenv("BROWSERFLEET_CLUSTER_KUBECONFIG")
	if kc == "" {
		t.Skip("SKIPPED, NOT PASSED: BROWSERFLEET_CLUSTER_KUBECONFIG is not set; `make cluster cluster-smoke` runs this check against the one-node cluster")
	}
	if _, err := os.Stat(kc); err != nil {
		t.Fatalf("the cluster's kubeconfig: %v (is the cluster up? make cluster)", err)
	}
	// The API server's address is on the node's side of the veth pair; with
	// the pair gone the host would route it out of the machine: no call.
	if _, err := os.Stat("/sys/class/net/bf-host"); err != nil {
		t.Fatalf("the cluster is not up: no link bf-host to its node (make cluster)")
	}
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		bin = "kubectl"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	c := &cluster{t: t, kubeconfig: kc, kubectlBin: bin, ns: "bf-smoke-" + hex.EncodeToString(b)}
	if out, err := c.kubectl(10*time.Second, "get", "--raw", "/readyz"); err != nil {
		t.Fatalf("the cluster does not answer (make cluster): %v: %s", err, out)
	}
	c.must("create", "namespace", c.ns)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := c.kubectl(20*time.Second, "-n", c.ns, "describe", "pods")
			t.Logf("pods of %s:\n%s", c.ns, out)
		}
		_, _ = c.kubectl(20*time.Second, "delete", "namespace", c.ns, "--wait=false")
	})
	return c
}

func (c *cluster) kubectl(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.kubectlBin, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *cluster) must(args ...string) string {
	c.t.Helper()
	out, err := c.kubectl(2*time.Minute, args...)
	if err != nil {
		c.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c *cluster) apply(manifest string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.kubectlBin, "--kubeconfig", c.kubeconfig, "-n", c.ns, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("kubectl apply: %v\n%s\n%s", err, out, manifest)
	}
}

// get runs `tiny get URL` in the client pod: the pod-to-pod (or -Service) path.
func (c *cluster) get(url string) (string, error) {
	return c.kubectl(30*time.Second, "-n", c.ns, "exec", "client", "--", "/tiny", "get", url)
}

// eventually polls f for up to 60s (kube-router applies a policy within
// seconds of its change).
func (c *cluster) eventually(what string, f func() error) {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not within 60s: %v", what, err)
		}
		time.Sleep(time.Second)
	}
}

// The runner pods' hardening (controllers/runner_pod.go, the chart): a
// read-only root, user 65532, no capabilities, RuntimeDefault seccomp, and
// a memory-backed /dev/shm.
const pods = `
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  automountServiceAccountToken: false
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    fsGroup: 65532
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: web
    image: ` + tinyImage + `
    imagePullPolicy: Never
    args: [serve, ":8080"]
    ports: [{containerPort: 8080, name: http}]
    readinessProbe:
      httpGet: {path: /, port: 8080}
      periodSeconds: 1
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {drop: [ALL]}
    volumeMounts:
    - {name: shm, mountPath: /dev/shm}
  volumes:
  - name: shm
    emptyDir: {medium: Memory, sizeLimit: 64Mi}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: v1
kind: Pod
metadata:
  name: client
  labels: {app: client}
spec:
  automountServiceAccountToken: false
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: client
    image: ` + tinyImage + `
    imagePullPolicy: Never
    args: [pause]
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {drop: [ALL]}
`

type check struct {
	UID          int    `json:"uid"`
	RootReadOnly bool   `json:"rootReadOnly"`
	ShmTmpfs     bool   `json:"shmTmpfs"`
	ShmWritable  bool   `json:"shmWritable"`
	ShmSizeBytes uint64 `json:"shmSizeBytes"`
	CapEff       string `json:"capEff"`
	Seccomp      string `json:"seccomp"`
	NoNewPrivs   string `json:"noNewPrivs"`
}

func TestNode(t *testing.T) {
	c := setup(t)
	c.apply(pods)
	c.must("-n", c.ns, "wait", "--for=condition=Ready", "pod/web", "pod/client", "--timeout=120s")
	// kube-proxy programs the new Service within a few seconds of its
	// endpoint becoming ready.
	c.eventually("the client reaches the web Service", func() error {
		out, err := c.get("http://web/")
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	})

	t.Run("hardened pod", func(t *testing.T) {
		out, err := c.get("http://web/check")
		if err != nil {
			t.Fatalf("GET http://web/check from the client pod: %v\n%s", err, out)
		}
		var got check
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("decoding %q: %v", out, err)
		}
		t.Logf("web pod: %+v", got)
		if got.UID != 65532 || !got.RootReadOnly || !got.ShmTmpfs || !got.ShmWritable ||
			got.CapEff != "0000000000000000" || got.Seccomp != "2" || got.NoNewPrivs != "1" {
			t.Errorf("want uid 65532, a read-only root, a writable tmpfs /dev/shm, no capabilities, seccomp filter mode 2, no_new_privs; got %+v", got)
		}
		if got.ShmSizeBytes != 64<<20 {
			t.Errorf("/dev/shm is %d bytes, want the emptyDir's sizeLimit 64Mi", got.ShmSizeBytes)
		}
	})

	t.Run("service by name", func(t *testing.T) {
		for _, url := range []string{"http://web/", "http://web." + c.ns + ".svc.cluster.local/"} {
			out, err := c.get(url)
			if err != nil || !strings.Contains(out, "tiny web") {
				t.Errorf("GET %s from the client pod: %v: %q", url, err, out)
			}
		}
	})

	t.Run("logs", func(t *testing.T) {
		out := c.must("-n", c.ns, "logs", "web")
		if !strings.Contains(out, "serving on :8080") {
			t.Errorf("kubectl logs web: %q", out)
		}
	})

	t.Run("port-forward", func(t *testing.T) {
		for _, target := range []string{"pod/web", "svc/web"} {
			body := portForwardGet(t, c, target)
			if !strings.Contains(body, "tiny web") {
				t.Errorf("through kubectl port-forward %s: %q", target, body)
			}
		}
	})

	t.Run("network policy", func(t *testing.T) {
		webIP := strings.TrimSpace(c.must("-n", c.ns, "get", "pod", "web", "-o", "jsonpath={.status.podIP}"))
		if out, err := c.get("http://" + webIP + ":8080/"); err != nil {
			t.Fatalf("before any policy, GET the web pod's address: %v: %s", err, out)
		}
		// Ingress to web only from pods labelled role=friend: the client is
		// cut off, by Service and by pod address.
		c.apply(`
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web-friends-only
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
  ingress:
  - from:
    - podSelector: {matchLabels: {role: friend}}
    ports: [{port: 8080}]
`)
		for _, url := range []string{"http://web/", "http://" + webIP + ":8080/"} {
			c.eventually("the policy blocks "+url, func() error {
				if out, err := c.get(url); err == nil {
					return fmt.Errorf("GET %s still answered: %q", url, out)
				}
				return nil
			})
		}
		// The kubelet's probes come from the node, which the policy does
		// not cut off: web stays Ready (its probe fails after 3 periods of 1s).
		time.Sleep(4 * time.Second)
		if ready := c.must("-n", c.ns, "get", "pod", "web", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`); ready != "True" {
			t.Errorf("under the policy, web's Ready condition is %q: the kubelet's probe is blocked", ready)
		}
		// Not a broken network: the client, made a friend, is let in again.
		c.must("-n", c.ns, "label", "pod", "client", "role=friend")
		c.eventually("a friend reaches web", func() error {
			out, err := c.get("http://web/")
			if err != nil {
				return fmt.Errorf("%w: %s", err, out)
			}
			return nil
		})
		c.must("-n", c.ns, "label", "pod", "client", "role-")
		c.eventually("the policy blocks the client again", func() error {
			if out, err := c.get("http://web/"); err == nil {
				return fmt.Errorf("still answered: %q", out)
			}
			return nil
		})
		c.must("-n", c.ns, "delete", "networkpolicy", "web-friends-only")
		c.eventually("web answers once the policy is gone", func() error {
			out, err := c.get("http://web/")
			if err != nil {
				return fmt.Errorf("%w: %s", err, out)
			}
			return nil
		})
	})
}

var forwarding = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+)`)

// portForwardGet runs kubectl port-forward to target's port 8080 (80 for
// the Service) on a free local port and GETs / through it.
func portForwardGet(t *testing.T, c *cluster, target string) string {
	t.Helper()
	port := "0:8080"
	if strings.HasPrefix(target, "svc/") {
		port = "0:80"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.kubectlBin, "--kubeconfig", c.kubeconfig, "-n", c.ns,
		"port-forward", "--address", "127.0.0.1", target, port)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	local := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := forwarding.FindStringSubmatch(sc.Text()); m != nil {
				local <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var lp string
	select {
	case lp = <-local:
	case <-time.After(30 * time.Second):
		t.Fatalf("kubectl port-forward %s said no local port within 30s: %s", target, stderr.String())
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://127.0.0.1:" + lp + "/")
	if err != nil {
		t.Fatalf("GET through port-forward %s: %v (%s)", target, err, stderr.String())
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
