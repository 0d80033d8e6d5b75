//go:build tools

// Package kube pins the commands that hack/envtest.sh builds.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
