#!/usr/bin/env bash
# Builds what the one-node cluster (hack/cluster) adds to envtest's binaries,
# from source through the Go module proxy, into $CLUSTER_BIN: kubelet,
# kube-controller-manager, kube-scheduler and kube-proxy (hack/cluster/kube),
# CoreDNS (hack/cluster/coredns), kube-router (hack/cluster/kuberouter) and
# tiny, the binary of the cluster's own images. A binary that already reports
# the pinned version is kept.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/kube-build.sh
source "$root/hack/kube-build.sh"
k8s_version=${ENVTEST_K8S_VERSION:-1.37.1}
out=${CLUSTER_BIN:-$root/bin/cluster}
mkdir -p "$out"

grep -qE "k8s.io/kubernetes v${k8s_version//./\\.}( |$)" "$root/hack/cluster/kube/go.mod" ||
  { echo "hack/cluster/kube/go.mod does not pin k8s.io/kubernetes v$k8s_version" >&2; exit 1; }
# The version a go.mod requires of a module (in a require block or line).
required() { awk -v m="$1" '{ for (i = 1; i < NF; i++) if ($i == m && $(i+1) ~ /^v/) { print $(i+1); exit } }' "$2"; }
coredns_version=$(required github.com/coredns/coredns "$root/hack/cluster/coredns/go.mod")
router_version=$(required github.com/cloudnativelabs/kube-router/v2 "$root/hack/cluster/kuberouter/go.mod")
[[ -n "$coredns_version" && -n "$router_version" ]] ||
  { echo "hack/cluster/{coredns,kuberouter}/go.mod: no required version of CoreDNS or kube-router" >&2; exit 1; }

ldflags=$(kube_ldflags "$k8s_version")

timed() { local s=$SECONDS; "$@"; echo "cluster-build: $(( SECONDS - s ))s"; }

current=true
for b in kubelet kube-controller-manager kube-scheduler kube-proxy; do
  [[ "$(version_of "$out/$b" --version)" == "Kubernetes v$k8s_version" ]] || current=false
done
if $current; then
  echo "cluster-build: kubelet, kube-controller-manager, kube-scheduler, kube-proxy v$k8s_version present in $out"
else
  echo "cluster-build: building kubelet, kube-controller-manager, kube-scheduler, kube-proxy v$k8s_version from source (several minutes)"
  (cd "$root/hack/cluster/kube" &&
    timed go build -ldflags "$ldflags" -o "$out/" \
      k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy)
fi

# CoreDNS runs in a FROM-scratch image: static.
if [[ "$(version_of "$out/coredns" -version)" == *"CoreDNS-${coredns_version#v}"* ]]; then
  echo "cluster-build: coredns $coredns_version present in $out"
else
  echo "cluster-build: building coredns $coredns_version from source"
  (cd "$root/hack/cluster/coredns" &&
    CGO_ENABLED=0 timed go build -ldflags "-s -w" -o "$out/coredns" github.com/coredns/coredns)
fi

# kube-router reports its version on stderr.
if [[ "$("$out/kube-router" --version 2>&1 || true)" == *" version ${router_version},"* ]]; then
  echo "cluster-build: kube-router $router_version present in $out"
else
  echo "cluster-build: building kube-router $router_version from source"
  (cd "$root/hack/cluster/kuberouter" &&
    timed go build -ldflags "-X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$router_version" \
      -o "$out/kube-router" github.com/cloudnativelabs/kube-router/v2/cmd/kube-router)
fi

# Small and quick: always rebuilt, so that it follows hack/cluster/tiny.
(cd "$root" && CGO_ENABLED=0 go build -o "$out/tiny" ./hack/cluster/tiny)
(cd "$root" && go build -o "$out/cluster" ./hack/cluster)
