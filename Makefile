# apf-operator Makefile. `make help` lists the targets.
#
# Versions (chosen 2026-11-22, the newest that work on the project's machines):
# - controller-runtime v0.25.2 with k8s.io client libraries v0.37.2 (go.mod);
# - kustomize v5.8.2 (v5.8.3 declares go 1.27, newer than the machines' Go 1.26) and helm v3.22.0
#   are tools of the main module (go.mod's tool block, which pins them): built with the module's
#   own versions of the Kubernetes libraries and `make build`'s flags, they reuse the packages the
#   operator's build compiles (helm adds ~230 packages of its own, kustomize ~40), instead of
#   compiling a second copy of client-go and its dependencies each.
# - envtest control plane: Kubernetes 1.36.3, the newest k8s.io/kubernetes the Go module proxy
#   serves (no 1.37 yet), built from its Go modules by hack/build-envtest.sh (release downloads
#   are not reachable). client-go 0.37 against a 1.36 API server is within the supported skew.
ENVTEST_K8S_VERSION ?= 1.36.3
# - the oldest supported kube-apiserver (docs/compatibility.md, Chart.yaml kubeVersion): the
#   latest 1.29 patch the Go module proxy serves, built the same way; test/skew runs on it and
#   on ENVTEST_K8S_VERSION.
ENVTEST_OLDEST_K8S_VERSION ?= 1.29.15
CONTROLLER_TOOLS_VERSION ?= v0.23.0
tool_version = $(shell awk '$$1 == "$(1)" {print $$2; exit}' go.mod)
KUSTOMIZE_VERSION := $(call tool_version,sigs.k8s.io/kustomize/kustomize/v5)
HELM_VERSION := $(call tool_version,helm.sh/helm/v3)
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
# Go test flags; CI and `make test` use the race detector (on the packages whose code under test
# runs in the test process).
GOTEST_FLAGS ?= -race -count=1
# Link flags of make test's test binaries: no symbol table and no DWARF (stack traces, race
# reports and panics keep their names and lines: they read the Go runtime's own tables). Linking
# was half of a warm make test's CPU (about 90 binaries, up to 150 MB each with -race); these
# flags cut a link's CPU by about a quarter.
TEST_LDFLAGS ?= -ldflags='-s -w'
# The raced lane's build flags besides GOTEST_FLAGS. With cgo (which -race needs), a binary
# importing Go's plugin package links through gcc (internal/cli/importer's raced test binary:
# 21 s of CPU to link, 12.7 s with Go's own linker); cli-runtime imports plugin through
# kustomize's Go-plugin loader, which this tag leaves out
# (the operator and kubectl-apf never load Go plugins: make build's CGO_ENABLED=0 cannot).
# go test's vet step is off in make test: it analyses every dependency again for each build
# configuration; `make vet` (the full analysers) and lint's govet run in .ci/run.
RACED_FLAGS ?= -vet=off $(TEST_LDFLAGS) -tags=kustomize_disable_go_plugin_support
# The lane without -race builds as `make build` and `make image` do (CGO_ENABLED=0, -trimpath),
# so that one compilation of the main module's dependencies serves the operator binary, the
# image and these tests (cold, the dependencies are compiled twice, not three times).
UNRACED_GO := CGO_ENABLED=0 go
UNRACED_FLAGS ?= -count=1 -vet=off -trimpath $(TEST_LDFLAGS)
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

.PHONY: bootstrapsets
bootstrapsets: ## Regenerate kube-apiserver's bootstrap sets (internal/nativeview/bootstrapset/sets) through the Go module proxy.
	go run ./hack/bootstrapsets

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

# `make test` runs every correctness suite through hack/testreport (`go test -json`): one line
# per package with its time, the output of failures, every skipped test with its reason, and a
# failure for any skip not in hack/test-skips.txt. Comparisons of timings (a run against
# another, absolute latencies) are evaluations: tests named TestEval* (skipped here, run by
# `make eval`) and EVAL_PACKAGES, whose every test is one.
EVAL_PACKAGES := /test/autopilot
# Suites whose code under test runs in other processes (the operator binary, kube-apiserver,
# kubectl, a container): the race detector only slows their clients, so they run without it,
# in a `go test` of their own. test/e2e's filter step runs the filter in process; the filter
# is raced in its own packages' tests (internal/apf/...).
# Longest first (the lane's go test starts packages in the order given; the unraced computation
# below comes last): the lane ends with its last long suite, and test/budgetorder, which watches
# for five minutes, starts at once.
PROCESS_SUITES := /test/budgetorder /test/failover /test/top /test/budget /test/troubleshooting /test/e2e \
	/test/webhookhardening /test/install /test/exempt /test/presets /test/replay /test/crd \
	/test/demandmetrics /test/importlive /test/docs
# Pure computation without concurrency of its own, five to six times slower under -race: the
# autopilot's simulator (one goroutine replays days of virtual time on a fake clock; the engine's
# packages are raced in their own tests), the projection's differential tests (their only
# goroutines are kube-apiserver's own controller, the oracle) and the offline validator (it
# validates thousands of generated documents). They run in the second lane without -race.
SLOW_UNRACED := /internal/autopilot/sim /internal/native /internal/cli/validate
# test/container runs in the third lane, after the image and the alerts, before test/skew
# (podman, installed with apt-get: root); SKIP_CONTAINER=1 leaves it out.
# test/skew runs on the oldest supported kube-apiserver too, which make test builds while the
# lanes run (see test): it runs in the third lane once that build is done.
SKEW_SUITE := /test/skew
NOT_RACED := $(EVAL_PACKAGES) $(PROCESS_SUITES) $(SLOW_UNRACED) /test/container $(SKEW_SUITE)
# The raced lane's longest packages, started first (go test starts packages in the order given;
# the rest follow in import-path order), so that the lane does not end with them.
RACED_FIRST := /test/native /test/scale /webhooks /internal/apf/dispatch /internal/cli/importer /test/gitops \
	/controllers /test/donoharm /internal/apfmetrics /internal/cli/replay
# go test's -p for the suites above (packages at once), beside the raced lane's own -p (the
# number of cores): the suites mostly wait on kube-apiserver and the operator (test/budgetorder
# samples for five minutes), so three run at once beside the raced lane's two.
PROCESS_SUITES_P ?= 3
SKIP_CONTAINER ?=
TEST_SKIPS := hack/test-skips.txt
TESTREPORT ?= $(LOCALBIN)/testreport
# Lines the report prints whatever the result: test/harness's one line per test process about
# the operator binary (taken from APF_OPERATOR_BINARY, or built), so that the log shows how
# many times `make test` built it.
TEST_SHOW := ^harness: .*operator binary
# The operator binary `make build` writes; every live suite of `make test` runs it (test/harness
# reads APF_OPERATOR_BINARY instead of building its own), so it is built once per `make test`.
OPERATOR_BINARY ?= $(LOCALBIN)/apf-operator
MODULE := $(shell go list -m)
TEST_SKIP_EVAL := -skip '^TestEval'
# Tests named TestPeakMemory* bound the kernel's high-water mark of the test process's resident
# memory: they run in a process of their own (only they), without the race detector, whose
# shadow memory and the other tests' leftovers would count in that mark. The raced lane skips them.
PEAK_MEMORY_TESTS := ^TestPeakMemory
PEAK_MEMORY_PACKAGES := ./controllers/
main_packages = $$(go list ./... | grep -v $(foreach p,$(1),-e '$(MODULE)$(p)$$'))
only_packages = $(foreach p,$(1),$(if $(wildcard .$(p)),.$(p)/))

.PHONY: test
test: test-build ## Run every correctness test (unit, envtest, end-to-end, version skew, container) through hack/testreport.
	@# Three lanes side by side, each a stream of `go test -json` into one report (hack/testreport
	@# reads the FIFOs): the raced packages; the process suites and the other modules; the image,
	@# the alerts and the container (they mostly wait on make image, podman and the disk, so they
	@# start at once rather than after the others). Every command runs; a lane exits non-zero if
	@# one of its commands failed. The other modules' raced tests wait until the raced lane's first
	@# test process runs (test/native: by then the raced dependencies are compiled): two go
	@# commands compiling the same packages at once each compile them (cold, they overlapped).
	@# The oldest supported kube-apiserver (test/skew's) builds meanwhile at the lowest CPU
	@# priority (nice 19), on the cores the suites leave idle, instead of before them (cold on two
	@# cores those were few: it ended about 5 minutes after the lanes); warm it is found in a
	@# second. test/skew runs in the third lane once that build has ended.
	export APF_OPERATOR_BINARY=$(abspath $(OPERATOR_BINARY)); \
	lanes=$$(mktemp -d); trap 'rm -rf "$$lanes"' EXIT; mkfifo "$$lanes/raced" "$$lanes/others" "$$lanes/image"; \
	{ nice -n 19 $(MAKE) --no-print-directory envtest-oldest; echo $$? >"$$lanes/oldest.rc.tmp"; mv "$$lanes/oldest.rc.tmp" "$$lanes/oldest.rc"; } & oldest=$$!; \
	{ go test -json $(GOTEST_FLAGS) $(RACED_FLAGS) -skip '^TestEval|$(PEAK_MEMORY_TESTS)' $(call only_packages,$(RACED_FIRST)) \
	    $(call main_packages,$(NOT_RACED) $(RACED_FIRST)) 2>&1 | \
	  awk -v mark="$$lanes/raced-running" '!m && /"Action":"start"/ { printf "" > mark; close(mark); m = 1 } { print; fflush() }'; \
	} >"$$lanes/raced" 2>&1 & raced=$$!; \
	{ rc=0; \
	  $(UNRACED_GO) test -json $(UNRACED_FLAGS) -p $(PROCESS_SUITES_P) \
	    $(TEST_SKIP_EVAL) $(call only_packages,$(PROCESS_SUITES) $(SLOW_UNRACED)) || rc=1; \
	  $(UNRACED_GO) test -json $(UNRACED_FLAGS) -run '$(PEAK_MEMORY_TESTS)' $(PEAK_MEMORY_PACKAGES) || rc=1; \
	  while [ ! -e "$$lanes/raced-running" ] && kill -0 $$raced 2>/dev/null; do sleep 2; done; \
	  for m in examples/embed test/sidebyside examples/aggregated; do (cd $$m && go test -json $(GOTEST_FLAGS) $(RACED_FLAGS) ./...) || rc=1; done; \
	  (cd test/benchmark && go test -json $(GOTEST_FLAGS) $(RACED_FLAGS) -run '^Test' ./...) || rc=1; \
	  exit $$rc; } >"$$lanes/others" 2>&1 & others=$$!; \
	{ rc=0; \
	  (cd hack/image && IMAGE_TEST_PLATFORMS=$(IMAGE_TEST_PLATFORMS) $(UNRACED_GO) test -json $(UNRACED_FLAGS) -timeout 20m ./...) || rc=1; \
	  (cd test/alerts && $(UNRACED_GO) test -json $(UNRACED_FLAGS) ./...) || rc=1; \
	  $(if $(SKIP_CONTAINER),echo "SKIP_CONTAINER=$(SKIP_CONTAINER): test/container (podman; root) left out";,\
	    { hack/install-podman.sh && $(UNRACED_GO) test -json $(UNRACED_FLAGS) -timeout 20m ./test/container/; } || rc=1;) \
	  while [ ! -e "$$lanes/oldest.rc" ]; do sleep 2; done; \
	  if [ "$$(cat "$$lanes/oldest.rc")" = 0 ]; then \
	    APF_SKEW_ASSETS="$(ENVTEST_OLDEST_ASSETS) $(ENVTEST_ASSETS)" $(UNRACED_GO) test -json $(UNRACED_FLAGS) .$(SKEW_SUITE)/ || rc=1; \
	  else echo "test/skew not run: make envtest-oldest failed (its output is above)"; rc=1; fi; \
	  exit $$rc; } >"$$lanes/image" 2>&1 & image=$$!; \
	rc=0; $(TESTREPORT) -skips $(TEST_SKIPS) -slowest 25 -show '$(TEST_SHOW)' "$$lanes/raced" "$$lanes/others" "$$lanes/image" || rc=1; \
	wait $$raced || rc=1; wait $$others || rc=1; wait $$image || rc=1; wait $$oldest || rc=1; exit $$rc

# make test's builds, in two streams at once that share no compiled package: the newest control
# plane (etcd, kube-apiserver and kubectl 1.36.3, one go build) in one; in the other the main
# module's (the operator, the test report, kustomize and helm, one compilation of what they
# share). Each stream is go builds of -p 2 on two cores; side by side, one fills the other's links
# and serial tails. The standard library, which both need, is compiled first: two go commands
# compiling the same package at once each compile it. The oldest control plane (test/skew's) is
# built during the tests (see test). Warm, every step finds its binary or its cache (seconds).
.PHONY: test-build
test-build:
	CGO_ENABLED=0 go build -trimpath std
	$(MAKE) --no-print-directory control-plane & planes=$$!; \
	rc=0; $(MAKE) --no-print-directory build testreport $(KUSTOMIZE) $(HELM) || rc=1; \
	wait $$planes || rc=1; exit $$rc

# The packages' own notes on `go test -json` above: test/benchmark's tests (not its benchmarks)
# check that its configurations are equivalent and its table's parser; examples/aggregated runs
# the sample aggregated API server through a real kube-apiserver's aggregator; hack/image runs
# `make image` twice (same digest) and checks the archive, without -race (the tool runs as a
# child process; the race detector only slowed the test's unpacking and hashing threefold);
# test/alerts evaluates the chart's alerts with Prometheus's engine (its own module, one
# goroutine: no -race).
# hack/image builds the image for IMAGE_TEST_PLATFORMS only (the machine's platform): each more
# architecture is a whole cross-compile of the operator (cold on two cores, hack/image's test
# took 9 min with linux/arm64, 2 min 31 s without).
# `make vet` and `make image` (every platform of IMAGE_PLATFORMS) are .ci/run's own steps; lint's
# govet runs there too.
IMAGE_TEST_PLATFORMS ?= linux/$(GOARCH)

.PHONY: testreport
testreport: ## Build hack/testreport, the reader of `go test -json` that `make test` pipes into.
	$(UNRACED_GO) build -trimpath -o $(TESTREPORT) ./hack/testreport

.PHONY: test-container
test-container: envtest ## Run `make image`'s image in podman with the chart's pod spec against envtest (installs podman and runc with apt-get when missing: root).
	hack/install-podman.sh
	@# Without -race: the operator runs in the container, the test drives podman and the API.
	go test -count=1 -timeout 20m ./test/container/

# The live tests whose logged timings docs/ quote (takeover, a hung webhook's cost per event,
# the demand histogram's window); `make test` asserts only orders and counts of them.
EVAL_LOGGED := ./test/failover/:TestLeaderFailover ./test/webhookhardening/:TestHungOperator \
	./test/demandmetrics/:. ./test/top/:TestTopShowsTheFloodingTenantFirst

.PHONY: eval
eval: envtest build ## Evaluations (timings, for docs/ with date, machine, commit): the autopilot's live A/B, e2e's round trips, the timings docs quote, then `make bench`.
	@echo "# make eval on $$(date -u +%Y-%m-%dT%H:%MZ), commit $$(git rev-parse --short HEAD), $$(nproc) cores:$$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), clocksource $$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
	@# Alone, one after the other: each compares or reports timings that other load would skew.
	export APF_OPERATOR_BINARY=$(abspath $(OPERATOR_BINARY)); \
	go test -count=1 -v -timeout 30m -run '^TestEval' ./test/e2e/; \
	go test -race -count=1 -v -timeout 30m $(call only_packages,$(EVAL_PACKAGES)); \
	for t in $(EVAL_LOGGED); do go test -count=1 -v -timeout 20m -run "$${t#*:}" "$${t%%:*}"; done
	$(MAKE) bench

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
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(OPERATOR_BINARY) .

.PHONY: run
run: manifests generate ## Run the operator against the current kubeconfig (webhooks off, no leader election).
	go run . manager --leader-elect=false --enable-webhooks=false

.PHONY: demo
demo: envtest build ## The whole journey on a local control plane: defaults, a rejected manifest, fair queuing.
	go run ./hack/demo --assets $(ENVTEST_ASSETS) --operator $(OPERATOR_BINARY)

.PHONY: image
image: ## Build the multi-arch OCI image archive without Docker (bin/image/apf-operator-<version>.oci.tar, tagged IMG).
	@mkdir -p $(dir $(IMAGE_ARCHIVE))
	cd hack/image && CGO_ENABLED=0 go run -trimpath . archive --repo $(CURDIR) --out $(abspath $(IMAGE_ARCHIVE)) --ref $(IMG) \
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
# helm and kustomize come with the control plane: test/install, test/e2e and test/docs run them
# (controller-gen is built by `make manifests generate`, which need it; no test does).
envtest: $(KUSTOMIZE) $(HELM) control-plane ## Use existing envtest binaries ($$KUBEBUILDER_ASSETS, setup-envtest's store) or build them; and helm and kustomize.

.PHONY: control-plane
control-plane: ## The envtest control plane alone (kube-apiserver, etcd, kubectl): existing binaries, or built.
	$(if $(ENVTEST_IGNORED),@echo "envtest: ignoring KUBEBUILDER_ASSETS=$(ENVTEST_IGNORED): one of kube-apiserver/etcd/kubectl is missing there")
ifeq ($(ENVTEST_ASSETS),$(ENVTEST_BUILT))
	hack/build-envtest.sh $(ENVTEST_K8S_VERSION) $(LOCALBIN)
else
	@echo "envtest: using $$($(ENVTEST_ASSETS)/kube-apiserver --version) from $(ENVTEST_ASSETS) ($(ENVTEST_ORIGIN)); the project tests with v$(ENVTEST_K8S_VERSION)"
endif

.PHONY: envtest-oldest
envtest-oldest: control-plane ## Build (or reuse) the oldest supported kube-apiserver for test/skew (no kubectl, and the newest one's etcd: the suites use the newest one's).
	hack/build-envtest.sh $(ENVTEST_OLDEST_K8S_VERSION) $(LOCALBIN) --without-kubectl --etcd-from $(ENVTEST_ASSETS)

.PHONY: tools
tools: envtest envtest-oldest $(GOLANGCI_LINT) ## Build every tool.

$(CONTROLLER_GEN):
	hack/go-install.sh $@ sigs.k8s.io/controller-tools/cmd/controller-gen $(CONTROLLER_TOOLS_VERSION)
# go.mod's tools, built as `make build` builds the operator (its versions, its flags).
build_tool = CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $(3)" -o $(1) $(2)
$(KUSTOMIZE):
	$(call build_tool,$@,sigs.k8s.io/kustomize/kustomize/v5)
# The Kubernetes version helm assumes without a cluster (helm template, helm lint), as helm's own
# release build sets it from its client-go (v0.37 for v3.22.0); left unset it is 1.20, which the
# chart's kubeVersion (>=1.29) refuses.
HELM_KUBE_VERSION_FLAGS := $(foreach pkg,pkg/chartutil pkg/lint/rules,-X helm.sh/helm/v3/$(pkg).k8sVersionMajor=1 -X helm.sh/helm/v3/$(pkg).k8sVersionMinor=37)
$(HELM):
	$(call build_tool,$@,helm.sh/helm/v3/cmd/helm,-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) $(HELM_KUBE_VERSION_FLAGS))
$(GOLANGCI_LINT):
	hack/go-install.sh $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint $(GOLANGCI_LINT_VERSION)
