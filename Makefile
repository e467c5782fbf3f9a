# tenon's build entry points. `make test` is the README's test command and what CI runs.
SHELL := /bin/bash
GO ?= go

.PHONY: test verify unit controlplane generate bench

## test: everything CI checks — formatting, vet, generated code, and the whole test suite.
test: verify controlplane unit

verify:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## controlplane: build (or find, cached by version) the real control-plane binaries integration tests run.
controlplane:
	@hack/build-controlplane.sh >/dev/null

unit:
	TENON_CONTROLPLANE_BIN=$$(hack/build-controlplane.sh --print) $(GO) test -count=1 ./...

## generate: regenerate deep-copy code and CRDs with the pinned controller-gen.
generate:
	hack/generate.sh

## bench: the benchmarks docs/performance.md reports.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
