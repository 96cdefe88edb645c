# apf-operator Makefile. `make help` lists the targets.
#
# Versions (chosen 2026-11-22, the newest that work on the project's machines):
# - controller-runtime v0.25.2 with k8s.io client libraries v0.37.2 (go.mod);
# - kustomize v5.8.2: v5.8.3 declares go 1.27, newer than the machines' Go 1.26.
# - envtest control plane: Kubernetes 1.36.3, the newest k8s.io/kubernetes the Go module proxy
#   serves (no 1.37 yet), built from its Go modules by hack/build-envtest.sh (release downloads
#   are not reachable). client-go 0.37 against a 1.36 API server is within the supported skew.
ENVTEST_K8S_VERSION ?= 1.36.3
# - the oldest supported kube-apiserver (docs/compatibility.md, Chart.yaml kubeVersion): the
#   latest 1.29 patch the Go module proxy serves, built the same way; test/skew runs on it and
#   on ENVTEST_K8S_VERSION.
ENVTEST_OLDEST_K8S_VERSION ?= 1.29.15
CONTROLLER_TOOLS_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.8.2
HELM_VERSION ?= v3.22.0
GOLANGCI_LINT_VERSION ?= v2.15.0

GOOS := $(shell go env GOOS)
GOARCH := $(shell go env GOARCH)
LOCALBIN ?= $(CURDIR)/bin
# Envtest control plane (kube-apiserver, etcd, kubectl), first found of: the directory in
# $KUBEBUILDER_ASSETS; setup-envtest's store holding ENVTEST_K8S_VERSION; bin/, built from Go
# modules by hack/build-envtest.sh (the fallback; about 18 minutes on two cores, cold). The store
# is looked up at its Linux place; on macOS (a path with a space) set KUBEBUILDER_ASSETS instead.
ENVTEST_BUILT := $(LOCALBIN)/k8s/$(ENVTEST_K8S_VERSION)-$(GOOS)-$(GOARCH)
SETUP_ENVTEST_DIR ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/kubebuilder-envtest/k8s/$(ENVTEST_K8S_VERSION)-$(GOOS)-$(GOARCH)
envtest_complete = $(and $(wildcard $(1)/kube-apiserver),$(wildcard $(1)/etcd),$(wildcard $(1)/kubectl))
ifneq ($(call envtest_complete,$(KUBEBUILDER_ASSETS)),)
ENVTEST_ASSETS ?= $(KUBEBUILDER_ASSETS)
ENVTEST_ORIGIN := KUBEBUILDER_ASSETS
else ifneq ($(call envtest_complete,$(SETUP_ENVTEST_DIR)),)
ENVTEST_ASSETS ?= $(SETUP_ENVTEST_DIR)
ENVTEST_ORIGIN := setup-envtest's store
endif
ENVTEST_IGNORED := $(if $(filter KUBEBUILDER_ASSETS,$(ENVTEST_ORIGIN)),,$(filter-out $(ENVTEST_BUILT),$(KUBEBUILDER_ASSETS)))
ENVTEST_ASSETS ?= $(ENVTEST_BUILT)
ENVTEST_OLDEST_ASSETS ?= $(LOCALBIN)/k8s/$(ENVTEST_OLDEST_K8S_VERSION)-$(GOOS)-$(GOARCH)
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KUBECTL ?= $(ENVTEST_ASSETS)/kubectl

# The operator's version: the chart's appVersion, so that `make image` writes the image the
# chart's default values pull.
VERSION ?= $(shell awk -F'"' '/^appVersion:/ {print $$2}' charts/apf-operator/Chart.yaml)
IMG ?= ghcr.io/apf-operator/apf-operator:$(VERSION)
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_ARCHIVE ?= $(LOCALBIN)/image/apf-operator-$(VERSION).oci.tar
# Every time in the image (files, config, SBOM) is this one, so that two builds of a commit
# give the same digest: the last commit's time unless set (reproducible-builds.org).
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct)
# What `apf-operator version` prints for `make build`: the nearest tag (v0.0.0-<commit> without
# one), the commit, and SOURCE_DATE_EPOCH as the build date (the same for every build of a commit).
GIT_VERSION ?= $(shell git describe --tags --dirty 2>/dev/null || echo v0.0.0-$$(git describe --always --dirty 2>/dev/null || echo unknown))
GIT_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILD_DATE ?= $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
VERSION_PKG := github.com/apf-operator/apf-operator/internal/version
LDFLAGS ?= -X $(VERSION_PKG).gitVersion=$(GIT_VERSION) -X $(VERSION_PKG).gitCommit=$(GIT_COMMIT) -X $(VERSION_PKG).buildDate=$(BUILD_DATE)
# Go test flags; CI and `make test` use the race detector.
GOTEST_FLAGS ?= -race -count=1
FUZZTIME ?= 20s
# Runs per benchmark; the table shows medians. One run on a shared two-core VM varies by up to
# a quarter, so the default is 5 (about 4.5 minutes); BENCH_COUNT=1 for a quick look. Each run
# measures every case once, one run after the other, rather than `-count` (which repeats each
# case back to back): a slow phase of the machine lasting seconds then touches one run of
# every implementation instead of all runs of one.
BENCH_COUNT ?= 5

export KUBEBUILDER_ASSETS := $(ENVTEST_ASSETS)

.DEFAULT_GOAL := help
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs, RBAC and webhook manifests from markers (and the chart's CRD templates).
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd webhook paths="./api/...;./controllers/...;./webhooks/..." output:crd:artifacts:config=config/crd/bases
	@if [ -x hack/sync-chart-crds.sh ]; then hack/sync-chart-crds.sh; fi

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: argocd-snippet
argocd-snippet: ## Regenerate the argocd-cm snippet deploy/argocd/argocd-cm-health.yaml from deploy/argocd/health.lua.
	go test -count=1 -run '^TestArgoCDSnippet$$' ./test/gitops/ -args -update

.PHONY: verify-gen
verify-gen: manifests generate ## Regenerate everything and fail if the committed files were stale.
	@hack/verify-gen.sh

.PHONY: fmt
fmt: ## Run gofmt on the code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...
	cd test/benchmark && go vet ./...
	cd examples/embed && go vet ./...
	cd test/sidebyside && go vet ./...
	cd examples/aggregated && go vet ./...
	cd hack/image && go vet ./...
	cd test/alerts && go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (pinned, built from its module) on every module.
	$(GOLANGCI_LINT) run ./...
	cd test/benchmark && $(GOLANGCI_LINT) run ./...
	cd examples/embed && $(GOLANGCI_LINT) run ./...
	cd test/sidebyside && $(GOLANGCI_LINT) run ./...
	cd examples/aggregated && $(GOLANGCI_LINT) run ./...
	cd hack/image && $(GOLANGCI_LINT) run ./...
	cd test/alerts && $(GOLANGCI_LINT) run ./...

.PHONY: test
test: envtest envtest-oldest vet ## Run all tests: unit, envtest integration and end-to-end (builds every tool it needs).
	go test $(GOTEST_FLAGS) $$(go list ./... | grep -v -e /test/native -e /test/e2e -e /test/container -e /test/skew -e /test/autopilot)
	@# Each alone: test/e2e checks fairness by round-trip times under overload, which other
	@# suites' load (test/native's and test/troubleshooting's floods of kube-apiserver, test/scale)
	@# skews on a two-core machine.
	go test $(GOTEST_FLAGS) ./test/e2e/
	go test $(GOTEST_FLAGS) ./test/native/
	@# Alone too: the autopilot's live evaluation compares queue waits of two runs minutes apart
	@# (docs/autopilot-live.md); other suites' load during one run and not the other would skew it.
	go test $(GOTEST_FLAGS) ./test/autopilot/
	@# Version skew: the operator on the oldest and the newest supported kube-apiserver, one
	@# after the other (docs/compatibility.md).
	APF_SKEW_ASSETS="$(ENVTEST_OLDEST_ASSETS) $(ENVTEST_ASSETS)" go test $(GOTEST_FLAGS) ./test/skew/
	cd examples/embed && go test $(GOTEST_FLAGS) ./...
	cd test/sidebyside && go test $(GOTEST_FLAGS) ./...
	@# The benchmark module's own tests (its configurations are equivalent; the table's parser).
	cd test/benchmark && go test $(GOTEST_FLAGS) -run '^Test' ./...
	@# The sample aggregated API server, through a real kube-apiserver's aggregator (envtest).
	cd examples/aggregated && go test $(GOTEST_FLAGS) ./...
	@# `make image` twice (same digest) and the archive: platforms, config, the binary runs, SBOM, chart
	@# reference, crane push. Without -race: the tool runs as a child process, and the race detector
	@# only slowed the test's unpacking and hashing of the archive threefold (120 s instead of 36 s).
	cd hack/image && go test -count=1 ./...
	@# The chart's alerts, evaluated by Prometheus's engine (its own module: Prometheus's
	@# dependencies stay out of go.mod). Without -race: one goroutine evaluates PromQL.
	cd test/alerts && go test -count=1 ./...
	@# The image in podman with the chart's pod spec (builds the image; see test-container).
	$(MAKE) test-container

.PHONY: test-container
test-container: envtest ## Run `make image`'s image in podman with the chart's pod spec against envtest (installs podman and runc when missing).
	hack/install-podman.sh
	@# Without -race: the operator runs in the container, the test drives podman and the API.
	go test -count=1 -timeout 20m ./test/container/

.PHONY: bench
bench: ## Benchmarks: this filter vs upstream APF vs a semaphore, side by side, as one table; then the EventRateLimit decision.
	cd test/benchmark && go test -c -o $(LOCALBIN)/benchmark.test .
	rm -f $(LOCALBIN)/bench.txt
	for run in $$(seq $(BENCH_COUNT)); do \
		echo "# run $$run of $(BENCH_COUNT)"; \
		$(LOCALBIN)/benchmark.test -test.run '^$$' -test.bench . -test.benchmem | tee -a $(LOCALBIN)/bench.txt; \
	done
	cd test/benchmark && go run ./cmd/benchtable < $(LOCALBIN)/bench.txt
	@echo "# EventRateLimit: the engine's decision, and the events webhook's (event decoding included)"
	go test -run '^$$' -bench 'Admit$$|EventRateLimitHandle' -benchmem -count $(BENCH_COUNT) ./internal/eventratelimit/ ./webhooks/
	go test -run '^$$' -bench 'Replay1M$$' -benchtime 1x -benchmem -count 1 ./internal/cli/replay/ # replay: 1M audit events end to end (docs/benchmarks.md)

.PHONY: sim
sim: ## Regenerate the autopilot simulator's table in docs/autopilot-simulation.md (static, static + borrowing, recommend-once, closed loop + borrowing over 7 scenarios; deterministic, about 2 min).
	go test -count=1 ./internal/autopilot/sim -run TestSimulationTable -update -v

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (bounded; default 20s).
	@hack/fuzz.sh $(FUZZTIME)

.PHONY: soak
soak: envtest ## Long, bounded runs: 1M random requests with cancels and config swaps under -race; idle windows with zero writes (a minute; two with native enforcement).
	go test -race -count=1 -run TestPropertyRandomTraffic ./internal/apf/dispatch/ -args -apf.requests=1000000
	APF_IDLE_WINDOW=1m go test -count=1 -timeout 5m -run TestIdle ./controllers/
	APF_NATIVE_IDLE_WINDOW=2m go test -count=1 -timeout 5m -run TestIdleNoFight ./test/native/

.PHONY: scale
scale: envtest ## Scale test: 1,000 RequestPriorities + 10,000 FlowSchemas applied at once through the webhook; prints the figures (docs/scale.md).
	go test -count=1 -v -timeout 30m -run TestScale ./test/scale/ -args -scale.rps=1000 -scale.fss=10000 -scale.timeout=15m -scale.operator=process -scale.timeline=5s

.PHONY: bench-defaults
bench-defaults: envtest ## Time from deleting a default object to its re-creation (p50/p99 over 100 trials).
	go test -count=1 -run '^$$' -bench DefaultRecreation -benchtime 100x ./controllers/

##@ Build

.PHONY: build
build: ## Build the apf-operator binary into bin/, stamped with GIT_VERSION, its commit and SOURCE_DATE_EPOCH's date.
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/apf-operator .

.PHONY: run
run: manifests generate ## Run the operator against the current kubeconfig (webhooks off, no leader election).
	go run . manager --leader-elect=false --enable-webhooks=false

.PHONY: demo
demo: envtest build ## The whole journey on a local control plane: defaults, a rejected manifest, fair queuing.
	go run ./hack/demo --assets $(ENVTEST_ASSETS) --operator $(LOCALBIN)/apf-operator

.PHONY: image
image: ## Build the multi-arch OCI image archive without Docker (bin/image/apf-operator-<version>.oci.tar, tagged IMG).
	@mkdir -p $(dir $(IMAGE_ARCHIVE))
	cd hack/image && go run . archive --repo $(CURDIR) --out $(abspath $(IMAGE_ARCHIVE)) --ref $(IMG) \
		--version $(VERSION) --platforms $(IMAGE_PLATFORMS) --source-date-epoch $(SOURCE_DATE_EPOCH) \
		--revision "$$(git rev-parse HEAD 2>/dev/null)"

.PHONY: docker-build
docker-build: ## Build the container image with a Docker engine (the same files as `make image`).
	docker build -t $(IMG) --build-arg VERSION=$(VERSION) --build-arg SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
		--build-arg REVISION=$$(git rev-parse HEAD) .

##@ Deployment

.PHONY: install
install: manifests $(KUSTOMIZE) ## Install the CRDs into the current cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests $(KUSTOMIZE) ## Remove the CRDs from the current cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests $(KUSTOMIZE) ## Deploy the operator with kustomize (config/default) to the current cluster.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) ## Remove the kustomize deployment from the current cluster.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: helm-lint
helm-lint: $(HELM) ## Lint the Helm chart and render it with default values.
	$(HELM) lint charts/apf-operator
	$(HELM) template apf-operator charts/apf-operator >/dev/null

##@ Tools (pinned, built from Go modules, cached under bin/)

.PHONY: envtest
envtest: $(CONTROLLER_GEN) $(KUSTOMIZE) $(HELM) ## Use existing envtest binaries ($$KUBEBUILDER_ASSETS, setup-envtest's store) or build them.
	$(if $(ENVTEST_IGNORED),@echo "envtest: ignoring KUBEBUILDER_ASSETS=$(ENVTEST_IGNORED): one of kube-apiserver/etcd/kubectl is missing there")
ifeq ($(ENVTEST_ASSETS),$(ENVTEST_BUILT))
	hack/build-envtest.sh $(ENVTEST_K8S_VERSION) $(LOCALBIN)
else
	@echo "envtest: using $$($(ENVTEST_ASSETS)/kube-apiserver --version) from $(ENVTEST_ASSETS) ($(ENVTEST_ORIGIN)); the project tests with v$(ENVTEST_K8S_VERSION)"
endif

.PHONY: envtest-oldest
envtest-oldest: ## Build (or reuse) the oldest supported kube-apiserver, its etcd and kubectl for test/skew (about 10 minutes on two cores, cold).
	hack/build-envtest.sh $(ENVTEST_OLDEST_K8S_VERSION) $(LOCALBIN)

.PHONY: tools
tools: envtest envtest-oldest $(GOLANGCI_LINT) ## Build every tool.

$(CONTROLLER_GEN):
	hack/go-install.sh $@ sigs.k8s.io/controller-tools/cmd/controller-gen $(CONTROLLER_TOOLS_VERSION)
$(KUSTOMIZE):
	hack/go-install.sh $@ sigs.k8s.io/kustomize/kustomize/v5 $(KUSTOMIZE_VERSION)
# The Kubernetes version helm assumes without a cluster (helm template, helm lint), as helm's own
# release build sets it from its client-go (v0.37 for v3.22.0); left unset it is 1.20, which the
# chart's kubeVersion (>=1.29) refuses.
HELM_KUBE_VERSION_FLAGS := $(foreach pkg,pkg/chartutil pkg/lint/rules,-X helm.sh/helm/v3/$(pkg).k8sVersionMajor=1 -X helm.sh/helm/v3/$(pkg).k8sVersionMinor=37)
$(HELM):
	hack/go-install.sh $@ helm.sh/helm/v3/cmd/helm $(HELM_VERSION) "-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) $(HELM_KUBE_VERSION_FLAGS)"
$(GOLANGCI_LINT):
	hack/go-install.sh $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint $(GOLANGCI_LINT_VERSION)
