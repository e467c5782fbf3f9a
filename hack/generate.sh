#!/usr/bin/env bash
# Regenerates the code and manifests derived from the API types under pkg/apis:
#   - zz_generated.deepcopy.go in every package under pkg/apis that has API types;
#   - CustomResourceDefinitions into pkg/apis/crds/<group>_<plural>.yaml.
#
# Usage: hack/generate.sh [OUTPUT_ROOT]
#   OUTPUT_ROOT (or $TENON_GENERATE_OUTPUT) defaults to the repository root. Files are written at
#   the same relative paths under it, so a test can regenerate into a temporary directory and
#   compare.
#
# controller-gen is pinned and built by the Go toolchain (go run pkg@version); nothing is
# downloaded by hand.
set -euo pipefail

CONTROLLER_GEN="sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${TENON_GENERATE_OUTPUT:-$root}}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$root"

controller_gen() { go run "$CONTROLLER_GEN" "$@"; }

# Deepcopy: controller-gen writes one file per package, so run it per package and direct each
# file to the package's directory under the output root.
for dir in $(go list -f '{{.Dir}}' ./pkg/apis/...); do
  rel="${dir#"$root"/}"
  mkdir -p "$out/$rel"
  controller_gen object paths="./$rel" output:object:dir="$out/$rel"
done

# CRDs: one run over all API packages; every group's CRDs land in pkg/apis/crds. The Helm charts
# link to these files (charts/tenon-crd/templates, charts/tenon/crds): a new CRD needs a link there.
mkdir -p "$out/pkg/apis/crds"
controller_gen crd paths=./pkg/apis/... output:crd:dir="$out/pkg/apis/crds"
# Add the validation markers cannot express (core/v1 Taint fields); see hack/crdpatch.
go run ./hack/crdpatch "$out/pkg/apis/crds"
