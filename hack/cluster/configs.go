package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// files writes every configuration file the components read. The paths are
// all under the state directory, so that nothing of the cluster lands in
// /etc or /var/lib.
func writeConfigs(c config) error {
	p := func(rel string) string { return filepath.Join(c.dir, rel) }
	sock := p("containerd/containerd.sock")
	files := map[string]string{
		"containerd/config.toml": fmt.Sprintf(`# containerd for the one-node cluster (hack/cluster): its own root, state
# and socket; the CRI's sandbox (pause) image is the cluster's own.
version = 2
root = %[1]q
state = %[2]q
# opt would install into /opt; the other snapshotters are not used here.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # Negative OOM score adjustments (the sandbox's -998, a Guaranteed pod's
  # -997) need CAP_SYS_RESOURCE, which this machine's bounding set lacks:
  # runc's init then fails with "can't get final child's PID from pipe".
  # Clamp them to containerd's own score instead.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[6]q
`, p("containerd/root"), p("containerd/state"), sock, sock+".ttrpc", pauseImage, p("cni/net.d")),

		// ptp: each pod a veth of its own, routed through the node, so that
		// every packet between pods crosses the node's iptables, where
		// kube-proxy's and kube-router's rules are (a bridge would switch
		// pod-to-pod frames past them unless br_netfilter is on).
		"cni/net.d/10-bf-cluster.conflist": fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": %q,
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "mtu": 1500,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, cniNetwork, nodePodCIDR, p("cni/ipam")),

		"kubelet/config.yaml": fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine has cgroup v1 hierarchies only; kubelet 1.37 still runs on
# them when told to (docs/install.md).
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://%[1]s
imageServiceEndpoint: unix://%[1]s
address: %[2]s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[3]s
authorization:
  mode: Webhook
tlsCertFile: %[4]s
tlsPrivateKeyFile: %[5]s
clusterDomain: cluster.local
clusterDNS: [%[6]s]
resolvConf: %[7]s
podLogsDir: %[8]s
failSwapOn: false
serializeImagePulls: false
# The disk is shared with builds; evict only when it is nearly full.
evictionHard:
  memory.available: 200Mi
  nodefs.available: 2%%
  nodefs.inodesFree: 2%%
  imagefs.available: 2%%
imageGCHighThresholdPercent: 95
imageGCLowThresholdPercent: 90
`, sock, nodeIP, p("pki/ca.crt"), p("pki/kubelet.crt"), p("pki/kubelet.key"), dnsIP, p("kubelet/resolv.conf"), p("pod-logs")),

		// Pods resolve cluster names only: there is no upstream DNS here.
		"kubelet/resolv.conf": "# the one-node cluster has no upstream name server\noptions ndots:1\n",

		"kube-proxy/config.yaml": fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
bindAddress: %s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
mode: iptables
clusterCIDR: %s
detectLocalMode: ClusterCIDR
nodePortAddresses: [primary]
iptables:
  localhostNodePorts: false
# The node's network namespace is not the init one: leave the conntrack
# sysctls (global or read-only there) alone.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, p("kubeconfigs/kube-proxy"), nodeName, nodeIP, podCIDR),
	}
	for rel, content := range files {
		path := p(rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, d := range []string{"pod-logs", "cni/ipam", "etcd", "images"} {
		if err := os.MkdirAll(p(d), 0o700); err != nil {
			return err
		}
	}
	return nil
}

// componentArgs are the command lines, in start order.
func componentArgs(c config) map[string][]string {
	p := func(rel string) string { return filepath.Join(c.dir, rel) }
	kc := func(name string) string { return p("kubeconfigs/" + name) }
	bin := func(name string) string { return filepath.Join(c.bin, name) }
	return map[string][]string{
		"etcd": {filepath.Join(c.assets, "etcd"), "--name", nodeName, "--data-dir", p("etcd"),
			"--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379",
			"--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
			"--initial-cluster", nodeName + "=http://127.0.0.1:2380", "--listen-metrics-urls", "http://127.0.0.1:2381"},
		"kube-apiserver": {filepath.Join(c.assets, "kube-apiserver"),
			"--etcd-servers", "http://127.0.0.1:2379",
			"--bind-address", "0.0.0.0", "--secure-port", fmt.Sprint(apiPort), "--advertise-address", nodeIP,
			"--service-cluster-ip-range", serviceCIDR,
			"--client-ca-file", p("pki/ca.crt"),
			"--tls-cert-file", p("pki/apiserver.crt"), "--tls-private-key-file", p("pki/apiserver.key"),
			"--kubelet-client-certificate", p("pki/apiserver-kubelet-client.crt"),
			"--kubelet-client-key", p("pki/apiserver-kubelet-client.key"),
			"--kubelet-certificate-authority", p("pki/ca.crt"),
			"--kubelet-preferred-address-types", "InternalIP",
			"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file", p("pki/sa.pub"),
			"--service-account-signing-key-file", p("pki/sa.key"),
			"--authorization-mode", "Node,RBAC",
			"--enable-admission-plugins", "NodeRestriction",
			"--allow-privileged=true", "--profiling=false"},
		"kube-controller-manager": {bin("kube-controller-manager"),
			"--kubeconfig", kc("controller-manager"),
			"--authentication-kubeconfig", kc("controller-manager"), "--authorization-kubeconfig", kc("controller-manager"),
			"--bind-address", "127.0.0.1", "--leader-elect=false",
			"--use-service-account-credentials=true",
			"--service-account-private-key-file", p("pki/sa.key"), "--root-ca-file", p("pki/ca.crt"),
			"--cluster-signing-cert-file", p("pki/ca.crt"), "--cluster-signing-key-file", p("pki/ca.key"),
			"--allocate-node-cidrs=true", "--cluster-cidr", podCIDR, "--node-cidr-mask-size", "24",
			"--service-cluster-ip-range", serviceCIDR, "--profiling=false"},
		"kube-scheduler": {bin("kube-scheduler"),
			"--kubeconfig", kc("scheduler"),
			"--authentication-kubeconfig", kc("scheduler"), "--authorization-kubeconfig", kc("scheduler"),
			"--bind-address", "127.0.0.1", "--leader-elect=false", "--profiling=false"},
		"containerd": {"containerd", "--config", p("containerd/config.toml")},
		"kubelet": {bin("kubelet"), "--config", p("kubelet/config.yaml"), "--kubeconfig", kc("kubelet"),
			"--root-dir", p("kubelet/root"), "--hostname-override", nodeName, "--node-ip", nodeIP},
		"kube-proxy": {bin("kube-proxy"), "--config", p("kube-proxy/config.yaml")},
		// The firewall alone: pod routes are ptp's, Services are kube-proxy's.
		"kube-router": {bin("kube-router"), "--kubeconfig", kc("kube-router"),
			"--run-firewall=true", "--run-router=false", "--run-service-proxy=false",
			"--enable-cni=false", "--enable-ipv4=true", "--enable-ipv6=false",
			"--hostname-override", nodeName, "--health-port", "20244", "--metrics-port", "0"},
	}
}

// controlPlane and node are the start order; down stops in reverse.
var (
	controlPlane = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}
	nodeParts    = []string{"containerd", "kubelet", "kube-proxy", "kube-router"}
)
