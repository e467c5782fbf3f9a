#!/usr/bin/env bash
# Builds the control-plane binaries tenon's integration tests and `tenon up` run:
# etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubectl and kwok.
#
# They are built from the Go module proxy in a throwaway module (never the project's go.mod)
# into a cache directory keyed by the versions, outside the checkout, and the build is skipped
# when every binary is already there. Prints the binary directory on its last line.
#
#   hack/build-controlplane.sh            build if missing, print the directory
#   hack/build-controlplane.sh --print    print the directory only (no build)
#
# internal/controlplane (BinDir) computes the same directory; its TestVersionsMatchBuildScript
# fails if the default versions below and the package's constants drift apart. Setting
# TENON_CONTROLPLANE_BIN makes the package use another directory instead of this one.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
STAGING_VERSION="v0${K8S_VERSION#v1}"   # k8s.io/<staging> modules are v0.<minor>.<patch>

cache_root=${TENON_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tenon}
key="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}"
dir="$cache_root/controlplane/$key"
bins=(etcd kube-apiserver kube-scheduler kube-controller-manager kubectl kwok)

have_all() {
  for b in "${bins[@]}"; do [ -x "$dir/bin/$b" ] || return 1; done
  [ -f "$dir/kwok-stages.yaml" ] || return 1
}

if [ "${1:-}" = "--print" ]; then echo "$dir/bin"; exit 0; fi
if have_all; then echo "$dir/bin"; exit 0; fi

echo "building the control plane ($key) into $dir; a cold build takes about 7 minutes on 2 cores" >&2
start=$(date +%s)
mkdir -p "$dir"
work=$(mktemp -d "$cache_root/controlplane/build.XXXXXX")
trap 'rm -rf "$work"' EXIT

staging=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
  cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt
  kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
  mount-utils pod-security-admission sample-apiserver streaming)

{
  echo "module k8stools"
  echo "go 1.26.0"
  echo "godebug default=go1.26"
  echo "require k8s.io/kubernetes $K8S_VERSION"
  for m in "${staging[@]}"; do echo "replace k8s.io/$m => k8s.io/$m $STAGING_VERSION"; done
} > "$work/go.mod"
cat > "$work/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
GO

cd "$work"
echo "[1/3] resolving modules" >&2
GOFLAGS=-mod=mod go get \
  "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" \
  "k8s.io/kubernetes/cmd/kube-scheduler@$K8S_VERSION" \
  "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" \
  "k8s.io/kubernetes/cmd/kubectl@$K8S_VERSION" \
  "go.etcd.io/etcd/server/v3@$ETCD_VERSION" \
  "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" >&2

echo "[2/3] compiling six binaries (the long step)" >&2
mkdir -p "$work/out"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)"
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$work/out/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kubectl \
  go.etcd.io/etcd/server/v3 \
  sigs.k8s.io/kwok/cmd/kwok >&2
mv "$work/out/v3" "$work/out/etcd" 2>/dev/null || mv "$work/out/server" "$work/out/etcd"

echo "[3/3] assembling kwok stages" >&2
kwokdir=$(GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
stages=(
  kustomize/stage/node/fast/node-initialize.yaml
  kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
  kustomize/stage/pod/fast/pod-ready.yaml
  kustomize/stage/pod/fast/pod-complete.yaml
  kustomize/stage/pod/fast/pod-delete.yaml
)
: > "$work/out/kwok-stages.yaml"
for s in "${stages[@]}"; do
  echo "---" >> "$work/out/kwok-stages.yaml"
  cat "$kwokdir/$s" >> "$work/out/kwok-stages.yaml"
done

mkdir -p "$dir/bin"
for b in "${bins[@]}"; do mv -f "$work/out/$b" "$dir/bin/$b"; done
mv -f "$work/out/kwok-stages.yaml" "$dir/kwok-stages.yaml"
echo "control plane built in $(( $(date +%s) - start )) s" >&2
echo "$dir/bin"
