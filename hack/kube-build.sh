#!/usr/bin/env bash
# Sourced by hack/envtest.sh and hack/cluster.sh: what both need to build
# Kubernetes' binaries from source and to tell whether a built one is
# current.

# kube_ldflags prints the -ldflags that stamp a Kubernetes binary with
# version $1 (e.g. 1.37.1), as Kubernetes' own release build does, so that
# --version reports it.
kube_ldflags() {
  local version=$1 minor now pkg flags=""
  minor=${version#*.}; minor=${minor%%.*}
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=v$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$now"
  done
  echo "$flags"
}

# version_of runs a binary's own report of its version; empty when the
# binary is missing.
version_of() { "$@" 2>/dev/null || true; }
