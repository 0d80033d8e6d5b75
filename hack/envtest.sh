#!/usr/bin/env bash
# Builds the envtest control plane — kube-apiserver, etcd and kubectl — from
# source through the Go module proxy into $ENVTEST_ASSETS. No other host is
# reachable on our machines, so nothing is downloaded prebuilt. A binary that
# already reports the pinned version is kept.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/kube-build.sh
source "$root/hack/kube-build.sh"
k8s_version=${ENVTEST_K8S_VERSION:-1.37.1}
etcd_version=${ENVTEST_ETCD_VERSION:-3.6.16}
assets=${ENVTEST_ASSETS:-$root/bin/k8s/$k8s_version-$(go env GOOS)-$(go env GOARCH)}
mkdir -p "$assets"

# The versions are pinned in the modules' go.mod files; refuse to build
# anything else than what the Makefile asks for.
grep -qE "k8s.io/kubernetes v${k8s_version//./\\.}( |$)" "$root/hack/envtest/kube/go.mod" ||
  { echo "hack/envtest/kube/go.mod does not pin k8s.io/kubernetes v$k8s_version" >&2; exit 1; }
grep -qE "go.etcd.io/etcd/server/v3 v${etcd_version//./\\.}( |$)" "$root/hack/envtest/etcd/go.mod" ||
  { echo "hack/envtest/etcd/go.mod does not pin etcd v$etcd_version" >&2; exit 1; }

ldflags=$(kube_ldflags "$k8s_version")

if [[ "$(version_of "$assets/kube-apiserver" --version)" == "Kubernetes v$k8s_version" &&
      "$(version_of "$assets/kubectl" version --client)" == *"Client Version: v$k8s_version"* ]]; then
  echo "envtest: kube-apiserver and kubectl v$k8s_version present in $assets"
else
  echo "envtest: building kube-apiserver and kubectl v$k8s_version from source (a few minutes)"
  (cd "$root/hack/envtest/kube" &&
    go build -ldflags "$ldflags" -o "$assets/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl)
fi

if [[ "$(version_of "$assets/etcd" --version)" == "etcd Version: $etcd_version"* ]]; then
  echo "envtest: etcd v$etcd_version present in $assets"
else
  echo "envtest: building etcd v$etcd_version from source"
  (cd "$root/hack/envtest/etcd" && go build -o "$assets/etcd" .)
fi
