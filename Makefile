# browserfleet — a Kubernetes operator for AI browser automation.

ENVTEST_K8S_VERSION ?= 1.37.1
ENVTEST_ETCD_VERSION ?= 3.6.16
GOOS ?= $(shell go env GOOS)
GOARCH ?= $(shell go env GOARCH)
ENVTEST_ASSETS ?= $(CURDIR)/bin/k8s/$(ENVTEST_K8S_VERSION)-$(GOOS)-$(GOARCH)

CONTROLLER_GEN = go tool -modfile=hack/tools/go.mod controller-gen
# golangci-lint with kube-api-linter compiled in (hack/tools/go.mod). `go
# tool` builds it once from the module proxy and keeps the binary in the Go
# build cache; golangci-lint caches its analysis in ~/.cache/golangci-lint.
GOLANGCI_LINT = go tool -modfile=hack/tools/go.mod golangci-lint-kube-api-linter
GO_TEST_FLAGS ?= -count=1 -timeout=15m

.PHONY: all
all: build

##@ Development

.PHONY: generate
generate: ## Generate deepcopy code, and the launch switch rules and docs from api/v1alpha1/launchargs.go.
	go run ./hack/launchargs
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: manifests
manifests: ## Generate CRDs and RBAC.
	$(CONTROLLER_GEN) rbac:roleName=browserfleet-manager crd:allowDangerousTypes=true paths="./api/..." paths="./controllers/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	cp config/crd/bases/*.yaml charts/browserfleet/crds/

.PHONY: verify-generated
verify-generated: generate manifests ## Fail when generated files are not current.
	@git diff --exit-code -- api config charts/browserfleet/crds docs/launch-args.md || { echo "generated files are stale: run 'make generate manifests' and commit the result"; exit 1; }
	@test -z "$$(git status --porcelain -- api config charts/browserfleet/crds docs/launch-args.md)" || { git status --porcelain -- api config charts/browserfleet/crds docs/launch-args.md; echo "generated files are not committed"; exit 1; }

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Vet the Go code.
	go vet ./...

.PHONY: lint
lint: ## Run golangci-lint and kube-api-linter (.golangci.yml).
	$(GOLANGCI_LINT) run ./...

.PHONY: lint-fix
lint-fix: ## Apply the fixes the linters and formatters suggest.
	$(GOLANGCI_LINT) run --fix ./...

.PHONY: verify
verify: verify-generated vet lint ## Fail on stale generated files, unformatted code, vet or lint findings.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "unformatted: run 'make fmt'"; exit 1; }

.PHONY: envtest
envtest: ## Build kube-apiserver, etcd and kubectl from source into bin/ (skipped when current).
	ENVTEST_K8S_VERSION=$(ENVTEST_K8S_VERSION) ENVTEST_ETCD_VERSION=$(ENVTEST_ETCD_VERSION) ENVTEST_ASSETS=$(ENVTEST_ASSETS) hack/envtest.sh

# The kinds of tests (test/README.md): unit tests and their packages' own
# envtest suites live next to the code; test/integration runs the API on the
# local stack and test/chart renders the chart; test/e2e drives the whole
# service as a user does.
UNIT_PKGS = $(shell go list ./... | grep -v '/test/')

# test/cluster needs the one-node cluster (make cluster-smoke, make
# test-cluster); make test leaves it out rather than count its skips.
TEST_PKGS = $(shell go list ./... | grep -v '/test/cluster/')

.PHONY: test
test: envtest ## Run all tests against real kube-apiserver and etcd (all but test/cluster, which needs the one-node cluster).
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test $(GO_TEST_FLAGS) $(TEST_PKGS)

.PHONY: test-unit
test-unit: envtest ## Run the packages' own tests (unit tests and their envtest suites).
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test $(GO_TEST_FLAGS) $(UNIT_PKGS)

.PHONY: test-integration
test-integration: envtest ## Run test/integration and test/chart.
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test $(GO_TEST_FLAGS) ./test/integration/... ./test/chart/...

.PHONY: test-e2e
test-e2e: envtest ## Run test/e2e: the README quick start and the attack table on the local stack.
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test $(GO_TEST_FLAGS) ./test/e2e/...

##@ Build

.PHONY: build
build: ## Build the binaries into bin/.
	go build -o bin/ ./cmd/...

.PHONY: run
run: manifests ## Run the manager against the cluster of the current kubeconfig.
	go run ./cmd/manager

##@ Images and chart

IMG_CONTROLLER ?= ghcr.io/browserfleet/browserfleet:v0.1.0
IMG_RUNNER ?= ghcr.io/browserfleet/runner:v0.1.0
VERSION ?= v0.1.0
CONTAINER_TOOL ?= docker
HELM ?= go run helm.sh/helm/v4/cmd/helm@v4.3.1

.PHONY: docker-build
docker-build: ## Build the controller (manager, API, bfkeys) and runner images.
	$(CONTAINER_TOOL) build --target controller --build-arg VERSION=$(VERSION) -t $(IMG_CONTROLLER) .
	$(CONTAINER_TOOL) build --target runner --build-arg VERSION=$(VERSION) -t $(IMG_RUNNER) .

.PHONY: docker-push
docker-push: ## Push both images.
	$(CONTAINER_TOOL) push $(IMG_CONTROLLER)
	$(CONTAINER_TOOL) push $(IMG_RUNNER)

# `make images` builds the same two images without docker or a registry:
# buildah, with the Dockerfile's base images made locally from Debian's
# packages and the host's Go (hack/images, docs/install.md "Building the
# images without a registry"). Needs root, buildah, debootstrap, runc, jq.
IMAGE_TAG ?= dev
IMAGES_DIR ?= $(CURDIR)/bin/images

.PHONY: images
images: ## Build both images with buildah into OCI archives in IMAGES_DIR (controller.oci.tar, runner.oci.tar; tag IMAGE_TAG).
	IMAGE_TAG=$(IMAGE_TAG) IMAGES_DIR=$(IMAGES_DIR) hack/images/build.sh

.PHONY: images-check
images-check: images ## Run the archived images' programs under runc as uid 65532 with a read-only root.
	IMAGE_TAG=$(IMAGE_TAG) IMAGES_DIR=$(IMAGES_DIR) hack/images/check.sh

.PHONY: helm-lint
helm-lint: ## Lint the Helm chart.
	$(HELM) lint --strict charts/browserfleet

##@ Local dev stack

# `make dev` runs the whole service on this machine, no cluster needed:
# kube-apiserver and etcd, the manager, the /v1 API on DEV_API_ADDRESS and a
# runner process with Chromium per session (hack/dev, internal/devstack). State
# (etcd data, the API key, logs) stays in DEV_DIR across runs; `source
# $(DEV_DIR)/env` sets BROWSERFLEET_API_URL, BROWSERFLEET_API_KEY and
# KUBECONFIG. Ctrl-C stops everything.
DEV_DIR ?= .dev
DEV_API_ADDRESS ?= 127.0.0.1:8000

.PHONY: dev
dev: envtest build ## Run the whole service locally until Ctrl-C (state in DEV_DIR, API on DEV_API_ADDRESS).
	go build -o bin/dev ./hack/dev
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) DEV_DIR=$(DEV_DIR) DEV_API_ADDRESS=$(DEV_API_ADDRESS) exec bin/dev

##@ One-node cluster

# `make cluster` runs a real one-node cluster on this machine (hack/cluster,
# docs/install.md "A one-node cluster on this machine"): etcd and
# kube-apiserver (envtest's), kube-controller-manager, kube-scheduler, a
# kubelet, kube-proxy, containerd, runc and the CNI plugins, kube-router's
# NetworkPolicy firewall and CoreDNS, all in the network namespace bf-node.
# It returns once the node and DNS are ready and keeps running in the
# background; KUBECONFIG=$(CLUSTER_DIR)/kubeconfig. Needs root.
CLUSTER_DIR ?= .cluster
CLUSTER_BIN ?= $(CURDIR)/bin/cluster
CLUSTER_FLAGS = -dir $(CLUSTER_DIR) -assets $(ENVTEST_ASSETS) -bin $(CLUSTER_BIN)
IMAGES ?=

.PHONY: cluster-build
cluster-build: envtest ## Build the cluster's binaries from source into CLUSTER_BIN (skipped when current).
	ENVTEST_K8S_VERSION=$(ENVTEST_K8S_VERSION) CLUSTER_BIN=$(CLUSTER_BIN) hack/cluster.sh

.PHONY: cluster
cluster: cluster-build ## Start the one-node cluster in the background (state and kubeconfig in CLUSTER_DIR).
	$(CLUSTER_BIN)/cluster up $(CLUSTER_FLAGS)

.PHONY: cluster-down
cluster-down: ## Stop the cluster: no process, mount or network namespace of it is left.
	@test -x $(CLUSTER_BIN)/cluster || go build -o $(CLUSTER_BIN)/cluster ./hack/cluster
	$(CLUSTER_BIN)/cluster down $(CLUSTER_FLAGS)

.PHONY: cluster-load
cluster-load: ## Import OCI image archives into the cluster's containerd (IMAGES="a.oci.tar b.oci.tar").
	$(CLUSTER_BIN)/cluster load $(CLUSTER_FLAGS) $(IMAGES)

.PHONY: cluster-status
cluster-status: ## Say which of the cluster's components run.
	$(CLUSTER_BIN)/cluster status $(CLUSTER_FLAGS)

.PHONY: cluster-smoke
cluster-smoke: ## Check the running cluster: a hardened pod, Service DNS, a NetworkPolicy, port-forward (fails when it is not up).
	BROWSERFLEET_CLUSTER_KUBECONFIG=$(abspath $(CLUSTER_DIR))/kubeconfig KUBECTL=$(ENVTEST_ASSETS)/kubectl \
		go test -count=1 -timeout=10m -v ./test/cluster/node/

# `make test-cluster` (test/cluster/e2e, build tag cluster, so that `make
# test` leaves it out) starts a new one-node cluster, runs the README's block
# "On this machine, without a registry" (the chart with the images of `make
# images`, built first when IMAGES_DIR lacks them), drives sessions, drills
# and figures through the API Service, and always runs `make cluster-down`.
# Needs root and no cluster up.
.PHONY: test-cluster
test-cluster: envtest ## Install the chart on a new one-node cluster as the README says; sessions, drills, figures; cluster-down after.
	ENVTEST_ASSETS=$(ENVTEST_ASSETS) IMAGES_DIR=$(IMAGES_DIR) go test -tags cluster -count=1 -timeout=90m -v ./test/cluster/e2e/ -ginkgo.v

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
