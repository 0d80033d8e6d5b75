# browserfleet — a Kubernetes operator for AI browser automation.

ENVTEST_K8S_VERSION ?= 1.37.1
ENVTEST_ETCD_VERSION ?= 3.6.16
GOOS ?= $(shell go env GOOS)
GOARCH ?= $(shell go env GOARCH)
ENVTEST_ASSETS ?= $(CURDIR)/bin/k8s/$(ENVTEST_K8S_VERSION)-$(GOOS)-$(GOARCH)

CONTROLLER_GEN = go tool -modfile=hack/tools/go.mod controller-gen
GO_TEST_FLAGS ?= -count=1 -timeout=15m

.PHONY: all
all: build

##@ Development

.PHONY: generate
generate: ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: manifests
manifests: ## Generate CRDs and RBAC.
	$(CONTROLLER_GEN) rbac:roleName=browserfleet-manager crd:allowDangerousTypes=true paths="./api/..." paths="./controllers/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: verify-generated
verify-generated: generate manifests ## Fail when generated files are not current.
	@git diff --exit-code -- api config || { echo "generated files are stale: run 'make generate manifests' and commit the result"; exit 1; }
	@test -z "$$(git status --porcelain -- api config)" || { git status --porcelain -- api config; echo "generated files are not committed"; exit 1; }

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Vet the Go code.
	go vet ./...

.PHONY: verify
verify: verify-generated vet ## Fail on stale generated files, unformatted code or vet findings.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "unformatted: run 'make fmt'"; exit 1; }

.PHONY: envtest
envtest: ## Build kube-apiserver, etcd and kubectl from source into bin/ (skipped when current).
	ENVTEST_K8S_VERSION=$(ENVTEST_K8S_VERSION) ENVTEST_ETCD_VERSION=$(ENVTEST_ETCD_VERSION) ENVTEST_ASSETS=$(ENVTEST_ASSETS) hack/envtest.sh

.PHONY: test
test: envtest ## Run all tests against real kube-apiserver and etcd.
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test $(GO_TEST_FLAGS) ./...

##@ Build

.PHONY: build
build: ## Build the binaries into bin/.
	go build -o bin/ ./cmd/...

.PHONY: run
run: manifests ## Run the manager against the cluster of the current kubeconfig.
	go run ./cmd/manager

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
