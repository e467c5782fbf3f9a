# tenon's build entry points. `make test` is the README's test command and what CI runs.
SHELL := /bin/bash
GO ?= go

.PHONY: test verify unit controlplane generate bench image

## test: everything CI checks — formatting, vet, generated code, and the whole test suite.
test: verify controlplane unit

verify:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## controlplane: build (or find, cached by version) the real control-plane binaries integration tests run.
controlplane:
	@hack/build-controlplane.sh >/dev/null

## unit: every package's tests. The end-to-end and chaos packages run for longer than go test's
## default 10-minute limit per package on 2 cores, so the limit is raised; CI's own budget is 90 minutes.
unit:
	TENON_CONTROLPLANE_BIN=$$(hack/build-controlplane.sh --print) $(GO) test -count=1 -timeout 40m ./...

## image: the multi-arch (linux/amd64, linux/arm64) OCI image layout in $(IMAGE_OUT), no Docker needed.
## Not part of `test` (two full cross-builds are slow); CI checks the image through hack/image's test.
IMAGE_OUT ?= _output/image
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
image:
	$(GO) run ./hack/image -out $(IMAGE_OUT) -platforms $(IMAGE_PLATFORMS) -version $(VERSION) -commit $(COMMIT)

## generate: regenerate deep-copy code and CRDs with the pinned controller-gen.
generate:
	hack/generate.sh

## bench: the benchmarks docs/performance.md reports, each as that file gives its command
## (the end-to-end ones start a control plane; the whole run takes about half an hour).
bench: controlplane
	$(GO) test ./pkg/solver -run '^$$' -bench 'SolveDiverse|SolveAWS|SolvePref' -benchmem -timeout 30m
	$(GO) test ./pkg/solver/bound -run '^$$' -bench . -benchmem -timeout 30m
	$(GO) test ./pkg/disruption -run '^$$' -bench 'Consolidate/nodes=(100|1000|1000/norepack)$$' -benchtime 1x -benchmem -timeout 60m
	$(GO) test ./pkg/disruption -run '^$$' -bench 'QuietPass' -benchtime 1x -benchmem -timeout 30m
	$(GO) test ./pkg/dra -run '^$$' -bench SolveDRA -benchmem -benchtime 3x -timeout 30m
	$(GO) test ./pkg/sim -run '^$$' -bench 'SimulatePhilly/jobs=all' -benchtime 1x -timeout 30m
	TENON_CONTROLPLANE_BIN=$$(hack/build-controlplane.sh --print) $(GO) test ./test/e2e -run '^$$' -bench 'Provisioning|DisruptionScaleDown' -benchtime 1x -timeout 90m
